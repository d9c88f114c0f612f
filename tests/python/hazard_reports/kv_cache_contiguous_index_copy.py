"""A paged KV cache in HND layout written through .contiguous(): the writes land in a copy.

Report:   https://github.com/LMCache/LMCache/pull/3214
Title:    add HND layout in _get_head_size_view (review of 2026-05-07)
Pattern:  _get_head_size_view returns per-token views of a vLLM paged KV cache that callers
          write with index_copy_. For the HND layout [2, NB, NH, BS, HS] the pull request made
          them as t[0].permute(0, 2, 1, 3).contiguous(): the permuted cache cannot be viewed as
          [NB * BS, NH * HS] without moving data, so contiguous() copies, and the index_copy_
          that follows writes the copy. The review: "the updates will be applied to the
          temporary copy and lost, leaving the original KV cache unchanged". The pull request
          was closed.
Here:     One attention layer's cache write: k and v projections of the new tokens go to their
          slots through those views, then attention reads the keys and values back from the
          cache buffer, which still holds zeros (stale): the scores come out uniform and the
          output, a mix of zero values, is all zeros.
Torch:    1.13 and 2.14 behave the same (silent; the cache stays all zeros).
Runs:     3 model calls under no_grad, each writing 3 new tokens; ends normally, printing what
          it saw.

EXPECT: lost_write k_flat.index_copy_(0, slot_mapping
EXPECT: lost_write v_flat.index_copy_(0, slot_mapping
"""
import sys

import torch
from torch import nn


class PagedKVLayer(nn.Module):
    def __init__(self, dim=8, num_heads=2, block_size=4, num_blocks=3):
        super().__init__()
        self.num_heads, self.head_size = num_heads, dim // num_heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        # vLLM's HND layout: [2 (k, v), num_blocks, num_heads, block_size, head_size]
        self.register_buffer("kv_cache", torch.zeros(2, num_blocks, num_heads, block_size, self.head_size))

    def head_size_views(self):
        k = self.kv_cache[0].permute(0, 2, 1, 3).contiguous()   # [NB, BS, NH, HS]
        v = self.kv_cache[1].permute(0, 2, 1, 3).contiguous()
        width = self.num_heads * self.head_size
        return k.view(-1, width), v.view(-1, width)              # one row per slot

    def forward(self, x, slot_mapping):                          # x: (tokens, dim)
        k_flat, v_flat = self.head_size_views()
        k_flat.index_copy_(0, slot_mapping, self.k_proj(x))
        v_flat.index_copy_(0, slot_mapping, self.v_proj(x))
        width = self.num_heads * self.head_size
        keys = self.kv_cache[0].permute(0, 2, 1, 3).reshape(-1, width)[slot_mapping]
        values = self.kv_cache[1].permute(0, 2, 1, 3).reshape(-1, width)[slot_mapping]
        scores = torch.softmax(self.q_proj(x) @ keys.t() / self.head_size ** 0.5, dim=-1)
        return scores @ values


def main():
    torch.manual_seed(0)
    model = PagedKVLayer().eval()
    with torch.no_grad():
        for step in range(3):
            out = model(torch.randn(3, 8), torch.arange(3) + 3 * step)
    stale = bool((model.kv_cache == 0).all())
    print(f"kv_cache_contiguous_index_copy: cache all zeros after 9 tokens: {stale}; "
          f"last output all zeros: {bool((out == 0).all())}")
    if not stale:
        sys.exit("kv_cache_contiguous_index_copy: not reproduced (the cache was written)")


if __name__ == "__main__":
    main()
