"""The hazards in process (tests/python/in_process.py runs these): the in-process hazard cases
(samples/sample_hazard_steps.py), a failure outside the recorded calls explained from the recent
ops kept between them, and python -m layoutprof's line per hazard kind on stderr."""
import json
import linecache
import os
import subprocess
import sys
import tempfile
import warnings

import torch

import layoutprof


def hazard_problems(name, want_list, report):
    """What differs from a sample's `hazards` (sample_hazards.hazard): each is found, certain, by
    its kind and a piece of the code on its line; where none is named (None or []) the report
    must hold none, and a report with no hazards list is a failure."""
    if "hazards" not in report:
        return [f"{name}: the report has no hazards list"]
    got = report["hazards"]
    if not want_list:
        return [f"{name}: hazards {[h.get('text') for h in got]}, the manifest says none"] if got else []
    return [f"{name}: no hazard like {want} in process: {[h.get('text') for h in got]}" for want in want_list
            if not any(h["kind"] == want["kind"] and h["certainty"] == "yes" and want["code"] in h["code"]
                       for h in got)]



def check_hazard_steps(fail):
    """The in-process hazard cases (samples/sample_hazard_steps.py): each runs its steps under a
    profile with one warm-up step, marking each; the recorded step's report holds the case's
    hazards (none where it names none) and its status (failed: the step raised, and the
    exception went on)."""
    import sample_hazard_steps  # found by make_samples' importer (load_samples first)
    for case in sample_hazard_steps.CASES:
        torch.set_num_threads(1)
        raised, p = None, layoutprof.profile(warmup=1)
        try:
            with p:
                case.run(p.step)
        except RuntimeError as e:
            raised = e
        if p.report is None:
            fail(f"{case.name}: no report ({raised})")
            continue
        run = p.report["run"]
        if (run["status"], raised is not None, run["calls_recorded"]) != (case.status, case.status == "failed", 1):
            fail(f"{case.name}: status {run['status']}, raised {raised!r}, {run['calls_recorded']} calls recorded; "
                 f"want {case.status}, 1 call")
        for problem in hazard_problems(case.name, case.hazards, p.report):
            fail(problem)
    print(f"hazards in process: {len(sample_hazard_steps.CASES)} cases "
          f"({', '.join(c.name for c in sample_hazard_steps.CASES)})")



def check_failure_outside_calls(fail):
    """by="call", one recorded call, then metrics code after it: thousands of small ops, a
    transpose, and a view that fails on it. The report (status failed) shows the recent ops kept
    between the calls (bounded), and the failed view with its birthplace: the transpose's line."""
    import sample_hazard_steps as steps
    torch.set_num_threads(1)
    model = torch.nn.Linear(8, 4)
    raised, p = None, layoutprof.profile(by="call", calls=1)
    try:
        with p:
            with torch.no_grad():  # the call ends as forward() returns
                out = model(torch.randn(2, 8))
            for _ in range(12000):  # more than the window keeps
                out = out + 0
            steps.logged_norm(out)
    except RuntimeError as e:
        raised = e
    report = p.report
    views = [h for h in report["hazards"] if h["kind"] == "failed_view"]
    if raised is None or report["run"]["status"] != "failed" or report["run"]["calls_recorded"] != 1 or not views:
        fail(f"a view failing after the recorded call: raised {raised!r}, status {report['run']['status']}, "
             f"{report['run']['calls_recorded']} calls, hazards {[h['text'] for h in report['hazards']]}")
        return
    h = views[0]
    file, _, line = h["maker_where"].rpartition(":")
    born = linecache.getline(steps.__file__, int(line)) if file and steps.__file__.endswith(file) else ""
    if not h["outside_calls"] or "u.view(-1)" not in h["code"] or "t = out.t()" not in born or \
            not h["fixes"][0].startswith("`.reshape(...)`"):
        fail(f"a view failing after the recorded call: {h}")
    if not 0 < report["summary"]["ops"] < 2 * 12000 or p.nothing_recorded():
        fail(f"the recent ops kept: {report['summary']['ops']} op events, nothing recorded: {p.nothing_recorded()!r}")
    print(f"a failure outside the recorded calls: {h['text']} ({report['summary']['ops']} recent op events kept)")


