"""What the TorchScript interpreter runs besides straight-line ops: a scripted loop of many
small ops (the scale benchmark's model) and a task forked onto the inter-op thread pool."""

import torch
from torch import nn

from sample_table import Sample, copies


class OpLoop(nn.Module):
    """A scripted loop of small ops, as generation loops and samplers run: about ten op events
    per row of the input, so the input's first size scales one call to any number of ops."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x[0]
        for i in range(x.size(0)):
            y = y * 0.5 + x[i]
            y = y.t().contiguous()
        return y


class ForkBranch(nn.Module):
    """Runs as a task of its own (torch.jit.fork): reshape after transpose copies there."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2).reshape(x.size(0), -1)


class ForkWait(nn.Module):
    """Inter-op parallelism: a branch forked onto LibTorch's inter-op thread pool while the
    main path goes on; after the wait, forward() may continue on the thread that finished the
    branch. Each op belongs to its own module and line, whichever thread ran it."""

    def __init__(self):
        super().__init__()
        self.branch = ForkBranch()
        self.head = nn.Linear(128, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        fut = torch.jit.fork(self.branch, x)
        y = x.transpose(1, 2).contiguous()
        z = torch.jit.wait(fut)
        return self.head(z) + y.sum()


SAMPLES = [
    Sample("op_loop", OpLoop, ["64x8x8"],
           copies(explicit_layout=64, dtype_device=64),
           "Per row of the input: '* 0.5' casts its 0-dim double to float (dtype_device) and "
           "t().contiguous() copies the transposed 8x8 (explicit). The scale benchmark runs it "
           "with 16500 and 60000 rows (about 280,000 and 1,000,000 op events per call)."),
    Sample("fork_wait", ForkWait, ["2x8x16"],
           copies(implicit_layout=1, explicit_layout=1, broadcast=1),
           "The forked branch's reshape of the transposed [2, 16, 8] view into [2, 128] cannot be "
           "a view (implicit), on an inter-op pool thread; the main path's transpose(1, "
           "2).contiguous() copies (explicit); after the wait, the head Linear on the 2-D [2, 128] "
           "input copies its bias into addmm's output (broadcast)."),
]
