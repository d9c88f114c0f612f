"""A write through reshape() of a contiguous tensor: a view, so the original sees it. No hazard.

Report:   https://github.com/pytorch/pytorch/issues/100900
Title:    Using `reshape` without `clone` gives unexpected results
Pattern:  x = torch.arange(8).reshape(2, 4); y = x.reshape(2, 2, 2);
          y[:, 1] = y[:, 1].flip((1,)). The reporter took it for a bug that x changed too. It is
          the documented behaviour: reshape of a contiguous tensor returns a view, so a write
          through it is a write to x, every time, on every version. Nothing is lost (the write
          lands in the tensor that is read next) and nothing is aliased (each element is written
          once; flip() makes its own copy first). Compare lost_write in memcpy_flatten_lost.py and
          kv_cache_contiguous_index_copy.py, where the reshaped tensor is not contiguous.
Here:     A block that reverses the second half of its hidden features in place through a
          reshape view of the hidden state, then reads the hidden state: the output is the one
          of the out-of-place version.
Torch:    1.13 and 2.14 behave the same (the write reaches the hidden state).
Runs:     3 model calls under no_grad; ends normally, printing what it saw.

EXPECT: none
"""
import sys

import torch
from torch import nn


class HalfFlip(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc(x)                                      # (batch, dim): contiguous
        y = h.reshape(h.shape[0], 2, h.shape[1] // 2)       # a view of h
        y[:, 1] = y[:, 1].flip((1,))                        # reverses h's second half
        return self.out(h)


def main():
    torch.manual_seed(0)
    model = HalfFlip().eval()
    x = torch.randn(3, 8)
    with torch.no_grad():
        for _ in range(3):
            out = model(x)
        h = model.fc(x)
        want = model.out(torch.cat([h[:, :4], h[:, 4:].flip((1,))], dim=1))
    same = torch.allclose(out, want)
    print(f"reshape_view_write_none: the write reached the hidden state: {same}")
    if not same:
        sys.exit("reshape_view_write_none: the write did not reach the hidden state")


if __name__ == "__main__":
    main()
