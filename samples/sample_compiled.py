"""Compiled models, in process: torch.compile with inductor on the CPU, each case run for STEPS
steps under layoutprof.profile (one warm-up step, then the recorded ones), as
tests/python/compiled_checks.py runs them. Each case names what the report's "compiled" section
must hold (`expect`): recompiles and their guard, inductor's layout copies by kind, graph
breaks, forward and backward graphs; and the code on the line each must name.

The models are small (2x3x16x16 batches) so that a cold compile takes seconds on two cores;
inductor's cache (TORCHINDUCTOR_CACHE_DIR, outside the clone) makes later runs cheaper.
"""
from typing import Callable, Dict, NamedTuple

import torch
from torch import nn

STEPS = 3  # a warm-up step, then two recorded ones


class Case(NamedTuple):
    name: str
    run: Callable[[Callable[[], None]], None]  # run(mark): STEPS steps, mark() after each
    expect: Dict
    why: str


class SmallCnn(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.c1 = nn.Conv2d(3, width, 3, padding=1)
        self.c2 = nn.Conv2d(width, width, 3, padding=1)

    def forward(self, x):
        y = self.c1(x).relu()
        return self.c2(y).mean(dim=(2, 3))


def batch(step):
    """A data pipeline that changes its output's layout: every other batch channels_last."""
    x = torch.randn(2, 3, 16, 16)
    return x.to(memory_format=torch.channels_last) if step % 2 else x


def alternating_layouts(mark):
    """A compiled CNN fed NCHW and channels_last batches by turns: dynamo guards the input's
    strides, so the second layout is a recompile (with dynamic strides from then on)."""
    torch.manual_seed(0)
    model = torch.compile(SmallCnn().eval())
    with torch.no_grad():
        for step in range(STEPS):
            model(batch(step))
            mark()


class ShuffleUnit(nn.Module):
    """A ShuffleNet-style unit in channels_last: the channel shuffle's reshape of a transposed
    view is a copy, in eager and in the compiled graph alike."""

    def __init__(self, c):
        super().__init__()
        self.a = nn.Conv2d(c, c, 1)
        self.b = nn.Conv2d(c // 2, c // 2, 3, padding=1, groups=c // 2)

    def forward(self, x):
        x = self.a(x)
        n, c, h, w = x.shape
        x = x.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)
        x1, x2 = x.chunk(2, dim=1)
        return torch.cat([x1, self.b(x2)], dim=1)


class ShuffleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.units = nn.Sequential(ShuffleUnit(16), ShuffleUnit(16))

    def forward(self, x):
        return self.units(self.stem(x)).mean(dim=(2, 3))


def channel_shuffle(mark):
    torch.manual_seed(0)
    model = torch.compile(ShuffleNet().eval().to(memory_format=torch.channels_last))
    x = torch.randn(2, 3, 16, 16).to(memory_format=torch.channels_last)
    with torch.no_grad():
        for _ in range(STEPS):
            model(x)
            mark()


def nchw_no_freezing(mark):
    """An NCHW CNN compiled for inference without freezing: inductor's layout optimization
    (always on for convolutions on the CPU) converts the input and the weights to channels_last
    inside the graph on every call."""
    torch.manual_seed(0)
    model = torch.compile(SmallCnn().eval())
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        for _ in range(STEPS):
            model(x)
            mark()


class BrokenNet(nn.Module):
    """Two layout changes with a graph break between them: the permuted tensor crosses it."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        torch._dynamo.graph_break()
        return self.proj(x).permute(0, 3, 1, 2).contiguous()


def graph_break(mark):
    torch.manual_seed(0)
    model = torch.compile(BrokenNet().eval())
    x = torch.randn(2, 16, 4, 4)
    with torch.no_grad():
        for _ in range(STEPS):
            model(x)
            mark()


def training_step(mark):
    """A compiled training step: a forward and a backward graph; the gradients' verdicts as in
    eager."""
    torch.manual_seed(0)
    model = SmallCnn(16)
    compiled = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(2, 3, 16, 16)
    for _ in range(STEPS):
        compiled(x).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
        mark()


class TinyDecoder(nn.Module):
    def __init__(self, vocab=32, width=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.head(self.embed(ids).relu())


def growing_ids(mark):
    """A generation loop feeding the compiled model the last column of the growing token ids: a
    slice whose strides follow the ids' width, so the second step recompiles (then dynamo makes
    the stride dynamic)."""
    torch.manual_seed(0)
    step = torch.compile(TinyDecoder().eval())
    ids = torch.randint(0, 32, (2, 6))
    with torch.no_grad():
        for _ in range(STEPS):
            logits = step(ids[:, -1:])
            ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
            mark()


def scaled(x, **kw):
    return x * kw["scale"]


def keyword_layout(mark):
    """A compiled function handed a keyword tensor that arrives transposed from the second step on:
    dynamo names it kw['scale']."""
    torch.manual_seed(0)
    compiled = torch.compile(scaled)
    x, s = torch.randn(8, 8), torch.randn(8, 8)
    for step in range(STEPS):
        compiled(x, scale=s if step == 0 else s.t())
        mark()


CASES = [
    Case("alternating_layouts", alternating_layouts,
         {"recompiles": [{"tensor": "x", "kind": "stride", "layout": True}], "code": "model(batch(step))",
          "made": "x.to(memory_format=torch.channels_last)"},
         "a batch layout that changes between steps recompiles the model; the fix names the data pipeline's line"),
    Case("growing_ids", growing_ids,
         {"recompiles": [{"tensor": "ids", "kind": "stride", "layout": True}], "code": "step(ids[:, -1:])",
          "layouts": ["strided: a view of a 2x6 tensor", "strided: a view of a 2x7 tensor"]},
         "a slice of growing token ids recompiles: both layouts named, a view of which tensor"),
    Case("keyword_layout", keyword_layout,
         {"recompiles": [{"tensor": "kw['scale']", "kind": "stride", "layout": True}], "code": "compiled(x, scale=",
          "layouts": ["contiguous", "permuted(1,0)"]},
         "a keyword argument's layout recompiles: dynamo's name for it, both layouts"),
    Case("channel_shuffle", channel_shuffle,
         {"copies": [{"kind": "code", "code": ".transpose(1, 2).reshape(n, c, h, w)"}],
          "ops": [{"name": "cpp_fused", "code": ".transpose(1, 2).reshape(n, c, h, w)"},
                  {"name": "aten::convolution", "code": "self.b(x2)", "module": "units.1.b"}]},
         "the channel shuffle's copy, kept in the compiled graph, at its line (and its kernel's event too)"),
    Case("nchw_no_freezing", nchw_no_freezing,
         {"copies": [{"kind": "weight", "code": "self.c1(x)"}, {"kind": "input", "code": "self.c1(x)"}],
          "ops": [{"name": "aten::convolution", "code": "self.c2(y)", "module": "c2"}],
          "layout_opt": "on"},
         "layout optimization converts the input and the weights to channels_last every call"),
    Case("graph_break", graph_break,
         {"breaks": [{"code": "graph_break"}]},
         "a graph break between two layout changes, with the permuted tensor crossing it"),
    Case("training_step", training_step,
         {"graphs": ["forward", "backward"], "parameters": True,
          "screen": ["inductor's choice inside the compiled graph", "torch._inductor.config.layout_optimization = False"]},
         "a compiled training step: forward and backward graphs, gradient verdicts; the gradients inductor makes "
         "channels_last, which AccumulateGrad copies, are fixed by a compile setting"),
]
