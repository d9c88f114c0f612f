#!/usr/bin/env python3
"""What the backend pass costs: the command with it and with --no-backend, side by side.

usage: scripts/bench_backend.py LAYOUTPROF [--rounds N] MODEL SPEC [MODEL SPEC ...]

For each model, N interleaved rounds (with the pass, then without, the order swapped every other
round, so that what else the machine does falls on both alike) of `layoutprof MODEL --input SPEC
--no-counters --json FILE`: the whole run's wall time (measured, the process), and from the
report with the pass its own call (backend.call_ns) against the forward's median
(summary.wall_ns). Prints one row per model: the medians and their ratios, the reorders the
pass saw, and whether the recorded call's figures (copies, bytes, split points, op count) were
the same with the pass as without it (they must be: the pass runs after the recorded calls).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(layoutprof, model, spec, backend, out):
    cmd = [layoutprof, model, "--no-counters", "--json", out] + (["--input", spec] if spec != "-" else [])
    if not backend:
        cmd.append("--no-backend")
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    with open(out) as f:
        return wall, json.load(f)


def figures(report):
    s = report["summary"]
    return (s["ops"], s["top_level_ops"], s["copies"], s["copy_bytes"], s["split_points"])


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    layoutprof, rest = argv[0], argv[1:]
    rounds = 5
    if rest[0] == "--rounds":
        rounds, rest = int(rest[1]), rest[2:]
    pairs = list(zip(rest[0::2], rest[1::2]))
    print("| model | input | run with pass s | run without s | ratio | pass call ms | forward ms | pass / forward | reorders (activation, weight) | same figures |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        for model, spec in pairs:
            on, off, calls, forwards, same = [], [], [], [], True
            reorders = "-"
            for i in range(rounds):
                order = (True, False) if i % 2 == 0 else (False, True)
                seen = {}
                for backend in order:
                    wall, report = run(layoutprof, model, spec, backend, out)
                    (on if backend else off).append(wall)
                    seen[backend] = report
                b = seen[True].get("backend", {})
                same = same and figures(seen[True]) == figures(seen[False])
                if b.get("call_ns") is not None:
                    calls.append(b["call_ns"] / 1e6)
                    forwards.append(seen[True]["summary"]["wall_ns"] / 1e6)
                    act = sum(1 for p in b["primitives"] if p.get("role") == "activation")
                    wei = sum(1 for p in b["primitives"] if p.get("role") == "weight")
                    reorders = f"{act + wei} ({act}, {wei})"
            m_on, m_off = statistics.median(on), statistics.median(off)
            call = statistics.median(calls) if calls else float("nan")
            fwd = statistics.median(forwards) if forwards else float("nan")
            print(f"| {os.path.basename(model)} | {spec} | {m_on:.2f} | {m_off:.2f} | {m_on / m_off:.3f} | "
                  f"{call:.2f} | {fwd:.2f} | {call / fwd:.2f} | {reorders} | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
