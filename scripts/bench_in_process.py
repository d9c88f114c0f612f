"""In-process recording's cost per call, side by side in one run (run it in a venv where the
layoutprof package is installed: README, "In your Python").

Per model, rounds interleave seven ways of making the same calls:
  plain       model(x), nothing on;
  hooks       model(x) with layoutprof's module hooks on (its stand-in for Module.__call__ that
              tells the recorder which module runs) and no recording: their cost alone;
  no lines    as layoutprof, with profile(lines=False): module paths, no source line read per op;
  no counters as layoutprof, with profile(counters=False): no perf events sampled;
  clock 2 ms  as layoutprof, with task-clock sampled every 2 ms, the command's rate, instead of
              in process's 20 (and page-faults): the part of the counters' cost that goes with
              the sampling rate;
  layoutprof  the steps of a layoutprof.profile() session: model(x), then p.step(), which ends
              the recorded call (the recorder stops, converts and keeps its events); the module
              hooks, the line probe and the sampled counters (task-clock, page-faults and what
              the CPU has, on every thread of the process) run as in any use;
  profiler    each call inside torch.profiler.profile(record_shapes=True, with_stack=True),
              its exit (which builds the profiler's events) included.
The line probe's cost is layoutprof's less no lines'; the counters' layoutprof's less no counters';
the hooks' is hooks' less plain.
A session's first call records every op's tensors (as the command's first call does): it is
timed apart, as the command's bench times its first call apart. Prints each way's median per
call, its ratio to plain and the spread of that ratio over the rounds (lowest-highest of each
round's median against that round's plain median); the session's analysis and report, once per
session, are printed apart (they do not grow with the calls).

With --cli BUILD (a build of the command against the same torch, its samples made), the two
models the command's own bench times (resnet18 8x3x224x224 and small_transformer 1x16x256, the
same modules, scripted as BUILD/samples/*.pt) and the nn.TransformerEncoderLayer (scripted
here) are first timed by BUILD/layoutprof-bench in the same run: its recorded-call ratio is
printed beside, with the goal: in process no more than the command's ratio + 0.05, and below
torch.profiler.

    python scripts/bench_in_process.py [--rounds 5] [--calls 5] [--cli BUILD]
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
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


def small_transformer():
    """The command's bench's transformer: samples/make_samples.py's SmallTransformer (4 blocks)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples", "make_samples.py")
    spec = importlib.util.spec_from_file_location("make_samples", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_samples"] = module
    spec.loader.exec_module(module)
    return module.SmallTransformer().eval()


def models():
    """(name, model, input, the command's sample of the same module and its --input, or None)."""
    yield "resnet18 8x3x224x224", torchvision.models.resnet18().eval(), torch.randn(8, 3, 224, 224), \
        ("resnet18.pt", "8x3x224x224")
    yield "small_transformer 1x16x256 (4 blocks)", small_transformer(), torch.randn(1, 16, 256), \
        ("small_transformer.pt", "1x16x256")
    block = torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True).eval()
    yield "nn.TransformerEncoderLayer 16x128x256", block, torch.randn(16, 128, 256), (block, "16x128x256")
    yield "many small ops 4x8x8 (100 linear+relu+transpose)", SmallOps().eval(), torch.randn(4, 8, 8), None


def cli_ratios(build, sample, reps):
    """layoutprof-bench's ratios on BUILD/samples/SAMPLE: a recorded call after the first
    (everything it costs, over a plain forward), and the first."""
    model, shape = sample
    with tempfile.TemporaryDirectory() as d:
        if isinstance(model, torch.nn.Module):  # no sample of it: scripted here, as the samples are
            path = os.path.join(d, "model.pt")
            torch.jit.script(model).save(path)
        else:
            path = os.path.join(build, "samples", model)
        out = subprocess.run([os.path.join(build, "layoutprof-bench"), path, "--input", shape, "--reps", str(reps)],
                             capture_output=True, text=True, check=True)
    bench = json.loads(out.stdout)
    return bench["call_ratio"], bench["first_call_ratio"]


def plain(model, x, calls):
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        model(x)
        times.append(time.perf_counter() - t)
    return times, 0.0, None


def hooked(model, x, calls):
    hooks = ModuleHooks()
    hooks.install()
    try:
        return plain(model, x, calls)
    finally:
        hooks.remove()


def recorded_without_lines(model, x, calls):
    return recorded(model, x, calls, lines=False)


