"""Functions and modules whose lines tests/python/rewrite_checks.py edits for a measurement (the
what-if's line fixes), each line as user code writes it."""
import torch
from torch import nn


def to_nchw(hwc):
    x = hwc.permute(0, 3, 1, 2)  # the line a contiguous_at fix edits
    return x * 2


def branch_first(branch, shortcut):
    out = branch + shortcut  # the line a swap_operands fix edits
    return out


def scaled_add(a, b):
    return torch.add(a, b, alpha=2)  # not commutative: refused


def two_permutes(x):
    return x.permute(1, 0) + x.permute(1, 0)  # two alike on one line: refused


def make_scale(k):
    def scale(x):
        y = x.t()  # a closure's line
        return y * k
    return scale


class Convolution(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return self.conv(x)


class Block(Convolution):
    def forward(self, hwc):
        x = hwc.permute(0, 3, 1, 2)  # a method's line, in a class whose methods call super()
        return super().forward(x)
