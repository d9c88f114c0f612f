#!/usr/bin/env python3
"""What a long-running process keeps after each profile() block: the resident set after N blocks,
each over a model whose module names are new (as a notebook or a server that profiles many
models), against the first block's: what stays of finished recordings (the pools of src/core
free what a recording interned as its session and report go: src/core/pools.h).

    python scripts/bench_pool_growth.py [BLOCKS] [MODULES]     (in a venv with layoutprof installed)
"""
import gc
import sys

import torch

import layoutprof


def rss_kb():
    return int(open("/proc/self/statm").read().split()[1]) * 4


def model(i, modules):
    m = torch.nn.Sequential()
    for j in range(modules):
        m.add_module(f"block_{i}_{j}_with_a_long_fresh_name", torch.nn.Linear(8, 8))
    return m


def main():
    blocks = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    modules = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    x = torch.randn(2, 8)
    marks = {1, blocks // 8, blocks // 4, blocks // 2, blocks}
    rows = []
    for i in range(1, blocks + 1):
        m = model(i, modules)
        with torch.no_grad(), layoutprof.profile(counters=False, gpu=False, recent_ops=0) as p:
            m(x)
        del p, m
        gc.collect()
        if i in marks:
            rows.append((i, rss_kb()))
    base = rows[0][1]
    print(f"| blocks | RSS MB | since the first, kB | ({modules} fresh module names a block) |")
    print("|---|---|---|---|")
    for n, kb in rows:
        print(f"| {n} | {kb / 1024:.1f} | +{kb - base} | |")
    half = rows[-2]
    print(f"measured: {(rows[-1][1] - half[1]) / (rows[-1][0] - half[0]):.1f} kB kept per block over the last "
          f"{rows[-1][0] - half[0]} blocks")


if __name__ == "__main__":
    main()
