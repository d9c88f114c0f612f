"""Gradient verdicts against real DDP runs on gloo (samples/train): what DDP and AccumulateGrad
warn about, recorded beside layoutprof's predictions, must be what it predicts.

- check_ddp: a 2-process job under torchrun (ddp_warns.py, ddp_clean.py): one report per rank,
  DDP's warning recorded, and the gradient it names among those layoutprof predicted (for the
  clean script: neither).
- check_ddp_changed: ddp_changed.py, a job of one process, with parameters laid out anew before
  DDP is built, right after, or after the first step (DDP rebuilds its buckets as the second
  forward begins, later with static_graph), and with .grad kept across steps. The shown step's
  predictions must name the gradient DDP (and AccumulateGrad) warned about in that step, or
  predict none where neither warned, and the text report must flag no contradiction.

Usage alone: ddp_checks.py (layoutprof importable)."""
import concurrent.futures
import json
import os
import re
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TRAIN = os.path.join(ROOT, "samples", "train")
_LINE = re.compile(r"(DDP's grad-strides warning|AccumulateGrad's gradient-layout warning) \((?:rank \d+|this process), "
                   r"(?:model call|step) (\d+)\): grad sizes (\[.*?\]) strides (\[.*?\]), (?:bucket view|param) strides")


def heard(report):
    """The warnings the report recorded: {("ddp" or "accumulate", step): (sizes, strides)}."""
    found = {}
    for line in report["run"]["measured"]:
        m = _LINE.match(line)
        if m:
            kind = "ddp" if m.group(1).startswith("DDP") else "accumulate"
            found[(kind, int(m.group(2)))] = (json.loads(m.group(3)), json.loads(m.group(4)))
    return found


def predicted(report):
    """What the report predicts for the shown step: {"ddp": [(sizes, stored strides)], "accumulate": [...]}."""
    out = {"ddp": [], "accumulate": []}
    for q in report["parameters"]:
        if q["ddp_warning"]:
            sizes, strides = re.match(r"grad\.sizes\(\) = (\[.*?\]), strides\(\) = (\[.*?\])", q["ddp_warning"][0]).groups()
            out["ddp"].append((json.loads(sizes), json.loads(strides)))
        if q["accumulate_grad_warns"]:
            out["accumulate"].append((q["grad_sizes"], q["prior_grad_strides"]))
    return out


def ddp_run(d, script):
    """`torchrun --nproc-per-node 2 -m layoutprof --json r.json script` on gloo: its output and
    each rank's report."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           "-m", "layoutprof", "--quiet", "--json", os.path.join(d, "r.json"), os.path.join(TRAIN, script)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    reports = {name: json.load(open(os.path.join(d, name))) for name in sorted(os.listdir(d))}
    return out, reports


def check_ddp(fail):
    for script, warns in (("ddp_warns.py", True), ("ddp_clean.py", False)):
        with tempfile.TemporaryDirectory() as d:
            out, reports = ddp_run(d, script)
            if out.returncode != 0 or sorted(reports) != ["r.rank0.json", "r.rank1.json"]:
                fail(f"torchrun -m layoutprof {script}: exit {out.returncode}, reports {sorted(reports)}: {out.stderr[-300:]!r}")
                continue
            for name, report in reports.items():
                params = report["parameters"]
                names = [q["name"] for q in params]
                warned = [w for (kind, _), w in heard(report).items() if kind == "ddp"]
                if not report["run"]["backward"] or not params or any(n.startswith("module.") for n in names):
                    fail(f"{script} {name}: backward {report['run']['backward']}, parameters {names}")
                if warns and (not warned or not all(w in predicted(report)["ddp"] for w in warned)):
                    fail(f"{script} {name}: DDP warned about {warned}, layoutprof predicted {predicted(report)['ddp']}")
                if not warns and (warned or predicted(report)["ddp"]):
                    fail(f"{script} {name}: DDP warned about {warned}, layoutprof predicted {predicted(report)['ddp']}: "
                         "want neither")
            print(f"ddp {script}: 2 ranks, DDP warned {heard(reports['r.rank0.json'])} (rank 0), predicted "
                  f"{predicted(reports['r.rank0.json'])}")


# (ddp_changed.py's arguments, warm-up steps): the shown step is the one after them.
CHANGED = [
    (["--change", "regularised", "--when", "step1"], 1),  # rebuilt at step 2 with the new strides
    (["--change", "regularised", "--when", "step1", "--static-graph"], 1),  # not rebuilt yet
    (["--change", "regularised", "--when", "step1", "--keep-grads"], 1),  # .grad of the old layout
    (["--change", "regularised", "--when", "built"], 0),
    (["--change", "regularised", "--when", "before"], 0),
    (["--change", "channels_last", "--when", "built"], 0),
    (["--change", "sliced", "--when", "built"], 0),
    (["--change", "none", "--channels-last-input"], 0),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_changed(args, warmup):
    """The report and the text of one ddp_changed.py run under python -m layoutprof."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        cmd = [sys.executable, "-m", "layoutprof", "--warmup", str(warmup), "--json", path,
               os.path.join(TRAIN, "ddp_changed.py"), *args]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
                             env=dict(os.environ, MASTER_PORT=str(free_port())))
        return out, json.load(open(path)) if os.path.exists(path) else None


def changed_problems(args, warmup, out, report):
    """What is wrong with one run's predictions, against what the run heard."""
    if out.returncode != 0 or report is None:
        return [f"exit {out.returncode}: {out.stderr[-300:]!r}"]
    problems = []
    if "contradict" in out.stderr:
        problems.append("the report flags a contradiction: " +
                        next(line for line in out.stderr.splitlines() if "contradict" in line))
    # No fix asks to make dense the result of the autograd engine's record (a gradient).
    engine = [line.strip() for line in out.stderr.splitlines()
              if "on the result of autograd::engine" in line or "on the result of the evaluate_function" in line]
    if engine:
        problems.append(f"a fix at the autograd engine's record: {engine[0][:200]}")
    said, shown = heard(report), warmup + 1
    for kind in ("ddp", "accumulate"):
        got = [w for (k, step), w in said.items() if k == kind and step == shown]
        earlier = [step for (k, step) in said if k == kind and step < shown]
        want = predicted(report)[kind]
        if got and got[0] not in want:
            problems.append(f"{kind} warned in step {shown} about {got[0]}; predicted {want}")
        if not got and want and not earlier:
            problems.append(f"{kind} predicted {want} in step {shown}; heard {said}")
    return problems


def check_ddp_changed(fail):
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda case: run_changed(*case), CHANGED))
    warned = 0
    for (args, warmup), (out, report) in zip(CHANGED, runs):
        for problem in changed_problems(args, warmup, out, report):
            fail(f"ddp_changed.py {' '.join(args)} (warm-up {warmup}): {problem}")
        warned += bool(report and heard(report))
    if warned < 4:  # most cases make DDP or AccumulateGrad warn: the checks above compared something
        fail(f"ddp_changed.py: only {warned} of {len(CHANGED)} runs heard a warning")
    print(f"ddp_changed.py: {len(CHANGED)} runs on gloo, {warned} with warnings, all as predicted")


if __name__ == "__main__":
    failures = []
    check_ddp_changed(lambda what: (failures.append(what), print(f"FAIL {what}")))
    sys.exit(1 if failures else 0)
