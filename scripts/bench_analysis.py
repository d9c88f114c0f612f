#!/usr/bin/env python3
"""The work after the recorded calls, two layoutprof builds side by side: the analysis (trace to
report: copies, split points, causes by birthplace, modules) and the reports written, per op
event of the call, in interleaved rounds on one model (these VMs move wall times by tens of
percent; a median over rounds, builds alternating, is what compares).

Each round runs every build once with --warmup 1 --iters 1 --threads 1 --no-counters --json and
--timings, whose lines say when each step began (the analysis runs from its line to the text
report's) and when the reports were done (measured, steady clock), and the peak RSS so far (measured).

usage: bench_analysis.py --model PATH --input SPEC --build LABEL LAYOUTPROF [--build ...] [--rounds 11]
"""
import argparse
import re
import statistics
import subprocess
import sys
import tempfile

LINE = re.compile(r"layoutprof: ([0-9.]+) s, RSS ([0-9]+) MB \(peak ([0-9]+) MB\): (.*)")


def one_run(layoutprof, model, spec, json_path):
    """(analysis s, reports s, peak MB after the analysis, op events) of one run."""
    args = [layoutprof, model, "--input", spec, "--warmup", "1", "--iters", "1", "--threads", "1", "--no-counters",
            "--json", json_path, "--timings"]
    err = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True).stderr
    at = {}
    for line in err.splitlines():
        m = LINE.match(line)
        if m:
            at[m.group(4).split(":")[0]] = (float(m.group(1)), int(m.group(3)))
    # Each line is written as its step begins: the analysis runs from "analysis" to "text report".
    done = at["recorded calls done"][0]
    analysis = at["text report"][0] - at["analysis"][0]
    reports = next(v[0] for k, v in at.items() if k.startswith("reports done")) - done
    ops = int(re.search(r'"ops": ?([0-9]+)', open(json_path).read(200000)).group(1))
    return analysis, reports, at["text report"][1], ops


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--build", nargs=2, action="append", metavar=("LABEL", "LAYOUTPROF"), required=True)
    p.add_argument("--rounds", type=int, default=11)
    o = p.parse_args()
    runs = {label: [] for label, _ in o.build}
    with tempfile.TemporaryDirectory() as work:
        for r in range(o.rounds):
            order = o.build if r % 2 == 0 else list(reversed(o.build))
            for label, binary in order:
                runs[label].append(one_run(binary, o.model, o.input, f"{work}/{label}.json"))
    first = o.build[0][0]
    base = statistics.median(a for a, _, _, _ in runs[first])
    print(f"{o.model} --input {o.input}: {runs[first][0][3]} op events a call; medians over {o.rounds} interleaved rounds")
    print("| build | analysis | per op event | reports (analysis, text, JSON) | peak RSS after the analysis | analysis vs " + first + " |")
    print("|---|---|---|---|---|---|")
    for label, _ in o.build:
        a = statistics.median(x[0] for x in runs[label])
        rep = statistics.median(x[1] for x in runs[label])
        peak = statistics.median(x[2] for x in runs[label])
        ops = runs[label][0][3]
        print(f"| {label} | {a * 1e3:.1f} ms | {a / ops * 1e9:.0f} ns | {rep * 1e3:.1f} ms | {peak:.0f} MB | {a / base:.3f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
