"""Samples of causes: layouts born somewhere other than where they are paid for (a view that
happens to be channels_last, a layout that drifts through a residual add, a batch permuted
outside the model, a helper in another file). Each sample's birthplace is checked by the
manifest's `causes` entry."""
import math

import torch
import torch.nn.functional as F
from torch import nn

from sample_cause_helpers import tokens_to_image
from sample_table import Expect, Sample, copies, measured


class AttnToConv(nn.Module):
    """An attention block over image features, as VAE decoders write it: its output is turned
    back into an image with transpose + reshape, a view whose strides happen to be channels_last.
    The convolutions after it meet NCHW weights."""

    def __init__(self, c: int = 16):
        super().__init__()
        self.norm = nn.GroupNorm(4, c)
        self.q = nn.Linear(c, c)
        self.k = nn.Linear(c, c)
        self.v = nn.Linear(c, c)
        self.proj = nn.Linear(c, c)
        self.conv_shortcut = nn.Conv2d(c, c, 1)
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        b, c, hgt, w = x.size(0), x.size(1), x.size(2), x.size(3)
        h = self.norm(x).reshape(b, c, hgt * w).transpose(1, 2)
        scores = torch.matmul(self.q(h), self.k(h).transpose(1, 2)) / math.sqrt(c)
        h = self.proj(torch.matmul(torch.softmax(scores, dim=-1), self.v(h)))
        hidden_states = h.transpose(-1, -2).reshape(b, c, hgt, w)
        out = self.conv2(F.relu(self.conv1(hidden_states)))
        return out + self.conv_shortcut(hidden_states)


