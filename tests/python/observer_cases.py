"""Compiled programs for the observer-effect check (observer_checks.py): each runs a few steps of
a model through torch.compile the ways real code does, calling mark() after each step. Small
models and backend="eager" (what dynamo captures does not depend on the backend) keep them
cheap; one case compiles with inductor."""
import torch
from torch import nn

STEPS = 4


class Decoder(nn.Module):
    """A two-layer decoder over token ids: embedding, attention blocks, a head."""

    def __init__(self, vocab=32, width=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(width, 2, 32, batch_first=True, dropout=0.0)
                                     for _ in range(2)])
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def eager_then_compiled(mark, **compile_args):
    """A generation loop: the prompt runs eagerly, then each new token through the compiled
    model, fed the last column of the growing ids (a slice whose strides change every step)."""
    torch.manual_seed(0)
    model = Decoder().eval()
    ids = torch.randint(0, 32, (2, 6))
    with torch.no_grad():
        logits = model(ids)
        mark()
        step = torch.compile(model, backend="eager", **compile_args)
        for _ in range(STEPS):
            ids = torch.cat([ids, logits[:, -1:].argmax(-1)], dim=1)
            logits = step(ids[:, -1:])
            mark()


def fullgraph(mark):
    eager_then_compiled(mark, fullgraph=True)


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 1))
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.block(self.stem(x)).mean(dim=(2, 3)))


def _infer(model, mark):
    """STEPS inference calls of `model` on fresh batches, mark() after each."""
    with torch.no_grad():
        for _ in range(STEPS):
            model(torch.randn(2, 3, 8, 8))
            mark()


def compiled_submodule(mark):
    """One submodule compiled in place (Module.compile), the rest eager."""
    torch.manual_seed(0)
    model = Cnn().eval()
    model.block.compile(backend="eager")
    _infer(model, mark)


def compiled_function(mark):
    """A compiled function that calls the model (dynamo inlines the module call)."""
    torch.manual_seed(0)
    model = Cnn().eval()

    @torch.compile(backend="eager")
    def predict(x):
        return model(x).softmax(-1)

    _infer(predict, mark)


def _batches(dynamic, mark):
    torch.manual_seed(0)
    model = torch.compile(Cnn().eval(), backend="eager", dynamic=dynamic)
    with torch.no_grad():
        for n in (2, 3, 4, 5)[:STEPS]:
            model(torch.randn(n, 3, 8, 8))
            mark()


def dynamic_none(mark):
    _batches(None, mark)


def dynamic_true(mark):
    _batches(True, mark)


def dynamic_false(mark):
    _batches(False, mark)


def training_steps(mark):
    """A compiled model in a training loop: forward, loss, backward, optimizer step."""
    torch.manual_seed(0)
    model = Cnn()
    compiled = torch.compile(model, backend="aot_eager")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(STEPS):
        compiled(torch.randn(2, 3, 8, 8)).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
        mark()


def hooked_submodule(mark):
    """A forward hook on a submodule: dynamo traces that module's __call__ itself."""
    torch.manual_seed(0)
    model = Cnn().eval()
    model.block.register_forward_hook(lambda _m, _i, out: out * 2)
    _infer(torch.compile(model, backend="eager"), mark)


def inductor(mark):
    """The one case compiled with inductor (on the CPU)."""
    torch.manual_seed(0)
    _infer(torch.compile(Cnn().eval()), mark)


CASES = [eager_then_compiled, fullgraph, compiled_submodule, compiled_function, dynamic_none, dynamic_true,
         dynamic_false, training_steps, hooked_submodule, inductor]
