"""make_samples.py --check: count and classify aten::copy_ with torch.profiler, independently
of layoutprof, and compare with the sample table's expectations; derive each training sample's
gradient verdicts with Python's autograd hooks.

It walks torch.profiler's event tree, which, unlike function_events, records strides and
dtypes, classifies every aten::copy_ by the rules make_samples.py's docstring gives and fails
when the hand-written expectations and the profiler disagree (total, class split or ok/failed
status)."""

import math
import sys
from typing import Dict, List, NamedTuple

import torch

from sample_table import COPY_CLASSES, Expect, Sample, for_version, make_input

WARMUP_CALLS = 3  # the profiling executor specialises the graph during the first calls
EXPLICIT_CULPRITS = {"aten::contiguous", "aten::clone", "aten::copy_", "aten::to",
                     "aten::_to_copy", "aten::type_as"}


class Copy(NamedTuple):
    cls: str
    culprit: str
    culprit_shapes: list
    shapes: list  # [dst, src]
    strides: list
    dtypes: list


def classify(shapes, strides, dtypes, devices, culprit: str) -> str:
    (dst_shape, src_shape), (dst_stride, src_stride) = shapes, strides
    if dtypes[0] != dtypes[1] or devices[0] != devices[1]:
        return "dtype_device"
    if math.prod(src_shape) < math.prod(dst_shape) or any(
            st == 0 and sz > 1 for sz, st in zip(src_shape, src_stride)):
        return "broadcast"

    def drop_ones(shape, stride):
        return [st for sz, st in zip(shape, stride) if sz != 1]

    if drop_ones(src_shape, src_stride) == drop_ones(dst_shape, dst_stride):
        return "same_layout"
    return "explicit_layout" if culprit in EXPLICIT_CULPRITS else "implicit_layout"


_ARG_COUNTS: Dict[str, List[int]] = {}


def own_args(name: str, recorded: int) -> slice:
    """Which recorded inputs are the op's own arguments.

    Ops called by the TorchScript interpreter go through Dispatcher::callBoxed, which in
    1.13 hands RecordFunction the whole interpreter stack: values kept there for later ops
    come first, the op's arguments last. Take as many trailing entries as the op's
    (non-out) schema has arguments; ops called from C++ kernels record exactly those.
    """
    if name not in _ARG_COUNTS:
        schemas = torch._C._jit_get_schemas_for_operator(name)
        _ARG_COUNTS[name] = sorted({len(sc.arguments) for sc in schemas
                                    if not any(a.is_out for a in sc.arguments)})
    fitting = [n for n in _ARG_COUNTS[name] if n <= recorded]
    return slice(recorded - fitting[-1] if fitting else 0, None)


class Recorded(NamedTuple):
    shapes: list  # [] for an input that is not a tensor
    strides: list
    dtypes: list
    devices: list


def recorded_inputs(fields) -> Recorded:
    """An op's recorded inputs, from either profiler: torch 1.13 keeps them as parallel lists
    (fields.inputs.shapes, .strides, .dtypes, .tensor_metadata); torch 2.x as one list with a
    _TensorMetadata (sizes, strides, dtype, device) for each tensor."""
    ins = fields.inputs
    if hasattr(ins, "shapes"):
        devices = [str(m.device) if m is not None else "?" for m in ins.tensor_metadata]
        return Recorded(list(ins.shapes), list(ins.strides), list(ins.dtypes), devices)
    tensors = [i if type(i).__name__ == "_TensorMetadata" else None for i in ins]
    return Recorded([list(t.sizes) if t else [] for t in tensors],
                    [list(t.strides) if t else [] for t in tensors],
                    [str(t.dtype).replace("torch.", "") if t else "" for t in tensors],
                    [str(t.device) if t else "?" for t in tensors])


def profile_copies(module, inputs):
    """One profiled forward(); returns (copies, exception or None). Taken once more when
    torch.profiler fails inside torch: torch 2.14's has raised an AttributeError building its own
    event list ('FunctionEvent' object has no attribute 'is_async', torch.autograd.profiler_util)
    after a forward of fork_wait on a loaded machine. The retry is said on stderr; a second
    failure is raised."""
    try:
        return profile_copies_once(module, inputs)
    except AttributeError as e:
        print(f"make_samples: torch.profiler failed inside torch ({e}); profiling once more",
              file=sys.stderr)
        return profile_copies_once(module, inputs)


