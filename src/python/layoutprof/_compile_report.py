"""The JSON report's "compiled" object, from what a CompileWatch heard: the graphs with the
layout copies inductor's code makes, the recompiles and their guards, automatic dynamic
promotions, recompile_limit hits, graph breaks, and the caches' hits and misses.
Its format is the report's schema (src/report/report.schema.json, "compiled"); the native
session reads it as the report reader does (src/report/compiled_json.cpp)."""
import re

from . import _inductor_code as code
from ._arguments import assigned_at, caller_expression, guard

_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def _order(cid):
    try:
        frame, compile_ = cid.split("/")[:2]
        return int(frame), int(compile_)
    except ValueError:
        return 1 << 30, 0


def _short(where):
    """A path's last two parts, as the report's lines give them."""
    path, _, line = where.rpartition(":")
    return "/".join(path.split("/")[-2:]) + ":" + line if path else where


def _installed(where):
    """A line of torch's or of an installed package's code: not one the user changes."""
    return any(part in where for part in ("/torch/", "/site-packages/", "/dist-packages/"))


def _input_layout(entry, tensor):
    """The layout compile `entry` was specialised for, of the argument dynamo calls `tensor`: as
    the compiled frame held it (_arguments.describe), else as its graph's placeholder prints it."""
    described = entry.get("arguments", {}).get(tensor) or entry.get("seen", {}).get(tensor)
    if described:
        return described
    for name, layout in entry.get("inputs", []):
        if code.tensor_name(name) == tensor:
            return layout
    return ""


_DENSE = {"contiguous": ".contiguous()", "channels_last": ".contiguous(memory_format=torch.channels_last)",
          "channels_last_3d": ".contiguous(memory_format=torch.channels_last_3d)"}


def _word(described):
    """The layout's word of a description ("strided: a view of ...", "permuted(1,0), f32[...]")."""
    m = re.match(r"^\w+(?:\([\d,]*\))?", described)
    return m.group(0) if m else ""


def _fix(g, before, after, entry):
    """Where the recompile is fixed: on the argument, where the user's code makes it."""
    called_at, call_code = entry.get("called_at", ""), entry.get("call_code", "")
    mine = caller_expression(g["tensor"], entry.get("params", []), call_code) if call_code else ""
    name, kind = mine or g["tensor"] or "the argument", g["kind"]
    callee = f"`{g['tensor']}` of {entry.get('function') or 'the compiled function'}; " if mine and mine != g["tensor"] else ""
    at = f" ({callee}it reaches the call at {_short(called_at)}{f', `{call_code}`' if call_code else ''})" if called_at else ""
    recorded = entry.get("makers", {}).get(g["tensor"])  # the op the recording saw make it
    if recorded and _installed(recorded[1]):  # a library's line: the user's call above names it
        recorded = None
    made = assigned_at(mine, called_at) if mine and called_at and not recorded else None
    if recorded:
        op, where, line = recorded
        at = f", at {_short(where)} (`{line}`: the result of {op}){at}"
    elif made:  # a name the calling function assigned above the call: the line that makes it
        at = f", at {_short(made[0])} (`{made[1]}`){at}"
    if kind == "stride":
        first, then = _word(before), _word(after)
        if first in _DENSE and then in _DENSE and first != then:
            return (f"one memory format for every batch: `{name}`{_DENSE[first]} where it is made{at}, as the first "
                    f"compile's {first}, so that one compiled graph serves every step")
        return (f"`{name}`.contiguous() where it is made{at}: then every step hands the compiled graph the same "
                f"strides, where a {then or 'strided'} tensor's follow what it was cut or permuted from")
    if kind == "size":
        return (f"torch._dynamo.mark_dynamic(`{name}`, {max(g['dim'], 0)}) before the first call, where its size "
                f"really varies, or pad `{name}` to one size{at}")
    if kind == "other":
        return f"give the function the same inputs every step{at}: dynamo's guard above names what changed"
    return f"give `{name}` the same {kind.replace('_', ' ')} every step{at}"


def _recompiles(entries):
    rows, last = [], {}
    for e in entries:
        key = e.get("where", "")
        for reason in e["reasons"]:
            g = guard(reason)
            prev_id = reason.split(":", 1)[0] if re.match(r"^\d+/\d+: ", reason) else ""
            prev = next((p for p in entries if p["compile_id"] == prev_id), last.get(key))
            before, after = _input_layout(prev, g["tensor"]) if prev else "", _input_layout(e, g["tensor"])
            rows.append(dict(g, compile_id=e["compile_id"], function=e.get("function", ""), where=key,
                             step=e["step"], reason=reason, compile_s=round(e.get("compile_s", 0.0), 3),
                             before=before, after=after, layout=g["kind"] == "stride", called_at=e.get("called_at", ""),
                             fix=_fix(g, before, after, e)))
        last[key] = e
    return rows


def _tensor_of(entry, graph, arg):
    """What the user calls the post-grad graph's input `arg`: the dynamo placeholder of the same
    layout, in order (inductor's tensor inputs are dynamo's, in the same order)."""
    mine = graph["placeholders"]
    index = next((i for i, (name, _layout) in enumerate(mine) if name == arg), -1)
    if index < 0:
        return "", ""
    theirs, j = entry.get("inputs", []), 0
    for i, (_name, layout) in enumerate(mine):
        shape = layout.text().split("][")[0]  # dtype and sizes: a dynamic stride prints apart
        while j < len(theirs) and theirs[j][1].split("][")[0] != shape:
            j += 1
        if j >= len(theirs):
            break
        if i == index:
            return code.tensor_name(theirs[j][0]), code.module_of(theirs[j][0])
        j += 1
    return f"graph input {mine[index][0]}", ""


