"""The in-process what-if engine (layoutprof/_what_if.py): each kind of action applied for its
variant's calls only (the input fed NCHW, the model converted, one weight made dense, a line's
permute made dense), timed in interleaved rounds and judged by the native statistics, outputs
compared; a fix no front end applies refused with its reason; and the user's model, buffers,
RNG state and mode exactly as they were after it all.

Usage alone: what_if_checks.py (this folder on sys.path)."""
import inspect
import os
import sys

import torch
from torch import nn

from compiled_checks import _schema_problems
from layoutprof import _what_if


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.drop = nn.Dropout(0.5)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        y = self.drop(self.bn(self.conv1(x)).relu())
        nhwc = y.permute(0, 2, 3, 1).contiguous()
        y = nhwc.permute(0, 3, 1, 2)  # NCHW sizes, channels_last strides: the line a fix edits
        return self.conv2(y)


def _snapshot(model):
    tensors = dict(model.named_parameters())
    tensors.update(dict(model.named_buffers()))
    return {n: (t.data_ptr(), t.stride(), t.detach().clone()) for n, t in tensors.items()}, \
        torch.get_rng_state(), model.training


def _unchanged(model, before):
    state, rng, training = _snapshot(model)
    problems = [f"{n} changed" for n, (ptr, stride, values) in before[0].items()
                if state[n][0] != ptr or state[n][1] != stride or not torch.equal(state[n][2], values)]
    if not torch.equal(rng, before[1]):
        problems.append("the RNG state changed")
    if training != before[2]:
        problems.append("the model's mode changed")
    return problems


def _seen(model, run):
    """conv1's input and weight, and conv2's input, as a variant's call hands them over."""
    seen = {}
    hooks = [model.conv1.register_forward_pre_hook(
                 lambda m, args: seen.update(input=args[0].is_contiguous(),
                                             weight_cl=m.weight.is_contiguous(memory_format=torch.channels_last))),
             model.conv2.register_forward_pre_hook(lambda _m, args: seen.update(conv2_input=args[0].is_contiguous()))]
    try:
        with torch.no_grad():
            run()
    finally:
        for h in hooks:
            h.remove()
    return seen


def check_what_if(fail):
    checked = []

    def failed(message):
        checked.append(message)
        fail(message)

    said = _check(failed)
    if not checked:
        print(said)