def profile_copies_once(module, inputs):
    error = None
    with torch.profiler.profile(record_shapes=True) as prof:
        try:
            module(*inputs)
        except RuntimeError as e:
            error = e
    function_scope = torch._C._profiler.RecordScope.FUNCTION
    found: List[Copy] = []

    def walk(event, ops):
        # The experimental event tree (unlike function_events) carries strides and tensor
        # metadata, which the classification needs.
        fields = event.extra_fields
        is_op = isinstance(fields, torch._C._profiler._ExtraFields_TorchOp) and \
            fields.scope == function_scope
        if is_op:
            ops = ops + [event]
        if event.name == "aten::copy_" and is_op:
            culprit = ops[0]
            args = recorded_inputs(fields)
            # copy_(self, src, non_blocking): dst and src are the two entries before the last.
            own = slice(len(args.shapes) - 3, len(args.shapes) - 1)
            shapes, strides, dtypes = args.shapes[own], args.strides[own], args.dtypes[own]
            devices = args.devices[own]
            culprit_args = recorded_inputs(culprit.extra_fields).shapes
            found.append(Copy(
                classify(shapes, strides, dtypes, devices, culprit.name),
                culprit.name,
                [sh for sh in culprit_args[own_args(culprit.name, len(culprit_args))] if sh],
                shapes, strides, dtypes))
        for child in event.children:
            walk(child, ops)

    for root in prof.profiler.kineto_results.experimental_event_tree():
        walk(root, [])
    # The plain event list must agree with the tree walk, or the walk missed a thread.
    listed = sum(1 for e in prof.events() if e.name == "aten::copy_")
    if listed != len(found):
        raise RuntimeError(f"profiler lists {listed} aten::copy_ events, tree walk found "
                           f"{len(found)}")
    return found, error


