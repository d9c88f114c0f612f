"""In-process recording's cost per call, side by side in one run (run it in a venv where the
layoutprof package is installed: README, "In your Python").

Per model, rounds interleave five ways of making the same calls:
  plain       model(x), nothing on;
  hooks       model(x) with layoutprof's global module hooks on and no recording: their cost alone;
  no lines    as layoutprof, with profile(lines=False): module paths, no source line read per op;
  layoutprof  the steps of a layoutprof.profile() session: model(x), then p.step(), which ends
              the recorded call (the recorder stops, converts and keeps its events); the module
              hooks and the line probe run as in any use;
  profiler    each call inside torch.profiler.profile(record_shapes=True, with_stack=True),
              its exit (which builds the profiler's events) included.
The line probe's cost is layoutprof's less no lines'; the hooks' is hooks' less plain.
Prints each way's median per call and its ratio to plain; the session's analysis and report,
once per session, are printed apart (they do not grow with the calls).

    python scripts/bench_in_process.py [--rounds 5] [--calls 5]
"""
import argparse
import statistics
import time

import torch
import torchvision

import layoutprof
from layoutprof._module_hooks import ModuleHooks


class SmallOps(torch.nn.Module):
    """Many small ops (600 a call on 8x8 tiles): where a per-op cost shows most."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Linear(8, 8)

    def forward(self, x):
        for _ in range(100):
            x = torch.relu(self.scale(x) * 0.5 + 0.1).transpose(1, 2).contiguous()
        return x


def models():
    x = torch.randn(8, 3, 224, 224).to(memory_format=torch.channels_last)
    yield "resnet18 8x3x224x224 channels_last", torchvision.models.resnet18().eval(), x
    block = torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True).eval()
    yield "transformer block 16x128x256", block, torch.randn(16, 128, 256)
    yield "many small ops 4x8x8 (100 linear+relu+transpose)", SmallOps().eval(), torch.randn(4, 8, 8)


def plain(model, x, calls):
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        model(x)
        times.append(time.perf_counter() - t)
    return times, 0.0


def hooked(model, x, calls):
    hooks = ModuleHooks()
    hooks.install()
    try:
        return plain(model, x, calls)
    finally:
        hooks.remove()


def recorded_without_lines(model, x, calls):
    return recorded(model, x, calls, lines=False)


def recorded(model, x, calls, lines=True):
    times = []
    p = layoutprof.profile(lines=lines)
    with p:
        for _ in range(calls):
            t = time.perf_counter()
            model(x)
            p.step()
            times.append(time.perf_counter() - t)
        t_finish = time.perf_counter()
    return times, time.perf_counter() - t_finish


def profiled(model, x, calls):
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        with torch.profiler.profile(record_shapes=True, with_stack=True):
            model(x)
        times.append(time.perf_counter() - t)
    return times, 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=5)
    o = parser.parse_args()
    ways = {"plain": plain, "hooks": hooked, "no lines": recorded_without_lines, "layoutprof": recorded,
            "profiler": profiled}
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, layoutprof {layoutprof.__version__}; "
          f"{o.rounds} rounds of {o.calls} calls each way, interleaved")
    with torch.no_grad():
        for name, model, x in models():
            for _ in range(3):
                model(x)  # warm-up
            per_call = {w: [] for w in ways}
            finish = []
            for _ in range(o.rounds):
                for way, run in ways.items():
                    times, tail = run(model, x, o.calls)
                    per_call[way] += times
                    if way == "layoutprof":
                        finish.append(tail)
            base = statistics.median(per_call["plain"])
            cells = [f"{w} {statistics.median(t) * 1e3:.2f} ms ({statistics.median(t) / base:.3f}x)"
                     for w, t in per_call.items()]
            print(f"{name}: " + ", ".join(cells) +
                  f"; layoutprof's analysis and report per session {statistics.median(finish) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
