"""A call of a million op events, end to end: the run writes its report, `render` prints it
and `check` compares it with itself, each exiting 0, with every op event in the report.
Prints each step's wall time and peak RSS, and both per op event (measured; the targets are
held in scripts/bench-scale.sh, not here).

usage: python3 million_ops.py LAYOUTPROF OP_LOOP.pt WORK_DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from bench_scale import measure  # noqa: E402

ROWS = 59000  # op_loop runs 17 op events per row: 1,003,000 and a few


def main() -> int:
    layoutprof, model, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    report = os.path.join(work, "million.json")
    steps = [
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
    for name, _, wall, rss in results:
        print(f"{name}: {wall:.1f} s, peak RSS {rss / 2**20:.0f} MB "
              f"({wall / ops * 1e6:.1f} µs and {rss / ops:.0f} bytes per op event, measured)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
