"""In-process cases whose report prints a fix, each able to run with that fix applied: the report
of `run(mark, fixed=False)` must name the line or tensor the user changes and the fix on its
first screen (`screen`: the words), and `run(mark, fixed=True)`, the same code with the printed
fix applied at that place, must not show the problem again (`gone`: what must be zero there).
tests/python/fix_checks.py runs both, STEPS steps each (a warm-up step, then the recorded ones),
mark() after each step.

The cases follow public reports' patterns: weights regularised after each optimizer step and
written back permuted; a generation loop feeding a compiled model a slice of its growing ids; a
top-k accuracy helper viewing a transposed prediction; an NCHW batch for a channels_last model;
custom autograd Functions whose backward views a gradient that comes back permuted (after a
transpose, from einsum); transposed patch tokens failing a compiled encoder's stride check; a DDP
job whose weights are written back permuted while .grad is zeroed in place.
"""
from typing import Callable, Dict, List, NamedTuple, Tuple

import torch
from torch import nn

STEPS = 3


class Case(NamedTuple):
    name: str
    run: Callable[..., None]  # run(mark, fixed)
    screen: List[str]         # words the first screen of the unfixed run's text report holds
    gone: Dict                # what the fixed run's report must not hold (see fix_checks.gone_problems)
    why: str
    # The first torch release (major, minor) whose behaviour the case shows; () any. Before it
    # there is nothing to fix (fix_checks.py says so and skips the case).
    torch_from: Tuple[int, ...] = ()


def regularise(layer: nn.Conv2d, fixed: bool) -> None:
    """Normalises each output filter, as weight-normalising training code does, and writes the
    weight back from its [kh, kw, in, out] matrix."""
    with torch.no_grad():
        w = layer.weight.permute(2, 3, 1, 0).reshape(-1, layer.weight.shape[0])
        w = w / w.norm(dim=0, keepdim=True)
        back = w.view(3, 3, layer.weight.shape[1], layer.weight.shape[0]).permute(3, 2, 0, 1)
        layer.weight.data = back.contiguous() if fixed else back


def weights_set_between_steps(mark, fixed=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(STEPS):
        model(torch.randn(2, 3, 8, 8)).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
        regularise(model[2], fixed)
        mark()


class TinyDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(32, 16)
        self.head = nn.Linear(16, 32)

    def forward(self, ids):
        return self.head(self.embed(ids).relu())


def growing_ids_slice(mark, fixed=False):
    torch.manual_seed(0)
    step = torch.compile(TinyDecoder().eval(), backend="eager")
    ids = torch.randint(0, 32, (2, 6))
    with torch.no_grad():
        for _ in range(STEPS):
            last = ids[:, -1:].contiguous() if fixed else ids[:, -1:]
            logits = step(last)
            ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
            mark()


def accuracy(output, target, k, fixed):
    """Top-k accuracy, as classification training scripts compute it after the model's call."""
    _, pred = output.topk(k, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    hits = correct[:k].reshape(-1) if fixed else correct[:k].view(-1)
    return hits.float().sum(0) * (100.0 / target.size(0))


def topk_accuracy(mark, fixed=False):
    torch.manual_seed(0)
    model = nn.Linear(8, 5)
    with torch.no_grad():
        for _ in range(STEPS):
            output = model(torch.randn(4, 8))
            accuracy(output, torch.randint(0, 5, (4,)), 2, fixed)
            mark()


def nchw_batch(mark, fixed=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1)).eval()
    model = model.to(memory_format=torch.channels_last)
    with torch.no_grad():
        for _ in range(STEPS):
            batch = torch.randn(2, 3, 16, 16)
            if fixed:
                batch = batch.contiguous(memory_format=torch.channels_last)
            model(batch)
            mark()


class Flatten(nn.Module):
    def forward(self, x):
        return x.view(-1) * 2


def exported_view(mark, fixed=False):
    """A torch.export program run in process (its GraphModule's generated code, "<eval_with_key>"),
    fed a transposed batch its export never saw: the view raises at the model's own line."""
    program = torch.export.export(Flatten(), (torch.randn(4, 8),)).module()
    for _ in range(STEPS):
        x = torch.randn(8, 4).t()
        program(x.contiguous() if fixed else x)
        mark()


class BiasGelu(torch.autograd.Function):
    """A fused bias+GELU as training code writes one, its backward viewing the gradient it gets
    as rows of C, as if gradients came contiguous."""
    @staticmethod
    def forward(ctx, x, bias, fixed):
        ctx.save_for_backward(x, bias)
        ctx.fixed = fixed
        return torch.nn.functional.gelu(x + bias)

    @staticmethod
    def backward(ctx, grad_output):
        x, bias = ctx.saved_tensors
        rows = grad_output.reshape(-1, x.shape[-1]) if ctx.fixed else grad_output.view(-1, x.shape[-1])
        inner = (rows * torch.ones_like(rows)).view_as(x)
        return inner, inner.sum((0, 1)), None


class GeluBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16, bias=False)
        self.bias = nn.Parameter(torch.zeros(16))

    def forward(self, x, fixed):
        h = BiasGelu.apply(self.fc(x), self.bias, fixed)
        return h.transpose(0, 1)


