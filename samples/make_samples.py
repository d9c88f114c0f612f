#!/usr/bin/python3
"""Build the TorchScript sample models that layoutprof is tested and demonstrated on.

Runs under Debian's torch 1.13 (/usr/bin/python3) and under a PyTorch 2.x wheel:

    /usr/bin/python3 samples/make_samples.py --out samples
    PY2 samples/make_samples.py --out samples --only sdpa_head_split,mha_batch_first
    PY samples/make_samples.py --out /tmp/samples_large --large --check

Every sample is a small nn.Module scripted with torch.jit.script (so the archive keeps
source ranges that layoutprof reports as file:line) and saved as NAME.pt. The small ones
are committed to git, scripted by 1.13 except those that need 2.x ops (min_torch 2), which a
2.x torch (PY2 above) scripts; --large adds resnet18, small_transformer and vit_b_16, which
are not committed. A sample this torch cannot make is skipped with its reason (in
unmade.json when a package it needs does not import). manifest.json (written next to the
models) is generated from the SAMPLES table below.

The expected copy counts in that table were derived by hand from how ATen (CPU, 1.13, and
2.x where a sample's torch2 entry says it differs)
implements each op, following layoutprof's counting rules:

  * one copy = one aten::copy_ event during one forward() call, after 3 warm-up calls,
    under torch.no_grad() (the tool runs under a NoGradGuard);
  * the culprit is the outermost op on the RecordFunction stack with scope FUNCTION,
    i.e. the op the TorchScript interpreter called (the TorchScript "forward" range has
    scope TORCHSCRIPT_FUNCTION and is not an op);
  * the class is the first that matches:
      dtype_device     src dtype or device differs from dst
      broadcast        src has fewer elements than dst, or a zero stride on a dim of size > 1
      same_layout      src and dst strides equal once size-1 dims are dropped
      explicit_layout  culprit is contiguous, clone, copy_, to, _to_copy or type_as
      implicit_layout  any other culprit (reshape, matmul, conv2d, layer_norm, ...)

--check re-derives all of this from the profiler (independently of the C++ tool): it
walks torch.profiler's event tree, which, unlike function_events, records strides and
dtypes, classifies every aten::copy_ by the rules above and fails when the hand-written
expectations and the profiler disagree (total, class split or ok/failed status).
"""

import argparse
import json
import math
import os
import subprocess
import sys
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.relpath(os.path.abspath(__file__), REPO_ROOT)  # samples/make_samples.py
CHILD_ENV = "LAYOUTPROF_MAKE_SAMPLES_CHILD"
WARMUP_CALLS = 3  # the profiling executor specialises the graph during the first calls
SMALL_LIMIT_BYTES = 200 * 1024  # committed samples must stay small
COPY_CLASSES = ("implicit_layout", "explicit_layout", "broadcast", "dtype_device", "same_layout")
EXPLICIT_CULPRITS = {"aten::contiguous", "aten::clone", "aten::copy_", "aten::to",
                     "aten::_to_copy", "aten::type_as"}


# ---------------------------------------------------------------------------------------
# Sample models. Shapes in comments are those of the manifest inputs.
# ---------------------------------------------------------------------------------------

class TransposeMatmul(nn.Module):
    # x: [B, S, H, D] activations, w: [B, H, D, E] per-head matrices.
    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x.transpose(1, 2), w)


class TransposeBmmFree(nn.Module):
    # A transposed operand of a 3-D matmul costs nothing: bmm passes it to gemm as "T".
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x.transpose(1, 2), x)


class BroadcastMatmul(nn.Module):
    # One [D, E] matrix per head, shared across the batch: x [B, H, S, D] @ w [H, D, E].
    def __init__(self, heads: int = 4, dim: int = 16, out: int = 8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(heads, dim, out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x, self.w)


class TransposeReshape(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2).reshape(x.size(0), -1)


class PermuteConv2d(nn.Module):
    # The usual NHWC image -> NCHW conv pattern.
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x.permute(0, 3, 1, 2))