def _check(fail):
    torch.manual_seed(0)
    model = Net().eval()
    x = torch.randn(2, 8, 12, 12).to(memory_format=torch.channels_last)
    lines, first = inspect.getsourcelines(Net.forward)
    permute_line = first + next(i for i, t in enumerate(lines) if "nhwc.permute(0, 3, 1, 2)" in t)
    actions = [{"kind": "feed_input", "input": 0, "format": "contiguous"},
               {"kind": "convert_model", "format": "channels_last"},
               {"kind": "dense_parameter", "tensor": "conv1.weight", "format": "channels_last"},
               {"kind": "contiguous_at", "op": "aten::permute", "where": f"{inspect.getsourcefile(Net)}:{permute_line}",
                "format": "contiguous"},
               {"kind": "none", "not_applied": "a compile setting, not a line of code"}]
    for mode in ("eval", "train"):
        model.train(mode == "train")
        before = _snapshot(model)
        call = _what_if.Call(model, (x,), {})
        result = _what_if.measure(call, actions, rounds=8, budget_s=60)  # 4 variants: 8 rounds at 1-0.05/4
        rows = {r["actions"][0]["kind"]: r for r in result["variants"]}
        if result["rounds"] != 8 or result["control"]["saving"] == "not_judged":
            fail(f"what-if ({mode}): {result['rounds']} rounds, control {result['control']['text']}")
        for kind, row in rows.items():
            if kind == "none":
                if "compile setting" not in row["refused"]:
                    fail(f"what-if ({mode}): an action no front end applies was not refused: {row}")
                continue
            time = row.get("time") or {}
            judged = time.get("saving") in ("faster", "slower", "within_noise", "withheld")
            if not judged or "ms a call" not in time.get("text", ""):
                fail(f"what-if ({mode}): {row['name']} was not judged: {row}")
            want = ("not_compared",) if mode == "train" else ("equal", "close")
            if row["outputs"]["match"] not in want:
                fail(f"what-if ({mode}): {row['name']}'s outputs {row['outputs']!r}, want {want}")
        copies = {kind: row["recorded"] for kind, row in rows.items() if "recorded" in row}
        base = result["baseline"]
        if base["implicit_copies"] == 0 or base["mixed_ops"] == 0 or copies["convert_model"]["implicit_copies"] != 0 or \
                copies["convert_model"]["mixed_ops"] != 0 or \
                copies["feed_input"]["implicit_copies"] >= base["implicit_copies"]:
            fail(f"what-if ({mode}): copies recorded {base} plainly, {copies} in the variants")
        for problem in _unchanged(model, before):
            fail(f"what-if ({mode}): after it, {problem}")
    model.eval()
    call = _what_if.Call(model, (x,), {})
    by_kind = {a["kind"]: _what_if.variant(call, a) for a in actions}
    plain, fed, converted, dense = (_seen(model, run) for run in (
        call.runner(), by_kind["feed_input"].run, by_kind["convert_model"].run, by_kind["contiguous_at"].run))
    if plain != {"input": False, "weight_cl": False, "conv2_input": False} or not fed["input"] or \
            not converted["weight_cl"] or not dense["conv2_input"]:
        fail(f"what-if: the convolutions saw {plain} plainly, {fed} with the input fed NCHW, {converted} with the "
             f"model converted, {dense} with the permute's line made dense")
    if model.conv1.weight.is_contiguous(memory_format=torch.channels_last):
        fail("what-if: the model's own weight was converted")
    # A training step: the forward, then torch.autograd.grad of its output; no .grad written and
    # no hook of the user's on a parameter run.
    model.train()
    fired = []
    handle = model.conv1.weight.register_hook(lambda g: fired.append(1))
    before = _snapshot(model)
    result = _what_if.measure(_what_if.Call(model, (x,), {}, backward=True), actions[:2], rounds=6)
    handle.remove()
    grads = [n for n, p in model.named_parameters() if p.grad is not None]
    if fired or grads or any("time" not in r for r in result["variants"]) or _unchanged(model, before):
        fail(f"what-if of a training step: the user's hook ran {len(fired)} times, .grad of {grads} written, "
             f"{_unchanged(model, before)}")
    if result["baseline"]["implicit_copies"] <= 2 or not any("AccumulateGrad" in n for n in result["notes"]):
        fail(f"what-if of a training step: the backward's copies not recorded: {result['baseline']}")
    model.eval()
    # A compiled model: every variant runs eagerly, and dynamo compiles nothing more for it.
    from torch._dynamo.utils import counters
    compiled = torch.compile(model, backend="eager")
    with torch.no_grad():
        compiled(x)
    graphs = counters["stats"]["unique_graphs"]
    result = _what_if.measure(_what_if.Call(compiled, (x,), {}), actions[:3], rounds=6)
    if counters["stats"]["unique_graphs"] != graphs or any("time" not in r for r in result["variants"]) or \
            not any("eagerly" in n for n in result["notes"]):
        fail(f"what-if on a compiled model: {counters['stats']['unique_graphs'] - graphs} more graphs compiled, "
             f"variants {[r['name'] for r in result['variants'] if 'time' not in r]} not timed")
    return f"what-if: {len(actions) - 1} actions applied and timed in 8 rounds, eval and train, the state untouched"


def check_what_if_option(fail):
    """profile(what_if=N): after the block, the report's causes' actions measured."""
    import layoutprof
    torch.manual_seed(0)
    model = Net().eval()
    x = torch.randn(2, 8, 12, 12).to(memory_format=torch.channels_last)
    with torch.no_grad(), layoutprof.profile(what_if=2, what_if_budget=30, counters=False) as p:
        model(x)
    w = p.what_if or {}
    kinds = [[a["kind"] for a in r["actions"]] for r in w.get("variants", [])]
    wanted = [["feed_input"], ["convert_model"], ["contiguous_at"], ["feed_input", "contiguous_at"]]
    if kinds != wanted or w.get("rounds", 0) < 8 or any("time" not in r for r in w["variants"]):
        fail(f"profile(what_if=2): variants {kinds}, want {wanted}; {w.get('rounds')} rounds")
    else:
        print(f"profile(what_if=2): {len(kinds)} variants from the report's 2 causes, {w['rounds']} rounds")
    _check_in_report(p, fail)
    for problem in _schema_problems("profile(what_if=2)", p.report):
        fail(problem)
    check_what_if_script(fail)
    with torch.no_grad(), layoutprof.profile(what_if=2, counters=False) as q:
        model(x)  # two model calls in the one recorded step: the first is measured
        model(x.contiguous())
    if not q.what_if or [[a["kind"] for a in r["actions"]] for r in q.what_if["variants"]][:1] != [["feed_input"]]:
        fail(f"profile(what_if=2) over two calls: {q.what_if and q.what_if['variants']}")
    with torch.no_grad(), layoutprof.profile(what_if=1, counters=False) as q:
        torch.nn.Linear(4, 4)(torch.randn(2, 4))
    if q.what_if["why_not"] != "no cause with a fix to measure" or q.what_if["variants"] or \
            q.report["what_if"]["why_not"] != q.what_if["why_not"] or "no fix measured: no cause" not in q.text():
        fail(f"profile(what_if=1) of a call without causes: {q.what_if}")
    try:
        layoutprof.profile(what_if=True)
        fail("profile(what_if=True) was taken")
    except ValueError:
        pass


