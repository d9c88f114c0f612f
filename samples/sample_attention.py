"""Attention and transformers: heads split with view+transpose and merged with reshape, attended
by matmul, F.scaled_dot_product_attention or nn.MultiheadAttention. Shapes in comments are those
of the manifest inputs."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from sample_table import Expect, Sample, copies


class SelfAttention(nn.Module):
    """Multi-head self-attention, heads split with view+transpose as most code does."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, e = x.size()
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)  # [B, H, S, D]
        k = k.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        out = self.attend(q, k, v)  # [B, H, S, D]
        out = out.transpose(1, 2).reshape(b, s, e)  # merge heads
        return self.proj(out)

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        att = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        att = att.softmax(dim=-1)
        return torch.matmul(att, v)


class SdpaHeadSplit(SelfAttention):
    """The attention sample's heads, split with view+transpose, attended by
    F.scaled_dot_product_attention (PyTorch 2.x): q, k and v reach it as transposed views."""

    def __init__(self, dim: int = 32, heads: int = 4):
        super().__init__(dim, heads)

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v)


class MhaBatchFirst(nn.Module):
    """nn.MultiheadAttention with batch_first=True, called as self-attention without weights
    (what transformer encoders do)."""

    def __init__(self, dim: int = 32, heads: int = 4):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.attn(x, x, x, need_weights=False)
        return out


class TransformerBlock(nn.Module):
    """Pre-LN transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, dim: int, heads: int, hidden: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class SmallTransformer(nn.Module):
    def __init__(self, layers: int = 4, dim: int = 256, heads: int = 4):
        super().__init__()
        self.blocks = nn.ModuleList([TransformerBlock(dim, heads, 4 * dim) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.ln(x)


SAMPLES = [
    Sample("attention", lambda: SelfAttention(32, 4), ["2x16x32"],
           copies(implicit_layout=4, broadcast=2, dtype_device=1),
           "With B > 1 matmul must copy the head-split q, k and v to fold B and H, and the "
           "head merge reshape copies once more (4 implicit); each Linear on a 3-D input "
           "copies its bias into the output inside addmm (2 broadcast), and '* scale' copies "
           "the 0-dim double scalar to float (dtype_device)."),
    Sample("sdpa_head_split", SdpaHeadSplit, ["2x16x32"],
           copies(), status="too_new", min_torch=2,
           why="aten::scaled_dot_product_attention does not exist in LibTorch 1.13: the "
               "archive does not load (exit 3).",
           torch2=Expect(copies(broadcast=2),
                         "The qkv and proj Linears on the 3-D input copy their biases into "
                         "addmm's outputs (2 broadcast). scaled_dot_product_attention takes the "
                         "transposed q, k and v as they are (the CPU flash-attention kernel reads "
                         "strided heads) and returns its output laid out as [B, S, H, D], viewed "
                         "as [B, H, S, D]: the head merge transpose(1, 2).reshape is then a view. "
                         "None of the attention sample's 4 implicit copies.")),
    Sample("mha_batch_first", MhaBatchFirst, ["2x16x32"],
           copies(), status="too_new", min_torch=2,
           why="Scripted by 2.x, nn.MultiheadAttention's code calls "
               "aten::scaled_dot_product_attention, which LibTorch 1.13 lacks (exit 3).",
           torch2=Expect(copies(implicit_layout=1, broadcast=1),
                         "In eval under no_grad the module takes the fast path "
                         "aten::_native_multi_head_attention, which clones its head-merge input, a "
                         "[2, 16, 4, 8] view with the heads transposed (implicit), and copies the "
                         "out-projection bias into addmm's [32, 32] output (broadcast)."),
           pt2=Expect(copies(explicit_layout=1, broadcast=1),
                      "torch.export traces the module's general path "
                      "(F.multi_head_attention_forward), not the fast path: the packed in-projection's "
                      "unflatten/transpose of q, k, v is made contiguous by an explicit .contiguous() "
                      "([3, 16, 2, 32], explicit); scaled_dot_product_attention's CPU output keeps "
                      "the query's [L, B, H, D] memory order, so the head merge (permute, reshape to "
                      "[32, 32]) is a view; the out-projection's addmm copies its bias into the "
                      "[32, 32] output (broadcast).")),
    Sample("small_transformer", SmallTransformer, ["1x128x256"],
           copies(implicit_layout=4, broadcast=16, dtype_device=4), large=True,
           why="Per block: 4 Linear bias copies in addmm (broadcast), the head-merge reshape "
               "(implicit) and the 0-dim '* scale' cast (dtype_device); with batch 1 the "
               "head-split q, k, v fold for free in matmul, unlike the attention sample."),
]
