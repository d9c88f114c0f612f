"""What a fix saves, measured in process (the what-if work): the model's call rerun as it is and
with each fix applied, timed side by side in interleaved rounds, the outputs compared, and the
user's program left as it was. profile(what_if=N) runs it after the block and puts what it measured into the report.

Each variant is the recorded call's model and arguments (kept with their exact strides) with
one action of a cause (report_model/fix_action.h) applied:
- feed_input: that argument converted once, before the rounds;
- convert_model, dense_parameter: the call run through torch.func.functional_call with the
  parameters and buffers converted (or the one named made dense), never the module's own;
- contiguous_at, swap_operands: the line edited for the variant's calls only (_rewrite.py).
No TorchFunctionMode (it turns off the fused MultiheadAttention and Transformer paths) and no
dispatch mode: every variant runs the program the user runs, but for the fix.

A compiled model's variants run its module eagerly (unwrapped, and under
torch.compiler.set_stance("force_eager") for compiled submodules): nothing is compiled for them.
DDP's wrapper is left out too (its forward talks to the other ranks). Each variant's call is
also recorded once by layoutprof itself: its layout copies, bytes and mixed-format ops.

The user's state is untouched: the buffers are copied (a batch norm's running stats), the
parameters are leaves of their own, and the RNG state is restored after every call. A training
step's variants run the forward, then torch.autograd.grad of its output's sum (never .grad,
the user's optimizer or hooks: AccumulateGrad's copies are then not measured); a forward call's
run under no_grad. A call that draws random numbers gets its outputs "not compared" (random ops
fill memory in layout order).
"""
import contextlib
import time

import torch

from . import _native, _rewrite
from ._module_hooks import tensors_in, unwrapped

try:
    from torch.func import functional_call
except ImportError:  # torch 1.13
    from torch.nn.utils.stateless import functional_call

_FORMATS = {"contiguous": torch.contiguous_format, "channels_last": torch.channels_last,
            "channels_last_3d": torch.channels_last_3d}
_RANKS = {"channels_last": 4, "channels_last_3d": 5}


def kept(t):
    """A copy of `t` with its exact strides (clone() would make a slice dense)."""
    out = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device)
    out.copy_(t)
    return out


def _converted(t, format_name, as_model_to=False):
    """`t` in the format: as .contiguous(memory_format=...) makes it, or (`as_model_to`) as
    model.to(memory_format=...) does, which also restrides a tensor dense in both formats (a 1x1
    convolution's weight) to the format's strides."""
    fmt = _FORMATS[format_name]
    if format_name in _RANKS and t.dim() != _RANKS[format_name]:
        return t  # the format means nothing at another rank
    return t.to(memory_format=fmt) if as_model_to else t.contiguous(memory_format=fmt)


class Variant:
    """One way to run the call: `run()` returns its output; `refused` says why it cannot."""

    def __init__(self, name, actions, run=None, refused=""):
        self.name, self.actions, self.run, self.refused = name, actions, run, refused