def _check_in_report(p, fail):
    """The measurement is the report's: each cause's own variants under it (JSON and text), the
    ones applied together in the run's block, the verdict's first line on the best of them."""
    block, causes = p.report.get("what_if"), p.report["causes"]
    own = [[v["name"] for v in c.get("what_if", [])] for c in causes]
    if not block or block["rounds"] != p.what_if["rounds"] or len(block["together"]) != 1 or \
            [len(o) for o in own[:2]] != [2, 1] or any(v["cause_survives"] for v in p.what_if["variants"]):
        fail(f"profile(what_if=2): the report's what_if block {block and {k: block[k] for k in ('rounds', 'together')}}, "
             f"the causes' variants {own}")
    _check_calls(block, sum(1 for v in p.what_if["variants"] if not v["refused"]), fail)
    text = p.text()
    lines = [line.strip() for line in text.splitlines()]
    verdict = next((line for line in lines if line.startswith("Verdict:")), "")
    shown = [line for line in lines if line.startswith("what-if,") or line.startswith("together, what-if,")]
    said_best = "best measured fix saves" in verdict or "no fix measured a saving" in verdict
    if len(shown) != 4 or not said_best or not any(line.startswith("what-if: ") for line in lines) or \
            not any(line.startswith("applied by layoutprof at ") for line in lines):
        fail(f"profile(what_if=2): the text report's verdict {verdict!r}, its what-if lines {shown}")


def _check_calls(block, timed, fail):
    """Every call of the rounds is in the block, as the command's are: per round the baseline,
    each variant once (their order rotated), the baseline again."""
    calls, rounds = block.get("calls", []), block["rounds"]
    per = timed + 2
    shape = [[c["who"] for c in calls[r * per:(r + 1) * per]] for r in range(rounds)]
    firsts = {tuple(s[1:-1]) for s in shape}
    if len(calls) != rounds * per or any(s[0] != "baseline" or s[-1] != "baseline again" for s in shape) or \
            (timed > 1 and rounds > 1 and len(firsts) < 2) or \
            any(b["start_ns"] < a["start_ns"] + a["ns"] for a, b in zip(calls, calls[1:])):
        fail(f"profile(what_if=2): the rounds' calls {shape[:2]} ({len(calls)} for {rounds} rounds of {timed})")


SCRIPT = """
import torch
conv = torch.nn.Conv2d(8, 8, 3, padding=1).eval()
with torch.no_grad():
    for _ in range(2):
        conv(torch.randn(2, 8, 12, 12).to(memory_format=torch.channels_last))
"""


def check_what_if_script(fail):
    """python -m layoutprof --what-if=1: the script's text report leads with what the fix measured;
    --what-if=0 is a usage error (exit 2)."""
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "conv.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        out = subprocess.run([sys.executable, "-m", "layoutprof", "--no-counters", "--what-if=1", "--what-if-budget=5",
                              script], capture_output=True, text=True)
        bad = subprocess.run([sys.executable, "-m", "layoutprof", "--what-if=0", script], capture_output=True, text=True)
    verdict = next((line for line in out.stderr.splitlines() if line.startswith("Verdict:")), "")
    if out.returncode != 0 or not ("best measured fix" in verdict or "no fix measured a saving" in verdict) or \
            "what-if, input 0 as contiguous:" not in out.stderr or bad.returncode != 2:
        fail(f"python -m layoutprof --what-if: exit {out.returncode}, verdict {verdict!r}, --what-if=0 exit "
             f"{bad.returncode}: {out.stderr[-600:]}")
    else:
        print(f"python -m layoutprof --what-if=1: {verdict[:100]}...")


