"""masked_fill_ on an expand()ed position index: every row gets every row's padding.

Report:   https://github.com/pytorch/pytorch/issues/10756
Title:    Unexpected Behavior when Pointwise Operations Write to Expanded Tensors
Pattern:  positions = torch.arange(1, L + 1).expand_as(batch); positions.masked_fill_(mask, 0).
          The rows of the expanded index share one row of storage, so a padded slot in any row
          zeroes that position in every row (the report's masking code, left-padded batches of
          different lengths). The report's add_ on the same tensor is refused today; masked_fill_
          is not.
Here:     Learnt position embeddings for a right-padded batch (0 = padding, the embedding's
          padding_idx). Rows 0 and 1 are shorter than row 2, and row 2's last positions are
          zeroed too, so it loses its position embeddings there.
Writes:   PyTorch warns once ("Use of masked_fill_ on expanded tensors is deprecated. Please
          clone() the tensor before performing this operation.") and writes anyway.
Torch:    1.13 and 2.14 behave the same (the warning, then a silently wrong result).
Runs:     3 model calls under no_grad; ends normally, printing what it saw.

EXPECT: aliased_write positions.masked_fill_(pad_mask, 0)
"""
import sys

import torch
from torch import nn


class PositionEmbedding(nn.Module):
    def __init__(self, max_len=8, dim=4):
        super().__init__()
        self.emb = nn.Embedding(max_len + 1, dim, padding_idx=0)

    def forward(self, tokens):
        pad_mask = tokens == 0
        positions = torch.arange(1, tokens.size(-1) + 1).expand_as(tokens)
        positions.masked_fill_(pad_mask, 0)
        return self.emb(positions), positions


def main():
    torch.manual_seed(0)
    model = PositionEmbedding().eval()
    tokens = torch.tensor([[5, 7, 0, 0, 0],
                           [3, 3, 9, 0, 0],
                           [4, 2, 6, 8, 1]])
    with torch.no_grad():
        for _ in range(3):
            _, positions = model(tokens)
    intended = torch.arange(1, tokens.size(-1) + 1).repeat(tokens.size(0), 1).masked_fill(tokens == 0, 0)
    wrong = not torch.equal(positions, intended)
    print(f"expand_masked_fill_positions: row 2 positions {positions[2].tolist()}, intended {intended[2].tolist()}")
    if not wrong:
        sys.exit("expand_masked_fill_positions: not reproduced (the positions are right)")


if __name__ == "__main__":
    main()
