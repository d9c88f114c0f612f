#!/usr/bin/env python3
"""What --what-if costs on top of a run, side by side in one run.

For each model the command runs REPS times without --what-if and REPS times with it (the same
flags, interleaved), and prints the median wall time of each, the difference, the what-if's
variants and rounds, and the difference in plain calls of the model (the baseline's median call
in the what-if's own rounds): what the issue's estimate, (variants) x (load + warm-up + one
recorded call) + rounds x (variants + 2) plain calls, comes to.

    scripts/bench_what_if.py BUILD_DIR [REPS]      (models: BUILD_DIR/samples, made by setup)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = [  # (sample, inputs): ResNet-18 fed channels_last (2 fixes), a small transformer (1 fix)
    ("resnet18_channels_last.pt", ["1x3x64x64:channels_last"]),
    ("small_transformer.pt2", []),
]


def run(argv):
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main():
    build, reps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
    binary = os.path.join(build, "layoutprof")
    print(f"{'model':28} {'plain run s':>11} {'--what-if s':>11} {'added s':>8} {'variants':>8} {'rounds':>6} "
          f"{'call ms':>8} {'added, in calls':>15}")
    for sample, inputs in MODELS:
        path = os.path.join(build, "samples", sample)
        args = [binary, path, "--no-counters", "--threads", "1"] + [a for i in inputs for a in ("--input", i)]
        plain, what_if, report = [], [], None
        for _ in range(reps):
            plain.append(run(args))
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                what_if.append(run(args + ["--what-if", "--json", f.name]))
                report = json.load(open(f.name))
        w = report["what_if"]
        ran = [v for c in report["causes"] for v in c.get("what_if", [])] + w["together"]
        call_ms = w["control"]["baseline_median_ns"] / 1e6
        added = statistics.median(what_if) - statistics.median(plain)
        print(f"{sample:28} {statistics.median(plain):11.2f} {statistics.median(what_if):11.2f} {added:8.2f} "
              f"{sum(1 for v in ran if not v['refused']):8} {w['rounds']:6} {call_ms:8.2f} {added * 1e3 / call_ms:15.0f}")


if __name__ == "__main__":
    main()
