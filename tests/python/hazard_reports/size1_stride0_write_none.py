"""In-place writes into an image whose batch dim of size 1 has stride 0. No hazard.

Report:   https://github.com/pytorch/pytorch/issues/33812
Title:    unsupported operation: more than one element of the written-to tensor refers to a
          single memory location
Pattern:  numpy_matrix = np.empty((128, 128, 3)).transpose((2, 0, 1))[np.newaxis];
          torch.from_numpy(numpy_matrix).cuda() raised the "more than one element of the
          written-to tensor refers to a single memory location" error in torch 1.4. numpy gives
          the new axis stride 0, and PyTorch's overlap check counted a stride-0 dim of size 1
          as overlap. A maintainer: "It is a bug ... memory overlap check does not ignore size-1
          dimensions when checking for 0 strides"; fixed since. A dim of size 1 has one index,
          so its stride never makes two positions share an element: such a tensor is not
          overlapping, and writing it is not an aliased write.
Here:     A stem that takes an HWC float64 image the way the report made it, converts it to
          float32 (the report's copy; the new tensor keeps the strides, 0,1,15,3) and normalizes
          it in place before a convolution. The output matches the same model fed a contiguous
          copy of the image.
Torch:    1.13 and 2.14 behave the same (no error, same output); 1.4 raised, as the report says
          (not checked here).
Runs:     3 model calls under no_grad; ends normally, printing what it saw.

EXPECT: none
"""
import sys

import numpy as np
import torch
from torch import nn


class NormalizedStem(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, img):
        x = img.float()
        x.sub_(self.mean).div_(self.std)
        return self.conv(x)


def main():
    torch.manual_seed(0)
    model = NormalizedStem().eval()
    hwc = np.random.default_rng(0).random((4, 5, 3))
    img = torch.from_numpy(hwc.transpose((2, 0, 1))[np.newaxis])
    with torch.no_grad():
        for _ in range(3):
            out = model(img)
        want = model(img.contiguous())
    same = torch.allclose(out, want)
    print(f"size1_stride0_write_none: input strides {tuple(img.stride())}, "
          f"same output as a contiguous input: {same}")
    if not same:
        sys.exit("size1_stride0_write_none: the output differs from a contiguous input's")


if __name__ == "__main__":
    main()
