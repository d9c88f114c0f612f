"""Every fix the in-process fix cases print works (samples/sample_fixes.py): each case runs under
layoutprof.profile(warmup=1) as it is, and its text report's first screen (before the heatmap)
must hold the case's words (the line or tensor to change, the fix); then it runs again with that
fix applied where the report says (the case's `fixed` code), and the copy, the recompile or the
failure must be gone from the new report. This is the one place that applies a printed fix and
reruns (run_profiled, gone_problems).

Usage alone: fix_checks.py [CASE ...] (the samples folder must be importable)."""
import os

import torch

import layoutprof


def run_profiled(case, fixed):
    """The case's report and text, recorded as a user records it; the exception it raised, if any."""
    torch._dynamo.reset()
    p = layoutprof.profile(warmup=1)
    raised = None
    try:
        with p:
            case.run(p.step, fixed=fixed)
    except Exception as e:  # noqa: BLE001  # a failing case is what some cases show
        raised = e
    return p.report, p.text(), raised


def _counts(report):
    """What a fix makes go away, counted in a report."""
    summary = report["summary"]
    compiled = report.get("compiled") or {}
    return {"implicit_layout": summary["copies"]["implicit_layout"],
            "mixed": sum(c.get("mixed_ops", 0) for c in report.get("causes", []) if not c.get("accepted")),
            "recompiles": sum(1 for r in compiled.get("recompiles", []) if r["layout"]),
            "failed": int(report["run"]["status"] == "failed"),
            # gradients DDP or AccumulateGrad will warn about (predicted; tests/python/ddp_checks.py
            # holds the predictions against real gloo runs)
            "ddp_warnings": sum(1 for q in report.get("parameters", []) if q.get("ddp_warning")),
            "accumulate_warnings": sum(1 for q in report.get("parameters", []) if q.get("accumulate_grad_warns")),
            # causes at a parameter or buffer the code laid out between the calls
            "tensor_causes": sum(1 for c in report.get("causes", []) if c["birthplace"]["input_text"].startswith(
                ("parameter", "buffer")))}


def gone_problems(case, report):
    counts = _counts(report)
    return [f"{case.name} with its fix applied: {what} {counts[what]}, want {want}"
            for what, want in case.gone.items() if counts[what] != want]


def check_fix(case, fail):
    report, text, _raised = run_profiled(case, fixed=False)
    screen = text.split("\nHeatmap", 1)[0]
    missing = [w for w in case.screen if w not in screen]
    if missing:
        fail(f"{case.name}: the first screen does not say {missing}:\n{screen[-2500:]}")
    before = _counts(report)
    if all(before[what] == want for what, want in case.gone.items()):
        fail(f"{case.name}: nothing to fix in the unfixed run: {before}")
    report, _text, raised = run_profiled(case, fixed=True)
    problems = gone_problems(case, report) + ([f"{case.name} with its fix applied raised {raised!r}"] if raised else [])
    for problem in problems:
        fail(problem)
    if not problems and not missing:
        print(f"fix {case.name}: {dict((w, before[w]) for w in case.gone)} before the fix, "
              f"{dict((w, _counts(report)[w]) for w in case.gone)} after")


def check_fixes(fail, names=None):
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.expanduser("~/.cache/layoutprof/inductor"))
    torch.set_num_threads(1)
    import sample_fixes
    release = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    for case in sample_fixes.CASES:
        if names and case.name not in names:
            continue
        if release < case.torch_from:
            print(f"skipped {case.name}: torch {torch.__version__} predates what it shows "
                  f"(from {'.'.join(map(str, case.torch_from))})")
            continue
        check_fix(case, fail)


if __name__ == "__main__":
    from check_main import run_alone
    run_alone(check_fixes)