class NarrowAfterTranspose(nn.Module):
    # x: [B, C, T] features; drop the first time step and normalise over C.
    def __init__(self, channels: int = 16):
        super().__init__()
        self.norm = nn.LayerNorm(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.transpose(1, 2)
        y = y.narrow(1, 1, y.size(1) - 1)
        return self.norm(y)


class ExplicitContiguous(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2).contiguous()


class ExpandContiguous(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.expand(4, -1, -1).contiguous()


class ChannelShuffle(nn.Module):
    # ShuffleNet's channel shuffle, written with reshape instead of contiguous().view().
    def __init__(self, groups: int = 2):
        super().__init__()
        self.groups = groups

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.size()
        x = x.view(n, self.groups, c // self.groups, h, w)
        return x.transpose(1, 2).reshape(n, c, h, w)


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


class ViewFails(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2).view(x.size(0), -1)


class DefensiveClone(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.clone()
        b = x.t().clone()
        return a + b.t()


class DtypeCast(nn.Module):
    # uint8 image to float.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.to(torch.float32)


class ScalarArith(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 0.5 + 1.0


class NoncontigInput(nn.Module):
    # Nothing wrong with the model: the caller hands it a transposed tensor.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1)


class CatTransposed(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x.t(), x.t()], 0)


class SliceAssign(nn.Module):
    # Slice assignment compiles to aten::copy_ called by the interpreter itself.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(x.size(1), x.size(0) + 4)
        out[:, :x.size(0)] = x.t()
        out[:, x.size(0):] = 1.0
        return out


class FreshTensor(nn.Module):
    # A view (no memory touched) next to an op that writes a large fresh tensor: the
    # page-fault counter must see the second and not the first.
    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return x.t(), x * x


class GateBase(nn.Module):
    # The CI gate's example: a projection, a split into 4 heads and back, an output layer.
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 32)
        self.out = nn.Linear(32, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        y = self.proj(x).view(b, s, 4, d // 4)
        y = y.reshape(b, s, d)
        return self.out(y.relu())


class GateRegressed(GateBase):
    # The same model after a change that transposes the heads and merges them without
    # transposing back: one more op, and an implicit copy in the merge.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        y = self.proj(x).view(b, s, 4, d // 4).transpose(1, 2)
        y = y.reshape(b, s, d)
        return self.out(y.relu())


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


class OpLoop(nn.Module):
    """A scripted loop of small ops, as generation loops and samplers run: about ten op events
    per row of the input, so the input's first size scales one call to any number of ops."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x[0]
        for i in range(x.size(0)):
            y = y * 0.5 + x[i]
            y = y.t().contiguous()
        return y


class ForkBranch(nn.Module):
    """Runs as a task of its own (torch.jit.fork): reshape after transpose copies there."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2).reshape(x.size(0), -1)


class ForkWait(nn.Module):
    """Inter-op parallelism: a branch forked onto LibTorch's inter-op thread pool while the
    main path goes on; after the wait, forward() may continue on the thread that finished the
    branch. Each op belongs to its own module and line, whichever thread ran it."""

    def __init__(self):
        super().__init__()
        self.branch = ForkBranch()
        self.head = nn.Linear(128, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        fut = torch.jit.fork(self.branch, x)
        y = x.transpose(1, 2).contiguous()
        z = torch.jit.wait(fut)
        return self.head(z) + y.sum()


# Training samples (--backward): parameters whose gradients autograd lays out unlike them.

class ConvBlock(nn.Module):
    # A 3x3, a 1x1 (pointwise) and a depthwise convolution, NCHW weights.
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 3, padding=1)
        self.pointwise = nn.Conv2d(16, 32, 1)
        self.depthwise = nn.Conv2d(32, 32, 3, padding=1, groups=32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.depthwise(self.pointwise(self.conv(x)))


def conv_block_channels_last() -> nn.Module:
    # The same block converted as the fix says: model.to(memory_format=torch.channels_last).
    return ConvBlock().to(memory_format=torch.channels_last)


class GradZoo(nn.Module):
    # Parameters used the ways that make autograd hand back gradients in another layout.
    def __init__(self):
        super().__init__()
        self.transposed = nn.Parameter(torch.randn(8, 16).t())  # created transposed: [16, 8], strides (1, 16)
        self.einsum_weight = nn.Parameter(torch.randn(16, 8))   # [out, in], used through einsum
        self.scale = nn.Parameter(torch.ones(1, 16))            # used through expand
        self.table = nn.Parameter(torch.zeros(1, 16))           # used through repeat
        self.heads = nn.Parameter(torch.randn(4, 8, 16))        # [H, D, E], used permuted to [D, H, E]
        self.unused = nn.Parameter(torch.zeros(16))             # never used in forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [B, 16]
        y = x @ self.transposed                                  # [B, 8]
        y = torch.einsum("bi,oi->bo", y, self.einsum_weight)     # [B, 16]
        y = y * self.scale.expand(y.shape[0], 16) + self.table.repeat(y.shape[0], 1)
        z = y.view(y.shape[0], 4, 4)[:, :, :2].reshape(1, y.shape[0], 8).expand(8, y.shape[0], 8)
        per_head = torch.bmm(z[:, :, :4], self.heads.permute(1, 0, 2)[:, :4, :])  # [D, B, E]
        return y + per_head.sum(0)


def resnet18() -> nn.Module:
    import torchvision  # only --large needs it; importing it is slow

    return torchvision.models.resnet18(weights=None)


def vit_b_16() -> nn.Module:
    import torchvision

    return torchvision.models.vit_b_16(weights=None)


# torch.export-only samples: the graph language a real export writes (a dynamic batch, the
# higher-order ops, a no_grad block, a decomposed graph's buffer mutation). No TorchScript twin.

class DynamicBatch(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, 8, 16], B dynamic
        return x.transpose(1, 2).reshape(x.shape[0], -1)


class CondBranch(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [2, 8, 16]
        return torch.cond(x.abs().sum() >= 0,  # always true, but only known at run time
                          lambda x: x.transpose(1, 2).reshape(2, -1),
                          lambda x: x.reshape(2, -1) + 0, (x,))  # a new tensor: no aliasing


class WhileLoop(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [8, 8]
        from torch._higher_order_ops.while_loop import while_loop

        def keep_going(i, y):
            return i < 3

        def body(i, y):
            return i + 1, y.t().contiguous()

        return while_loop(keep_going, body, (torch.zeros((), dtype=torch.int64), x))[1]


class MapSlices(nn.Module):
    def forward(self, xs: torch.Tensor) -> torch.Tensor:  # [5, 3, 4]
        from torch._higher_order_ops.map import map as map_slices

        return map_slices(lambda x: x.t().reshape(-1), xs)


class NoGradBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [2, 8, 16]
        with torch.no_grad():
            y = x.transpose(0, 1).reshape(8, -1)
        return self.proj(y.reshape(-1, 16))


class TrainingBatchNorm(nn.Module):
    """Exported in train mode, then decomposed: batch norm's new running statistics are outputs
    the program writes back into its buffers after the forward."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [2, 3, 8, 8]
        return torch.relu(self.bn(self.conv(x)))


class RunningTotal(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [4, 16]
        self.total.add_(x.sum(0))
        return x * 2


# Models of the libraries people export, from configs (random weights, small sizes; no hub
# downloads): each wrapped to return its last hidden state, a plain tensor.

class LastHidden(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, *ids: torch.Tensor) -> torch.Tensor:
        names = ["input_ids", "decoder_input_ids"][:len(ids)]
        return self.model(**dict(zip(names, ids))).last_hidden_state


def bert_encoder() -> nn.Module:
    import transformers

    return LastHidden(transformers.BertModel(transformers.BertConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=1000)))


def llama_decoder() -> nn.Module:
    import transformers

    return LastHidden(transformers.LlamaModel(transformers.LlamaConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=1000, use_cache=False)))


def t5_encoder_decoder() -> nn.Module:
    import transformers

    return LastHidden(transformers.T5Model(transformers.T5Config(
        d_model=64, d_ff=128, d_kv=16, num_layers=2, num_heads=4, vocab_size=1000, use_cache=False)))


def convnext_atto() -> nn.Module:
    import timm

    return timm.create_model("convnext_atto", pretrained=False)


# ---------------------------------------------------------------------------------------
# The sample table: one entry per model, and the source of manifest.json.
# ---------------------------------------------------------------------------------------

class Expect(NamedTuple):
    """What one LibTorch version does with a sample: ok (exit 0), failed (the model raises:
    exit 4) or too_new (the archive needs an op that version lacks: exit 3)."""
    copies: Dict[str, int]
    why: str
    status: str = "ok"


class Sample(NamedTuple):
    name: str
    build: Callable[[], nn.Module]
    inputs: List[str]
    copies: Dict[str, int]  # with why and status: what LibTorch 1.13 does (and 2.x, unless
    why: str                # torch2 says otherwise)
    status: str = "ok"
    large: bool = False
    torch2: Optional[Expect] = None  # where LibTorch 2.x executes the sample differently
    min_torch: int = 1  # the major version that can script it (2: its archive needs 2.x ops)
    needs: Optional[str] = None  # a package besides torch that builds the model
    # Training samples (--backward): each parameter's gradient verdict, and why. Their
    # parameters keep requires_grad; `copies` is still what a forward-only run copies.
    grads: Optional[Dict[str, str]] = None
    grads_why: str = ""
    grads2: Optional[Tuple[Dict[str, str], str]] = None  # (verdicts, why) where 2.x differs
    # torch.export: under 2.x the sample is also exported (torch.export.export on `pt2_inputs`,
    # or `inputs`) and saved as NAME.pt2, unless `exports` is False. `pt2` is what the program
    # does where it runs differently from the 2.x TorchScript archive (why derived by hand);
    # `pt2_only` samples have no TorchScript archive at all (cond, while_loop, map, ...).
    exports: bool = True
    pt2: Optional[Expect] = None
    pt2_inputs: Optional[List[str]] = None
    pt2_only: bool = False
    # Where a PyTorch release (a version prefix, "2.15") exports a different program: what that
    # program does, tried before `pt2` (the program a 2.x export writes otherwise).
    pt2_by_torch: Tuple[Tuple[str, Expect], ...] = ()
    dynamic_batch: bool = False  # dimension 0 of every input exported as dynamic
    decompose: bool = False      # the program after ep.run_decompositions()
    train: bool = False          # exported in train mode (every other sample: eval)

    def pt2_expected(self, exported_by: str = "2") -> Expect:
        """What the program that torch `exported_by` writes does (this torch's, by default)."""
        general = self.pt2 if self.pt2 is not None else self.expected("2")
        return for_version([([p], e) for p, e in self.pt2_by_torch] + [(["2"], general)], exported_by, self.name)

    def pt2_specs(self) -> List[str]:
        return list(self.pt2_inputs or self.inputs)

    def grad_expectations(self) -> List[Tuple[List[str], Dict[str, str], str]]:
        """(LibTorch version prefixes, verdicts, why); the first that matches applies."""
        if self.grads is None:
            return []
        if self.grads2 is None:
            return [(["1", "2"], self.grads, self.grads_why)]
        return [(["1"], self.grads, self.grads_why), (["2"], self.grads2[0], self.grads2[1])]

    def expectations(self) -> List[Tuple[List[str], Expect]]:
        """(LibTorch version prefixes, expectation) pairs; the first that matches applies."""
        first = Expect(self.copies, self.why, self.status)
        if self.torch2 is None:
            return [(["1", "2"], first)]
        return [(["1"], first), (["2"], self.torch2)]

    def expected(self, version: str) -> Expect:
        return for_version([(p, e) for p, e in self.expectations()], version, self.name)


def for_version(pairs, version: str, name: str):
    """The value of the first (LibTorch version prefixes, value) pair that matches `version`."""
    parts = version.split("+")[0].split(".")
    for prefixes, value in pairs:
        if any(p.split(".") == parts[:len(p.split("."))] for p in prefixes):
            return value
    raise SystemExit(f"{name}: no expectation for torch {version}")


def copies(implicit_layout=0, explicit_layout=0, broadcast=0, dtype_device=0, same_layout=0):
    return {"implicit_layout": implicit_layout, "explicit_layout": explicit_layout,
            "broadcast": broadcast, "dtype_device": dtype_device, "same_layout": same_layout}


SAMPLES = [
    Sample("transpose_matmul", TransposeMatmul, ["2x8x4x16", "2x4x16x8"],
           copies(implicit_layout=1),
           "matmul folds the batch dims of a 4-D operand into one with reshape; after "
           "transpose(1, 2) the B and H dims of x cannot be merged by a view, so matmul "
           "copies x (the contiguous w folds for free)."),
    Sample("transpose_bmm_free", TransposeBmmFree, ["2x8x16"],
           copies(),
           "No copy: a 3-D matmul goes straight to bmm, and a transposed matrix is just a "
           "'T' gemm operand; the negative control for transpose_matmul."),
    Sample("broadcast_matmul", BroadcastMatmul, ["2x4x8x16"],
           copies(broadcast=1),
           "matmul expands the [H, D, E] weight over the batch to [B, H, D, E] and reshapes "
           "it to [B*H, D, E]; a zero-stride batch dim cannot be folded by a view, so the "
           "weight is materialised B times on every call."),
    Sample("transpose_reshape", TransposeReshape, ["2x8x16"],
           copies(implicit_layout=1),
           "reshape after transpose cannot be a view (the merged dims are not adjacent in "
           "memory), so aten::reshape clones the tensor."),
    Sample("permute_conv2d", PermuteConv2d, ["2x16x16x3"],
           copies(implicit_layout=1),
           "The NHWC->NCHW permute yields channels_last strides, so the oneDNN conv follows "
           "the input's format and copies the NCHW weight to channels_last on every call; "
           "the permuted input itself is used without a copy."),
    Sample("narrow_after_transpose", NarrowAfterTranspose, ["2x16x8"],
           copies(implicit_layout=1),
           "layer_norm needs a dense input and calls contiguous() on the narrowed, transposed "
           "view; the culprit is aten::layer_norm (the outermost op), not the aten::contiguous "
           "it calls."),
    Sample("explicit_contiguous", ExplicitContiguous, ["2x8x16"],
           copies(explicit_layout=1),
           "The model asks for the copy itself: contiguous() on a transposed tensor."),
    Sample("expand_contiguous", ExpandContiguous, ["1x8x16"],
           copies(broadcast=1),
           "contiguous() on an expanded tensor materialises the broadcast: the source has a "
           "zero stride on the expanded dim, which makes it a broadcast copy before it can be "
           "an explicit_layout one."),
    Sample("channel_shuffle", ChannelShuffle, ["2x8x4x4"],
           copies(implicit_layout=1),
           "The shuffle's reshape after view+transpose cannot be a view, so aten::reshape "
           "copies the whole activation."),
    Sample("attention", lambda: SelfAttention(32, 4), ["2x16x32"],
           copies(implicit_layout=4, broadcast=2, dtype_device=1),
           "With B > 1 matmul must copy the head-split q, k and v to fold B and H, and the "
           "head merge reshape copies once more (4 implicit); each Linear on a 3-D input "
           "copies its bias into the output inside addmm (2 broadcast), and '* scale' copies "
           "the 0-dim double scalar to float (dtype_device)."),
    Sample("channels_last_convnet", SmallConvNet, ["2x3x32x32:channels_last"],
           copies(implicit_layout=2, broadcast=1, dtype_device=1),
           "Given a channels_last input, each oneDNN conv copies its NCHW weight to "
           "channels_last on every call (2 implicit; an NCHW input has none); the pooling "
           "mean divides by an int64 0-dim count (dtype_device) and fc's addmm copies its "
           "bias into the [2, 10] output (broadcast)."),
    Sample("view_fails", ViewFails, ["2x8x16"],
           copies(), status="failed",
           why="view() on a transposed tensor raises RuntimeError (use reshape); nothing is "
               "copied before it fails.",
           exports=False),  # torch.export.export raises the same error: there is no program
    Sample("defensive_clone", DefensiveClone, ["8x16"],
           copies(same_layout=2),
           "clone() keeps the source's strides (preserve_format), so both the plain clone and "
           "the clone of a transposed view copy without changing layout."),
    Sample("dtype_cast", DtypeCast, ["2x3x8x8:u8"],
           copies(dtype_device=1),
           "to(torch.float32) on a uint8 image copies with conversion."),
    Sample("scalar_arith", ScalarArith, ["4x8"],
           copies(dtype_device=2),
           "A tensor-scalar op wraps the Python number in a 0-dim double tensor, and "
           "TensorIterator casts it to float with a 0-dim copy_: one per op."),
    Sample("noncontig_input", NoncontigInput, ["2x8x16:perm=0,2,1"],
           copies(implicit_layout=1),
           "The model is fine; the input is allocated as [2, 16, 8] and viewed back "
           "transposed, so flatten's reshape cannot be a view and copies."),
    Sample("cat_transposed", CatTransposed, ["8x16"],
           copies(),
           "cat writes each (transposed) input into a narrow() of the output with "
           "TensorIterator's copy_stub, never through aten::copy_, so its real copies are not "
           "counted: a blind spot of copy_-based counting."),
    Sample("slice_assign", SliceAssign, ["8x16"],
           copies(explicit_layout=1, broadcast=1),
           "Slice assignment is an aten::copy_ issued by the model: writing the transposed x "
           "into a column block is an explicit layout copy, and assigning 1.0 copies a 0-dim "
           "tensor into the slice (broadcast).",
           pt2=Expect(copies(explicit_layout=1, broadcast=1, same_layout=1),
                      "As the TorchScript archive, plus one: export lifts the Python float 1.0 of "
                      "the second assignment into a tensor constant, and aten::lift_fresh_copy copies "
                      "it into a fresh 0-dim tensor each call (same_layout) before fill_ reads it."),
           pt2_by_torch=(("2.15", Expect(copies(explicit_layout=1),
                                         "PyTorch 2.15 exports the second assignment as fill_.Scalar with the "
                                         "float 1.0: no tensor constant is lifted, so neither "
                                         "lift_fresh_copy's copy nor a 0-dim tensor's broadcast into the "
                                         "slice; the first assignment's explicit copy stays.")),)),
    Sample("fresh_tensor", FreshTensor, ["4096x4096"],
           copies(),
           "No copy: t() is a view and x * x writes a new 64 MB tensor; the e2e tests use it "
           "to check that page faults are counted on the write and not on the view."),
    Sample("gate_base", GateBase, ["2x16x32"],
           copies(broadcast=2),
           "The gate example's baseline: the head split and merge are views; the two Linear "
           "biases are copied into addmm's outputs (broadcast)."),
    Sample("gate_regressed", GateRegressed, ["2x16x32"],
           copies(implicit_layout=1, broadcast=2),
           "gate_base plus a transpose of the heads: the merge reshape can no longer be a view "
           "and copies (implicit), which `layoutprof --baseline` reports as a regression."),
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
    Sample("op_loop", OpLoop, ["64x8x8"],
           copies(explicit_layout=64, dtype_device=64),
           "Per row of the input: '* 0.5' casts its 0-dim double to float (dtype_device) and "
           "t().contiguous() copies the transposed 8x8 (explicit). The scale benchmark runs it "
           "with 16500 and 60000 rows (about 280,000 and 1,000,000 op events per call)."),
    Sample("fork_wait", ForkWait, ["2x8x16"],
           copies(implicit_layout=1, explicit_layout=1, broadcast=1),
           "The forked branch's reshape of the transposed [2, 16, 8] view into [2, 128] cannot be "
           "a view (implicit), on an inter-op pool thread; the main path's transpose(1, "
           "2).contiguous() copies (explicit); after the wait, the head Linear on the 2-D [2, 128] "
           "input copies its bias into addmm's output (broadcast)."),
    Sample("grad_channels_last_input", ConvBlock, ["2x8x6x6:channels_last"],
           copies(implicit_layout=1, broadcast=1),
           "Forward, at one intra-op thread: the channels_last input meets the NCHW 3x3 "
           "conv.weight, which the convolution copies into channels_last (implicit); the 1x1 "
           "weight [32, 16, 1, 1] is already dense in both orders, no copy. LibTorch picks a 1x1 "
           "convolution's kernel by thread count (use_mkldnn in Convolution.cpp: THNN is faster "
           "single-threaded): at one thread the pointwise conv runs slow_conv2d, which writes its "
           "bias [32] into the channels_last [2, 32, 6, 6] output by a broadcast copy; with more "
           "threads oneDNN adds the bias in the kernel and there is no broadcast copy.",
           grads={"conv.weight": "layout_mismatch", "conv.bias": "match",
                  "pointwise.weight": "match", "pointwise.bias": "match",
                  "depthwise.weight": "size1_only", "depthwise.bias": "match"},
           grads_why="The seed's case. The input is channels_last and the weights NCHW: the "
                     "convolutions' backward computes each weight's gradient in the input's "
                     "layout, channels_last. For the 3x3 conv.weight [16, 8, 3, 3] that layout "
                     "differs from NCHW on dims of size > 1 (strides [72, 1, 24, 8] for [72, 9, 3, "
                     "1]): the contract is broken and AccumulateGrad copies it every step. For "
                     "depthwise.weight [32, 1, 3, 3] channels_last strides [9, 1, 3, 1] differ from "
                     "NCHW [9, 9, 3, 1] only on the size-1 input-channel dim: kept as is, and DDP "
                     "warns. pointwise.weight [32, 16, 1, 1]: at one thread its backward is "
                     "slow_conv2d's, which gives the gradient in the weight's own layout (strides "
                     "[16, 1, 1, 1]), a match; with more threads LibTorch 2.x's oneDNN backward "
                     "gives it channels_last, strides [16, 1, 16, 16], different on the size-1 "
                     "kernel dims only: size1_only, the exact warning of the seed (grad strides "
                     "[256, 1, 256, 256] for a bucket view [256, 1, 1, 1]). Biases are 1-D."),
    Sample("grad_channels_last_model", conv_block_channels_last, ["2x8x6x6:channels_last"],
           copies(broadcast=1),
           "Forward, at one intra-op thread: the weights are channels_last already, so no "
           "weight is copied; the pointwise conv's slow_conv2d bias copy remains (none with more "
           "threads, where oneDNN runs it).",
           grads={"conv.weight": "match", "conv.bias": "match",
                  "pointwise.weight": "match", "pointwise.bias": "match",
                  "depthwise.weight": "match", "depthwise.bias": "match"},
           grads_why="The fix: the same block converted with model.to(memory_format="
                     "torch.channels_last) before scripting, fed channels_last. Every weight is "
                     "channels_last and so is every gradient: all match, nothing to warn about."),
    Sample("grad_zoo", GradZoo, ["4x16"],
           copies(implicit_layout=1, broadcast=1),
           "Forward: repeat copies the [1, 16] table expanded over the batch (broadcast, a "
           "stride-0 source); the reshape of the sliced view [:, :, :2] cannot be a view and "
           "copies it (implicit). bmm reads its expanded and permuted operands in place.",
           grads={"transposed": "match", "einsum_weight": "layout_mismatch", "scale": "match",
                  "table": "match", "heads": "layout_mismatch", "unused": "no_grad"},
           grads_why="transposed ([16, 8] created as a transpose, strides (1, 16)) feeds mm "
                     "directly: ATen's mm backward returns the gradient of a transposed operand "
                     "transposed too, a match. einsum_weight [16, 8] goes through einsum, which "
                     "permutes it into a bmm operand; bmm's gradient comes back in the permuted "
                     "order (strides (1, 16)): layout_mismatch. scale (expand) and table (repeat) "
                     "get their gradients from sums, contiguous: match. heads [4, 8, 16] is used "
                     "as heads.permute(1, 0, 2) in bmm: its gradient is contiguous in the permuted "
                     "order, strides (16, 64, 1) for (128, 16, 1): layout_mismatch. unused is never "
                     "read: no_grad."),
    Sample("resnet18", resnet18, ["1x3x224x224"],
           copies(dtype_device=1, same_layout=1), large=True,
           why="NCHW convs (all on oneDNN) copy nothing; the avgpool mean divides by an int64 "
               "0-dim count (dtype_device) and fc's addmm copies its bias into the [1, 1000] "
               "output, same_layout because batch 1 leaves no broadcast dim.", needs="torchvision",
           pt2_inputs=["8x3x224x224:channels_last"],
           pt2=Expect(copies(implicit_layout=17, broadcast=1, dtype_device=1),
                      "Exported with a channels_last batch of 8 (the seed's case): each 3x3 and "
                      "7x7 convolution meets NCHW weights and copies its weight into channels_last "
                      "(17 implicit, 44 MB in all); the 3 downsample 1x1 weights [C, Cin, 1, 1] are "
                      "dense in both orders, no copy. avgpool's mean divides by an int64 0-dim count "
                      "(dtype_device); fc's addmm copies its bias into the [8, 1000] output "
                      "(broadcast).")),
    Sample("small_transformer", SmallTransformer, ["1x128x256"],
           copies(implicit_layout=4, broadcast=16, dtype_device=4), large=True,
           why="Per block: 4 Linear bias copies in addmm (broadcast), the head-merge reshape "
               "(implicit) and the 0-dim '* scale' cast (dtype_device); with batch 1 the "
               "head-split q, k, v fold for free in matmul, unlike the attention sample."),
    Sample("vit_b_16", vit_b_16, ["1x3x224x224"],
           copies(implicit_layout=12, broadcast=36, same_layout=1), large=True,
           why="Per encoder layer, the eval fast path aten::_native_multi_head_attention clones "
               "its head-merge input, a [1, 197, 12, 64] view with the heads transposed "
               "(implicit), and copies the out-projection bias into addmm's [197, 768] output "
               "(broadcast); the MLP's two Linears on the 3-D activations copy their biases into "
               "addmm's outputs (2 broadcast). The classifier's Linear at batch 1 copies its bias "
               "into [1, 1000] (same_layout). LibTorch 2.x runs the same fast path and copies the "
               "same (its archive, though, calls aten::scaled_dot_product_attention in the "
               "module's slow path, so 1.13 cannot load it).", needs="torchvision",
           pt2=Expect(copies(explicit_layout=12, broadcast=48, same_layout=1),
                      "torch.export traces nn.MultiheadAttention's general path, not the fast path: "
                      "per encoder layer the packed in-projection's q, k, v split is made contiguous "
                      "explicitly (explicit); scaled_dot_product_attention's CPU output keeps the "
                      "query's memory order, so the head merge is a view (no implicit copy); the "
                      "in-projection, out-projection and the MLP's two Linears each copy their bias "
                      "into addmm's output (4 broadcast). The classifier at batch 1 copies its bias "
                      "into [1, 1000] (same_layout).")),
    Sample("dynamic_batch", DynamicBatch, ["4x8x16"], copies(implicit_layout=1), pt2_only=True,
           min_torch=2, dynamic_batch=True,
           why="Exported with a dynamic batch (its size a SymInt bound from the input): the "
               "reshape of the transposed [B, 16, 8] view into [B, 128] cannot be a view (implicit), "
               "at whatever batch it runs."),
    Sample("cond_branch", CondBranch, ["2x8x16"], copies(implicit_layout=1, dtype_device=1), pt2_only=True,
           min_torch=2,
           why="The predicate's aten::ge compares the float 0-dim sum with the int 0, which it takes "
               "as an int64 wrapped-number tensor and casts to float (dtype_device). torch.cond on "
               "that predicate, known only at run time (always true): the true branch's "
               "reshape of the transposed [2, 16, 8] view into [2, 128] copies (implicit); the false "
               "branch, not taken, would copy nothing (reshape of the contiguous input is a view)."),
    Sample("while_loop", WhileLoop, ["8x8"], copies(explicit_layout=3), pt2_only=True, min_torch=2,
           why="while_loop runs its body three times (i = 0, 1, 2): each y.t().contiguous() copies the "
               "transposed 8x8 (explicit); the counter's i + 1 and i < 3 copy nothing."),
    Sample("map_slices", MapSlices, ["5x3x4"], copies(implicit_layout=5), pt2_only=True, min_torch=2,
           why="map runs its body on each of the 5 slices [3, 4] of dimension 0: the reshape of each "
               "transposed slice into [12] cannot be a view (implicit, 5 in all); the results are "
               "stacked by aten::stack, which writes them without a copy_."),
    Sample("no_grad_block", NoGradBlock, ["2x8x16"], copies(implicit_layout=1, broadcast=1),
           pt2_only=True, min_torch=2,
           why="The torch.no_grad() block is wrap_with_set_grad_enabled(False, ...) around its "
               "ops: the reshape of the transposed [8, 2, 16] view into [8, 32] copies (implicit); "
               "proj on the 2-D [16, 16] input copies its bias into addmm's output (broadcast)."),
    Sample("running_total", RunningTotal, ["4x16"], copies(dtype_device=1, same_layout=1), pt2_only=True,
           min_torch=2, decompose=True,
           why="x * 2 multiplies by the int 2, an int64 wrapped-number tensor cast to float "
               "(dtype_device). After run_decompositions() the buffer's add_ is a functional add whose result is an "
               "output the program writes back into the buffer: that write-back is one aten::copy_ "
               "of a [16] tensor into the [16] buffer, same strides (same_layout)."),
    Sample("batchnorm_train", TrainingBatchNorm, ["2x3x8x8"], copies(same_layout=5), pt2_only=True,
           min_torch=2, decompose=True, train=True, grads={},
           why="Exported in train mode, then decomposed: batch norm is "
               "_native_batch_norm_legit_functional, which clones running_mean and running_var [8] "
               "to return their new values (2 same_layout, nested in it); after the forward the "
               "program writes its three mutated buffers back, running_mean, running_var [8] and "
               "num_batches_tracked [] (int64, incremented by an add) (3 same_layout aten::copy_). "
               "The 3x3 convolution at one thread runs oneDNN, which adds its bias in the kernel. "
               "With --backward it fails (exit 4), as ep.module() does: the write-back changes "
               "running statistics autograd saved."),
    Sample("bert_encoder", bert_encoder, ["2x16:i64"], copies(broadcast=14), pt2_only=True, min_torch=2,
           needs="transformers",
           why="transformers' BertModel (2 layers, hidden 64): the token_type_ids buffer [1, 512] "
               "sliced and expanded over the batch (stride 0) is made dense for aten::embedding's "
               "lookup (broadcast); per layer the six Linears on the 3-D [2, 16, *] activations (query, "
               "key, value, attention output, intermediate, output) copy their biases into addmm's "
               "[32, *] outputs (12 broadcast); the pooler's Linear on [2, 64] copies its bias "
               "(broadcast). The heads' split and merge around scaled_dot_product_attention are views."),
    Sample("llama_decoder", llama_decoder, ["2x16:i64"], copies(broadcast=4, dtype_device=14), pt2_only=True,
           min_torch=2, needs="transformers",
           why="transformers' LlamaModel (2 layers, 4 query and 2 key/value heads): the causal "
               "mask's cumsum over the bool mask casts it to int64, and the rotary embedding casts "
               "the int64 positions [1, 16, 1] to float (aten::to) (2 dtype_device); cos and sin are "
               "scaled by a Python float (a float64 wrapped number cast to float, 2); each of the 5 "
               "RMSNorms (two per layer and the last) divides its mean by an int64 count and adds a "
               "Python float eps (2 each, 10). Grouped-query attention's repeat_kv expands the 2 key "
               "and value heads to 4 along a zero-stride dim and reshapes them: a copy each "
               "(broadcast, 2 per layer). The Linears have no bias: no bias copies."),
    Sample("t5_encoder_decoder", t5_encoder_decoder, ["2x16:i64", "2x8:i64"],
           copies(explicit_layout=4, dtype_device=35), pt2_only=True, min_torch=2, needs="transformers",
           why="transformers' T5Model (2 encoder and 2 decoder layers): the relative position bias "
               "comes from an embedding [L, L, H] permuted to [1, H, L, L] (heads innermost in "
               "memory); transformers' SDPA integration adds the mask and calls .contiguous() on it "
               "in each self-attention (explicit: 2 of [2, 4, 16, 16], 2 of [2, 4, 8, 8]). Every "
               "T5LayerNorm (12: two per encoder layer, three per decoder layer, one after each "
               "stack) divides its mean by an int64 count and adds a Python float eps (24 "
               "dtype_device); the position buckets cast between bool, int64 and float and divide "
               "and multiply by Python numbers: 6 casts in the encoder's bidirectional buckets, 5 in "
               "the decoder's (11 dtype_device)."),
    Sample("convnext_atto", convnext_atto, ["2x3x64x64:channels_last"],
           copies(implicit_layout=4, broadcast=25, dtype_device=1), pt2_only=True, min_torch=2, needs="timm",
           why="timm's convnext_atto fed channels_last with NCHW weights, at one intra-op thread: the "
               "4x4 stem and the three 2x2 downsampling convolutions copy their weights into "
               "channels_last (4 implicit); the 7x7 depthwise weights [C, 1, 7, 7] and the 1x1 "
               "weights are dense in both orders (no copy). Each of the 12 blocks' two 1x1 "
               "convolutions runs slow_conv2d at one thread, which writes its bias into the "
               "channels_last output by a broadcast copy (24); the head's Linear on [2, 320] copies "
               "its bias into [2, 1000] (broadcast); adaptive_avg_pool2d's mean divides by an int64 "
               "count (dtype_device)."),
]


def manifest() -> dict:
    """The manifest in a fixed key order, so regenerating it gives identical bytes. Each
    sample's `expect` lists what each LibTorch version does with it: the e2e tests take the
    first entry one of whose `torch` prefixes matches the LibTorch under test."""
    entries, pt2_only = [], []
    for s in SAMPLES:
        if s.pt2_only:
            pt2_only.append({"name": s.name, "large": s.large, "min_torch": s.min_torch,
                             "pt2": pt2_entry(s)})
            continue
        entries.append({
            "name": s.name,
            "file": s.name + ".pt",
            "large": s.large,
            "min_torch": s.min_torch,
            "inputs": list(s.inputs),
            "expect": [{"torch": prefixes, "status": e.status,
                        "copies": {k: e.copies[k] for k in COPY_CLASSES}, "why": e.why}
                       for prefixes, e in s.expectations()],
        })
        if s.grads is not None:
            entries[-1]["grads"] = [{"torch": prefixes, "verdicts": dict(v), "why": why}
                                    for prefixes, v, why in s.grad_expectations()]
        if s.exports:
            entries[-1]["pt2"] = pt2_entry(s)
    return {"schema": 2, "samples": entries, "pt2_samples": pt2_only}


def pt2_entry(s: Sample) -> dict:
    """A sample's torch.export program: its file, the inputs it was exported with (and is
    profiled on), and what LibTorch 2.x does with it (1.x refuses every .pt2)."""
    def entry(prefix: str, e: Expect) -> dict:
        return {"torch": [prefix], "status": e.status, "copies": {k: e.copies[k] for k in COPY_CLASSES},
                "why": e.why}
    return {"file": s.name + ".pt2", "inputs": s.pt2_specs(),
            "expect": [entry(prefix, e) for prefix, e in s.pt2_by_torch] + [entry("2", s.pt2_expected("2"))]}


# ---------------------------------------------------------------------------------------
# Inputs: the same --input syntax and semantics as layoutprof.
# ---------------------------------------------------------------------------------------

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
          "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32, "i8": torch.int8,
          "u8": torch.uint8, "bool": torch.bool}


def make_input(spec: str) -> torch.Tensor:
    parts = spec.split(":")
    sizes = [int(d) for d in parts[0].split("x")]
    dtype, fmt = "f32", "contiguous"
    for part in parts[1:]:
        if part in DTYPES:
            dtype = part
        else:
            fmt = part

    def random(shape):
        t = DTYPES[dtype]
        if t.is_floating_point:
            return torch.randn(shape, dtype=t)
        return torch.randint(0, 2 if t == torch.bool else 10, shape, dtype=t)

    if fmt == "contiguous":
        return random(sizes)
    if fmt == "channels_last":
        return random(sizes).contiguous(memory_format=torch.channels_last)
    if fmt == "channels_last_3d":
        return random(sizes).contiguous(memory_format=torch.channels_last_3d)
    if fmt.startswith("perm="):
        perm = [int(p) for p in fmt[len("perm="):].split(",")]
        physical = random([sizes[p] for p in perm])
        back = [perm.index(d) for d in range(len(perm))]
        return physical.permute(back)
    raise ValueError(f"unknown input format '{fmt}' in '{spec}'")


# ---------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------

def built_module(sample: Sample) -> nn.Module:
    torch.manual_seed(0)
    model = sample.build().train(sample.train)
    # Inference samples: with frozen parameters no op sees a tensor that requires grad, so
    # the executed graph cannot depend on the caller's grad mode (--check verifies this).
    # Training samples keep requires_grad: their gradients are what they are for.
    if sample.grads is None:
        for p in model.parameters():
            p.requires_grad_(False)
    return model


def build_pt2(sample: Sample, out_dir: str) -> str:
    """NAME.pt2: torch.export.export on the sample's example inputs (seeded, in their layouts),
    saved with them, checked to load and to match the module."""
    model = built_module(sample)
    torch.manual_seed(0)
    inputs = tuple(make_input(spec) for spec in sample.pt2_specs())
    dynamic = None
    if sample.dynamic_batch:
        batch = torch.export.Dim("batch", min=1, max=1024)
        dynamic = tuple({0: batch} for _ in inputs)
    program = torch.export.export(model, inputs, dynamic_shapes=dynamic)
    if sample.decompose:
        program = program.run_decompositions()
    path = os.path.join(out_dir, sample.name + ".pt2")
    torch.export.save(program, path)
    loaded = torch.export.load(path).module()
    with torch.no_grad():
        got, want = loaded(*inputs), model(*inputs)
    for a, b in zip(torch.utils._pytree.tree_leaves(got), torch.utils._pytree.tree_leaves(want)):
        if isinstance(a, torch.Tensor) and not torch.allclose(a, b, rtol=1e-4, atol=1e-5):
            raise SystemExit(f"{path}: the saved program does not match the module "
                             f"(largest difference {(a - b).abs().max().item():.3g})")
    write_mutated_buffers(sample, program, path)
    return path


MUTATION_CALLS = 3


def write_mutated_buffers(sample: Sample, program, path: str) -> None:
    """NAME.pt2.buffers.json, for a program that mutates buffers: each one as eager PyTorch
    leaves it after MUTATION_CALLS calls of a fresh module on the inputs the archive stores.
    The runner's tests make layoutprof's executor do the same and compare."""
    mutated = sorted(set(program.graph_signature.buffers_to_mutate.values()))
    if not mutated:
        return
    model = built_module(sample)
    torch.manual_seed(0)
    inputs = tuple(make_input(spec) for spec in sample.pt2_specs())  # as build_pt2 made them
    with torch.no_grad():
        for _ in range(MUTATION_CALLS):
            model(*inputs)
    buffers = dict(model.named_buffers())
    doc = {"calls": MUTATION_CALLS,
           "buffers": {name: {"sizes": list(buffers[name].shape),
                              "values": buffers[name].detach().double().flatten().tolist()}
                       for name in mutated}}
    with open(path + ".buffers.json", "w") as f:
        json.dump(doc, f, indent=1)


def build(sample: Sample, out_dir: str) -> str:
    model = built_module(sample)
    scripted = torch.jit.script(model)
    path = os.path.join(out_dir, sample.name + ".pt")
    torch.jit.save(scripted, path)
    size = os.path.getsize(path)
    if not sample.large and size > SMALL_LIMIT_BYTES:
        raise SystemExit(f"{path}: {size} bytes, too large to commit")
    return path


def write_state_dict(out_dir: str) -> str:
    """A torch.save'd state_dict: a zip archive that is not TorchScript, for the bad-input
    tests (users hand those to a profiler more often than random bytes)."""
    torch.manual_seed(0)
    os.makedirs(os.path.join(out_dir, "not_torchscript"), exist_ok=True)
    path = os.path.join(out_dir, "not_torchscript", "state_dict.pt")
    torch.save(torch.nn.Linear(4, 4).state_dict(), path)
    return path


def write_refused_programs(out_dir: str) -> List[str]:
    """.pt2 programs layoutprof must refuse in one line (exit 3), for the bad-input tests: one
    calling a custom op whose library is not loaded (torch.library, defined here only), and
    transpose_reshape's program with its node's target rewritten to a higher-order op no
    executor knows."""
    import zipfile

    folder = os.path.join(out_dir, "not_torchscript")
    os.makedirs(folder, exist_ok=True)

    @torch.library.custom_op("layoutprof_test::scale", mutates_args=())
    def scale(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @scale.register_fake
    def _(x):
        return torch.empty_like(x)

    class CallsCustomOp(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.ops.layoutprof_test.scale(x)

    custom = os.path.join(folder, "custom_op.pt2")
    torch.export.save(torch.export.export(CallsCustomOp(), (torch.randn(2, 3),)), custom)

    source, unknown = os.path.join(out_dir, "transpose_reshape.pt2"), os.path.join(folder, "unknown_node.pt2")
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(unknown, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("models/model.json"):
                data = data.replace(b'"torch.ops.aten.reshape.default"', b'"torch.ops.higher_order.layoutprof_unknown"')
            zout.writestr(item, data)
    return [custom, unknown]


# ---------------------------------------------------------------------------------------
# --check: count and classify aten::copy_ with the profiler, independently of layoutprof
# ---------------------------------------------------------------------------------------

class Copy(NamedTuple):
    cls: str
    culprit: str
    culprit_shapes: list
    shapes: list  # [dst, src]
    strides: list
    dtypes: list


def classify(shapes, strides, dtypes, devices, culprit: str) -> str:
    (dst_shape, src_shape), (dst_stride, src_stride) = shapes, strides
    if dtypes[0] != dtypes[1] or devices[0] != devices[1]:
        return "dtype_device"
    if math.prod(src_shape) < math.prod(dst_shape) or any(
            st == 0 and sz > 1 for sz, st in zip(src_shape, src_stride)):
        return "broadcast"

    def drop_ones(shape, stride):
        return [st for sz, st in zip(shape, stride) if sz != 1]

    if drop_ones(src_shape, src_stride) == drop_ones(dst_shape, dst_stride):
        return "same_layout"
    return "explicit_layout" if culprit in EXPLICIT_CULPRITS else "implicit_layout"


_ARG_COUNTS: Dict[str, List[int]] = {}


def own_args(name: str, recorded: int) -> slice:
    """Which recorded inputs are the op's own arguments.

    Ops called by the TorchScript interpreter go through Dispatcher::callBoxed, which in
    1.13 hands RecordFunction the whole interpreter stack: values kept there for later ops
    come first, the op's arguments last. Take as many trailing entries as the op's
    (non-out) schema has arguments; ops called from C++ kernels record exactly those.
    """
    if name not in _ARG_COUNTS:
        schemas = torch._C._jit_get_schemas_for_operator(name)
        _ARG_COUNTS[name] = sorted({len(sc.arguments) for sc in schemas
                                    if not any(a.is_out for a in sc.arguments)})
    fitting = [n for n in _ARG_COUNTS[name] if n <= recorded]
    return slice(recorded - fitting[-1] if fitting else 0, None)


class Recorded(NamedTuple):
    shapes: list  # [] for an input that is not a tensor
    strides: list
    dtypes: list
    devices: list


def recorded_inputs(fields) -> Recorded:
    """An op's recorded inputs, from either profiler: torch 1.13 keeps them as parallel lists
    (fields.inputs.shapes, .strides, .dtypes, .tensor_metadata); torch 2.x as one list with a
    _TensorMetadata (sizes, strides, dtype, device) for each tensor."""
    ins = fields.inputs
    if hasattr(ins, "shapes"):
        devices = [str(m.device) if m is not None else "?" for m in ins.tensor_metadata]
        return Recorded(list(ins.shapes), list(ins.strides), list(ins.dtypes), devices)
    tensors = [i if type(i).__name__ == "_TensorMetadata" else None for i in ins]
    return Recorded([list(t.sizes) if t else [] for t in tensors],
                    [list(t.strides) if t else [] for t in tensors],
                    [str(t.dtype).replace("torch.", "") if t else "" for t in tensors],
                    [str(t.device) if t else "?" for t in tensors])


def profile_copies(module, inputs):
    """One profiled forward(); returns (copies, exception or None). Taken once more when
    torch.profiler fails inside torch: torch 2.14's has raised an AttributeError building its own
    event list ('FunctionEvent' object has no attribute 'is_async', torch.autograd.profiler_util)
    after a forward of fork_wait on a loaded machine. The retry is said on stderr; a second
    failure is raised."""
    try:
        return profile_copies_once(module, inputs)
    except AttributeError as e:
        print(f"make_samples: torch.profiler failed inside torch ({e}); profiling once more",
              file=sys.stderr)
        return profile_copies_once(module, inputs)


def profile_copies_once(module, inputs):
    error = None
    with torch.profiler.profile(record_shapes=True) as prof:
        try:
            module(*inputs)
        except RuntimeError as e:
            error = e
    function_scope = torch._C._profiler.RecordScope.FUNCTION
    found: List[Copy] = []

    def walk(event, ops):
        # The experimental event tree (unlike function_events) carries strides and tensor
        # metadata, which the classification needs.
        fields = event.extra_fields
        is_op = isinstance(fields, torch._C._profiler._ExtraFields_TorchOp) and \
            fields.scope == function_scope
        if is_op:
            ops = ops + [event]
        if event.name == "aten::copy_" and is_op:
            culprit = ops[0]
            args = recorded_inputs(fields)
            # copy_(self, src, non_blocking): dst and src are the two entries before the last.
            own = slice(len(args.shapes) - 3, len(args.shapes) - 1)
            shapes, strides, dtypes = args.shapes[own], args.strides[own], args.dtypes[own]
            devices = args.devices[own]
            culprit_args = recorded_inputs(culprit.extra_fields).shapes
            found.append(Copy(
                classify(shapes, strides, dtypes, devices, culprit.name),
                culprit.name,
                [sh for sh in culprit_args[own_args(culprit.name, len(culprit_args))] if sh],
                shapes, strides, dtypes))
        for child in event.children:
            walk(child, ops)

    for root in prof.profiler.kineto_results.experimental_event_tree():
        walk(root, [])
    # The plain event list must agree with the tree walk, or the walk missed a thread.
    listed = sum(1 for e in prof.events() if e.name == "aten::copy_")
    if listed != len(found):
        raise RuntimeError(f"profiler lists {listed} aten::copy_ events, tree walk found "
                           f"{len(found)}")
    return found, error


def warmed_profile(module, specs: List[str], grad_mode: bool):
    """The warm-up calls, then one profiled call, at one intra-op thread, as the expectations
    say (LibTorch picks some kernels by thread count)."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    inputs = [make_input(spec) for spec in specs]
    with torch.set_grad_enabled(grad_mode):
        for _ in range(WARMUP_CALLS):
            try:
                module(*inputs)
            except RuntimeError:
                break  # a failing model fails the same way in the profiled call
        return profile_copies(module, inputs)


def check_sample(sample: Sample, path: str, grad_mode: bool):
    return warmed_profile(torch.jit.load(path), sample.inputs, grad_mode)


def compare_copies(found, error, want: Expect):
    """(copies per class, status, what differs from `want`)."""
    got = {k: 0 for k in COPY_CLASSES}
    for c in found:
        got[c.cls] += 1
    status = "failed" if error is not None else "ok"
    problems = []
    if status != want.status:
        problems.append(f"status {status}, expected {want.status}")
    if got != want.copies:
        problems.append("classes differ: " + ", ".join(
            f"{k} {got[k]} (expected {want.copies[k]})" for k in COPY_CLASSES if got[k] != want.copies[k]))
    return got, status, problems


def print_copies(found) -> None:
    for c in found:
        print(f"    {c.cls:15s} {c.culprit}{c.culprit_shapes}  "
              f"dst {c.dtypes[0]}{c.shapes[0]}/{c.strides[0]} <- "
              f"src {c.dtypes[1]}{c.shapes[1]}/{c.strides[1]}")


def expected_grads(sample: Sample, version: str) -> Dict[str, str]:
    return for_version([(p, v) for p, v, _ in sample.grad_expectations()], version, sample.name)


def python_grad_verdicts(path: str, specs: List[str]) -> Dict[str, str]:
    """Each parameter's gradient verdict after one training step of the archive, derived here
    with Python's autograd, independently of layoutprof: a hook on each parameter sees the
    gradient as autograd hands it to AccumulateGrad (p.grad afterwards may already be a copy
    in the parameter's layout), and autograd's layout contract decides."""
    module = torch.jit.load(path)
    module.train()
    torch.manual_seed(0)
    inputs = [make_input(spec) for spec in specs]
    seen = {}
    params = dict(module.named_parameters())
    hooks = [p.register_hook(lambda g, n=n: seen.__setitem__(n, (tuple(g.shape), g.stride(), g.is_contiguous() or
                                                                 _dense(g.shape, g.stride()))))
             for n, p in params.items() if p.requires_grad]
    for _ in range(WARMUP_CALLS):  # the profiling executor settles on its graph first
        seen.clear()
        out = module(*inputs)
        torch.manual_seed(1)
        out.backward(torch.randn(out.shape))
        for p in params.values():
            p.grad = None
    for h in hooks:
        h.remove()
    verdicts = {}
    for n, p in params.items():
        if not p.requires_grad:
            continue
        if n not in seen:
            verdicts[n] = "no_grad"
            continue
        shape, stride, dense = seen[n]
        if stride == p.stride():
            verdicts[n] = "match"
        elif dense and _dense(p.shape, p.stride()) and all(
                (gs == ps) if size != 1 else gs != 0 for size, gs, ps in zip(p.shape, stride, p.stride())):
            verdicts[n] = "size1_only"
        else:
            verdicts[n] = "layout_mismatch"
    return verdicts


def _dense(shape, stride) -> bool:
    """Non-overlapping and dense: some order of the dims of size > 1 is row-major."""
    dims = sorted((st, sz) for sz, st in zip(shape, stride) if sz != 1)
    expected = 1
    for st, sz in dims:
        if st != expected:
            return False
        expected *= sz
    return True


def check(samples: List[Sample], paths: Dict[str, str]) -> bool:
    print(f"\nchecking {len(samples)} samples: {WARMUP_CALLS} warm-up calls, then one "
          "profiled call under no_grad (and again with grad enabled, which must agree)")
    ok = True
    rows = []
    for s in samples:
        want = s.expected(torch.__version__)
        found, error = check_sample(s, paths[s.name], grad_mode=False)
        got, status, problems = compare_copies(found, error, want)
        # The tool runs under no_grad; the frozen samples must not depend on that (training
        # samples' parameters require grad: their graphs may).
        grad_found, grad_error = check_sample(s, paths[s.name], grad_mode=True)
        # (Sorted: a forked task's copies interleave with the main thread's in any order.)
        if s.grads is None and (sorted(c.cls for c in grad_found) != sorted(c.cls for c in found) or
                                (grad_error is None) != (error is None)):
            problems.append("copies differ with grad mode enabled")
        if s.grads is not None:
            verdicts = python_grad_verdicts(paths[s.name], s.inputs)
            want_grads = expected_grads(s, torch.__version__)
            if verdicts != want_grads:
                problems.append("gradient verdicts differ: " + ", ".join(
                    f"{n} {verdicts.get(n)} (expected {want_grads.get(n)})"
                    for n in sorted(set(verdicts) | set(want_grads)) if verdicts.get(n) != want_grads.get(n)))
            print(f"    gradient verdicts (Python autograd hooks): {verdicts}")

        verdict = "OK" if not problems else "MISMATCH: " + "; ".join(problems)
        print(f"{s.name}: expected {sum(want.copies.values())}, profiler {len(found)}, "
              f"status {status} -> {verdict}")
        summary = ", ".join(f"{k}={got[k]}" for k in COPY_CLASSES if got[k])
        print(f"    classes: {summary or 'none'}")
        print_copies(found)
        if error is not None:
            print(f"    raised: {str(error).strip().splitlines()[-1]}")
        ok = ok and not problems
        rows.append((s.name, status, sum(want.copies.values()), len(found),
                     [got[k] for k in COPY_CLASSES], "OK" if not problems else "MISMATCH"))

    print("\nsample                   status  expect profiler  impl expl bcast dtype same  result")
    for name, status, expect, total, counts, verdict in rows:
        print(f"{name:24s} {status:6s} {expect:7d} {total:8d}  "
              + " ".join(f"{n:4d}" if i != 2 else f"{n:5d}" for i, n in enumerate(counts))
              + f"  {verdict}")
    return ok


def check_pt2(samples: List[Sample], paths: Dict[str, str]) -> bool:
    """Each .pt2 as Python runs it (torch.export.load(...).module()), profiled as the
    TorchScript archives are: its copies must be the manifest's pt2 expectation."""
    print(f"\nchecking {len(samples)} torch.export programs the same way")
    ok = True
    for s in samples:
        module = torch.export.load(paths[s.name]).module()
        found, error = warmed_profile(module, s.pt2_specs(), grad_mode=False)
        want = s.pt2_expected(torch.__version__)
        _, status, problems = compare_copies(found, error, want)
        print(f"{s.name}.pt2: expected {sum(want.copies.values())}, profiler {len(found)}, "
              f"status {status} -> " + ("OK" if not problems else "MISMATCH: " + "; ".join(problems)))
        print_copies(found)
        ok = ok and not problems
    return ok


def run_reproducibly(args) -> int:
    """Re-run this script in a child process whose archives are byte-for-byte reproducible.

    Two things would otherwise leak into the .pt files: TorchScript orders a module's
    Final constants by iterating a Python set, which follows the per-process string hash
    seed; and the debug info records the source file path as Python compiled it, which
    for a script is absolute (machine-specific). The child runs with a fixed hash seed,
    from the repository root, with this file compiled as samples/make_samples.py.
    """
    env = dict(os.environ, PYTHONHASHSEED="0", **{CHILD_ENV: "1"})
    argv = ["--out", os.path.abspath(args.out)]
    argv += ["--large"] if args.large else []
    argv += ["--check"] if args.check else []
    argv += ["--only", args.only] if args.only else []
    code = (f"import runpy, sys; sys.argv[0] = {SCRIPT!r}; "
            f"runpy.run_path({SCRIPT!r}, run_name='__main__')")
    return subprocess.call([sys.executable, "-c", code] + argv, cwd=REPO_ROOT, env=env)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="directory for NAME.pt and manifest.json")
    parser.add_argument("--large", action="store_true",
                        help="also build the large samples (resnet18, small_transformer, "
                             "vit_b_16; not committed)")
    parser.add_argument("--only", metavar="NAME[,NAME...]",
                        help="build just these samples (e.g. the 2.x-only ones, with a 2.x torch)")
    parser.add_argument("--check", action="store_true",
                        help="profile every built sample and compare with the expectations")
    args = parser.parse_args(argv)
    if os.environ.get(CHILD_ENV) != "1":
        return run_reproducibly(args)

    os.makedirs(args.out, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    unknown = (only or set()) - {s.name for s in SAMPLES}
    if unknown:
        parser.error(f"--only: no sample named {', '.join(sorted(unknown))}")
    major = int(torch.__version__.split(".")[0])
    chosen = []
    unmade = {}  # name -> why, for the samples this torch cannot make; the tests skip them
    for s in SAMPLES:
        if (only is not None and s.name not in only) or (only is None and s.large and not args.large):
            continue
        if s.min_torch > major:
            # Its archive calls ops this torch lacks: the committed file was made by a 2.x torch.
            print(f"skipped {s.name}: needs PyTorch {s.min_torch}.x to script, this is "
                  f"{torch.__version__}")
            continue
        if s.needs is not None:
            try:
                __import__(s.needs)
            except Exception as e:  # not installed, or built for another torch
                unmade[s.name] = (f"{s.needs} does not import beside torch {torch.__version__}: "
                                  f"{str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__}")
                print(f"skipped {s.name}: {unmade[s.name]}")
                continue
        chosen.append(s)
    unmade_path = os.path.join(args.out, "unmade.json")
    if unmade:
        with open(unmade_path, "w", encoding="utf-8") as f:
            json.dump(unmade, f, indent=2, sort_keys=True)
            f.write("\n")
    elif only is None and os.path.exists(unmade_path):
        os.remove(unmade_path)  # a sample made now is not still listed
    paths = {}
    pt2_paths = {}
    for s in chosen:
        if not s.pt2_only:
            paths[s.name] = build(s, args.out)
            print(f"wrote {paths[s.name]} ({os.path.getsize(paths[s.name])} bytes)")
        if major >= 2 and s.exports:
            pt2_paths[s.name] = build_pt2(s, args.out)
            print(f"wrote {pt2_paths[s.name]} ({os.path.getsize(pt2_paths[s.name])} bytes)")
    if only is None:
        print(f"wrote {write_state_dict(args.out)}")
        if major >= 2 and "transpose_reshape" in pt2_paths:
            print(f"wrote {', '.join(write_refused_programs(args.out))}")
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest(), f, indent=2)
        f.write("\n")
    print(f"wrote {os.path.join(args.out, 'manifest.json')}")

    if args.check:
        ok = check([s for s in chosen if s.name in paths], paths)
        ok = check_pt2([s for s in chosen if s.name in pt2_paths], pt2_paths) and ok
        if not ok:
            print("check FAILED", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
