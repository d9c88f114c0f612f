"""What layoutprof costs a torch.compile'd model on the CPU, side by side in one run (in a venv
where the layoutprof package is installed: README, "In your Python").

1. A call. Per model, rounds interleave three ways of making the same compiled calls:
     plain       compiled(x): the model compiled with inductor outside any profile;
     layoutprof  the steps of a layoutprof.profile() session: compiled(x), then p.step(), on
                 the same model compiled inside a profile (so its generated kernels emit
                 events, as under layoutprof they do) and recording;
     no counters the same with profile(counters=False): the recorder's cost without the
                 sampled counters' (bench_in_process.py measures those).
   A session's first call records every op's tensors: it is left out, as bench_in_process.py
   leaves it out. Prints each way's median per call, the ratio and its spread over the rounds.
2. A cold compile (--compile): the first call of a fresh torch.compile in a fresh process with
   an empty inductor cache, without and with layoutprof's profile around it (its structured
   trace handler, inductor's kernel events, the compile's pause), in alternating processes.
   Kernel events change inductor's cache keys, so cold is compared with cold.

    python scripts/bench_compiled.py [--rounds 11] [--calls 5] [--compile N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

import layoutprof

HERE = os.path.dirname(os.path.abspath(__file__))


def small_transformer():
    """The command's bench's transformer: samples/make_samples.py's SmallTransformer (4 blocks)."""
    sys.path.insert(0, os.path.join(HERE, "..", "samples"))
    import make_samples
    return make_samples.SmallTransformer().eval()


def resnet18():
    import torchvision
    return torchvision.models.resnet18().eval()


MODELS = {"resnet18 2x3x224x224": (resnet18, (2, 3, 224, 224)),
          "small_transformer 1x16x256": (small_transformer, (1, 16, 256))}


def timed(fn, calls):
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def recorded_median(profiled, x, calls, counters):
    """The median of `calls` recorded steps of one profile, after its first call (which records
    every op's tensors: left out)."""
    with layoutprof.profile(recent_ops=0, counters=counters) as p:
        profiled(x)
        p.step()

        def step():
            profiled(x)
            p.step()
        return timed(step, calls)


def call_ratio(build, shape, rounds, calls):
    """Per way (plain, no counters, layoutprof): the median of the rounds' medians, and each
    recorded way's ratios to the plain calls of its round."""
    torch.manual_seed(0)
    x = torch.randn(*shape)
    plain = torch.compile(build())
    profiled = torch.compile(build())
    with torch.no_grad():
        plain(x)
        with layoutprof.profile():  # compiled inside a profile: its kernels emit events
            profiled(x)
        medians = {"plain": [], "no counters": [], "layoutprof": []}
        ratios = {"no counters": [], "layoutprof": []}
        for _ in range(rounds):
            p_median = timed(lambda: plain(x), calls)
            medians["plain"].append(p_median)
            for way, counters in (("no counters", False), ("layoutprof", True)):
                r_median = recorded_median(profiled, x, calls, counters)
                medians[way].append(r_median)
                ratios[way].append(r_median / p_median)
    return {way: statistics.median(m) for way, m in medians.items()}, ratios


COLD = """
import sys, time, torch
sys.path.insert(0, {samples!r})
sys.path.insert(0, {scripts!r})
import bench_compiled as b
build, shape = b.MODELS[{name!r}]
torch.manual_seed(0)
m, x = torch.compile(build()), torch.randn(*shape)


def first():
    t = time.perf_counter()
    with torch.no_grad():
        m(x)
    return time.perf_counter() - t
if {profiled}:
    import layoutprof
    with layoutprof.profile(recent_ops=0):
        s = first()
else:
    s = first()
print(s)
"""


def cold_compile(name, profiled):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
        code = COLD.format(samples=os.path.join(HERE, "..", "samples"), scripts=HERE, name=name, profiled=profiled)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--compile", type=int, default=0, help="cold compiles per way and model (0: none)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread, {args.rounds} rounds of {args.calls} calls")
    for name, (build, shape) in MODELS.items():
        medians, ratios = call_ratio(build, shape, args.rounds, args.calls)
        print(f"{name}: plain compiled {medians['plain'] * 1e3:.3f} ms, " + ", ".join(
            f"{way} {medians[way] * 1e3:.3f} ms, ratio {statistics.median(r):.3f} (rounds {min(r):.3f}-{max(r):.3f})"
            for way, r in ratios.items()))
    for name in MODELS if args.compile else []:
        plain, profiled = [], []
        for _ in range(args.compile):
            plain.append(cold_compile(name, False))
            profiled.append(cold_compile(name, True))
        print(f"{name}: cold compile and first call {statistics.median(plain):.2f} s plain, "
              f"{statistics.median(profiled):.2f} s under layoutprof: ratio "
              f"{statistics.median(profiled) / statistics.median(plain):.3f} ({args.compile} each, alternating)")


if __name__ == "__main__":
    main()
