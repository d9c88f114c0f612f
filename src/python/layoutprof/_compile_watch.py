"""torch.compile under a profile: what dynamo and inductor decided, from their own records.

While a profile is under way, a handler on torch._logging's structured trace ("torch.__trace";
torch emits its records only while that logger has a handler) hears every compile of the whole
run, warm-up steps included:
- compilation_metrics: the compiled function, its compile id and time, a failure;
- recompile_reasons: the guard that failed, as dynamo words it;
- dynamo_output_graph: the inputs the graph was specialised for, and each node's user line;
- create_symbol: a size or stride made dynamic (automatic dynamic);
- inductor_post_grad_graph and inductor_output_code (written on a cache hit as on a miss): the
  copies the graph keeps from the code, and the layout conversions inductor's code makes;
- dynamo_graph_break_reason, and the fx graph and AOT autograd caches' hits and misses.
Dynamo's warning that a function hit config.recompile_limit is a log record of its own
(torch._dynamo.convert_frame), read from its arguments; inductor's reasons for skipping layout
optimization are its DEBUG records (torch._inductor.graph). The parsing of graphs and code is
in _inductor_code.py.
"""
import json
import logging

from . import _arguments, _compiled_lines
from . import _inductor_code as code
from ._compile_api import (calling_user_frame, compile_sources, compiled_frame, interned_strings, kernel_profile,
                           provenance)

_RESERVED = {"frame_id", "frame_compile_id", "attempt", "rank", "has_payload", "stack", "compiled_autograd_id",
             "subgraph_name"}


def _users(path):
    return "/torch/" not in path and "/site-packages/" not in path


def _name(metadata):
    return next((k for k in metadata if k not in _RESERVED), "")


def _cid(metadata):
    f, c = metadata.get("frame_id"), metadata.get("frame_compile_id")
    return f"{f}/{c}" if f is not None and c is not None else ""


class _Handler(logging.Handler):
    def __init__(self, heard, unreadable):
        super().__init__(logging.DEBUG)
        self._heard, self._unreadable = heard, unreadable

    def emit(self, record):
        try:
            self._heard(record)
        except Exception as e:  # noqa: BLE001  # a record we cannot read is noted, never raised into torch
            self._unreadable.append(f"{type(e).__name__}: {e}")


class _Tap(logging.Filter):
    """On a logger of torch's that layoutprof needs below its level: hands each record to
    `heard`, and lets on only those the logger would have passed before (so that nothing more
    is printed)."""

    def __init__(self, heard, unreadable, level):
        super().__init__()
        self._handler, self._level = _Handler(heard, unreadable), level

    def filter(self, record):
        self._handler.emit(record)
        return record.levelno >= self._level