def recorded_without_counters(model, x, calls):
    return recorded(model, x, calls, counters=False)


def recorded_with_the_commands_clock(model, x, calls):
    return recorded(model, x, calls, counters=["task-clock:period=2000000", "page-faults"])


def recorded(model, x, calls, lines=True, counters=True):
    """The session's calls after its first (which records every op's tensors, as the command's
    first call does, and is kept apart as the command's bench keeps it), the session's end, and
    the first call."""
    times = []
    p = layoutprof.profile(lines=lines, counters=counters)
    with p:
        for _ in range(calls):
            t = time.perf_counter()
            model(x)
            p.step()
            times.append(time.perf_counter() - t)
        t_finish = time.perf_counter()
    return times[1:], time.perf_counter() - t_finish, times[0]


def profiled(model, x, calls):
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        with torch.profiler.profile(record_shapes=True, with_stack=True):
            model(x)
        times.append(time.perf_counter() - t)
    return times, 0.0, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--cli", metavar="BUILD", help="also time the command's recorded calls (BUILD/layoutprof-bench)")
    o = parser.parse_args()
    if o.calls < 2:
        parser.error("--calls: at least 2 (a session's first call is timed apart)")
    ways = {"plain": plain, "hooks": hooked, "no lines": recorded_without_lines,
            "no counters": recorded_without_counters, "clock 2 ms": recorded_with_the_commands_clock,
            "layoutprof": recorded, "profiler": profiled}
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, layoutprof {layoutprof.__version__}; "
          f"{o.rounds} rounds of {o.calls} calls each way, interleaved")
    with torch.no_grad():
        for name, model, x, sample in models():
            cli = cli_ratios(o.cli, sample, o.rounds * o.calls) if o.cli and sample else None
            for _ in range(3):
                model(x)  # warm-up
            per_round = [{way: run(model, x, o.calls) for way, run in ways.items()} for _ in range(o.rounds)]
            base = statistics.median(t for r in per_round for t in r["plain"][0])
            first = statistics.median(r["layoutprof"][2] for r in per_round)
            print(f"{name}: " + ", ".join(way_cell(w, per_round) for w in ways) +
                  f"; layoutprof's first call of a session {first / base:.3f}x, its analysis and report per session "
                  f"{statistics.median(r['layoutprof'][1] for r in per_round) * 1e3:.1f} ms")
            print(counters_line(per_round))
            if cli is not None:
                print(goal_line(cli, per_round))


def way_cell(way, per_round):
    """'way 1.23 ms (1.045x, rounds 1.01-1.08x)': the median over every call, its ratio to the
    plain median, and the lowest and highest of the rounds' own ratios."""
    median = statistics.median(t for r in per_round for t in r[way][0])
    base = statistics.median(t for r in per_round for t in r["plain"][0])
    rounds = [statistics.median(r[way][0]) / statistics.median(r["plain"][0]) for r in per_round]
    return f"{way} {median * 1e3:.2f} ms ({median / base:.3f}x, rounds {min(rounds):.2f}-{max(rounds):.2f}x)"


def ratio_of(way, per_round):
    return statistics.median(t for r in per_round for t in r[way][0]) / \
        statistics.median(t for r in per_round for t in r["plain"][0])


def counters_line(per_round):
    """The counters' cost (layoutprof less no counters) against the bound of +0.03, and how much
    of it goes with the sampling rate: the same events with task-clock every 2 ms (the command's
    rate), not 20 (in process's)."""
    base = ratio_of("no counters", per_round)
    default, fast = ratio_of("layoutprof", per_round) - base, ratio_of("clock 2 ms", per_round) - base
    return (f"  counters: {default:+.3f} (task-clock every 20 ms, in process's default), {fast:+.3f} (every "
            f"2 ms, the command's); the bound +0.03: {'met' if default <= 0.03 else 'NOT met'} at the default "
            f"(measured, this run)")


def goal_line(cli, per_round):
    """The issue's goal for a recorded call after the first, against the command's (whose first
    call is shown beside)."""
    (call, first), inproc, prof = cli, ratio_of("layoutprof", per_round), ratio_of("profiler", per_round)
    met = inproc <= call + 0.05 and inproc < prof
    return (f"  goal: in process {inproc:.3f}x <= the command's {call:.3f}x + 0.05 and < torch.profiler "
            f"{prof:.3f}x: {'met' if met else 'NOT met'} (measured, this run; the command's first call {first:.3f}x)")


if __name__ == "__main__":
    main()
