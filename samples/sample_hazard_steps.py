"""Hazard cases that only run in process (layoutprof.profile in the user's Python): training
steps and the code around the model's call, not a TorchScript archive. Each case runs STEPS
steps, calling mark() at the end of each, as tests/python/in_process.py records them (a warm-up
step, then the recorded one); its `hazards` (sample_hazards.hazard) is what the report must
hold, [] none, and `status` the run's ("failed": the recorded step raises)."""
from typing import Callable, Dict, List, NamedTuple

import torch
from torch import nn

from sample_hazards import hazard

STEPS = 2  # a warm-up step, then the recorded one


class Case(NamedTuple):
    name: str
    run: Callable[[Callable[[], None]], None]  # run(mark): STEPS steps, mark() after each
    hazards: List[Dict]
    why: str
    status: str = "ok"


class TransposedLinear(nn.Module):
    """A linear layer whose weight is kept as the transpose of an [in, out] matrix, as weights
    converted from another framework are: a [4, 8] parameter with strides (1, 4), dense."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(8, 4).t())

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [B, 8]
        return x @ self.weight.t()


def load_flat(model: nn.Module, flat: Dict[str, torch.Tensor]) -> None:
    """Copies flat weights into the parameters, as a hand-written loader does. reshape(-1) of
    the transposed weight cannot be a view: it returns a copy, and the weights go into that."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.reshape(-1).copy_(flat[name])


def weight_loader(mark: Callable[[], None]) -> None:
    """Each step loads the weights a parameter server broadcast, then trains on them."""
    torch.manual_seed(0)
    model = TransposedLinear()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    broadcast = {"weight": torch.arange(32.0)}
    for _ in range(STEPS):
        load_flat(model, broadcast)
        model(torch.randn(2, 8)).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
        mark()


def logged_norm(out: torch.Tensor) -> torch.Tensor:
    """Metrics code: the norm of the output with its features first, flattened."""
    t = out.t()
    u = t * 2
    return u.view(-1).norm()


def view_after_transpose_outside(mark: Callable[[], None]) -> None:
    """A training loop that logs a metric on its last step, after the model's call: u = t * 2
    keeps t's transposed strides, and view(-1) raises on them."""
    torch.manual_seed(0)
    model = nn.Linear(8, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        out = model(torch.randn(2, 8))
        out.square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
        if step == STEPS - 1:
            logged_norm(out.detach())
        mark()


def fused_on_cpu() -> bool:
    """Whether this torch's Adam and SGD take fused=True for CPU parameters (2.4 on)."""
    try:
        torch.optim.Adam([nn.Parameter(torch.zeros(1))], fused=True)
        torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return False
    return True


def small_model() -> nn.Module:
    """A transposed (dense) parameter beside plain ones: optimizers write both in place."""
    torch.manual_seed(0)
    return nn.Sequential(TransposedLinear(), nn.ReLU(), nn.Linear(4, 4))


def optimizer_steps(mark: Callable[[], None]) -> None:
    """Adam and SGD with momentum over lists of tensors (foreach=True), and fused where this
    torch has CPU kernels for it: each updates the parameters and its state in place."""
    model = small_model()
    params = list(model.parameters())
    optimizers = [torch.optim.Adam(params, lr=1e-3, foreach=True),
                  torch.optim.SGD(params, lr=0.1, momentum=0.9, foreach=True)]
    if fused_on_cpu():
        optimizers += [torch.optim.Adam(params, lr=1e-3, fused=True),
                       torch.optim.SGD(params, lr=0.1, momentum=0.9, fused=True)]
    for _ in range(STEPS):
        for optimizer in optimizers:
            model(torch.randn(2, 8)).square().mean().backward()
            optimizer.step()
            optimizer.zero_grad()
        mark()


def manual_sgd(mark: Callable[[], None]) -> None:
    """Plain SGD by hand: each parameter updated in place under torch.no_grad()."""
    model = small_model()
    for _ in range(STEPS):
        model(torch.randn(2, 8)).square().mean().backward()
        with torch.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-0.1)
                p.grad = None
        mark()


CASES = [
    Case("weight_loader", weight_loader,
         [hazard("lost_write", "p.reshape(-1).copy_(flat[name])")],
         "weight is [4, 8] with strides (1, 4): reshape(-1) copies it, copy_ writes the broadcast "
         "weights into the copy, and the parameter keeps its old values."),
    Case("view_after_transpose_outside", view_after_transpose_outside,
         [hazard("failed_view", "return u.view(-1).norm()")],
         "out.t() is [4, 2] with strides (1, 4); t * 2 keeps them (TensorIterator follows its input), "
         "and view(-1) of it raises in the recorded step, after the model's call.", status="failed"),
    Case("optimizer_steps", optimizer_steps, [],
         "foreach (and fused) optimizers write each parameter, gradient and state in place: dense "
         "tensors of their own, the transposed weight included."),
    Case("manual_sgd", manual_sgd, [],
         "p.add_(p.grad, alpha=-lr) under no_grad writes each parameter, dense, in place."),
]
