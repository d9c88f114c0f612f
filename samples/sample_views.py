"""Views and transposes: strided views (transpose, narrow, expand, view) whose layout the next
op that needs dense memory pays for (matmul, reshape, layer_norm, contiguous), the view that fails,
and an input handed over transposed. Shapes in comments are those of the manifest inputs."""

import torch
from torch import nn

from sample_table import Sample, copies


class TransposeMatmul(nn.Module):
    # x: [B, S, H, D] activations, w: [B, H, D, E] per-head matrices.
    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x.transpose(1, 2), w)


class TransposeBmmFree(nn.Module):
    # A transposed operand of a 3-D matmul costs nothing: bmm passes it to gemm as "T".
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x.transpose(1, 2), x)


class BroadcastMatmul(nn.Module):
    # One [D, E] matrix per head, shared across the batch: x [B, H, S, D] @ w [H, D, E].
    def __init__(self, heads: int = 4, dim: int = 16, out: int = 8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(heads, dim, out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x, self.w)


class TransposeReshape(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2).reshape(x.size(0), -1)


class NarrowAfterTranspose(nn.Module):
    # x: [B, C, T] features; drop the first time step and normalise over C.
    def __init__(self, channels: int = 16):
        super().__init__()
        self.norm = nn.LayerNorm(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.transpose(1, 2)
        y = y.narrow(1, 1, y.size(1) - 1)
        return self.norm(y)


class ExplicitContiguous(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2).contiguous()


class ExpandContiguous(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.expand(4, -1, -1).contiguous()


class ChannelShuffle(nn.Module):
    # ShuffleNet's channel shuffle, written with reshape instead of contiguous().view().
    def __init__(self, groups: int = 2):
        super().__init__()
        self.groups = groups

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.size()
        x = x.view(n, self.groups, c // self.groups, h, w)
        return x.transpose(1, 2).reshape(n, c, h, w)


class ViewFails(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2).view(x.size(0), -1)


class NoncontigInput(nn.Module):
    # Nothing wrong with the model: the caller hands it a transposed tensor.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1)


SAMPLES = [
    Sample("transpose_matmul", TransposeMatmul, ["2x8x4x16", "2x4x16x8"],
           copies(implicit_layout=1),
           "matmul folds the batch dims of a 4-D operand into one with reshape; after "
           "transpose(1, 2) the B and H dims of x cannot be merged by a view, so matmul "
           "copies x (the contiguous w folds for free)."),
    Sample("transpose_bmm_free", TransposeBmmFree, ["2x8x16"],
           copies(),
           "No copy: a 3-D matmul goes straight to bmm, and a transposed matrix is just a "
           "'T' gemm operand; the negative control for transpose_matmul."),
    Sample("broadcast_matmul", BroadcastMatmul, ["2x4x8x16"],
           copies(broadcast=1),
           "matmul expands the [H, D, E] weight over the batch to [B, H, D, E] and reshapes "
           "it to [B*H, D, E]; a zero-stride batch dim cannot be folded by a view, so the "
           "weight is materialised B times on every call."),
    Sample("transpose_reshape", TransposeReshape, ["2x8x16"],
           copies(implicit_layout=1),
           "reshape after transpose cannot be a view (the merged dims are not adjacent in "
           "memory), so aten::reshape clones the tensor."),
    Sample("narrow_after_transpose", NarrowAfterTranspose, ["2x16x8"],
           copies(implicit_layout=1),
           "layer_norm needs a dense input and calls contiguous() on the narrowed, transposed "
           "view; the culprit is aten::layer_norm (the outermost op), not the aten::contiguous "
           "it calls."),
    Sample("explicit_contiguous", ExplicitContiguous, ["2x8x16"],
           copies(explicit_layout=1),
           "The model asks for the copy itself: contiguous() on a transposed tensor."),
    Sample("expand_contiguous", ExpandContiguous, ["1x8x16"],
           copies(broadcast=1),
           "contiguous() on an expanded tensor materialises the broadcast: the source has a "
           "zero stride on the expanded dim, which makes it a broadcast copy before it can be "
           "an explicit_layout one."),
    Sample("channel_shuffle", ChannelShuffle, ["2x8x4x4"],
           copies(implicit_layout=1),
           "The shuffle's reshape after view+transpose cannot be a view, so aten::reshape "
           "copies the whole activation."),
    Sample("view_fails", ViewFails, ["2x8x16"],
           copies(), status="failed",
           why="view() on a transposed tensor raises RuntimeError (use reshape); nothing is "
               "copied before it fails.",
           hazards=[{"kind": "failed_view", "code": "return x.transpose(1, 2).view(x.size(0), -1)"}],
           exports=False),  # torch.export.export raises the same error: there is no program
    Sample("noncontig_input", NoncontigInput, ["2x8x16:perm=0,2,1"],
           copies(implicit_layout=1),
           "The model is fine; the input is allocated as [2, 16, 8] and viewed back "
           "transposed, so flatten's reshape cannot be a view and copies."),
]
