#!/usr/bin/env python3
"""What a recorded run costs at scale, side by side with a plain run of the same calls.

For each model and each layoutprof build given, runs (one process each, one after the other):
  plain       layoutprof-bench --plain: load, the same number of forward() calls, nothing else
  text        layoutprof MODEL --warmup 1 --iters 1 --no-counters (text report only)
  json        the same with --json
  render      layoutprof render on that report
  check       layoutprof check REPORT REPORT (the gate comparing the report with itself), per op
              event of one call and per op event read (two reports)
  iters 20    text and json runs with --iters 20, against a plain run of as many calls
and prints, per run, wall time and peak RSS (measured: the process's own, from wait4; the best
of --repeat tries, default 3), and the
figures the targets are set in, derived from those:
  RSS/op      (peak RSS - the plain run's) / op events of one call, in bytes
  wall/op     (wall - the plain run's) / op events of one call, in microseconds
  per call    (wall at --iters 20 - wall at --iters 1) / 19 / a plain forward(), text runs
  after calls what the --json run itself measured (--timings) from the end of its recorded
              calls to its reports written: analysis, text, JSON and the file's fsync
Readers (render, check) are held against `layoutprof --version`, which loads the same
libraries and does nothing. The report's size per op event is printed too.

--env KEY=VALUE sets a variable for every run. glibc's malloc raises its mmap threshold as
large blocks are freed (up to 32 MB), after which a model's activations come from the heap,
whose peak then depends on where every other allocation landed: on a model of large tensors
(swin_t) that moves the peak by tens of MB between layouts of the same work. A fixed threshold
(MALLOC_MMAP_THRESHOLD_=131072, for the plain run as well) leaves layoutprof's own memory.

usage: bench_scale.py --model NAME PATH SPEC [--model ...] --build LABEL LAYOUTPROF_DIR
                      [--build ...] --bench LAYOUTPROF_BENCH --work DIR
"""

import argparse
import json
import os
import subprocess
import sys
import time


ENV = dict(os.environ)  # every run's environment: --env adds to it, for plain and layoutprof alike


def measure(cmd, stdout=subprocess.DEVNULL):
    """Runs cmd; returns (exit code, wall seconds, peak RSS bytes, stdout text or None)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=ENV)
    out = proc.stdout.read() if stdout == subprocess.PIPE else None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # check exits 1 on a regression, which is not an error here
        sys.stderr.write(f"{' '.join(cmd)}: exit {proc.returncode}\n{err.decode(errors='replace')}")
    return (proc.returncode, wall, usage.ru_maxrss * 1024, out.decode() if out is not None else None,
            err.decode(errors="replace"))


def best_of(n, cmd, stdout=subprocess.DEVNULL):
    """measure() n times: the least wall time and the least peak RSS (these VMs are noisy;
    what a run needs is what its quietest try shows). stdout: the fastest try's; stderr: every
    try's."""
    runs = [measure(cmd, stdout) for _ in range(n)]
    fastest = min(runs, key=lambda m: m[1])
    return fastest[0], fastest[1], min(m[2] for m in runs), fastest[3], [m[4] for m in runs]


def after_calls_s(errs):
    """The least of the tries' "reports done: X s after the recorded calls" (--timings), or None."""
    found = [float(line.split("reports done: ")[1].split(" s ")[0])
             for err in errs for line in err.splitlines() if "reports done: " in line]
    return min(found) if found else None


