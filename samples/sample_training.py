"""Training samples (--backward): parameters whose gradients autograd lays out unlike them,
each parameter's gradient verdict derived by hand with the reason."""

import torch
from torch import nn

from sample_table import Sample, copies


class ConvBlock(nn.Module):
    # A 3x3, a 1x1 (pointwise) and a depthwise convolution, NCHW weights.
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 3, padding=1)
        self.pointwise = nn.Conv2d(16, 32, 1)
        self.depthwise = nn.Conv2d(32, 32, 3, padding=1, groups=32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.depthwise(self.pointwise(self.conv(x)))


def conv_block_channels_last() -> nn.Module:
    # The same block converted as the fix says: model.to(memory_format=torch.channels_last).
    return ConvBlock().to(memory_format=torch.channels_last)


class GradZoo(nn.Module):
    # Parameters used the ways that make autograd hand back gradients in another layout.
    def __init__(self):
        super().__init__()
        self.transposed = nn.Parameter(torch.randn(8, 16).t())  # created transposed: [16, 8], strides (1, 16)
        self.einsum_weight = nn.Parameter(torch.randn(16, 8))   # [out, in], used through einsum
        self.scale = nn.Parameter(torch.ones(1, 16))            # used through expand
        self.table = nn.Parameter(torch.zeros(1, 16))           # used through repeat
        self.heads = nn.Parameter(torch.randn(4, 8, 16))        # [H, D, E], used permuted to [D, H, E]
        self.unused = nn.Parameter(torch.zeros(16))             # never used in forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [B, 16]
        y = x @ self.transposed                                  # [B, 8]
        y = torch.einsum("bi,oi->bo", y, self.einsum_weight)     # [B, 16]
        y = y * self.scale.expand(y.shape[0], 16) + self.table.repeat(y.shape[0], 1)
        z = y.view(y.shape[0], 4, 4)[:, :, :2].reshape(1, y.shape[0], 8).expand(8, y.shape[0], 8)
        per_head = torch.bmm(z[:, :, :4], self.heads.permute(1, 0, 2)[:, :4, :])  # [D, B, E]
        return y + per_head.sum(0)


SAMPLES = [
    Sample("grad_channels_last_input", ConvBlock, ["2x8x6x6:channels_last"],
           copies(implicit_layout=1, broadcast=1),
           "Forward, at one intra-op thread: the channels_last input meets the NCHW 3x3 "
           "conv.weight, which the convolution copies into channels_last (implicit); the 1x1 "
           "weight [32, 16, 1, 1] is already dense in both orders, no copy. LibTorch picks a 1x1 "
           "convolution's kernel by thread count (use_mkldnn in Convolution.cpp: THNN is faster "
           "single-threaded): at one thread the pointwise conv runs slow_conv2d, which writes its "
           "bias [32] into the channels_last [2, 32, 6, 6] output by a broadcast copy; with more "
           "threads oneDNN adds the bias in the kernel and there is no broadcast copy.",
           grads={"conv.weight": "layout_mismatch", "conv.bias": "match",
                  "pointwise.weight": "match", "pointwise.bias": "match",
                  "depthwise.weight": "size1_only", "depthwise.bias": "match"},
           grads_why="The seed's case. The input is channels_last and the weights NCHW: the "
                     "convolutions' backward computes each weight's gradient in the input's "
                     "layout, channels_last. For the 3x3 conv.weight [16, 8, 3, 3] that layout "
                     "differs from NCHW on dims of size > 1 (strides [72, 1, 24, 8] for [72, 9, 3, "
                     "1]): the contract is broken and AccumulateGrad copies it every step. For "
                     "depthwise.weight [32, 1, 3, 3] channels_last strides [9, 1, 3, 1] differ from "
                     "NCHW [9, 9, 3, 1] only on the size-1 input-channel dim: kept as is, and DDP "
                     "warns. pointwise.weight [32, 16, 1, 1]: at one thread its backward is "
                     "slow_conv2d's, which gives the gradient in the weight's own layout (strides "
                     "[16, 1, 1, 1]), a match; with more threads LibTorch 2.x's oneDNN backward "
                     "gives it channels_last, strides [16, 1, 16, 16], different on the size-1 "
                     "kernel dims only: size1_only, the exact warning of the seed (grad strides "
                     "[256, 1, 256, 256] for a bucket view [256, 1, 1, 1]). Biases are 1-D."),
    Sample("grad_channels_last_model", conv_block_channels_last, ["2x8x6x6:channels_last"],
           copies(broadcast=1),
           "Forward, at one intra-op thread: the weights are channels_last already, so no "
           "weight is copied; the pointwise conv's slow_conv2d bias copy remains (none with more "
           "threads, where oneDNN runs it).",
           grads={"conv.weight": "match", "conv.bias": "match",
                  "pointwise.weight": "match", "pointwise.bias": "match",
                  "depthwise.weight": "match", "depthwise.bias": "match"},
           grads_why="The fix: the same block converted with model.to(memory_format="
                     "torch.channels_last) before scripting, fed channels_last. Every weight is "
                     "channels_last and so is every gradient: all match, nothing to warn about.",
           causes=[]),
    Sample("grad_zoo", GradZoo, ["4x16"],
           copies(implicit_layout=1, broadcast=1),
           "Forward: repeat copies the [1, 16] table expanded over the batch (broadcast, a "
           "stride-0 source); the reshape of the sliced view [:, :, :2] cannot be a view and "
           "copies it (implicit). bmm reads its expanded and permuted operands in place.",
           grads={"transposed": "match", "einsum_weight": "layout_mismatch", "scale": "match",
                  "table": "match", "heads": "layout_mismatch", "unused": "no_grad"},
           grads_why="transposed ([16, 8] created as a transpose, strides (1, 16)) feeds mm "
                     "directly: ATen's mm backward returns the gradient of a transposed operand "
                     "transposed too, a match. einsum_weight [16, 8] goes through einsum, which "
                     "permutes it into a bmm operand; bmm's gradient comes back in the permuted "
                     "order (strides (1, 16)): layout_mismatch. scale (expand) and table (repeat) "
                     "get their gradients from sums, contiguous: match. heads [4, 8, 16] is used "
                     "as heads.permute(1, 0, 2) in bmm: its gradient is contiguous in the permuted "
                     "order, strides (16, 64, 1) for (128, 16, 1): layout_mismatch. unused is never "
                     "read: no_grad."),
]