class CompileWatch:
    """Listens while installed; report() is the JSON report's "compiled" object (None when nothing
    was compiled)."""

    def __init__(self, step_of=lambda: 0, compiling=lambda _on: None, made_by=lambda _tensor: None):
        self.step_of = step_of       # the profile's step or model call under way (0-based)
        self.compiling = compiling   # compiling(True) as dynamo starts a frame, (False) as it is done
        self.made_by = made_by       # (op, "file:line", code) of the recorded op that made a tensor, or None
        self.compiles = {}           # compile id -> what was heard of it
        self.cache = {"fx_graph_cache_hit": 0, "fx_graph_cache_miss": 0, "aotautograd_cache_hit": 0,
                      "aotautograd_cache_miss": 0}
        self.limit_hits, self.breaks, self.unreadable = [], [], []
        self._layout_opt_skips = []  # inductor's DEBUG reasons, taken by the next graph
        self._strings = {}           # the structured trace's interned file names
        self._undo = []  # what install() did, undone by remove()

    def install(self):
        trace = logging.getLogger("torch.__trace")
        handler = _Handler(self._structured, self.unreadable)
        trace.addHandler(handler)
        trace.setLevel(logging.DEBUG)
        self._strings.update(interned_strings())  # named before this watch, in an earlier profile
        self._undo = [lambda: trace.removeHandler(handler)]
        for name, level, heard in (("torch._dynamo.convert_frame", logging.WARNING, self._dynamo_log),
                                   ("torch._inductor.graph", logging.DEBUG, self._inductor_log)):
            logger = logging.getLogger(name)
            before = logger.level
            tap = _Tap(heard, self.unreadable, logger.getEffectiveLevel())
            logger.addFilter(tap)
            logger.setLevel(min(level, logger.getEffectiveLevel()))
            self._undo.append(lambda logger=logger, tap=tap, before=before: (logger.removeFilter(tap),
                                                                               logger.setLevel(before)))
        self._undo += [kernel_profile(True), provenance(True)]

    def remove(self):
        self.compiling(False)
        for undo in reversed(self._undo):
            undo()
        self._undo = []

    def _entry(self, cid):
        return self.compiles.setdefault(cid, {"compile_id": cid, "step": self.step_of(), "graphs": [], "reasons": [],
                                              "inputs": [], "nodes": {}, "dynamic": [], "places": [],
                                              "seen": {}, "arguments": {}, "params": []})

    def _structured(self, record):
        metadata = getattr(record, "metadata", None)
        if not isinstance(metadata, dict):
            return
        name, payload = _name(metadata), getattr(record, "payload", None)
        if name == "artifact":
            name = metadata["artifact"].get("name", "")
        handler, cid = getattr(self, "_on_" + name, None), _cid(metadata)
        if handler is not None and (cid or name == "str"):  # a compile's record, or an interned name
            handler(self._entry(cid) if cid else None, metadata, payload)
        elif name in self.cache:
            self.cache[name] += 1

    def _on_dynamo_start(self, entry, metadata, _payload):
        """The step, the arguments of the frame compiled, and the user's line that called the
        compiled function: the innermost frame of the Python stack outside torch, the installed
        packages and layoutprof, the compiled frame being on none (dynamo_start's own stack, the
        fallback, leaves out the caller of a compiled function in 2.14)."""
        entry["step"] = self.step_of()
        self.compiling(True)
        frame_locals, entry["params"] = compiled_frame()
        entry["seen"] = _arguments.snapshot(frame_locals)
        caller = calling_user_frame()
        if caller is not None:
            entry["called_at"], entry["call_code"] = f"{caller[0]}:{caller[1]}", caller[2]
            return
        stack = metadata["dynamo_start"].get("stack") or []
        for frame in reversed(stack[:-1]):
            path = self._strings.get(frame.get("filename"), "")
            if path and _users(path):
                entry["called_at"] = f"{path}:{frame.get('line')}"
                entry["call_code"] = (frame.get("loc") or "").strip()
                break

    def _on_str(self, _entry, metadata, _payload):
        text, index = metadata["str"]
        self._strings[index] = text

    def _on_compilation_metrics(self, entry, metadata, _payload):
        self.compiling(False)
        m = metadata["compilation_metrics"]
        entry.update(function=m.get("co_name") or "", where=f"{m.get('co_filename')}:{m.get('co_firstlineno')}",
                     compile_s=m.get("entire_frame_compile_time_s") or 0.0, fail=m.get("fail_reason") or "",
                     cache_size=m.get("cache_size") or 0)
        if m.get("compile_id"):
            entry["compile_id"] = m["compile_id"]

    def _on_recompile_reasons(self, entry, _metadata, payload):
        try:
            reasons = json.loads(payload) if payload else []
        except ValueError:
            reasons = [payload]
        entry["reasons"] += reasons if isinstance(reasons, list) else [reasons]
        frame_locals = compiled_frame()[0]
        for reason in entry["reasons"]:
            tensor = _arguments.guard(str(reason))["tensor"]
            if tensor and tensor not in entry["arguments"]:
                value = _arguments.resolve(tensor, frame_locals)
                entry["arguments"][tensor] = described = _arguments.describe(value)
                made = self.made_by(value) if described else None
                if made:
                    entry.setdefault("makers", {})[tensor] = made

    def _on_dynamo_output_graph(self, entry, _metadata, payload):
        entry["dynamo_graph"] = True
        entry["inputs"] = [(n, layout.text()) for n, layout in code.placeholders(payload or "")]
        entry["nodes"] = {k: {f: v[f] for f in ("where", "code", "module")} for k, v in code.nodes(payload or "").items()}

    def _on_create_symbol(self, entry, metadata, _payload):
        source = metadata["create_symbol"].get("source", "")
        if ".stride()" in source or ".size()" in source:
            entry["dynamic"].append({"source": source, "value": str(metadata["create_symbol"].get("val", ""))})

    def _on_inductor_post_grad_graph(self, entry, _metadata, payload):
        text = payload or ""
        # A cache hit's graph holds the paths of the checkout that compiled it: made current.
        copies, post_nodes = code.graph_copies(text), code.nodes(text)
        for row in copies + list(post_nodes.values()):
            row["where"] = _compiled_lines.existing_where(row["where"])
        entry["graphs"].append({"copies": copies, "placeholders": code.placeholders(text),
                                "conversions": [], "layout_opt_skipped": self._layout_opt_skips,
                                "post_nodes": post_nodes})
        self._layout_opt_skips = []

    def _on_inductor_output_code(self, entry, metadata, payload):
        if not entry["graphs"]:
            entry["graphs"].append({"copies": [], "placeholders": [], "conversions": [], "layout_opt_skipped": []})
        graph = entry["graphs"][-1]
        graph["conversions"] = code.conversions(payload or "")
        where = metadata["inductor_output_code"]
        graph["code"] = (where.get("file_path") or where.get("filename") or "", payload or "")

    def _on_inductor_provenance_tracking_node_mappings(self, entry, _metadata, payload):
        """Each kernel call of the graph's generated code with its post-grad nodes: the user's
        line of the ops the call runs (_compiled_lines.py)."""
        graph = entry["graphs"][-1] if entry["graphs"] else {}
        path, text = graph.get("code", ("", ""))
        mapping = json.loads(payload) if payload else None
        if path and isinstance(mapping, dict):
            _compiled_lines.learn(path, code.call_sites(text, mapping, graph.get("post_nodes", {}), entry["nodes"]))

    def _on_dynamo_graph_break_reason(self, entry, _metadata, payload):
        self.breaks.append({"compile_id": entry["compile_id"], "step": self.step_of(), "text": payload or ""})

    def _dynamo_log(self, record):
        # "torch._dynamo hit config.%s (%s)", the limit's name and value, the function, the reason
        if "hit config." in str(record.msg) and isinstance(record.args, tuple) and len(record.args) >= 4:
            self.limit_hits.append({"step": self.step_of(), "limit": f"{record.args[0]} ({record.args[1]})",
                                    "function": str(record.args[2]), "reason": str(record.args[3])})

    def _inductor_log(self, record):
        text = str(record.msg)
        if text.startswith("Skip") and "layout opt" in text:
            self._layout_opt_skips.append(record.getMessage())

    def report(self):
        if not self.compiles and not self.limit_hits:
            return None
        from ._compile_report import compiled_report
        return compiled_report(self, compile_sources())
