"""The small model the in-process checks record: a Linear, then a transpose that a reshape
must copy (one implicit layout copy a call)."""
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x):
        y = self.proj(x).transpose(1, 2)
        return y.reshape(y.shape[0], -1)
