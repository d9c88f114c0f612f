"""A call of a million op events, end to end: the run writes its report, `render` prints it
and `check` compares it with itself, each exiting 0, with every op event in the report.
Prints each step's wall time and peak RSS (measured), and beside them what the step costs over
its reference, run in the same test: the run over a plain run of the same three calls
(layoutprof-bench --plain 3), the readers over `layoutprof --version` (the same libraries
loaded, nothing read); per op event of the call, and for check per op event read (two
reports). Derived figures; the targets are held in scripts/bench-scale.sh, not here.

usage: python3 million_ops.py LAYOUTPROF LAYOUTPROF_BENCH OP_LOOP.pt WORK_DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from bench_scale import measure  # noqa: E402

ROWS = 59000  # op_loop runs 17 op events per row: 1,003,000 and a few


def main() -> int:
    layoutprof, bench, model, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    report = os.path.join(work, "million.json")
    steps = [
        ("plain", [bench, model, "--input", f"{ROWS}x8x8", "--plain", "3"]),
        ("--version", [layoutprof, "--version"]),
        ("run --json", [layoutprof, model, "--input", f"{ROWS}x8x8", "--warmup", "1", "--iters", "1",
                        "--threads", "1", "--no-counters", "--json", report]),
        ("render", [layoutprof, "render", report]),
        ("check", [layoutprof, "check", report, report]),
    ]
    results = []
    for name, cmd in steps:
        code, wall, rss, out = measure(cmd, subprocess.PIPE)[:4]
        results.append((name, code, wall, rss))
        if code != 0:
            print(f"{name}: exit {code}", file=sys.stderr)
            return 1
        if name == "render" and "Totals: " not in out:
            print("render printed no totals", file=sys.stderr)
            return 1
    with open(report) as f:
        doc = json.load(f)
    ops = doc["summary"]["ops"]
    if ops < 1_000_000 or len(doc["ops"]["rows"]) != ops or doc["run"]["ops_not_recorded"] != 0:
        print(f"the report holds {len(doc['ops']['rows'])} rows for {ops} op events", file=sys.stderr)
        return 1
    size = os.path.getsize(report)
    print(f"{ops} op events; report {size / 2**20:.0f} MB, {size / ops:.0f} bytes per op event")
    measured = {name: (wall, rss) for name, _, wall, rss in results}
    for name, reference, read in (("run --json", "plain", 1), ("render", "--version", 1), ("check", "--version", 2)):
        wall, rss = measured[name]
        ref_wall, ref_rss = measured[reference]
        line = (f"{name}: {wall:.1f} s, peak RSS {rss / 2**20:.0f} MB (measured); over {reference} "
                f"({ref_wall:.1f} s, {ref_rss / 2**20:.0f} MB): {(wall - ref_wall) / ops * 1e6:.2f} µs and "
                f"{(rss - ref_rss) / ops:.0f} bytes per op event")
        if read > 1:
            line += f", {(wall - ref_wall) / ops / read * 1e6:.2f} µs and {(rss - ref_rss) / ops / read:.0f} bytes per op event read"
        print(line + " (derived)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