def _sample_cause(want, report):
    """The index of the report's cause the manifest's `want` (sample_causes.cause) names, or None."""
    for i, c in enumerate(report["causes"]):
        b = c["birthplace"]
        if c["layout"] == want["layout"] and b["kind"] == want["kind"] and b["name"] == want["op"] and \
                want["file"] in b["where"] and want["code"] in b["code"]:
            return i
    return None


def _fix_problems(name, want, report):
    """What the report's what-if says of the fix the manifest's `want` (sample_table.measured)
    names, against what it must say."""
    block = report["what_if"]
    variants = [v for v in report["causes"][want["index"]].get("what_if", [])
                if v["actions"][0]["kind"] == want["kind"]]
    if not variants:
        return [f"{name}: no {want['kind']} variant of cause {want['cause']}: "
                f"{[v['name'] for v in report['causes'][want['index']].get('what_if', [])]}"]
    v = variants[0]
    if want["refused"]:
        return [] if want["refused"] in v["refused"] else [f"{name}: {v['name']} not refused for {want['refused']!r}: {v}"]
    if v["refused"]:
        return [f"{name}: {v['name']} refused: {v['refused']}"]
    problems = []
    if want["gone"] and v["cause_survives"]:
        problems.append(f"{name}: {v['name']} left its cause costing: {v['recorded']}")
    for kind in ("explicit", "implicit"):
        if want.get(kind) is not None and v["recorded"][f"{kind}_copies"] != want[kind]:
            problems.append(f"{name}: {v['name']} made {v['recorded'][f'{kind}_copies']} {kind} copies, want {want[kind]}")
    if want["gone"] and v["recorded"]["mixed_ops"] >= max(1, block["baseline"]["mixed_ops"]) and \
            block["baseline"]["mixed_ops"]:
        problems.append(f"{name}: {v['name']} left {v['recorded']['mixed_ops']} mixed-format ops")
    if want["fewer_mixed"] and v["recorded"]["mixed_ops"] >= block["baseline"]["mixed_ops"]:
        problems.append(f"{name}: {v['name']}: mixed-format ops {block['baseline']['mixed_ops']} -> "
                        f"{v['recorded']['mixed_ops']}, want fewer")
    if v["outputs"]["match"] not in want["outputs"]:
        problems.append(f"{name}: {v['name']}'s outputs {v['outputs']['text']}, want {want['outputs']}")
    return problems


def check_what_if_samples(ms, fail):
    """Every sample with a `what_if` entry (large ones too: the model is built, not loaded),
    profiled in process with what_if: each fix it lists applied, or refused, as the entry says."""
    import importlib.util
    import layoutprof
    checked = 0
    for sample in ms.SAMPLES:
        if not sample.what_if or (sample.needs and importlib.util.find_spec(sample.needs) is None):
            continue
        torch.set_num_threads(1)
        module = ms.built_module(sample)
        torch.manual_seed(0)
        inputs = [ms.make_input(spec) for spec in sample.inputs]
        with torch.no_grad(), layoutprof.profile(warmup=1, by="call", counters=False, what_if=8,
                                                 what_if_budget=5) as p:
            for _ in range(2):
                module(*inputs)
        problems = [] if p.report["what_if"]["rounds"] >= 6 else [f"{sample.name}: {p.report['what_if']['rounds']} rounds"]
        problems += _schema_problems(sample.name, p.report)
        for want in sample.what_if:
            index = _sample_cause(sample.causes[want["cause"]], p.report)
            if index is None:
                problems.append(f"{sample.name}: no cause like {sample.causes[want['cause']]}")
                continue
            problems += _fix_problems(sample.name, dict(want, index=index), p.report)
        for problem in problems:
            fail(problem)
        checked += 1
        print(f"what-if of {sample.name}: {len(sample.what_if)} fixes as the manifest says" if not problems else "")
    if checked < 3:
        fail(f"what-if: only {checked} samples with a what_if entry could be checked")


if __name__ == "__main__":
    failures = []
    check_what_if(failures.append)
    check_what_if_option(failures.append)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples"))
    import make_samples
    check_what_if_samples(make_samples, failures.append)
    for f in failures:
        print("FAIL", f)
    raise SystemExit(1 if failures else 0)