def ops_per_call(report_path):
    # In a child process: a child's peak RSS counts the RSS its parent had when it forked
    # (Linux keeps the high-water mark across exec), so this process must never hold a report.
    code = "import json, sys; print(json.load(open(sys.argv[1]))['summary']['ops'])"
    return int(subprocess.check_output([sys.executable, "-c", code, report_path]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", nargs=3, action="append", metavar=("NAME", "PATH", "SPEC"), required=True)
    ap.add_argument("--build", nargs=2, action="append", metavar=("LABEL", "DIR"), required=True)
    ap.add_argument("--bench", required=True, help="layoutprof-bench, for the plain runs")
    ap.add_argument("--work", required=True)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3, help="tries per run; the best is kept")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="set for every run, plain and recorded (e.g. MALLOC_MMAP_THRESHOLD_=131072)")
    args = ap.parse_args()
    for kv in args.env:
        key, _, value = kv.partition("=")
        ENV[key] = value
    if args.env:
        print("environment of every run:", " ".join(args.env))
    os.makedirs(args.work, exist_ok=True)
    many = args.iters

    print("| model | op events/call | build | run | wall s | peak RSS MB | RSS/op B | wall/op µs |")
    print("|---|---|---|---|---|---|---|---|")
    per_call_rows = []
    after_rows = []
    for name, path, spec in args.model:
        measure = lambda cmd, stdout=subprocess.DEVNULL: best_of(args.repeat, cmd, stdout)  # noqa: E731
        plain3 = measure([args.bench, path, "--input", spec, "--plain", "3"])
        plain_n = measure([args.bench, path, "--input", spec, "--plain", str(many + 2)], subprocess.PIPE)
        plain_call_s = json.loads(plain_n[3])["call_ms"] / 1e3
        for label, build in args.build:
            lp = os.path.join(build, "layoutprof")
            base = measure([lp, "--version"])
            report = os.path.join(args.work, f"{name.replace('/', '-')}-{label}.json")
            common = [lp, path, "--input", spec, "--warmup", "1", "--no-counters"]
            text = measure(common + ["--iters", "1"])
            has_timings = "--timings" in subprocess.run([lp, "--help"], capture_output=True, text=True).stdout
            js = measure(common + ["--iters", "1", "--json", report] + (["--timings"] if has_timings else []))
            ops = ops_per_call(report) if js[0] == 0 else 0
            size = os.path.getsize(report) if js[0] == 0 else 0
            render = measure([lp, "render", report])
            check = measure([lp, "check", report, report])
            text_n = measure(common + ["--iters", str(many)])
            js_n = measure(common + ["--iters", str(many), "--json", report + ".n"])

            def row(run, m, ref, reports=1, name=name, ops=ops, label=label):
                # reports: op events read per op event of one call (check reads two reports)
                code, wall, rss = m[:3]
                if code not in (0, 1):
                    print(f"| {name} | {ops} | {label} | {run} | exit {code} | | | |")
                    return
                rss_op = (rss - ref[2]) / ops / reports if ops else float("nan")
                wall_op = (wall - ref[1]) / ops / reports * 1e6 if ops else float("nan")
                print(f"| {name} | {ops} | {label} | {run} | {wall:.2f} | {rss / 2**20:.0f} | "
                      f"{rss_op:.0f} | {wall_op:.2f} |")

            print(f"| {name} | {ops} | plain | {3} calls | {plain3[1]:.2f} | {plain3[2] / 2**20:.0f} | | |")
            row("text", text, plain3)
            row("--json", js, plain3)
            row("render", render, base)
            row("check", check, base)
            row("check, per op event read (2 reports)", check, base, 2)
            print(f"| {name} | {ops} | plain | {many + 2} calls | {plain_n[1]:.2f} | {plain_n[2] / 2**20:.0f} | | |")
            row(f"text --iters {many}", text_n, plain_n)
            row(f"--json --iters {many}", js_n, plain_n)
            after = after_calls_s(js[4])
            if ops and after is not None:
                after_rows.append(f"| {name} | {label} | {after:.3f} | {after / ops * 1e6:.2f} |")
            if ops:
                # Text runs: writing the JSON once per run adds noise and nothing per call.
                per_call = (text_n[1] - text[1]) / (many - 1)
                grow = (text_n[2] - text[2]) / (many - 1)
                per_call_rows.append(
                    f"| {name} | {label} | {plain_call_s * 1e3:.1f} | {per_call * 1e3:.1f} | "
                    f"{per_call / plain_call_s:.2f} | {grow / 2**20:.2f} | {size / ops:.0f} |")
    print()
    print(f"| model | build | plain forward ms | each recorded call ms (text, iters {many} vs 1) | "
          "ratio | RSS growth per call MB | report bytes/op event |")
    print("|---|---|---|---|---|---|---|")
    for r in per_call_rows:
        print(r)
    print()
    print("layoutprof's own work after the recorded calls (analysis, text and JSON reports, the file "
          "written and synced), measured by the run itself (--timings), least of the tries:")
    print("| model | build | after the calls s | per op event µs |")
    print("|---|---|---|---|")
    for r in after_rows:
        print(r)


if __name__ == "__main__":
    main()
