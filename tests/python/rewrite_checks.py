"""The what-if's line fixes (layoutprof/_rewrite.py) on the functions of rewrite_cases.py: the
edited line does what the fix says while applied() holds, the function is its own again after,
and the lines that cannot be edited exactly so are refused with a reason.

Usage alone: rewrite_checks.py (this folder on sys.path)."""
import inspect

import torch

from layoutprof import _rewrite
import rewrite_cases as cases


def _where(function, marker):
    lines, first = inspect.getsourcelines(function)
    line = first + next(i for i, text in enumerate(lines) if marker in text)
    return f"{inspect.getsourcefile(function)}:{line}"


def _refused(where, op, kind, fail, words):
    try:
        _rewrite.rewritten(where, op, kind)
    except _rewrite.Refused as e:
        if words not in str(e):
            fail(f"rewrite at {where}: refused for {e}, want {words!r}")
        return
    fail(f"rewrite at {where}: {kind} of {op} was not refused")


def check_rewrites(fail):
    checked_failures = []

    def fail(message, report=fail):
        checked_failures.append(message)
        report(message)

    hwc = torch.randn(2, 5, 5, 4)
    before = cases.to_nchw.__code__
    edits = _rewrite.rewritten(_where(cases.to_nchw, "x = hwc.permute"), "aten::permute", "contiguous_at",
                               "channels_last")
    with _rewrite.applied(edits):
        fixed = cases.to_nchw(hwc)
    plain = cases.to_nchw(hwc)
    if cases.to_nchw.__code__ is not before:
        fail("rewrite: to_nchw's code was not restored")
    if not fixed.is_contiguous(memory_format=torch.channels_last) or not torch.equal(fixed, plain):
        fail(f"rewrite: contiguous_at in channels_last gave strides {fixed.stride()}, or other values")
    edits = _rewrite.rewritten(_where(cases.to_nchw, "x = hwc.permute"), "aten::permute", "contiguous_at")
    with _rewrite.applied(edits):
        dense = cases.to_nchw(hwc)
    if not dense.is_contiguous() or plain.is_contiguous():
        fail(f"rewrite: contiguous_at gave strides {dense.stride()}, the plain run {plain.stride()}")

    shortcut = torch.randn(2, 4, 3, 3)
    branch = torch.randn(2, 3, 3, 4).permute(0, 3, 1, 2)
    edits = _rewrite.rewritten(_where(cases.branch_first, "out = branch"), "aten::add", "swap_operands")
    with _rewrite.applied(edits):
        swapped = cases.branch_first(branch, shortcut)
    first = cases.branch_first(branch, shortcut)
    if first.is_contiguous() or not swapped.is_contiguous() or not torch.equal(swapped, first):
        fail(f"rewrite: swap_operands gave strides {swapped.stride()} (branch first: {first.stride()})")

    _refused(_where(cases.scaled_add, "torch.add"), "aten::add", "swap_operands", fail, "alpha")
    _refused(_where(cases.two_permutes, "x.permute(1, 0) +"), "aten::permute", "contiguous_at", fail, "2 expressions")
    _refused(_where(cases.branch_first, "out = branch"), "aten::sub", "swap_operands", fail, "not a commutative")
    _refused(_where(cases.to_nchw, "return x * 2"), "aten::permute", "contiguous_at", fail, "could be aten::permute")

    scale = cases.make_scale(3.0)  # a closure: its cell kept
    edits = _rewrite.rewritten(_where(scale, "y = x.t()"), "aten::t", "contiguous_at")
    with _rewrite.applied(edits):
        y = scale(torch.randn(3, 4))
    if not y.is_contiguous():
        fail(f"rewrite: the closure's t() was not made dense: {y.stride()}")

    block, dense_in = cases.Block(), []
    block.conv.register_forward_pre_hook(lambda _m, args: dense_in.append(args[0].is_contiguous()))
    edits = _rewrite.rewritten(_where(cases.Block.forward, "x = hwc.permute"), "aten::permute", "contiguous_at")
    forward = cases.Block.forward.__code__
    with _rewrite.applied(edits):
        out = block(hwc)
    if cases.Block.forward.__code__ is not forward or not torch.allclose(out, block(hwc)) or dense_in != [True, False]:
        fail(f"rewrite: the method's edit: the convolution's input dense {dense_in} (edited, then not), its values "
             "changed, or its code not restored")
    if not checked_failures:
        print("rewrites: contiguous_at and swap_operands applied and undone; alpha, two alike, another op refused")


if __name__ == "__main__":
    failures = []
    check_rewrites(failures.append)
    for f in failures:
        print("FAIL", f)
    raise SystemExit(1 if failures else 0)