def warmed_profile(module, specs: List[str], grad_mode: bool):
    """The warm-up calls, then one profiled call, at one intra-op thread, as the expectations
    say (LibTorch picks some kernels by thread count)."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    inputs = [make_input(spec) for spec in specs]
    with torch.set_grad_enabled(grad_mode):
        for _ in range(WARMUP_CALLS):
            try:
                module(*inputs)
            except RuntimeError:
                break  # a failing model fails the same way in the profiled call
        return profile_copies(module, inputs)


def check_sample(sample: Sample, path: str, grad_mode: bool):
    return warmed_profile(torch.jit.load(path), sample.inputs, grad_mode)


def compare_copies(found, error, want: Expect):
    """(copies per class, status, what differs from `want`)."""
    got = {k: 0 for k in COPY_CLASSES}
    for c in found:
        got[c.cls] += 1
    status = "failed" if error is not None else "ok"
    problems = []
    if status != want.status:
        problems.append(f"status {status}, expected {want.status}")
    if got != want.copies:
        problems.append("classes differ: " + ", ".join(
            f"{k} {got[k]} (expected {want.copies[k]})" for k in COPY_CLASSES if got[k] != want.copies[k]))
    return got, status, problems


def print_copies(found) -> None:
    for c in found:
        print(f"    {c.cls:15s} {c.culprit}{c.culprit_shapes}  "
              f"dst {c.dtypes[0]}{c.shapes[0]}/{c.strides[0]} <- "
              f"src {c.dtypes[1]}{c.shapes[1]}/{c.strides[1]}")


def expected_grads(sample: Sample, version: str) -> Dict[str, str]:
    return for_version([(p, v) for p, v, _ in sample.grad_expectations()], version, sample.name)


def python_grad_verdicts(path: str, specs: List[str]) -> Dict[str, str]:
    """Each parameter's gradient verdict after one training step of the archive, derived here
    with Python's autograd, independently of layoutprof: a hook on each parameter sees the
    gradient as autograd hands it to AccumulateGrad (p.grad afterwards may already be a copy
    in the parameter's layout), and autograd's layout contract decides."""
    module = torch.jit.load(path)
    module.train()
    torch.manual_seed(0)
    inputs = [make_input(spec) for spec in specs]
    seen = {}
    params = dict(module.named_parameters())
    hooks = [p.register_hook(lambda g, n=n: seen.__setitem__(n, (tuple(g.shape), g.stride(), g.is_contiguous() or
                                                                 _dense(g.shape, g.stride()))))
             for n, p in params.items() if p.requires_grad]
    for _ in range(WARMUP_CALLS):  # the profiling executor settles on its graph first
        seen.clear()
        out = module(*inputs)
        torch.manual_seed(1)
        out.backward(torch.randn(out.shape))
        for p in params.values():
            p.grad = None
    for h in hooks:
        h.remove()
    verdicts = {}
    for n, p in params.items():
        if not p.requires_grad:
            continue
        if n not in seen:
            verdicts[n] = "no_grad"
            continue
        shape, stride, dense = seen[n]
        if stride == p.stride():
            verdicts[n] = "match"
        elif dense and _dense(p.shape, p.stride()) and all(
                (gs == ps) if size != 1 else gs != 0 for size, gs, ps in zip(p.shape, stride, p.stride())):
            verdicts[n] = "size1_only"
        else:
            verdicts[n] = "layout_mismatch"
    return verdicts


def _dense(shape, stride) -> bool:
    """Non-overlapping and dense: some order of the dims of size > 1 is row-major."""
    dims = sorted((st, sz) for sz, st in zip(shape, stride) if sz != 1)
    expected = 1
    for st, sz in dims:
        if st != expected:
            return False
        expected *= sz
    return True


def check(samples: List[Sample], paths: Dict[str, str]) -> bool:
    print(f"\nchecking {len(samples)} samples: {WARMUP_CALLS} warm-up calls, then one "
          "profiled call under no_grad (and again with grad enabled, which must agree)")
    ok = True
    rows = []
    for s in samples:
        want = s.expected(torch.__version__)
        found, error = check_sample(s, paths[s.name], grad_mode=False)
        got, status, problems = compare_copies(found, error, want)
        # The tool runs under no_grad; the frozen samples must not depend on that (training
        # samples' parameters require grad: their graphs may).
        grad_found, grad_error = check_sample(s, paths[s.name], grad_mode=True)
        # (Sorted: a forked task's copies interleave with the main thread's in any order.)
        if s.grads is None and (sorted(c.cls for c in grad_found) != sorted(c.cls for c in found) or
                                (grad_error is None) != (error is None)):
            problems.append("copies differ with grad mode enabled")
        if s.grads is not None:
            verdicts = python_grad_verdicts(paths[s.name], s.inputs)
            want_grads = expected_grads(s, torch.__version__)
            if verdicts != want_grads:
                problems.append("gradient verdicts differ: " + ", ".join(
                    f"{n} {verdicts.get(n)} (expected {want_grads.get(n)})"
                    for n in sorted(set(verdicts) | set(want_grads)) if verdicts.get(n) != want_grads.get(n)))
            print(f"    gradient verdicts (Python autograd hooks): {verdicts}")

        verdict = "OK" if not problems else "MISMATCH: " + "; ".join(problems)
        print(f"{s.name}: expected {sum(want.copies.values())}, profiler {len(found)}, "
              f"status {status} -> {verdict}")
        summary = ", ".join(f"{k}={got[k]}" for k in COPY_CLASSES if got[k])
        print(f"    classes: {summary or 'none'}")
        print_copies(found)
        if error is not None:
            print(f"    raised: {str(error).strip().splitlines()[-1]}")
        ok = ok and not problems
        rows.append((s.name, status, sum(want.copies.values()), len(found),
                     [got[k] for k in COPY_CLASSES], "OK" if not problems else "MISMATCH"))

    print("\nsample                   status  expect profiler  impl expl bcast dtype same  result")
    for name, status, expect, total, counts, verdict in rows:
        print(f"{name:24s} {status:6s} {expect:7d} {total:8d}  "
              + " ".join(f"{n:4d}" if i != 2 else f"{n:5d}" for i, n in enumerate(counts))
              + f"  {verdict}")
    return ok


def check_pt2(samples: List[Sample], paths: Dict[str, str]) -> bool:
    """Each .pt2 as Python runs it (torch.export.load(...).module()), profiled as the
    TorchScript archives are: its copies must be the manifest's pt2 expectation."""
    print(f"\nchecking {len(samples)} torch.export programs the same way")
    ok = True
    for s in samples:
        module = torch.export.load(paths[s.name]).module()
        found, error = warmed_profile(module, s.pt2_specs(), grad_mode=False)
        want = s.pt2_expected(torch.__version__)
        _, status, problems = compare_copies(found, error, want)
        print(f"{s.name}.pt2: expected {sum(want.copies.values())}, profiler {len(found)}, "
              f"status {status} -> " + ("OK" if not problems else "MISMATCH: " + "; ".join(problems)))
        print_copies(found)
        ok = ok and not problems
    return ok
