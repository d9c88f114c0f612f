"""The torch.profiler side of scripts/bench.sh: plain forward() vs forward() under
torch.profiler(record_shapes=True), interleaved in one process, medians. Prints one JSON line.

usage: PYTHON bench_torch_profiler.py MODEL SHAPE [REPS]   (the torch matching the LibTorch)   (SHAPE like 8x3x224x224)
"""
import json
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile


def main() -> int:
    path, shape = sys.argv[1], [int(d) for d in sys.argv[2].split("x")]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    torch.manual_seed(0)
    model = torch.jit.load(path).eval()
    x = torch.randn(shape)
    with torch.no_grad():
        for _ in range(3):
            model(x)
        plain, profiled, whole = [], [], []
        events = 0
        for r in range(reps):
            # Alternate which goes first so that cache warmth favours neither.
            for which in ((0, 1) if r % 2 else (1, 0)):
                if which == 0:
                    t0 = time.perf_counter()
                    model(x)
                    plain.append(time.perf_counter() - t0)
                else:
                    # whole: what the user pays for one profiled call: the profiler's start and
                    # stop and building its event list (as layoutprof's stop() converts its own).
                    t0 = time.perf_counter()
                    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
                        t1 = time.perf_counter()
                        model(x)
                        profiled.append(time.perf_counter() - t1)
                    events = len(prof.events())
                    whole.append(time.perf_counter() - t0)
    p, q = statistics.median(plain) * 1e3, statistics.median(profiled) * 1e3
    w = statistics.median(whole) * 1e3
    print(json.dumps({"model": path, "plain_ms": p, "recorded_ms": q, "ratio": q / p,
                      "call_ms": w, "call_ratio": w / p,
                      "ops": events, "reps": reps}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