ALIASED_SCRIPT = """
import torch
class Slots(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("slots", torch.zeros(4, 1).expand(4, 8))
    def forward(self, x):
        self.slots[:, 0] = x.sum(1)
        return self.slots * 2
m = Slots()
for _ in range(2):
    m(torch.randn(4, 8))
"""


def check_stderr_lines(fail):
    """python -m layoutprof ends with one line per hazard kind on stderr."""
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "slots.py")
        with open(script, "w") as f:
            f.write(ALIASED_SCRIPT)
        out = subprocess.run([sys.executable, "-m", "layoutprof", "--quiet", script], capture_output=True, text=True)
    lines = [line for line in out.stderr.splitlines() if line.startswith("layoutprof: ")]
    want = ["layoutprof: 1 aliased write, first at ", "layoutprof: 1 model tensor, first at buffer `slots`"]
    if out.returncode != 0 or len(lines) != 2 or not all(any(l.startswith(w) for l in lines) for w in want):
        fail(f"python -m layoutprof's hazard lines: exit {out.returncode}, {lines}, stderr {out.stderr[-300:]!r}")
    else:
        print(f"python -m layoutprof on stderr: {lines[0]}")


REPORTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hazard_reports")


def expectations(script):
    """A report script's EXPECT lines: [(kind, code)], [] for `EXPECT: none`."""
    want = []
    with open(script) as f:
        for line in f:
            if line.startswith("EXPECT: ") and line.strip() != "EXPECT: none":
                kind, _, code = line[len("EXPECT: "):].strip().partition(" ")
                want.append((kind, code))
    return want


def check_reports(fail):
    """The scripts written after public bug reports (tests/python/hazard_reports/), each run
    unchanged under python -m layoutprof: the hazards each names are found (kind, certain, the
    code on its line); those that name none get none counted."""
    names = sorted(n for n in os.listdir(REPORTS) if n.endswith(".py"))
    with tempfile.TemporaryDirectory() as d:
        for name in names:
            report_path = os.path.join(d, name + ".json")
            out = subprocess.run([sys.executable, "-m", "layoutprof", "--quiet", "--json", report_path,
                                  os.path.join(REPORTS, name)], capture_output=True, text=True)
            if not os.path.exists(report_path):
                fail(f"{name}: no report (exit {out.returncode}): {out.stderr[-300:]!r}")
                continue
            with open(report_path) as f:
                got = [h for h in json.load(f)["hazards"] if h["certainty"] == "yes"]
            want = expectations(os.path.join(REPORTS, name))
            missing = [w for w in want if not any(h["kind"] == w[0] and w[1] in h["code"] for h in got)]
            if missing or (not want and got):
                fail(f"{name}: want {want or 'none'}, got {[h['text'] for h in got]}")
    print(f"hazards of {len(names)} scripts written after public bug reports: as each expects")


class Positions(torch.nn.Module):
    """Position ids expanded over the batch, padding masked in place: PyTorch warns and writes."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(9, 4, padding_idx=0)

    def forward(self, batch):
        positions = torch.arange(1, 9).expand_as(batch)
        positions.masked_fill_(batch == 0, 0)
        return self.emb(positions)


def check_pytorch_warning(fail):
    """PyTorch's own warning of a write on an expanded tensor (shown once, in the warm-up call) is
    attributed to the hazard at its line; after the block, warnings are shown as before it."""
    model = Positions()
    shown_before = warnings.showwarning
    batch = torch.tensor([[1, 1, 0, 0, 0, 0, 0, 0], [1] * 8])
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        with torch.no_grad(), layoutprof.profile(warmup=1, by="call") as p:
            for _ in range(2):
                model(batch)
    if warnings.showwarning is not shown_before:
        fail("after the block, warnings.showwarning is not what it was before it")
    found = [h for h in p.report["hazards"] if h["kind"] == "aliased_write" and "masked_fill_" in h["code"]]
    if len(found) != 1 or "PyTorch warned: Use of masked_fill_ on expanded tensors" not in found[0]["detail"] or \
            found[0]["sharing"] != 2:
        fail(f"PyTorch's warning at the hazard's line: {[h['text'] for h in p.report['hazards']]}")
    else:
        print(f"PyTorch's warning attributed: {found[0]['text'][:160]}")


def check_hazards(fail):
    check_hazard_steps(fail)
    check_pytorch_warning(fail)
    check_failure_outside_calls(fail)
    check_stderr_lines(fail)
    check_reports(fail)
