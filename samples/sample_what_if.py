"""Samples of the what-if (a fix applied and measured): a fix at a line and an operand swap
refused because it would change the result (a residual add that scales its shortcut), a weight
left as a permuted view (a parameter made dense), and a torchvision ResNet-18 fed a channels_last
batch (the input fed NCHW, or the model converted). Each sample's `what_if` says what applying
each fix must give; the layouts' causes and hazards are checked as every sample's are."""
import torch
from torch import nn

from sample_causes import cause
from sample_libraries import resnet18
from sample_table import Sample, copies, measured

HERE_FILE = "samples/sample_what_if.py"
# The modules of torchvision's ResNet-18 that a channels_last batch reaches: every convolution
# and batch norm.
RESNET18_CONVS_AND_NORMS = ["bn1", "conv1"] + sorted(
    [f"layer{i}.{b}.{m}" for i in range(1, 5) for b in range(2) for m in ("conv1", "bn1", "conv2", "bn2")] +
    [f"layer{i}.0.downsample.{k}" for i in range(2, 5) for k in range(2)])


class ScaledResidual(nn.Module):
    """A ConvNeXt-style block whose LayerNorm runs over the permuted depthwise output, permuted
    back (a channels_last view) into the 1x1 convolution; its residual add scales the shortcut,
    branch first, so the sum takes the branch's layout into the 3x3 convolution after it. Swapping
    the add's operands would compute shortcut + 2 * branch: not a fix."""

    def __init__(self, c: int = 16):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c)
        self.pw = nn.Conv2d(c, c, 1)
        self.down = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        t = self.norm(self.dw(x).permute(0, 2, 3, 1))
        y = self.pw(t.permute(0, 3, 1, 2))
        y = torch.add(y, x, alpha=2)
        return self.down(y)


class PermutedWeight(nn.Module):
    """A convolution whose weight was written back from its [kh, kw, in, out] matrix as a permuted
    view, as weight-normalising code does when it forgets .contiguous(): the convolution copies
    its weight on every call."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 3, padding=1)
        with torch.no_grad():
            matrix = self.conv.weight.permute(2, 3, 1, 0).contiguous()
        self.conv.weight = nn.Parameter(matrix.permute(3, 2, 0, 1))

    def forward(self, x):
        return self.conv(x).relu()


SAMPLES = [
    Sample("scaled_residual", ScaledResidual, ["2x16x8x8"],
           copies(implicit_layout=2, broadcast=1),
           why="dw's output permuted (0, 2, 3, 1) is not dense in row-major order: layer_norm copies it "
               "(1 implicit). Permuted back it is a channels_last view: pw (1x1, its weight dense in both "
               "formats) runs slow_conv2d at one thread and writes its bias into the channels_last output "
               "(broadcast), torch.add(y, x, alpha=2) takes y's layout (the first operand decides), and "
               "down copies its NCHW 3x3 weight to channels_last (1 implicit).",
           causes=[cause("channels_last", "op", "aten::permute", HERE_FILE, "t.permute(0, 3, 1, 2)", ["down", "pw"],
                         all_copies=False),
                   cause("permuted(0,3,1,2)", "op", "aten::permute", HERE_FILE, ".permute(0, 2, 3, 1)", ["norm"],
                         all_copies=False)],
           what_if=[measured(0, "contiguous_at", explicit=1), measured(0, "none", refused="alpha")]),
    Sample("permuted_weight", PermutedWeight, ["2x8x16x16"],
           copies(implicit_layout=1),
           why="conv.weight is [16, 8, 3, 3] with strides (1, 16, 384, 128), dense in no memory format: "
               "the convolution copies it to contiguous on every call (1 implicit).",
           causes=[cause("permuted(2,3,1,0)", "unrecorded", "", "", "", ["conv"])],
           what_if=[measured(0, "dense_parameter", explicit=0)]),
    Sample("resnet18_channels_last", resnet18, ["1x3x64x64:channels_last"],
           copies(implicit_layout=17, dtype_device=1, same_layout=1), large=True, needs="torchvision",
           exports=False,
           why="A channels_last batch meets NCHW weights: each 3x3 and 7x7 convolution copies its weight "
               "into channels_last (17 implicit); the 3 downsample 1x1 weights are dense in both orders. "
               "avgpool's mean divides by an int64 0-dim count (dtype_device); fc's addmm copies its bias "
               "into [1, 1000] (same_layout).",
           causes=[cause("channels_last", "model_input", "", "", "", RESNET18_CONVS_AND_NORMS)],
           what_if=[measured(0, "feed_input", explicit=0, implicit=0),
                    measured(0, "convert_model", explicit=0, implicit=0)]),
]
