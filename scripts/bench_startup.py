#!/usr/bin/env python3
"""Start-up cost of the commands that only read reports, side by side in one run.

`layoutprof` links no LibTorch: render, check, diff and --version run in it. `layoutprof-run`
is the program that runs models; it links LibTorch and accepts the same commands, so running
them there is what every command cost when layoutprof was one LibTorch-linked executable.
For each command both are run REPS times, interleaved, and the median wall time and the
largest peak RSS are printed with their ratios. The RSS is GNU time's (%M): a child forked from
this Python would report Python's own pages, which the kernel counts in the child's peak.

    scripts/bench_startup.py BUILD_DIR [REPS]      (scripts/bench.sh --startup runs it)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def measure(argv, rss_file):
    """Wall seconds and peak RSS (MB) of one run of argv, its output discarded."""
    start = time.perf_counter()
    status = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file] + argv,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - start
    if status not in (0, 1):
        sys.exit(f"bench_startup: {' '.join(argv)} failed ({status})")
    with open(rss_file) as f:
        return wall, int(f.read().split()[-1]) / 1024


def main():
    build, reps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 21
    front, runner = os.path.join(build, "layoutprof"), os.path.join(build, "layoutprof-run")
    sample = os.path.join(os.path.dirname(__file__), "..", "samples", "transpose_reshape.pt")
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "small.json")
        subprocess.run([front, sample, "--input", "2x8x16", "--iters", "1", "--warmup", "0",
                        "--counters", "off", "--json", report], check=True, stdout=subprocess.DEVNULL)
        commands = {"--version": ["--version"], "render": ["render", report],
                    "check": ["check", report, report], "diff": ["diff", report, report]}
        print(f"{reps} runs each, interleaved; report {os.path.getsize(report)} bytes")
        print("| command | layoutprof s | layoutprof-run s (LibTorch linked) | ratio | layoutprof MB | layoutprof-run MB | ratio |")
        print("|---|---|---|---|---|---|---|")
        for name, args in commands.items():
            runs = {front: [], runner: []}
            for _ in range(reps):
                for binary in (front, runner):
                    runs[binary].append(measure([binary] + args, os.path.join(tmp, "rss")))
            t = {b: statistics.median(w for w, _ in r) for b, r in runs.items()}
            m = {b: max(rss for _, rss in r) for b, r in runs.items()}
            print(f"| {name} | {t[front]:.4f} | {t[runner]:.4f} | {t[front] / t[runner]:.3f} "
                  f"| {m[front]:.1f} | {m[runner]:.1f} | {m[front] / m[runner]:.3f} |")


if __name__ == "__main__":
    main()
