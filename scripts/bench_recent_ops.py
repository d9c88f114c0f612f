"""What the recent ops kept between the recorded calls cost (layoutprof.profile(recent_ops=...)):
a script of many small ops run after the recorded call, inside a profile block, against the same
ops run plain, and inside a block that keeps none (recent_ops=0). Interleaved rounds, medians;
the ratios are measured side by side in one run.

    python scripts/bench_recent_ops.py [--rounds 11] [--ops 20000]
"""
import argparse
import statistics
import time

import torch

import layoutprof


def small_ops(x, n):
    """n elementwise ops on a tiny tensor: each costs little more than its dispatch."""
    t = time.perf_counter()
    for _ in range(n):
        x = x * 1.0001
    return time.perf_counter() - t


def in_block(model, x, n, recent_ops):
    """The ops after the block's one recorded model call."""
    with torch.no_grad(), layoutprof.profile(by="call", calls=1, recent_ops=recent_ops):
        model(x)
        return small_ops(x, n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--ops", type=int, default=20000)
    o = ap.parse_args()
    torch.set_num_threads(1)
    model, x = torch.nn.Linear(8, 8), torch.randn(4, 8)
    runs = {"plain": lambda: small_ops(x, o.ops), "recent_ops=0": lambda: in_block(model, x, o.ops, 0),
            "recent_ops=4096": lambda: in_block(model, x, o.ops, 4096)}
    times = {k: [] for k in runs}
    for run in runs.values():
        run()  # warm
    for _ in range(o.rounds):
        for k, run in runs.items():
            times[k].append(run())
    plain = statistics.median(times["plain"])
    print(f"torch {torch.__version__}, {o.ops} small ops after the recorded call, medians of {o.rounds} interleaved rounds")
    for k in runs:
        m = statistics.median(times[k])
        print(f"  {k:16} {m * 1e3:8.2f} ms  {m / plain:5.2f}x plain  {(m - plain) / o.ops * 1e9:7.0f} ns per op over plain")


if __name__ == "__main__":
    main()
