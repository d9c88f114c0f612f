"""Samples of hazards: layouts that change what a model computes, not only how fast. A buffer
made by expand() written through a view (the write lands in every position that shares the
element: an aliased write), a KV cache written through reshape() of a transposed view (reshape
copied, the key went into the copy: a lost write), and the idioms that look alike and are
correct, which must report no hazard. Each sample's `hazards` (hazard()) is what its report
must hold; [] says none. The in-process cases (training steps, a weight loader, metrics code
after the step) are in sample_hazard_steps.py."""
import torch
from torch import nn

from sample_table import Sample, copies


class ExpandedBuffer(nn.Module):
    """A table of per-row slots, registered as zeros(4, 1).expand(4, 8) to save memory: its 32
    positions share 4 stored elements. forward() sets column 0 of each row, and every column of
    that row changes with it."""

    def __init__(self):
        super().__init__()
        self.register_buffer("slots", torch.zeros(4, 1).expand(4, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [4, 8]
        self.slots[:, 0] = x.sum(1)
        return x * self.slots


class KVCacheReshape(nn.Module):
    """A decoder's key cache read as [B, T, H, D], a transposed view of a [B, H, T, D] store.
    forward() writes the new token's key at the last step through reshape(b, t, h * d): the
    cache cannot be viewed that way, so reshape returns a copy, the key goes into the copy, and
    the attention reads the real cache, which kept its zeros."""

    def __init__(self, batch: int = 1, heads: int = 2, steps: int = 8, dim: int = 4):
        super().__init__()
        self.key = nn.Linear(heads * dim, heads * dim, bias=False)
        self.register_buffer("cache", torch.zeros(batch, heads, steps, dim).transpose(1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [B, H * D], the new token
        b, t, h, d = self.cache.size(0), self.cache.size(1), self.cache.size(2), self.cache.size(3)
        k = self.key(x)
        self.cache.reshape(b, t, h * d)[:, t - 1] = k
        scores = (self.cache * x.view(b, 1, h, d)).sum(-1)  # [B, T, H]
        return torch.softmax(scores, dim=1)


class InplaceFresh(nn.Module):
    """In-place ops on a tensor the model just made, dense and its own."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [4, 8]
        y = torch.zeros_like(x)
        y[0] = x.sum(0)
        y.add_(x)
        return y.relu_()


class ExpandRead(nn.Module):
    """An expanded tensor only read: the broadcast is free and nothing writes through it."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(4, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [1, 8]
        wide = x.expand(4, 8)
        return wide * self.scale + wide.sum(0)


class ReshapeViewCopy(nn.Module):
    """reshape(...).copy_() into a dense buffer: reshape returns a view, so the write reaches it."""

    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.zeros(2, 4, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [2, 16]
        self.state.reshape(2, 16).copy_(x)
        return self.state.sum(2)


class ContiguousView(nn.Module):
    """The fix for the failing view: contiguous() first, then view()."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [4, 8]
        return x.t().contiguous().view(-1) * 2


class BatchNormTrain(nn.Module):
    """BatchNorm in train mode: it updates its running statistics in place, as it should."""

    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [2, 4, 4, 4]
        return self.norm(x)


def flattened(x: torch.Tensor) -> torch.Tensor:
    """x.t() flattened: reshape cannot view it, so this returns a copy of the caller's own."""
    return x.t().reshape(-1)


class ReshapeCopyWritten(nn.Module):
    """A helper's reshape copy, written in place and then used: the write is read, not lost."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [4, 8]
        y = flattened(x)
        y.add_(1)
        return y * 2


def hazard(kind: str, code: str) -> dict:
    """What the report's hazard must say: its kind and a piece of the code on its line."""
    return {"kind": kind, "code": code}


# Export functionalizes every in-place write (a program holds no alias to write through) and
# these samples are about the TorchScript and eager front ends: none is exported.
SAMPLES = [
    Sample("expanded_buffer", ExpandedBuffer, ["4x8"],
           copies(same_layout=1), exports=False,
           why="slots is zeros(4, 1).expand(4, 8), strides (1, 0). slots[:, 0] selects its 4 stored "
               "elements, dense [4] strides (1): copy_ of x.sum(1) into it keeps the layout "
               "(same_layout), and every column of each row now holds that row's sum. The product "
               "reads the stride-0 buffer in place.",
           hazards=[hazard("aliased_write", "self.slots[:, 0] = x.sum(1)")]),
    Sample("kv_cache_reshape", KVCacheReshape, ["1x8"],
           copies(implicit_layout=1, same_layout=1), exports=False,
           why="The cache [1, 8, 2, 4] has strides (64, 4, 32, 1): heads and dim cannot merge into one "
               "dim by a view, so reshape(b, t, h * d) copies it (implicit); copy_ of the key [1, 8] "
               "into row t - 1 of that copy, strides (64, 1) for (8, 1), differs on size-1 dims only "
               "(same_layout). The key never reaches the cache.",
           hazards=[hazard("lost_write", "self.cache.reshape(b, t, h * d)[:, t - 1] = k")]),
    Sample("inplace_fresh", InplaceFresh, ["4x8"],
           copies(same_layout=1), exports=False,
           why="y[0] = x.sum(0): copy_ of a dense [8] into a dense row (same_layout). add_ and relu_ "
               "write y, which nothing else shares.",
           hazards=[]),
    Sample("expand_read", ExpandRead, ["1x8"],
           copies(), exports=False,
           why="x.expand(4, 8) is read by mul and sum in place (TensorIterator takes the zero stride): "
               "no copy, no write.",
           hazards=[]),
    Sample("reshape_view_copy", ReshapeViewCopy, ["2x16"],
           copies(same_layout=1), exports=False,
           why="state is dense: reshape(2, 16) is a view of it, and copy_ of x [2, 16] into it keeps "
               "the layout (same_layout).",
           hazards=[]),
    Sample("contiguous_view", ContiguousView, ["4x8"],
           copies(explicit_layout=1, dtype_device=1), exports=False,
           why="contiguous() copies the transposed [8, 4] (explicit); view(-1) of the copy is a view. "
               "* 2 casts the int 2, a 0-dim int64 wrapped number, to float (dtype_device).",
           hazards=[]),
    Sample("batchnorm_running_stats", BatchNormTrain, ["2x4x4x4"],
           copies(), exports=False, train=True,
           why="Train mode at one thread: batch norm computes the batch's statistics and updates "
               "running_mean and running_var in its kernel, through no aten::copy_.",
           hazards=[]),
    Sample("reshape_copy_written", ReshapeCopyWritten, ["4x8"],
           copies(implicit_layout=1, dtype_device=2), exports=False,
           why="flattened's reshape of the transposed [8, 4] cannot be a view and copies it "
               "(implicit); add_ writes the copy, which y * 2 then reads. add_(1) and * 2 each cast "
               "their int, a 0-dim int64 wrapped number, to float (2 dtype_device).",
           hazards=[]),
]
