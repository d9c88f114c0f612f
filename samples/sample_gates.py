"""The CI gate's example: a baseline model and the same model after a change that adds an
implicit copy (`layoutprof --baseline` reports it as a regression)."""

import torch
from torch import nn

from sample_table import Sample, copies


class GateBase(nn.Module):
    # The CI gate's example: a projection, a split into 4 heads and back, an output layer.
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 32)
        self.out = nn.Linear(32, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        y = self.proj(x).view(b, s, 4, d // 4)
        y = y.reshape(b, s, d)
        return self.out(y.relu())


class GateRegressed(GateBase):
    # The same model after a change that transposes the heads and merges them without
    # transposing back: one more op, and an implicit copy in the merge.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        y = self.proj(x).view(b, s, 4, d // 4).transpose(1, 2)
        y = y.reshape(b, s, d)
        return self.out(y.relu())


SAMPLES = [
    Sample("gate_base", GateBase, ["2x16x32"],
           copies(broadcast=2),
           "The gate example's baseline: the head split and merge are views; the two Linear "
           "biases are copied into addmm's outputs (broadcast)."),
    Sample("gate_regressed", GateRegressed, ["2x16x32"],
           copies(implicit_layout=1, broadcast=2),
           "gate_base plus a transpose of the heads: the merge reshape can no longer be a view "
           "and copies (implicit), which `layoutprof --baseline` reports as a regression."),
]
