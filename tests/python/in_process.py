"""The Python package, installed in a venv (scripts/package-check.sh runs this there).

- layoutprof.profile() on every eager sample module of samples/make_samples.py counts the copies,
  class by class, that torch.profiler counts in the same call of the same module (an
  independent reference: torch's own profiler, classified by make_samples.classify);
- its report is the command's JSON schema with run.model_format "eager", and names modules as
  named_modules() does;
- a block that raises still writes its report, status failed, and the exception goes on;
- a torch other than the one layoutprof was built against fails the import in one line.

Exits 1 naming each failure.
"""
import collections
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import torch

import layoutprof

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
failures = []


def fail(what):
    failures.append(what)
    print(f"FAIL {what}")


def load_samples():
    spec = importlib.util.spec_from_file_location("make_samples", os.path.join(ROOT, "samples", "make_samples.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_samples"] = module
    spec.loader.exec_module(module)
    return module


def recorded_copies(module, inputs, grad_mode):
    """One warm-up step, then one recorded step, as the profiler's check warms up."""
    with torch.set_grad_enabled(grad_mode):
        with layoutprof.profile(warmup=1) as p:
            for step in range(2):
                try:
                    module(*inputs)
                except RuntimeError:
                    pass  # a failing sample fails the same way under both profilers
                if step == 0:
                    p.step()
    return {k: v for k, v in p.report["summary"]["copies"].items() if v}, p.report


def check_samples(ms):
    checked = 0
    for sample in ms.SAMPLES:
        if sample.needs and importlib.util.find_spec(sample.needs) is None:
            continue
        if sample.min_torch > int(torch.__version__.split(".")[0]) or sample.large:
            continue
        if sample.pt2_only:  # cond, while_loop, map: eager runs them through torch.compile
            continue
        torch.set_num_threads(1)
        module = ms.built_module(sample)
        grad_mode = sample.grads is not None
        found, _ = ms.warmed_profile(module, sample.inputs, grad_mode)
        want = dict(collections.Counter(c.cls for c in found))
        torch.manual_seed(0)
        inputs = [ms.make_input(s) for s in sample.inputs]
        got, report = recorded_copies(module, inputs, grad_mode)
        if report["run"]["model_format"] != "eager":
            fail(f"{sample.name}: run.model_format {report['run']['model_format']!r}")
        if got != want:
            fail(f"{sample.name}: layoutprof.profile() counts {got}, torch.profiler {want}")
        checked += 1
    print(f"samples: {checked} eager modules profiled in process, copies compared with torch.profiler")
    if checked < 20:
        fail(f"only {checked} samples could be checked")


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x):
        y = self.proj(x).transpose(1, 2)
        return y.reshape(y.shape[0], -1)


def check_report_files():
    model = Block().eval()
    x = torch.randn(2, 8, 16)
    with tempfile.TemporaryDirectory() as d:
        paths = {f: os.path.join(d, "r." + f) for f in ("json", "html")}
        with torch.no_grad(), layoutprof.profile(json=paths["json"], html=paths["html"]) as p:
            model(x)
        on_disk = json.load(open(paths["json"]))
        if on_disk != p.report:
            fail("p.report differs from the JSON file written")
        if os.path.getsize(paths["html"]) < 1000:
            fail("the HTML report is missing or empty")
        modules = {row["module"] for row in on_disk["modules"]}
        if "proj" not in modules:
            fail(f"no op of module 'proj' in the report (modules: {sorted(m for m in modules if m)})")
        if on_disk["summary"]["copies"].get("implicit_layout") != 1:
            fail(f"transpose then reshape: {on_disk['summary']['copies']}, want one implicit_layout copy")
        # The command reads the report back (render): the schema is the command's.
        cli = os.path.join(os.path.dirname(sys.executable), "layoutprof")
        out = subprocess.run([cli, "render", paths["json"], "--format", "text"], capture_output=True, text=True)
        if out.returncode != 0 or "recorded in process" not in out.stdout:
            fail(f"layoutprof render of the in-process report: exit {out.returncode}: {out.stderr.strip()}")
        print(f"report files: json and html written, modules {sorted(m for m in modules if m)}")


def check_failed_block():
    model = Block().eval()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "failed.json")
        try:
            with torch.no_grad(), layoutprof.profile(json=path):
                model(torch.randn(2, 8, 16))
                model(torch.randn(2, 8, 3))  # the wrong width: Linear raises
        except RuntimeError as e:
            raised = str(e)
        else:
            raised = None
        if raised is None:
            fail("the block's exception did not go on")
        if not os.path.exists(path):
            fail("a block that raised wrote no report")
            return
        run = json.load(open(path))["run"]
        if run["status"] != "failed" or "RuntimeError" not in run.get("error", ""):
            fail(f"a block that raised: status {run['status']!r}, error {run.get('error')!r}")
        print(f"failed block: report written, status {run['status']}, error {run['error'][:60]!r}...")


def check_torch_mismatch():
    code = "import torch; torch.__version__ = '0.0.1'; import layoutprof"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    last = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ""
    if out.returncode == 0 or "ImportError" not in last or "0.0.1" not in last or torch.__version__.split("+")[0] not in last:
        fail(f"importing with another torch: exit {out.returncode}, last line {last!r}")
    print(f"another torch: {last[:150]}...")


def main():
    check_torch_mismatch()
    check_report_files()
    check_failed_block()
    check_samples(load_samples())
    print(f"in_process: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
