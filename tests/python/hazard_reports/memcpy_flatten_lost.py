"""A tensor memcpy that flattens its destination: into a non-contiguous slice, nothing lands.

Report:   https://github.com/LMCache/LMCache/pull/2591
Title:    [ops][refactor] Add full list of Python fallbacks to run without compiled CUDA
          extensions (review of 2026-04-03: "Tensor-mode flatten may silently lose writes on
          non-contiguous input")
Pattern:  The Python fallback of lmcache_memcpy_async, tensor mode:
              dest_slice = dest.flatten()[:num_elements]
              src_slice = src.flatten()[:num_elements]
              dest_slice.copy_(src_slice.to(dest_slice.device))
          flatten() returns a copy when dest is not contiguous, so the copy_ writes that copy
          and dest keeps its old bytes. The review: "Data intended for the destination is
          silently discarded ... a latent correctness issue" (its callers then passed contiguous
          slices).
Here:     A layer that appends each call's keys and values to a preallocated cache of capacity
          16 tokens, [2, 16, dim], through that helper. The destination, cache[:, start:end],
          skips the rest of the capacity between its k and v planes, so it is not contiguous:
          every append is lost, and attention over the cache sees zeros.
Torch:    1.13 and 2.14 behave the same (silent; the cache stays all zeros).
Runs:     3 model calls under no_grad, 4 tokens each; ends normally, printing what it saw.

EXPECT: lost_write dest_slice.copy_(
"""
import sys

import torch
from torch import nn


def tensor_memcpy(dest, src, nbytes):
    """Copies nbytes from src into dest (LMCache's tensor-mode fallback)."""
    num_elements = nbytes // dest.element_size()
    dest_slice = dest.flatten()[:num_elements]
    src_slice = src.flatten()[:num_elements]
    dest_slice.copy_(src_slice.to(dest_slice.device))


class AppendKVLayer(nn.Module):
    def __init__(self, dim=8, capacity=16):
        super().__init__()
        self.kv = nn.Linear(dim, 2 * dim)
        self.q = nn.Linear(dim, dim)
        self.register_buffer("cache", torch.zeros(2, capacity, dim))
        self.length = 0

    def forward(self, x):                                      # x: (tokens, dim)
        new_kv = self.kv(x).view(x.size(0), 2, -1).transpose(0, 1).contiguous()   # [2, tokens, dim]
        start, end = self.length, self.length + x.size(0)
        tensor_memcpy(self.cache[:, start:end], new_kv, new_kv.numel() * new_kv.element_size())
        self.length = end
        keys, values = self.cache[0, :end], self.cache[1, :end]
        scores = torch.softmax(self.q(x) @ keys.t(), dim=-1)
        return scores @ values


def main():
    torch.manual_seed(0)
    model = AppendKVLayer().eval()
    with torch.no_grad():
        for _ in range(3):
            out = model(torch.randn(4, 8))
    stale = bool((model.cache == 0).all())
    print(f"memcpy_flatten_lost: cache all zeros after {model.length} tokens: {stale}; "
          f"last output all zeros: {bool((out == 0).all())}")
    if not stale:
        sys.exit("memcpy_flatten_lost: not reproduced (the cache was written)")


if __name__ == "__main__":
    main()
