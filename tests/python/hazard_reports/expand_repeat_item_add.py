"""An einops.repeat result written one element at a time: the element is every copy's.

Report:   https://github.com/arogozhnikov/einops/issues/202
Title:    [BUG][Different results of einops.repeat and torch.repeat]
Pattern:  b = repeat(a, 't -> n t', n=2); b[0, 0] += 1. On the torch backend einops (0.4 and
          later) returns an expand()ed view for a new axis, so the n copies share one row of
          storage: the write to b[0, 0] shows in b[1, 0] and in a itself. The maintainer's
          answer: a feature (expand semantics); use repeat(...).clone() for a copy.
Here:     Slot-attention style slot initialisation: one learnt base slot repeated num_slots
          times (einops is not installed; its torch code path is the expand below), then a
          marker added to slot 0's first feature only. Every slot gets it.
Writes:   the add_ on a 0-d view of the expanded tensor has no overlap inside itself, so PyTorch
          neither refuses nor warns: the result is silently wrong.
Torch:    1.13 and 2.14 behave the same (silent; slot 1 changed too).
Runs:     3 model calls under no_grad; ends normally, printing what it saw.

EXPECT: aliased_write slots[0, 0] += 1.0
"""
import sys

import torch
from torch import nn


class SlotInit(nn.Module):
    def __init__(self, dim=4, num_slots=3):
        super().__init__()
        self.num_slots = num_slots
        self.mu = nn.Linear(dim, dim)

    def forward(self, x):
        base = self.mu(x)                                      # (dim,)
        slots = base.unsqueeze(0).expand(self.num_slots, -1)   # einops.repeat(base, 'd -> n d', n=num_slots)
        slots[0, 0] += 1.0                                     # meant for slot 0 only
        return slots


def main():
    torch.manual_seed(0)
    model = SlotInit().eval()
    x = torch.randn(4)
    with torch.no_grad():
        for _ in range(3):
            slots = model(x)
        intended = model.mu(x).unsqueeze(0).repeat(model.num_slots, 1)
        intended[0, 0] += 1.0
    shared = bool(slots[1, 0] == slots[0, 0])
    print(f"expand_repeat_item_add: slot 1 feature 0 {slots[1, 0].item():.4f}, "
          f"intended {intended[1, 0].item():.4f}: {'every slot got the write' if shared else 'slot 0 only'}")
    if not shared:
        sys.exit("expand_repeat_item_add: not reproduced (the write stayed in slot 0)")


if __name__ == "__main__":
    main()
