"""A running statistic registered as an expand()ed buffer, updated in place in training.

Report:   https://github.com/huangleiBuaa/IterNorm-pytorch/issues/2
Title:    About error "more than one element of the written-to tensor refers to a single memory
          location."
Pattern:  IterNorm registers its running whitening matrix as
          register_buffer('running_wm', torch.eye(c).expand(g, c, c)) and updates it in training
          with running_wm.copy_(momentum * wm + (1 - momentum) * running_wm). The g groups share
          one c x c matrix of storage (stride 0), so PyTorch refuses the copy_; the fix is
          .clone() after the expand. (Loading such a buffer with load_state_dict fails the same
          way: https://github.com/pytorch/pytorch/issues/34880, "Expanded tensors don't work as
          registered buffers".)
Here:     A small IterNorm (group whitening by Newton iterations, 2 groups of 4 channels). The
          first call, in eval mode (a sanity check before training), only reads the buffer and
          runs; the second, in train mode, updates it and raises. With num_groups=1 the expand
          only adds a dim of size 1 (strides 64,8,1 for 8 channels: dense) and the same code
          runs: not a hazard then.
Layout:   the buffer itself is not dense (4x4 matrices, strides 0,4,1); the report lists it apart
          from the write (kind model_tensor, buffer `running_wm`).
Torch:    1.13 and 2.14 behave the same (RuntimeError on the copy_).
Runs:     2 model calls: call 1 (eval) runs, call 2 (train) raises, so the run fails.

EXPECT: refused_write self.running_wm.copy_(
RAISES: RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a single memory location
"""
import sys

import torch
from torch import nn


class IterNorm(nn.Module):
    def __init__(self, num_features=8, num_groups=2, T=3, eps=1e-5, momentum=0.1):
        super().__init__()
        self.T, self.eps, self.momentum = T, eps, momentum
        channels = num_features // num_groups
        self.weight = nn.Parameter(torch.ones(1, num_features))
        self.bias = nn.Parameter(torch.zeros(1, num_features))
        self.register_buffer("running_mean", torch.zeros(num_groups, channels, 1))
        self.register_buffer("running_wm", torch.eye(channels).expand(num_groups, channels, channels))

    def forward(self, x):                               # x: (N, C)
        g, c = self.running_wm.shape[:2]
        xg = x.transpose(0, 1).contiguous().view(g, c, -1)
        if self.training:
            mean = xg.mean(-1, keepdim=True)
            xc = xg - mean
            eye = torch.eye(c).expand(g, c, c)
            sigma = xc @ xc.transpose(1, 2) / xg.size(-1) + self.eps * eye
            r_tr = (sigma * eye).sum((1, 2), keepdim=True).reciprocal()
            sigma_n = sigma * r_tr
            p = eye
            for _ in range(self.T):
                p = 1.5 * p - 0.5 * torch.matrix_power(p, 3) @ sigma_n
            wm = p * r_tr.sqrt()
            self.running_mean.copy_(self.momentum * mean + (1 - self.momentum) * self.running_mean)
            self.running_wm.copy_(self.momentum * wm + (1 - self.momentum) * self.running_wm)
        else:
            xc = xg - self.running_mean
            wm = self.running_wm
        xn = (wm @ xc).view(x.size(1), x.size(0)).transpose(0, 1)
        return xn * self.weight + self.bias


def main():
    torch.manual_seed(0)
    model = IterNorm()
    x = torch.randn(16, 8)
    with torch.no_grad():
        model.eval()
        model(x)
        print("expanded_buffer_copy_refused: eval call ran; now a training call")
        model.train()
        model(x)
    sys.exit("expanded_buffer_copy_refused: not reproduced (the training call ran)")


if __name__ == "__main__":
    main()