class Call:
    """The recorded call: the model and its arguments kept as they came."""

    def __init__(self, model, args, kwargs, backward=False):
        # The user's module itself: a compiled wrapper's names are not the user's, and DDP's
        # forward would talk to the other ranks
        self.model = unwrapped(model)
        self.compiled = self.model is not model and _compiled(model)
        self.backward = backward  # a training step: the forward, then the gradients of its output
        self.args = [kept(a) if isinstance(a, torch.Tensor) else a for a in args]
        self.kwargs = {k: kept(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        self.parameters = dict(self.model.named_parameters())
        self.buffers = dict(self.model.named_buffers())

    def state(self, convert=None):
        """Parameters as they are (or converted by `convert(name, tensor)`), as leaves of their
        own (no hook of the user's on them, no .grad written), buffers copied."""
        convert = convert or (lambda _name, t: t)
        state = {n: convert(n, p.detach()).detach().requires_grad_(self.backward and p.requires_grad)
                 for n, p in self.parameters.items()}
        state.update({n: convert(n, kept(b)) for n, b in self.buffers.items()})
        return state

    def runner(self, state=None, args=None, edits=()):
        state = self.state() if state is None else state
        args = self.args if args is None else args
        leaves = [t for t in state.values() if t.requires_grad]

        def run():
            with _rewrite.applied(list(edits)), torch.set_grad_enabled(self.backward):
                out = functional_call(self.model, state, tuple(args), dict(self.kwargs))
                if self.backward:  # torch.autograd.grad: never .grad, the user's optimizer or hooks
                    loss = sum(t.float().sum() for t in tensors_in(out) if t.requires_grad)
                    if leaves and isinstance(loss, torch.Tensor):
                        torch.autograd.grad(loss, leaves, allow_unused=True)
                return out
        return run


def _compiled(module):
    """Whether a compiled wrapper is among the wrappers around the user's module."""
    while module is not None:
        if type(module).__name__ == "OptimizedModule":
            return True
        module = getattr(module, "module", None) or getattr(module, "_orig_mod", None)
    return False


class _Changes:
    """What a variant changes: the call's arguments, the state's tensors by name, the lines."""

    def __init__(self, call):
        self.args, self.convert, self.edits = list(call.args), {}, []

    def add(self, call, action):
        """Adds one action's change; returns why it cannot be applied ("" when it can)."""
        kind = action["kind"]
        if kind == "feed_input":
            i = action["input"]
            if not 0 <= i < len(self.args) or not isinstance(self.args[i], torch.Tensor):
                return f"the call has no tensor argument {i}"
            self.args[i] = _converted(self.args[i], action["format"])
        elif kind == "convert_model":
            for name in list(call.parameters) + list(call.buffers):
                self.convert[name] = (action["format"], True)
        elif kind == "dense_parameter":
            if action["tensor"] not in call.parameters and action["tensor"] not in call.buffers:
                return f"the model has no parameter or buffer {action['tensor']}"
            self.convert[action["tensor"]] = (action["format"], False)
        elif kind in ("contiguous_at", "swap_operands"):
            fmt = action.get("format") or "contiguous"
            try:
                self.edits += _rewrite.rewritten(action["where"], action["op"], kind,
                                                 "contiguous_format" if fmt == "contiguous" else fmt)
            except _rewrite.Refused as e:
                return str(e)
        else:
            return action.get("not_applied") or f"{kind}: no front end applies it"
        return ""

    def runner(self, call):
        state = call.state(lambda n, t: _converted(t, *self.convert[n]) if n in self.convert else t)
        return call.runner(state, self.args, self.edits)


def variant(call, actions, name=None):
    """The Variant that applies `actions` (one, or a list applied together: a cause's actions
    as the JSON report writes them), named `name` (by default as the reports name them)."""
    actions = actions if isinstance(actions, list) else [actions]
    changes = _Changes(call)
    name = name or " + ".join(_name(a) for a in actions)
    for action in actions:
        why = changes.add(call, action)
        if why:
            return Variant(name, actions, refused=why)
    return Variant(name, actions, changes.runner(call))


def _name(action):
    kind = action["kind"]
    if kind in ("contiguous_at", "swap_operands"):
        return f"{kind} {action['op']} at {action['where']}"
    if kind == "feed_input":
        return f"input {action['input']} as {action['format']}"
    if kind == "convert_model":
        return f"model as {action['format']}"
    if kind == "dense_parameter":
        return f"{action['tensor']} as {action['format']}"
    return kind


def _timed(run, device):
    """One call's wall time in ns (the device synchronised), its output, and whether it drew
    random numbers; the RNG state as it was before, whatever the call did."""
    cpu_rng = torch.get_rng_state()
    cuda_rng = torch.cuda.get_rng_state_all() if device == "cuda" and torch.cuda.is_available() else None
    start = time.perf_counter_ns()
    out = run()
    if cuda_rng is not None:
        torch.cuda.synchronize()
    ns = time.perf_counter_ns() - start
    drew = not torch.equal(cpu_rng, torch.get_rng_state())
    torch.set_rng_state(cpu_rng)
    if cuda_rng is not None:
        drew = drew or any(not torch.equal(a, b) for a, b in zip(cuda_rng, torch.cuda.get_rng_state_all()))
        torch.cuda.set_rng_state_all(cuda_rng)
    return ns, out, drew


def compare_outputs(baseline, other, spread=0.0):
    """{"match": "equal" | "close" | "differs", "max_abs", "max_rel", "why"}: "close" within the
    dtype's torch.testing.assert_close tolerances, widened by `spread` (the baseline's own
    call-to-call difference: its largest absolute difference between two calls)."""
    a, b = tensors_in(baseline), tensors_in(other)
    out = {"match": "differs", "max_abs": 0.0, "max_rel": 0.0, "why": ""}
    if len(a) != len(b) or any(x.shape != y.shape or x.dtype != y.dtype for x, y in zip(a, b)):
        return dict(out, why="other shapes or dtypes")
    if all(torch.equal(x, y) for x, y in zip(a, b)):
        return dict(out, match="equal")
    diffs = [(x.double() - y.double()).abs() for x, y in zip(a, b)]
    out["max_abs"] = max(float(d.max()) for d in diffs if d.numel())
    out["max_rel"] = max(float((d / x.double().abs().clamp_min(1e-12)).max()) for d, x in zip(diffs, a) if d.numel())
    try:
        for x, y in zip(a, b):
            if x.is_floating_point() or x.is_complex():
                rtol, atol = _TOLERANCES.get(x.dtype, (0.0, 0.0))
                torch.testing.assert_close(y, x, rtol=rtol, atol=atol + spread)
            else:
                torch.testing.assert_close(y, x)
        out["match"] = "close"
    except AssertionError:
        pass
    return out


# torch.testing.assert_close's default (rtol, atol) by dtype, so that the baseline's own spread
# can widen atol.
_TOLERANCES = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
               torch.float64: (1e-7, 1e-7), torch.complex64: (1.3e-6, 1e-5), torch.complex128: (1e-7, 1e-7)}


def _not_compared(why):
    return {"match": "not_compared", "max_abs": 0.0, "max_rel": 0.0, "why": why}


def _key(cause):
    """A cause's birthplace, as a variant's recorded call would find it again."""
    b = cause["birthplace"]
    return cause["layout"], b["kind"], b["where"] if b["kind"] == "op" else b["input"] if b["kind"] == "model_input"         else b["input_text"]


def recorded(run, device="cpu"):
    """One call of `run` recorded by layoutprof itself (after the user's block: one profile at a
    time): its layout copies, their bytes, and the mixed-format ops its causes reach; derived,
    exact. Also the birthplaces of its causes that still cost something (copies, mixed-format
    ops, gradients), keyed as _key() does. The RNG state is kept (_timed)."""
    from .profile import profile  # the package's front end: imported when a variant is recorded
    with profile(counters=False, gpu=False) as p:
        _timed(run, device)
    summary, causes = p.report["summary"], p.report.get("causes", [])
    counts = {"implicit_copies": summary["copies"]["implicit_layout"],
              "explicit_copies": summary["copies"]["explicit_layout"],
              "copy_bytes": summary["copy_bytes"]["implicit_layout"] + summary["copy_bytes"]["explicit_layout"],
              "mixed_ops": sum(c["mixed_ops"] for c in causes)}
    costing = {_key(c) for c in causes if c["copies"] or c["mixed_ops"] or c["gradients"]}
    return counts, costing


@contextlib.contextmanager
def _eager():
    """A compiled model's variants run eagerly (torch.compiler.set_stance("force_eager") where
    torch has it): a new graph per variant would fill the user's cache and count against its
    recompile limit."""
    stance = getattr(getattr(torch, "compiler", None), "set_stance", None)
    if stance is None:
        yield
        return
    with stance("force_eager"):
        yield


def measure(call, variants, rounds=6, budget_s=60.0, device="cpu", causes=()):
    """Each variant timed against the baseline in interleaved rounds (the baseline, each variant,
    the baseline again), at most `rounds` of them and as many as `budget_s` allows; their
    verdicts (_native.judge_rounds) and outputs against the baseline's. `variants`: actions, or
    lists of them applied together, or the report's plans ({"name", "actions", "causes"}:
    _native.Report.what_if_plans, the one rule of which fixes to measure); `causes`: the report's (a
    variant that leaves its cause costing says so). Returns the report's "what_if" block with
    every variant in "variants" (report/what_if_json.h) and every call of the rounds in "calls"."""
    with _eager():
        return _measure(call, [_as_variant(v) for v in variants], rounds, budget_s, device, list(causes))


def _as_variant(v):
    if isinstance(v, dict) and "actions" in v:
        return v
    return {"actions": v if isinstance(v, list) else [v], "causes": []}


def _notes(call):
    notes = []
    if call.compiled:
        notes.append("the model is compiled: every variant, the baseline too, ran eagerly")
    if call.backward:
        notes.append("a training step: the forward, then torch.autograd.grad of its output; AccumulateGrad's "
                     "copies are not measured")
    return notes


def _survives(variant, causes, costing):
    """Whether a cause the variant fixes still costs something at its birthplace. A swap fixes
    the chain after its op only (the ops before it still pay): it is not asked."""
    if any(a["kind"] == "swap_operands" for a in variant["actions"]):
        return False
    return any(_key(causes[i]) in costing for i in variant["causes"] if i < len(causes))


def _rounds(baseline, timed, rounds, budget_s, device):
    """Interleaved rounds as the command times them (runner/rounds.h): the baseline, every
    variant (their order rotated by one each round), the baseline again. Returns each one's
    times by name ("baseline again" too) and every call ({"who", "round", "start_ns", "ns"})."""
    times = {v.name: [] for v in [baseline] + timed}
    times["baseline again"] = []
    calls, origin = [], time.perf_counter_ns()

    def one(who, run, r):
        at = time.perf_counter_ns() - origin
        ns = _timed(run, device)[0]
        times[who].append(ns)
        calls.append({"who": who, "round": r, "start_ns": at, "ns": ns})

    for r in range(rounds):
        if time.perf_counter_ns() - origin > budget_s * 1e9:
            break
        one("baseline", baseline.run, r)
        for k in range(len(timed)):
            v = timed[(r + k) % len(timed)]
            one(v.name, v.run, r)
        one("baseline again", baseline.run, r)
    return times, calls


def _measure(call, asked, rounds, budget_s, device, causes):
    baseline = Variant("baseline", [], call.runner())
    runnable = [variant(call, v["actions"], v.get("name")) for v in asked]
    timed = [v for v in runnable if v.run is not None]
    counts = {v.name: recorded(v.run, device) for v in [baseline] + timed}
    _ns, reference, drew = _timed(baseline.run, device)  # the warm-up calls
    _ns, second, drew_again = _timed(baseline.run, device)
    spread = compare_outputs(reference, second)["max_abs"]  # the baseline's own call-to-call spread
    drew = drew or drew_again
    outputs = {v.name: _timed(v.run, device)[1] for v in timed}
    times, calls = _rounds(baseline, timed, rounds, budget_s, device)
    again = times.pop("baseline again")
    control, judged = _native.judge_rounds(times["baseline"], again, [times[v.name] for v in timed])
    rows = []
    for v, want in zip(runnable, asked):
        row = {"name": v.name, "actions": v.actions, "causes": want["causes"], "refused": v.refused}
        if v.run is not None:
            count, costing = counts[v.name]
            row.update(time=judged[timed.index(v)], recorded=count,
                       outputs=_not_compared("the call draws random numbers") if drew else
                       compare_outputs(reference, outputs[v.name], spread),
                       cause_survives=_survives(want, causes, costing))
        rows.append(row)
    return {"why_not": "", "rounds": len(again), "rounds_asked": rounds, "budget_s": float(budget_s),
            "threads": torch.get_num_threads(), "device": device, "notes": _notes(call), "control": control,
            "baseline": counts["baseline"][0], "variants": rows, "calls": calls}


def nothing_measured(why, rounds, budget_s, device):
    """The "what_if" block of a run with nothing to measure, and why."""
    empty = {"rounds": 0, "level": 0.0, "baseline_median_ns": 0.0, "variant_median_ns": 0.0, "difference_ns": 0.0,
             "low_ns": 0.0, "high_ns": 0.0, "coverage": 0.0, "saving": "not_judged"}
    return {"why_not": why, "rounds": 0, "rounds_asked": rounds, "budget_s": float(budget_s),
            "threads": torch.get_num_threads(), "device": device, "notes": [], "control": empty,
            "baseline": {"implicit_copies": 0, "explicit_copies": 0, "copy_bytes": 0, "mixed_ops": 0},
            "variants": []}