def backward_view(mark, fixed=False):
    """The gradient the transpose after the fused op hands back is permuted: the backward's view raises."""
    torch.manual_seed(0)
    model = GeluBlock()
    for _ in range(STEPS):
        model(torch.randn(4, 8, 16), fixed).square().mean().backward()
        mark()


class Rotate(torch.autograd.Function):
    """A rotary-style scaling of keys with a hand-written backward that views the gradient as rows."""
    @staticmethod
    def forward(ctx, k, cos, fixed):
        ctx.save_for_backward(cos)
        ctx.fixed = fixed
        return k * cos

    @staticmethod
    def backward(ctx, grad):
        (cos,) = ctx.saved_tensors
        rows = grad.reshape(-1, grad.shape[-1]) if ctx.fixed else grad.view(-1, grad.shape[-1])
        return (rows * cos.reshape(1, -1)).view(grad.shape), None, None


class EinsumAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qk = nn.Linear(8, 16)
        self.cos = nn.Parameter(torch.ones(8), requires_grad=False)

    def forward(self, x, fixed):
        q, k = self.qk(x).chunk(2, dim=-1)
        k = Rotate.apply(k, self.cos, fixed)
        return torch.einsum("bnd,bmd->bnm", q, k).softmax(-1)


def einsum_gradient(mark, fixed=False):
    """einsum's gradient for its second operand comes back permuted (no stride guarantee for
    gradients): the rotation's backward view raises."""
    torch.manual_seed(0)
    model = EinsumAttention()
    for _ in range(STEPS):
        model(torch.randn(2, 5, 8), fixed).square().mean().backward()
        mark()


class PatchTokens(nn.Module):
    """ViT-style patch tokens fed to a compiled nn.TransformerEncoder (its fused fast path in
    eval): the fused layer's real output follows its input's transposed layout, its fake kernel
    promises a contiguous one, and the compiled code's stride check raises."""
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, 32, 4, stride=4)
        layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
        self.encoder = torch.compile(nn.TransformerEncoder(layer, 1, enable_nested_tensor=False))

    def forward(self, x, fixed):
        tokens = self.proj(x).flatten(2).transpose(1, 2)
        return self.encoder(tokens.contiguous() if fixed else tokens)


def compiled_encoder_tokens(mark, fixed=False):
    torch.manual_seed(0)
    model = PatchTokens().eval()
    with torch.no_grad():
        for _ in range(STEPS):
            model(torch.randn(2, 3, 16, 16), fixed)
            mark()


def ddp_group():
    """A gloo process group of one process (127.0.0.1), once per process."""
    import os
    import torch.distributed as dist
    if not dist.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29531")
        dist.init_process_group("gloo", rank=0, world_size=1)


def ddp_kept_grads(mark, fixed=False):
    """A DDP job that regularises its conv weights after each step (written back permuted) and
    zeroes the gradients in place: each step's gradient is added into a .grad of the weights'
    old layout."""
    ddp_group()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
    ddp = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    for _ in range(STEPS):
        loss = ddp(torch.randn(2, 3, 8, 8)).square().mean()
        optimizer.zero_grad(set_to_none=fixed)
        loss.backward()
        optimizer.step()
        regularise(model[2], False)
        mark()


