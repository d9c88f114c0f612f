"""Convolutions and channels_last: a convolution fed channels_last activations with NCHW weights
copies its weights on every call. Shapes in comments are those of the manifest inputs."""

import torch
import torch.nn.functional as F
from torch import nn

from sample_table import Sample, copies


class PermuteConv2d(nn.Module):
    # The usual NHWC image -> NCHW conv pattern.
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x.permute(0, 3, 1, 2))


class SmallConvNet(nn.Module):
    # An ordinary NCHW classifier; the sample feeds it a channels_last input.
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, stride=2, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


SAMPLES = [
    Sample("permute_conv2d", PermuteConv2d, ["2x16x16x3"],
           copies(implicit_layout=1),
           "The NHWC->NCHW permute yields channels_last strides, so the oneDNN conv follows "
           "the input's format and copies the NCHW weight to channels_last on every call; "
           "the permuted input itself is used without a copy."),
    Sample("channels_last_convnet", SmallConvNet, ["2x3x32x32:channels_last"],
           copies(implicit_layout=2, broadcast=1, dtype_device=1),
           "Given a channels_last input, each oneDNN conv copies its NCHW weight to "
           "channels_last on every call (2 implicit; an NCHW input has none); the pooling "
           "mean divides by an int64 0-dim count (dtype_device) and fc's addmm copies its "
           "bias into the [2, 10] output (broadcast)."),
]