def _conversion(entry, graph, c):
    tensor, module = _tensor_of(entry, graph, c["input"]) if c["input_index"] >= 0 else ("", "")
    node = next((entry["nodes"][s] for s in reversed(c["feeds_sources"]) if s in entry["nodes"]), None)
    kind = "weight" if tensor.startswith(("parameter", "buffer")) else ("input" if tensor else "intermediate")
    if c["returned"]:
        kind = "output"
    return {"kind": kind, "tensor": tensor or f"buffer {c['input']}", "from": c["from"], "to": c["to"],
            "bytes": c["bytes"], "every_call": True, "kernel": c["kernel"],
            "before": f"the extern {c['feeds']}" if c["feeds"] else "",
            "module": (node or {}).get("module", "") or module, "where": (node or {}).get("where", ""),
            "code": (node or {}).get("code", "")}


def _graph_copy(c):
    return {"kind": "code", "tensor": f"the output of `{c['node']}`", "from": c["from"], "to": c["to"],
            "bytes": c["bytes"], "every_call": True, "kernel": "", "before": "", "module": "",
            "where": c["where"], "code": c["code"]}


def _layout_opt(graph, copies):
    if graph["layout_opt_skipped"]:
        return "off", "; ".join(graph["layout_opt_skipped"])
    if any(c["kind"] in ("input", "weight") and code.channels_last_text(c["to"]) for c in copies):
        return "on", "inputs or weights converted to channels_last inside the graph (read from the generated code)"
    return "", ""


def _graphs(entries):
    rows = []
    for e in entries:
        many = len(e["graphs"]) > 1
        # A backend other than inductor (eager, aot_eager) leaves dynamo's graph alone: no copies read.
        backend_graph = [] if e["graphs"] or not e.get("dynamo_graph") else [
            {"conversions": [], "copies": [], "layout_opt_skipped": []}]
        for i, g in enumerate(e["graphs"] or backend_graph):
            copies = [_conversion(e, g, c) for c in g["conversions"]] + [_graph_copy(c) for c in g["copies"]]
            state, why = _layout_opt(g, copies)
            rows.append({"compile_id": e["compile_id"], "graph": ("forward", "backward")[min(i, 1)] if many else "",
                         "function": e.get("function", ""), "where": e.get("where", ""), "step": e["step"],
                         "compile_s": round(e.get("compile_s", 0.0), 3), "called_at": e.get("called_at", ""),
                         "inputs": [{"name": code.tensor_name(n), "layout": l} for n, l in e.get("inputs", [])],
                         "layout_opt": state, "layout_opt_reason": why, "copies": copies})
    return rows


def _break_reason(lines):
    """Dynamo's words for a break: what it met ("Call to `torch._dynamo.graph_break()`") and its
    explanation, from the lines after "Graph Break Reason:" (torch 2.13 and 2.14 print them so),
    or the message's first line."""
    start = next((i for i, l in enumerate(lines) if l.startswith("Graph Break Reason:")), None)
    if start is None:
        return lines[0].strip() if lines else ""
    what = next((l.strip() for l in lines[start + 1:start + 4] if not l.startswith("Graph Break Reason")), "")
    why = next((l.strip()[len("Explanation:"):].strip() for l in lines[start:start + 8]
                if l.strip().startswith("Explanation:")), "")
    return f"{what}: {why}" if what and why else what or lines[start].split(":", 1)[1].strip()


def _breaks(watch, entries):
    rows = []
    for b in watch.breaks:
        lines = [l for l in b["text"].splitlines() if l.strip()]
        places = _FILE_LINE.findall(b["text"])
        user = [p for p in places if not _installed(p[0])]
        resume = next((e for e in entries if _order(e["compile_id"]) > _order(b["compile_id"])
                       and e.get("function", "").startswith("torch_dynamo_resume_in_")), None)
        crossing = [f"{code.tensor_name(n)} {l}" for n, l in (resume or {}).get("inputs", [])
                    if not code.tensor_name(n).startswith(("parameter", "buffer"))]
        rows.append({"compile_id": b["compile_id"], "step": b["step"],
                     "where": f"{user[-1][0]}:{user[-1][1]}" if user else "",
                     "reason": _break_reason(lines),
                     "crossing": crossing})
    return rows


def compiled_report(watch, sources):
    entries = sorted(watch.compiles.values(), key=lambda e: _order(e["compile_id"]))
    dynamic = [{"compile_id": e["compile_id"], "source": d["source"], "value": d["value"]} for e in entries
               for d in e["dynamic"]]
    not_measured = list(sources["not_measured"]) + [f"a structured trace record layoutprof could not read: {u}"
                                                     for u in watch.unreadable[:3]]
    return {"records": sources["records"], "torch": sources["torch"], "graphs": _graphs(entries),
            "recompiles": _recompiles(entries), "dynamic": dynamic, "limit_hits": watch.limit_hits,
            "breaks": _breaks(watch, entries),
            "cache": {k: v for k, v in watch.cache.items()}, "not_measured": not_measured}