CASES = [
    Case("weights_set_between_steps", weights_set_between_steps,
         ["comes with the model's parameter `2.weight`", "laid out so before the call by aten::permute",
          "`.contiguous()` on parameter `2.weight`", "back = w.view(3, 3, layer.weight.shape[1]"],
         {"tensor_causes": 0},
         "lyr.weight.data = w.view(...).permute(3, 2, 0, 1): the convolutions and AccumulateGrad copy the "
         "permuted weight every step; one cause, the parameter, set between the calls"),
    Case("growing_ids_slice", growing_ids_slice,
         ["`last`.contiguous() where it is made, at", "(`last = ids[:, -1:]", "`logits = step(last)`",
          "strided: a view of a 2x"],
         {"recompiles": 0},
         "the last column of growing ids has the ids' width as its stride: a recompile, until .contiguous()"),
    Case("topk_accuracy", topk_accuracy,
         ["Verdict: the script fails at", "correct[:k].view(-1)", "`.reshape(...)` instead of `.view(...)`"],
         {"failed": 0},
         "pred.t() makes correct[:k] a strided view: view(-1) raises after the model's call; reshape does not"),
    Case("exported_view", exported_view,
         ["Verdict: the script fails at", "return x.view(-1) * 2", "x = torch.randn(8, 4).t()"],
         {"failed": 0},
         "generated code's failure at the model's own line (the node's stack trace), the transpose behind it"),
    Case("nchw_batch", nchw_batch,
         ["`.contiguous(memory_format=torch.channels_last)` on the result of aten::randn", "batch = torch.randn(2, 3, 16, 16)"],
         {"implicit_layout": 0, "mixed": 0},
         "an NCHW batch for a channels_last model: the first convolution converts it every call"),
    Case("backward_view", backward_view,
         ["Verdict: the script fails at", "grad_output.view(-1, x.shape[-1])",
          "born in the backward pass at TransposeBackward0, the gradient of", "return h.transpose(0, 1)",
          "`.reshape(...)` instead of `.view(...)`"],
         {"failed": 0},
         "a custom Function's backward views a gradient the transpose after it made permuted: the line in "
         "backward, and the forward line whose gradient it is"),
    Case("einsum_gradient", einsum_gradient,
         ["Verdict: the script fails at", "grad.view(-1, grad.shape[-1])",
          "born in the backward pass at", "torch.einsum(\"bnd,bmd->bnm\", q, k)", "`.reshape(...)` instead of `.view(...)`"],
         {"failed": 0},
         "einsum's gradient for k comes back permuted; the rotation's backward view of it raises"),
    Case("compiled_encoder_tokens", compiled_encoder_tokens,
         ["Verdict: the script fails at", "compiled code's stride check failed", "born at aten::transpose",
          "tokens = self.proj(x).flatten(2).transpose(1, 2)", "`.contiguous()` on the result of aten::transpose",
          "report aten::_transformer_encoder_layer_fwd to PyTorch"],
         {"failed": 0},
         "transposed tokens into a compiled fused encoder: inductor's stride check fails; the transpose is the "
         "birthplace, .contiguous() there the workaround, the fused op's fake kernel the bug",
         torch_from=(2, 13)),  # 2.13.0 and 2.14.1 fail the check; 2.11.0 runs it (measured); 2.12 not tried
    Case("ddp_kept_grads", ddp_kept_grads,
         ["Gradient warnings (predicted for the shown step", "AccumulateGrad about `2.weight`",
          "2.weight laid out so before the call at", "back = w.view(3, 3, layer.weight.shape[1]",
          "optimizer.zero_grad(set_to_none=True)"],
         {"accumulate_warnings": 0},
         "weights written back permuted between DDP steps, .grad zeroed in place: AccumulateGrad adds each "
         "gradient into the old layout and warns; set_to_none=True lets each step's .grad take the new one"),
]
