"""Samples of causes: layouts born somewhere other than where they are paid for (a view that
happens to be channels_last, a layout that drifts through a residual add, a batch permuted
outside the model, a helper in another file). Each sample's birthplace is checked by the
manifest's `causes` entry."""
import math

import torch
import torch.nn.functional as F
from torch import nn

from cause_helpers import tokens_to_image


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
    """Tokens to an image through a helper in another file (cause_helpers.tokens_to_image),
    then convolutions: the birthplace is the helper's line."""

    def __init__(self, c: int = 16):
        super().__init__()
        self.mix = nn.Linear(c, c)
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.out = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, tokens):
        image = tokens_to_image(self.mix(tokens), 8, 8)
        return self.out(F.relu(self.conv(image)))
