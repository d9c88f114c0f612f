"""view() on the transposed output of multi-query attention: the view fails.

Report:   https://github.com/jaiwei98/MobileNetV4-pytorch/pull/1
Title:    Fix bugs in MultiQueryAttentionLayerWithDownSampling (the comment of 2024-05-08)
Pattern:  MobileNetV4's MultiQueryAttentionLayerWithDownSampling, as that pull request first
          fixed it, ends with
              context = (attn_score @ v).transpose(1, 2)   # [batch, qx * qy, heads, key_dim]
              context = context.view(batch, qx, qy, heads * key_dim)
          and raises "view size is not compatible with input tensor's size and stride (at least
          one dimension spans across two contiguous subspaces). Use .reshape(...) instead.":
          after the transpose, heads and key_dim are not adjacent in memory, so they cannot be
          merged without a copy.
Here:     The same layer without downsampling (query, key and value 1x1 convs, one shared key
          and value head, 4 query heads) on an 8-channel 4x4 map. The view's layout is born at
          the transpose on the line before it.
Torch:    1.13 and 2.14 behave the same (RuntimeError at the view; reshape or
          .contiguous().view would copy and run).
Runs:     1 model call, which raises at once (it is the warm-up call under the defaults of
          python -m layoutprof; --warmup 0 records it), so the run fails.

EXPECT: failed_view context = context.view(batch, qx, qy
RAISES: RuntimeError: view size is not compatible with input tensor's size and stride
"""
import sys

import torch
from torch import nn


class MultiQueryAttention(nn.Module):
    def __init__(self, inp=8, num_heads=4, key_dim=8):
        super().__init__()
        self.num_heads, self.key_dim = num_heads, key_dim
        self.query_proj = nn.Conv2d(inp, num_heads * key_dim, 1, bias=False)
        self.key_proj = nn.Conv2d(inp, key_dim, 1, bias=False)
        self.value_proj = nn.Conv2d(inp, key_dim, 1, bias=False)
        self.output_proj = nn.Conv2d(num_heads * key_dim, inp, 1, bias=False)

    def forward(self, x):
        batch, _, qx, qy = x.shape
        q = self.query_proj(x).flatten(2).view(batch, self.num_heads, self.key_dim, -1).transpose(2, 3)
        k = self.key_proj(x).flatten(2).unsqueeze(1)                   # [batch, 1, key_dim, seq]
        v = self.value_proj(x).flatten(2).transpose(1, 2).unsqueeze(1)  # [batch, 1, seq, key_dim]
        attn_score = torch.softmax(q @ k / self.key_dim ** 0.5, dim=-1)
        context = (attn_score @ v).transpose(1, 2)                     # [batch, seq, heads, key_dim]
        context = context.view(batch, qx, qy, self.num_heads * self.key_dim)
        return self.output_proj(context.permute(0, 3, 1, 2))


def main():
    torch.manual_seed(0)
    model = MultiQueryAttention().eval()
    with torch.no_grad():
        model(torch.randn(2, 8, 4, 4))
    sys.exit("transpose_view_mqa: not reproduced (the view ran)")


if __name__ == "__main__":
    main()
