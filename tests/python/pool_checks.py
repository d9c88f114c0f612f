"""A long-running process's memory is bounded: after each of many profile() blocks, each over a
model with fresh module names, fresh source lines and fresh shapes, the interning pools and the
module sites hold what they held before the first (run in a process of its own, as
test_package.py does: nothing else may hold a recording's lease).

    python tests/python/pool_checks.py [BLOCKS]      (prints each failure; exit 1 if any)
"""
import gc

import torch

import layoutprof
from layoutprof import _native

# A forward() of a fresh code object each block: its lines are new source lines.
_FORWARD = """
def forward(self, x):
    for block in self.blocks:
        x = block(x).transpose(-1, -2).contiguous().transpose(-1, -2)
    return x
"""


def fresh_model(i, modules=12):
    """A model whose module names, forward() code and weights' shapes are this block's own."""
    scope = {}
    exec(compile(_FORWARD, f"<fresh model {i}>", "exec"), scope)
    cls = type(f"Fresh{i}", (torch.nn.Module,), {"forward": scope["forward"]})
    m = cls()
    m.blocks = torch.nn.Sequential()
    for j in range(modules):
        m.blocks.add_module(f"block_{i}_{j}", torch.nn.Linear(8 + i % 5, 8 + i % 5))
    return m


def one_block(i, fail):
    m = fresh_model(i)
    x = torch.randn(2 + i, 3, 8 + i % 5)
    with torch.no_grad(), layoutprof.profile(counters=False, gpu=False) as p:
        m(x)
    if _native.pools()["leases"] == 0:
        fail(f"block {i}: the profile object holds no lease on the pools while its report lives")
    if f"block_{i}_0" not in p.text():
        fail(f"block {i}: the report does not name the block's modules after the block")
    del p, m
    gc.collect()


def check_pools_bounded(fail, args=()):
    """args: the number of blocks after the first (30)."""
    blocks = int(args[0]) if args else 30
    one_block(0, fail)  # the process's first recording makes what every later one finds
    start = _native.pools()
    for i in range(1, blocks + 1):
        one_block(i, fail)
        now = _native.pools()
        if now != start:
            grown = {k: f"{start[k]} -> {now[k]}" for k in now if now[k] != start[k]}
            fail(f"after block {i} of fresh module names, lines and shapes the pools hold more: {grown}")
            return
    print(f"pools after {blocks} blocks as after the first: {start}")


if __name__ == "__main__":
    from check_main import run_alone
    run_alone(check_pools_bounded)
