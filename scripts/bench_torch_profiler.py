"""The torch.profiler side of scripts/bench.sh: plain forward() vs forward() under
torch.profiler(record_shapes=True), interleaved in one process, medians. Prints one JSON line.

usage: PYTHON bench_torch_profiler.py MODEL SHAPE [REPS] [--backward]   (the torch matching the
       LibTorch; SHAPE like 8x3x224x224). --backward: each call is a training step, as
       layoutprof --backward runs it (train mode, every floating-point parameter trained,
       backward from a seeded random-normal gradient, gradients set to none).
"""
import json
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile


def main() -> int:
    backward = "--backward" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--backward"]
    path, spec = args[0], args[1]  # DIMxDIM...[:channels_last]
    shape = [int(d) for d in spec.split(":")[0].split("x")]
    reps = int(args[2]) if len(args) > 2 else 15
    torch.manual_seed(0)
    model = torch.jit.load(path)
    if backward:
        model.train()
        for p in model.parameters():
            if p.is_floating_point():
                p.requires_grad_(True)
    else:
        model.eval()
    x = torch.randn(shape)
    if spec.endswith(":channels_last"):
        x = x.to(memory_format=torch.channels_last)

    def step():
        out = model(x)
        if backward:
            torch.manual_seed(1)
            out.backward(torch.randn(out.shape))
            for p in model.parameters():
                p.grad = None

    with torch.set_grad_enabled(backward):
        for _ in range(3):
            step()
        plain, profiled, whole = [], [], []
        events = 0
        for r in range(reps):
            # Alternate which goes first so that cache warmth favours neither.
            for which in ((0, 1) if r % 2 else (1, 0)):
                if which == 0:
                    t0 = time.perf_counter()
                    step()
                    plain.append(time.perf_counter() - t0)
                else:
                    # whole: what the user pays for one profiled call: the profiler's start and
                    # stop and building its event list (as layoutprof's stop() converts its own).
                    t0 = time.perf_counter()
                    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
                        t1 = time.perf_counter()
                        step()
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
