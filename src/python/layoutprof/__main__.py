"""python -m layoutprof [options] script.py [args...]: profiles a script unchanged.

The script runs as `python script.py args...` would (its output and exit code pass through);
the model's forward() calls are counted (the model: the first module the script calls that
holds parameters or buffers, not a transform such as Normalize), the first --warmup run
unrecorded, the next --calls recorded. A script that marks its steps with
layoutprof.step() (at each training step's end) has its steps counted instead, from the first
mark on: the recorded calls are then whole steps (data, forward, loss, backward, optimizer).
When the script ends (returns, exits, raises or is interrupted: SIGINT, or SIGTERM, after which
it ends as SIGTERM ends it) the reports are written: the text report on stderr, and the files
asked for; an interrupted run's status says interrupted. A script that raises shows its
traceback as usual; its report says status failed.
"""
import argparse
import os
import runpy
import signal
import sys

from .profile import Terminated, profile


def parse(argv):
    parser = argparse.ArgumentParser(prog="python -m layoutprof", description=__doc__.split("\n")[0])
    parser.add_argument("--json", metavar="FILE", help="write the JSON report to FILE")
    parser.add_argument("--html", metavar="FILE", help="write the HTML page to FILE")
    parser.add_argument("--warmup", type=int, default=1, metavar="N",
                        help="model calls (or marked steps) run before recording (1)")
    parser.add_argument("--calls", type=int, default=1, metavar="N", help="model calls (or marked steps) recorded (1)")
    parser.add_argument("--accept", action="append", default=[], metavar="FILE:LINE",
                        help="a birthplace or hazard line made on purpose: listed, not counted (repeatable)")
    parser.add_argument("--recent-ops", type=int, default=4096, metavar="N",
                        help="ops kept between the recorded calls, to explain a failure there (4096; 0: none)")
    parser.add_argument("--events", metavar="E1,E2", help="perf events to sample (libpfm4 names), as the command's "
                        "--events takes them (default: the command's, task-clock every 20 ms instead of 2)")
    parser.add_argument("--no-counters", action="store_true", help="sample no performance counters")
    parser.add_argument("--no-gpu", action="store_true", help="trace no GPU time (CUPTI)")
    parser.add_argument("--what-if", type=_positive, nargs="?", const=3, default=0, metavar="N",
                        help="after the recorded call, apply the top N causes' fixes (3) and measure each against "
                        "the call as it was, in interleaved rounds (src/python/README.md, What-if)")
    parser.add_argument("--what-if-budget", type=float, default=60.0, metavar="S",
                        help="seconds the what-if's rounds may take (60)")
    parser.add_argument("--quiet", action="store_true", help="no text report on stderr")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return parser.parse_args(argv)


def _positive(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of causes, at least 1")
    return int(text)


def main(argv=None):
    o = parse(sys.argv[1:] if argv is None else argv)
    if o.events and o.no_counters:
        print("layoutprof: --events and --no-counters contradict each other", file=sys.stderr)
        return 2
    if not os.path.isfile(o.script):
        print(f"layoutprof: no script {o.script!r}", file=sys.stderr)
        return 2
    sys.argv = [o.script] + o.args
    sys.path[0] = os.path.dirname(os.path.abspath(o.script))
    try:
        p = profile(json=o.json, html=o.html, warmup=o.warmup, calls=o.calls, by="call", accept=o.accept,
                    recent_ops=o.recent_ops,
                    counters=False if o.no_counters else [e for e in o.events.split(",") if e] if o.events else True,
                    gpu=not o.no_gpu, what_if=o.what_if, what_if_budget=o.what_if_budget)
    except ValueError as e:
        print(f"layoutprof: {e}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _terminate)  # the script may set its own
    terminated = False
    try:
        with p:
            runpy.run_path(o.script, run_name="__main__")
    except Terminated:
        terminated = True
    finally:
        if not o.quiet and p.report is not None:
            sys.stderr.write(p.text())
        why = p.nothing_recorded()
        if why:
            print(f"layoutprof: nothing recorded: {why}", file=sys.stderr)
        for line in hazard_lines(p.report) + recompile_lines(p.report):
            print(line, file=sys.stderr)
    if terminated:  # the reports are written: end as SIGTERM would have ended the script
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
    return 0


def hazard_lines(report):
    """One line per kind of hazard the report found (counted ones: not accepted, not "could not
    tell"): how many, and the first one's line."""
    by_kind = {}
    for h in (report or {}).get("hazards", []):
        if h["certainty"] == "yes" and not h["accepted"]:
            by_kind.setdefault(h["kind"], []).append(h)
    return [f"layoutprof: {len(found)} {kind.replace('_', ' ')}{'' if len(found) == 1 else 's'}, first at "
            f"{found[0]['where'] or found[0]['tensor']}: {found[0]['text']}" for kind, found in by_kind.items()]


def recompile_lines(report):
    """One line for the torch.compile recompiles an input's layout caused, with the first's
    guard and the line that called the model."""
    layout = [r for r in ((report or {}).get("compiled") or {}).get("recompiles", []) if r["layout"]]
    if not layout:
        return []
    r = layout[0]
    return [f"layoutprof: {len(layout)} torch.compile recompile{'' if len(layout) == 1 else 's'} caused by an "
            f"input's layout, first of {r['function']} ({r['where']}) in step {r['step'] + 1}"
            f"{', called at ' + r['called_at'] if r['called_at'] else ''}: {r['reason']}"]


def _terminate(_signum, _frame):
    raise Terminated()


if __name__ == "__main__":
    sys.exit(main())