class DriftBlock(nn.Module):
    """A ConvNeXt-style block whose LayerNorm runs over x.permute(0, 2, 3, 1) and is permuted
    back (a channels_last view), then added branch first: the sum takes the branch's layout."""

    def __init__(self, c: int = 16):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c)
        self.pw = nn.Conv2d(c, c, 1)

    def forward(self, x):
        shortcut = x
        y = self.norm(self.dw(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        y = self.pw(y)
        return y + shortcut


class LayerNormDrift(nn.Module):
    """Two drift blocks, then a 2x2 downsampling convolution: the layout born in the first block
    runs through the 1x1 and depthwise convolutions without a copy (their weights are dense in
    both formats) and is paid for at the downsampling weight."""

    def __init__(self, c: int = 16):
        super().__init__()
        self.block1 = DriftBlock(c)
        self.block2 = DriftBlock(c)
        self.down = nn.Conv2d(c, 2 * c, 2, stride=2)

    def forward(self, x):
        return self.down(self.block2(self.block1(x)))


class SmallImageNet(nn.Module):
    """An NCHW CNN, for a batch permuted outside the model (HWC images, permute(0, 3, 1, 2))."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        return self.fc(x.mean(dim=(2, 3)))


class HelperView(nn.Module):
    """Tokens to an image through a helper in another file (sample_cause_helpers.tokens_to_image),
    then convolutions: the birthplace is the helper's line."""

    def __init__(self, c: int = 16):
        super().__init__()
        self.mix = nn.Linear(c, c)
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.out = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, tokens):
        image = tokens_to_image(self.mix(tokens), 8, 8)
        return self.out(F.relu(self.conv(image)))


def cause(layout: str, kind: str, op: str, file: str, code: str, payers, all_copies: bool = True,
          swap: str = "", pt2=None) -> dict:
    """What the report's cause must say: the layout born, where (kind, the op, the file of its
    line, a piece of the code on it), the modules that pay, whether it accounts for every
    implicit copy of the sample, the op whose operand swap it offers ("" none), and where a
    .pt2 places it when that differs ((file, code): torch.export keeps only the frame in the
    module's forward, so a helper's line is the line that calls the helper)."""
    entry = {"layout": layout, "kind": kind, "op": op, "file": file, "code": code, "payers": sorted(payers),
             "all_copies": all_copies, "swap": swap}
    if pt2 is not None:
        entry["pt2"] = {"file": pt2[0], "code": pt2[1]}
    return entry


HERE_FILE = "samples/sample_causes.py"

LINE36 = "hidden_states = h.transpose(-1, -2).reshape(b, c, hgt, w)"
GRADS_2X = {"norm.weight": "match", "norm.bias": "match", "q.weight": "match", "q.bias": "match",
            "k.weight": "match", "k.bias": "match", "v.weight": "match", "v.bias": "match",
            "proj.weight": "match", "proj.bias": "match", "conv_shortcut.weight": "size1_only",
            "conv_shortcut.bias": "match", "conv1.weight": "layout_mismatch", "conv1.bias": "match",
            "conv2.weight": "layout_mismatch", "conv2.bias": "match"}

SAMPLES = [
    Sample("attn_view_conv", AttnToConv, ["16x16x8x8"],
           copies(implicit_layout=2, broadcast=1, dtype_device=1),
           "The attention's output [16, 64, 16] is turned back into an image by transpose + reshape: "
           "a view whose strides (1024, 1, 128, 16) are channels_last. The two 3x3 convolutions after "
           "it copy their NCHW weights to channels_last on every call (2 implicit); the 1x1 shortcut's "
           "weight is dense in both formats (no copy). The scores' division by a Python float casts "
           "a float64 wrapped number (dtype_device); proj's addmm on the [1024, 16] tokens copies its "
           "bias into its output (broadcast). A batch of 16 runs the 1x1 convolution through oneDNN "
           "even at one thread (no bias copy), as a batch under 16 does only at more threads.",
           torch2=Expect(copies(implicit_layout=5, broadcast=1, dtype_device=1),
                         "As 1.13, and 2.x's linear on the transposed [16, 64, 16] tokens (q, k, v) "
                         "reshapes them to 2-D, which copies the non-viewable permuted(0,2,1) data "
                         "(3 more implicit, born at the transpose on line 33)."),
           grads={**GRADS_2X, "k.weight": "layout_mismatch"},
           grads_why="The convolutions' backward computes each weight's gradient in the data's "
                     "layout, channels_last. For the 3x3 weights that differs from NCHW on dims of "
                     "size > 1: AccumulateGrad copies them every step (layout_mismatch). The 1x1 "
                     "shortcut's [16, 16, 1, 1] gradient differs only on its size-1 dims (strides "
                     "[16, 1, 16, 16] for [16, 1, 1, 1]): kept as it is, and DDP warns (size1_only), "
                     "the seed's warning, born at the reshape. 1.13's scripted backward also hands k's "
                     "weight gradient back transposed.",
           grads2=(GRADS_2X, "As 1.13 for the convolutions; k's weight gradient matches."),
           causes=[cause("channels_last", "op", "aten::reshape", HERE_FILE, LINE36,
                         ["conv1", "conv2", "conv_shortcut"], all_copies=False)],
           what_if=[measured(0, "contiguous_at", explicit=1)]),
    Sample("layernorm_drift", LayerNormDrift, ["2x16x8x8"],
           copies(implicit_layout=2, broadcast=2),
           "Each block's LayerNorm runs over dw(x).permute(0, 2, 3, 1). In block1 dw's output is NCHW, "
           "so that permute is not dense in row-major order and layer_norm copies it (1 implicit); "
           "permuting back gives a channels_last view, and y + shortcut takes it (the first operand "
           "decides). block2 then runs channels_last: its dw output permuted is dense, no copy. The "
           "2x2 downsampling conv copies its NCHW weight to channels_last (1 implicit); the 1x1 and "
           "depthwise weights are dense in both formats and are not copied. The 1x1 convolutions run "
           "slow_conv2d at one thread, which writes their bias into the channels_last output (2 "
           "broadcast).",
           causes=[cause("channels_last", "op", "aten::permute", HERE_FILE, ".permute(0, 3, 1, 2)",
                         ["block1.pw", "block2.dw", "block2.pw", "down"], all_copies=False, swap="aten::add"),
                   cause("permuted(0,3,1,2)", "op", "aten::permute", HERE_FILE, ".permute(0, 2, 3, 1)",
                         ["block1.norm"], all_copies=False)],
           what_if=[measured(0, "contiguous_at", refused="2 expressions"),  # both permutes on one line
                    measured(0, "swap_operands", gone=False, fewer_mixed=True)]),
    Sample("hwc_batch", SmallImageNet, ["2x3x32x32:perm=0,2,3,1"],
           copies(implicit_layout=2, broadcast=1, dtype_device=1),
           "HWC images permuted to NCHW outside the model arrive channels_last: both 3x3 convolutions "
           "copy their NCHW weights to channels_last (2 implicit). mean over (2, 3) divides by an int64 "
           "count (dtype_device); fc's addmm copies its bias into [2, 4] (broadcast).",
           causes=[cause("channels_last", "model_input", "", "", "", ["conv1", "conv2"])]),
    Sample("helper_view", HelperView, ["2x64x16"],
           copies(implicit_layout=2, broadcast=1),
           "tokens_to_image, a helper in samples/sample_cause_helpers.py, returns transpose + reshape: a "
           "channels_last view. Both 3x3 convolutions copy their NCHW weights (2 implicit); mix's addmm "
           "on the 3-D tokens copies its bias (broadcast).",
           causes=[cause("channels_last", "op", "aten::reshape", "samples/sample_cause_helpers.py",
                         "return h.transpose(1, 2).reshape(h.size(0), h.size(2), hgt, w)", ["conv", "out"],
                         pt2=("samples/sample_causes.py", "image = tokens_to_image(self.mix(tokens), 8, 8)"))]),
]
