"""M-RoPE position ids built with expand() and shifted in place on the decode path.

Report:   https://github.com/sgl-project/sglang/pull/22634
Title:    fix(qwen2_5vl): replace in-place += with out-of-place + on expand view in decode path
Pattern:  Qwen2_5VLModel.forward's decode path built its 3-axis (temporal, height, width)
          position ids as an arange .expand()ed over the three axes and then shifted them with
          `position_ids += delta`. The three axes share one row of storage, so PyTorch refuses:
          "unsupported operation: more than one element of the written-to tensor refers to a
          single memory location". The fix adds before expanding: (arange + delta).expand(...).
Here:     A tiny decoder with multimodal rotary positions. The prefill call builds its position
          ids as a dense tensor (as get_rope_index does) and runs; the next call, one decode
          step after the prompt, takes the expand-then-add path and raises.
Torch:    1.13 and 2.14 behave the same (RuntimeError on the +=).
Runs:     2 model calls: call 1 (prefill) runs, call 2 (decode) raises, so the run fails.

EXPECT: refused_write position_ids += delta
RAISES: RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a single memory location
"""
import sys

import torch
from torch import nn


class MRopeDecoder(nn.Module):
    def __init__(self, vocab=32, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))
        self.rope_deltas = None

    def forward(self, input_ids, cache_len=0):
        batch, seq = input_ids.shape
        if cache_len == 0:   # prefill: text-only prompt, so t = h = w = the token index
            position_ids = torch.arange(seq).view(1, 1, -1).repeat(3, batch, 1)
            self.rope_deltas = torch.zeros(batch, 1, dtype=torch.long)
        else:                # decode: continue after the cached tokens
            delta = cache_len + self.rope_deltas
            position_ids = torch.arange(seq).view(1, 1, -1).expand(3, batch, -1)
            position_ids += delta
        angles = position_ids[0].unsqueeze(-1).float() * self.inv_freq    # the temporal axis
        rot = torch.cat([angles.cos(), angles.sin()], dim=-1)
        return self.proj(self.embed(input_ids) * rot)


def main():
    torch.manual_seed(0)
    model = MRopeDecoder().eval()
    prompt = torch.randint(0, 32, (2, 5))
    with torch.no_grad():
        logits = model(prompt)
        next_ids = logits[:, -1:].argmax(-1) % 32
        print("expand_position_ids_iadd: prefill ran; now one decode step")
        model(next_ids, cache_len=prompt.size(1))
    sys.exit("expand_position_ids_iadd: not reproduced (the decode step ran)")


if __name__ == "__main__":
    main()
