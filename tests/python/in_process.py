"""The Python package, installed in a venv (scripts/package-check.sh runs this there).

- layoutprof.profile() on every eager sample module of samples/make_samples.py counts the copies,
  class by class, that torch.profiler counts in the same call of the same module (an
  independent reference: torch's own profiler, classified by make_samples.classify);
- its report is the command's JSON schema with run.model_format "eager", and names modules as
  named_modules() does;
- a training step the user's code runs gives every parameter's gradient verdict as the
  manifest does; a 2-process DDP job under torchrun writes one report per rank, with DDP's own
  warning beside layoutprof's prediction;
- a block that raises still writes its report, status failed, and the exception goes on;
- every sample's hazards are its manifest entry's (none where it names none), and the
  in-process hazard cases (samples/sample_hazard_steps.py: a weight loader, metrics code after
  the step, optimizers) report theirs, with the run's status;
- models under torch.compile (inductor, on the CPU: samples/sample_compiled.py) report their
  recompiles, the layout copies inside their graphs, graph breaks and forward and backward
  graphs, each at the user's line, on the text report's first screen (compiled_checks.py);
- every fix the in-process fix cases print (samples/sample_fixes.py), applied where the report
  says, makes the copy, the recompile or the failure go (fix_checks.py);
- a torch other than the one layoutprof was built against fails the import in one line.

Its checks run under pytest as tests/python/test_in_process.py (this file's main runs that);
each names what it found wrong.
"""
import collections
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading

import torch

import layoutprof
from block_model import Block
from hazard_checks import hazard_problems

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


def missing_causes(want_list, report):
    """The manifest's causes (sample_causes.cause) that the report does not hold: each is found
    by its layout, birthplace (kind, op, the file of its line, the code on it) and payers."""
    missing = []
    for want in want_list:
        found = [c for c in report["causes"]
                 if c["layout"] == want["layout"] and c["birthplace"]["kind"] == want["kind"]
                 and c["birthplace"]["name"] == want["op"] and want["file"] in c["birthplace"]["where"]
                 and want["code"] in c["birthplace"]["code"]
                 and sorted(c["chain"]["payer_modules"]) == want["payers"]]
        if not found:
            missing.append(want)
    return missing


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
        if sample.causes == [] and report["causes"]:
            fail(f"{sample.name}: causes {report['causes']}, the manifest says none")
        for cause in missing_causes(sample.causes or [], report):
            fail(f"{sample.name}: no cause like {cause} in process: {[c['text'] for c in report['causes']]}")
        for problem in hazard_problems(sample.name, sample.hazards, report):
            fail(problem)
        checked += 1
    print(f"samples: {checked} eager modules profiled in process, copies compared with torch.profiler")
    if checked < 20:
        fail(f"only {checked} samples could be checked")


def check_batch_permuted_outside(ms):
    """HWC images permuted to NCHW outside the model: recorded with the step that permutes them,
    the cause is that line; recorded as model calls only, it is the model call's argument, with
    the call's line; a channels_last batch fed to a channels_last model is no cause."""
    torch.set_num_threads(1)
    net = ms.SmallImageNet().eval()
    hwc = torch.randn(2, 32, 32, 3)
    with torch.no_grad(), layoutprof.profile(warmup=1, calls=1) as p:
        for _ in range(2):
            batch = hwc.permute(0, 3, 1, 2)  # the birthplace: HWC images as NCHW
            net(batch)
            p.step()
    born = [c for c in p.report["causes"] if c["birthplace"]["name"] == "aten::permute"]
    if not born or "batch = hwc.permute(0, 3, 1, 2)" not in born[0]["birthplace"]["code"] or \
            not born[0]["birthplace"]["where"].endswith("in_process.py:" + str(check_batch_permuted_outside.line)):
        fail(f"whole steps: the permute's line is not the birthplace: {[c['text'] for c in p.report['causes']]}")
    with torch.no_grad(), layoutprof.profile(warmup=1, calls=1, by="call") as p:
        for _ in range(2):
            out = net(batch)  # noqa: F841 (the model call's line)
    inputs = [c for c in p.report["causes"] if c["birthplace"]["kind"] == "model_input"]
    if not inputs or "argument 0 of the model call at" not in inputs[0]["birthplace"]["input_text"] or \
            "out = net(batch)" not in inputs[0]["birthplace"]["input_text"] or \
            "(strides 3072,1,96,3)" not in inputs[0]["birthplace"]["input_text"]:
        fail(f"model calls: the input is not named with its call: {[c['text'] for c in p.report['causes']]}")
    if not any("where it is made, before the model call at" in f for c in inputs for f in c["fixes"]):
        fail(f"model calls: no fix where the input is made: {[c['fixes'] for c in inputs]}")
    cl_net = ms.SmallImageNet().eval().to(memory_format=torch.channels_last)
    with torch.no_grad(), layoutprof.profile(warmup=1, calls=1, by="call") as p:
        for _ in range(2):
            cl_net(batch)
    if p.report["causes"]:
        fail(f"a channels_last batch to a channels_last model: causes {[c['text'] for c in p.report['causes']]}")
    print("causes in process: the permute's line, the model call's argument, none for a channels_last model")


# The line of the permute in check_batch_permuted_outside (the first line with its comment).
check_batch_permuted_outside.line = next(i for i, text in enumerate(open(__file__), 1) if "# the birthplace: HWC" in text)


def check_gradient_verdicts(ms):
    """A training step the user's code runs (forward, its own backward from a contiguous
    random gradient, as --backward's default, gradients set to none): every parameter's
    verdict as the sample's manifest entry gives it, its gradient's backward op found and
    charged to its forward op."""
    checked = 0
    for sample in ms.SAMPLES:
        if not sample.grads or sample.pt2_only or sample.min_torch > int(torch.__version__.split(".")[0]):
            continue
        torch.set_num_threads(1)  # the manifest's verdicts are at one intra-op thread
        module = ms.built_module(sample).train()
        torch.manual_seed(0)
        inputs = [ms.make_input(s) for s in sample.inputs]
        with layoutprof.profile(warmup=1) as p:
            for step in range(2):
                out = module(*inputs)
                out.backward(torch.randn(out.shape))
                for q in module.parameters():
                    q.grad = None
                if step == 0:
                    p.step()
        run = p.report["run"]
        got = {q["name"]: q["grad_verdict"] for q in p.report["parameters"]}
        want = ms.for_version([(prefixes, v) for prefixes, v, _ in sample.grad_expectations()], torch.__version__,
                              sample.name)
        # Each gradient's producer is a backward op charged to the forward op it differentiates.
        unlinked = [q["name"] for q in p.report["parameters"] if q["grad_verdict"] not in ("no_grad", "frozen")
                    and (q["grad_producer"] is None or q["grad_forward_op"] is None)]
        if (run["backward"], run["loss"]) != (True, "user") or got != want or unlinked:
            fail(f"{sample.name} trained in process: backward {run['backward']}, loss {run['loss']!r}, "
                 f"verdicts {got}, want {want}; gradients with no backward or forward op {unlinked}")
        checked += 1
    print(f"gradient verdicts: {checked} training samples as their manifest entries")
    if checked < 3:
        fail(f"only {checked} training samples could be checked")


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
        texts = [text for _, text in on_disk["ops"]["sources"]]
        if "return y.reshape(y.shape[0], -1)" not in texts:
            fail(f"the user's lines: {texts}, want the reshape's line of Block.forward")
        print(f"report files: json and html written, modules {sorted(m for m in modules if m)}, lines {texts}")
    with torch.no_grad(), layoutprof.profile(lines=False) as p:
        model(x)
    if any(source for source, _ in p.report["ops"]["sources"]) or "proj" not in {r["module"] for r in p.report["modules"]}:
        fail(f"profile(lines=False): sources {p.report['ops']['sources']}, want module paths and no line")


class Rescale(torch.nn.Module):
    """A transform called on the data before the model, as torchvision's Normalize is: a module
    without parameters or buffers."""

    def forward(self, x):
        return x * 2.0 - 1.0


def check_model_choice():
    """Counting model calls, the model is the first module called that holds parameters: a
    transform called before it is not the model (its ops are outside the model, under its class)."""
    rescale, model = Rescale(), Block().eval()
    with torch.no_grad(), layoutprof.profile(by="call", warmup=1, calls=1) as p:
        for _ in range(3):
            model(rescale(torch.randn(2, 8, 16)))
    run, modules = p.report["run"], {row["module"] for row in p.report["modules"]}
    if (run["model"], run["calls_recorded"], p.report["summary"]["copies"]["implicit_layout"]) != ("Block", 1, 1) or \
            "proj" not in modules:
        fail(f"model choice: model {run['model']!r}, {run['calls_recorded']} calls, modules {sorted(modules)}; "
             "want Block (the transform before it is not the model), 1 call, 1 implicit copy")
    print(f"model choice: {run['model']} recorded, the transform before it not taken for the model")


def check_compiled():
    """A model under torch.compile (dynamo traces the module calls; the "eager" backend, so that
    nothing is compiled to C++): recorded without disturbing the trace, named as the user's
    module, its copy counted."""
    model = torch.compile(Block().eval(), backend="eager")
    try:
        with torch.no_grad(), layoutprof.profile(by="call", warmup=1, calls=1) as p:
            for _ in range(3):
                model(torch.randn(2, 8, 16))
    except Exception as e:  # noqa: BLE001  # what dynamo raises, in one line
        fail(f"torch.compile: the calls raised {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        return
    run = p.report["run"]
    if (run["status"], run["model"], run["calls_recorded"], p.report["summary"]["copies"]["implicit_layout"]) != \
            ("ok", "Block", 1, 1):
        fail(f"torch.compile: {run['status']} {run.get('error')}, model {run['model']!r}, {run['calls_recorded']} calls, "
             f"copies {p.report['summary']['copies']}")
    print(f"torch.compile: {run['model']} recorded, {p.report['summary']['copies']['implicit_layout']} implicit copy")


def check_one_profile_at_a_time():
    """A profile inside another (a script that profiles itself under python -m layoutprof) is
    refused in one line; the outer one records on."""
    model = Block().eval()
    with torch.no_grad(), layoutprof.profile() as outer:
        try:
            with layoutprof.profile():
                pass
            error = None
        except RuntimeError as e:
            error = str(e)
        model(torch.randn(2, 8, 16))
    if error is None or "one records at a time" not in error or outer.report["summary"]["copies"]["implicit_layout"] != 1:
        fail(f"a profile inside another: error {error!r}, outer copies {outer.report['summary']['copies']}")
    print(f"a profile inside another: refused ({error})")


def check_counters(name, report, events=("task-clock", "page-faults")):
    """The recording sampled `events` (software events: every machine has them) on the process's
    threads, as the command samples them but task-clock every 20 ms (in process's default, a
    tenth of the command's rate), and charged samples to more than one module's ops."""
    status = {c["event"]: c for c in report["run"].get("counters", [])}
    for event in events:
        c = status.get(event)
        if not c or not c["measured"] or c["mode"] != "sampled":
            fail(f"{name}: {event} not sampled: {c or sorted(status)}; not measured: {report['run']['not_measured']}")
            return
    if status["task-clock"]["period"] != 20000000:
        fail(f"{name}: task-clock sampled every {status['task-clock']['period']} ns, not in process's 20 ms")
    rows = [r for r in report["modules"] if r.get("counters", {}).get("task-clock", {}).get("raw", 0) > 0]
    if len(rows) < 2:
        fail(f"{name}: task-clock samples in {len(rows)} module rows, want several")
        return
    print(f"{name}: {', '.join(events)} sampled in process; task-clock samples in {len(rows)} module rows")


def check_training_counters():
    """Training steps long enough for the sampled counters (task-clock every 20 ms in process):
    resnet18 at 4x3x64x64, forward, backward and SGD step, about 50 ms a step here, 5 steps."""
    import torchvision

    model = torchvision.models.resnet18(num_classes=10).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 3, 64, 64)
    with layoutprof.profile(warmup=1) as p:
        for _ in range(5):
            model(x).square().mean().backward()
            optimizer.step()
            optimizer.zero_grad()
            p.step()
    check_counters("resnet18 training step", p.report)


def check_training_step():
    """The loss, backward and optimizer step of the user's own loop: their ops in a row of
    their own, each charged to its line."""
    model = Block().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with layoutprof.profile() as p:
        loss = model(torch.randn(2, 8, 16)).square().mean()
        loss.backward()
        optimizer.step()
    modules = {row["module"] for row in p.report["modules"]}
    texts = {text for _, text in p.report["ops"]["sources"]}
    if "(outside the model)" not in modules or not {"loss.backward()", "optimizer.step()"} <= texts:
        fail(f"training step: modules {sorted(modules)}, lines {sorted(texts)}")
    if p.report["run"]["model_mode"]["value"] != "train":
        fail(f"training step: mode {p.report['run']['model_mode']}")
    print(f"training step: modules {sorted(modules)}")


class Doubled(torch.autograd.Function):
    """A custom Function whose backward runs ops of its own (each on a line of its own)."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        rows = grad.reshape(-1, grad.shape[-1])  # the backward's first line
        return (rows * 2).view_as(grad)


def check_python_backward_lines():
    """The ops a custom Function's backward runs are charged to its own lines, not to the
    forward's `.apply(...)` or the `.backward()` line."""
    x = torch.randn(4, 8, requires_grad=True)
    # backward() on the calling thread, then on another one (as a GPU's engine runs it on the
    # device's own thread)
    for where in ("the calling thread", "another thread"):
        with layoutprof.profile() as p:
            y = Doubled.apply(x).sum()
            if where == "the calling thread":
                y.backward()
            else:
                worker = threading.Thread(target=y.backward)
                worker.start()
                worker.join()
        ops = p.report["ops"]
        names, rows, sources = ops["names"], ops["rows"], ops["sources"]
        inside = [sources[r[3]][1] for r in rows if r[0] is not None and names[rows[r[0]][1]] == "DoubledBackward"]
        want = {"rows = grad.reshape(-1, grad.shape[-1])  # the backward's first line",
                "return (rows * 2).view_as(grad)"}
        if not want <= set(inside):
            fail(f"python backward lines, backward() on {where}: the ops inside DoubledBackward are at "
                 f"{sorted(set(inside))}, want {sorted(want)}")
        else:
            print(f"python backward on {where}: {len(inside)} ops inside DoubledBackward at its own lines")


def check_resnet_against_pt2(samples_dir):
    """torchvision's resnet18 fed a channels_last batch of 8, in process, against the command
    on resnet18.pt2 of the same module (its stored channels_last batch of 8): the same copies,
    class by class, and the same bytes."""
    import torchvision

    pt2 = os.path.join(samples_dir, "resnet18.pt2")
    cli = os.path.join(os.path.dirname(sys.executable), "layoutprof")
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([cli, pt2, "--no-counters", "--json", os.path.join(d, "r.json")],
                             capture_output=True, text=True)
        if out.returncode != 0:
            fail(f"layoutprof {pt2}: exit {out.returncode}: {out.stderr.strip()}")
            return
        want = json.load(open(os.path.join(d, "r.json")))["summary"]
    model = torchvision.models.resnet18().eval()
    x = torch.randn(8, 3, 224, 224).to(memory_format=torch.channels_last)
    with torch.no_grad(), layoutprof.profile(warmup=1) as p:
        for _ in range(2):
            model(x)
            p.step()
    got = p.report["summary"]
    check_counters("resnet18 in process", p.report)
    for key in ("copies", "copy_bytes"):
        if got[key] != want[key]:
            fail(f"resnet18 in process: {key} {got[key]}, resnet18.pt2: {want[key]}")
    modules = {row["module"] for row in p.report["modules"]}
    if "layer4.0.conv2" not in modules and "layer4.0" not in modules:
        fail(f"resnet18 in process: no layer4.0 module row ({sorted(modules)[:8]} ...)")
    files = {location.rsplit(":", 1)[0] for location, _ in p.report["ops"]["sources"]}
    if not any(f.endswith(os.path.join("torchvision", "models", "resnet.py")) for f in files):
        fail(f"resnet18 in process: no line of torchvision/models/resnet.py among {sorted(files)}")
    print(f"resnet18 in process: {got['copies']['implicit_layout']} implicit copies, "
          f"{got['copy_bytes']['implicit_layout']} bytes, as resnet18.pt2; lines in {sorted(files)}")


def check_steps():
    """warmup=1 of four steps marked at each loop's end: three recorded calls, the step begun by
    the last p.step() (nothing ran in it) not among them."""
    model = Block().eval()
    x = torch.randn(2, 8, 16)
    with torch.no_grad(), layoutprof.profile(warmup=1) as p:
        for _ in range(4):
            model(x)
            p.step()
    run = p.report["run"]
    if run["calls_recorded"] != 3 or run["model"] != "Block" or run["model_mode"]["value"] != "eval":
        fail(f"steps: {run['calls_recorded']} calls recorded of {run['model']!r} in {run['model_mode']}, "
             "want 3 of 'Block' in eval mode")
    with torch.no_grad(), layoutprof.profile(calls=1) as p:
        for _ in range(3):
            model(x)
            p.step()
    if p.report["run"]["calls_recorded"] != 1:
        fail(f"calls=1: {p.report['run']['calls_recorded']} calls recorded")
    print(f"steps: {run['calls_recorded']} recorded after 1 warm-up step; calls=1 records 1")


SCRIPT = f"""
import sys, torch
sys.path.insert(0, {HERE!r})
from block_model import Block
model = Block().eval()
with torch.no_grad():
    for width in [16, 16, 16, int(sys.argv[2])]:
        model(torch.randn(2, 8, width))
print("script output", sys.argv[1:])
sys.exit(int(sys.argv[1]))
"""


def run_script(d, *args, calls="2", command=False, extra=()):
    """python -m layoutprof (or, with command, `layoutprof run -- python`) on SCRIPT."""
    script = os.path.join(d, "train.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    report = os.path.join(d, "r.json")
    if os.path.exists(report):
        os.remove(report)
    options = ["--json", report, "--calls", calls, *extra]
    cli = os.path.join(os.path.dirname(sys.executable), "layoutprof")
    line = [cli, "run", *options, "--", sys.executable, script] if command else \
        [sys.executable, "-m", "layoutprof", *options, script]
    out = subprocess.run(line + list(args), capture_output=True, text=True)
    return out, (json.load(open(report))["run"] if os.path.exists(report) else None)


def check_script():
    """python -m layoutprof script.py args: the script's output and exit code pass through; the
    model's calls after the warm-up one are recorded; a script that raises shows its traceback
    and its report says failed."""
    with tempfile.TemporaryDirectory() as d:
        out, run = run_script(d, "3", "16")
        if out.returncode != 3 or "script output ['3', '16']" not in out.stdout:
            fail(f"python -m layoutprof: exit {out.returncode}, stdout {out.stdout!r}")
        if run is None or (run["status"], run["calls_recorded"], run["warmup"]) != ("ok", 2, 1):
            fail(f"python -m layoutprof: report {run and (run['status'], run['calls_recorded'], run['warmup'])}")
        out, run = run_script(d, "3", "16", command=True)
        if out.returncode != 3 or "script output ['3', '16']" not in out.stdout or run is None or \
                (run["status"], run["calls_recorded"]) != ("ok", 2):
            fail(f"layoutprof run -- python: exit {out.returncode}, stdout {out.stdout!r}, report {run}")
        out, run = run_script(d, "0", "3")  # the fourth call raises
        if out.returncode != 1 or "Traceback" not in out.stderr or run is None or run["status"] != "failed":
            fail(f"python -m layoutprof, a script that raises: exit {out.returncode}, "
                 f"status {run and run['status']}, stderr {out.stderr[-200:]!r}")
        out, run = run_script(d, "0", "3", calls="3")  # the raising call is a recorded one
        if run is None or (run["status"], run["calls_recorded"]) != ("failed", 3) or \
                not run["error"].startswith("RuntimeError: mat1 and mat2") or "after the recorded calls" in run["error"]:
            fail(f"python -m layoutprof, a recorded call raises: {run and (run['status'], run['calls_recorded'], run['error'])}")
        print(f"script: exit codes and output pass through; a raising script's report: {run and run['status']}")
        _out, run = run_script(d, "0", "16", extra=["--events", "page-faults"])
        events = run and [(c["event"], c["measured"]) for c in run.get("counters", [])]
        if events != [("page-faults", True)]:
            fail(f"python -m layoutprof --events page-faults: counters {events}")
        _out, run = run_script(d, "0", "16", extra=["--no-counters"])
        if run is None or run.get("counters"):
            fail(f"python -m layoutprof --no-counters: counters {run and run.get('counters')}")
        print("script: --events page-faults samples that one; --no-counters none")


STEPS_SCRIPT = f"""
import sys, torch
import layoutprof
sys.path.insert(0, {HERE!r})
from block_model import Block
model = Block().train()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(4):
    for micro in range(2):  # two micro-batches a step: the model is called twice
        model(torch.randn(2, 8, 16)).square().mean().backward()
    optimizer.step()
    optimizer.zero_grad()
    layoutprof.step()
print("steps done")
"""


def check_marked_steps():
    """A script that marks its steps with layoutprof.step(), two model calls a step, under
    python -m layoutprof --warmup 1 --calls 2: two recorded calls, each a whole step (both
    forwards, the backward passes, the optimizer's step); the model call that began recording
    in the first step, before its mark, is not among them. Unprofiled, the marks do nothing."""
    with tempfile.TemporaryDirectory() as d:
        script, report = os.path.join(d, "steps.py"), os.path.join(d, "r.json")
        with open(script, "w") as f:
            f.write(STEPS_SCRIPT)
        out = subprocess.run([sys.executable, "-m", "layoutprof", "--quiet", "--json", report, "--calls", "2", script],
                             capture_output=True, text=True)
        plain = subprocess.run([sys.executable, script], capture_output=True, text=True)
        if out.returncode != 0 or plain.returncode != 0 or not os.path.exists(report):
            fail(f"marked steps: exit {out.returncode} ({out.stderr[-300:]!r}), unprofiled exit {plain.returncode}")
            return
        r = json.load(open(report))
    ops = r["ops"]
    linears = sum(1 for row in ops["rows"] if ops["names"][row[1]] == "aten::linear")
    texts = {text for _, text in ops["sources"]}
    run = r["run"]
    if (run["calls_recorded"], run["warmup"], run["backward"], linears) != (2, 1, True, 2) or "optimizer.step()" not in texts:
        fail(f"marked steps: {run['calls_recorded']} calls after {run['warmup']} warm-up, backward {run['backward']}, "
             f"{linears} aten::linear in the shown call (want 2: both micro-batches), lines {sorted(texts)}")
    print(f"marked steps: {run['calls_recorded']} whole steps recorded, {linears} forwards and the optimizer's step in each")
    check_marked_steps_from_open_call()


OPEN_STEPS_SCRIPT = f"""
import sys, torch
import layoutprof
sys.path.insert(0, {HERE!r})
from block_model import Block
model = Block()
for step in range(4):
    model(torch.randn(2, 8, 16))  # its output needs gradients and never gets them
    model(torch.randn(2, 8, 16))
    layoutprof.step()
"""


def check_marked_steps_from_open_call():
    """--warmup 0: a model call still open at the first mark (its backward pass never came) is
    dropped, and step 0, begun before the count, is a warm-up step: steps 1 and 2 are recorded."""
    with tempfile.TemporaryDirectory() as d:
        script, report = os.path.join(d, "open_steps.py"), os.path.join(d, "r.json")
        with open(script, "w") as f:
            f.write(OPEN_STEPS_SCRIPT)
        out = subprocess.run([sys.executable, "-m", "layoutprof", "--quiet", "--json", report, "--warmup", "0",
                              "--calls", "2", script], capture_output=True, text=True)
        r = json.load(open(report)) if os.path.exists(report) else None
    if out.returncode != 0 or r is None:
        fail(f"marked steps from an open call: exit {out.returncode} ({out.stderr[-300:]!r})")
        return
    ops, run = r["ops"], r["run"]
    linears = sum(1 for row in ops["rows"] if ops["names"][row[1]] == "aten::linear")
    if (run["calls_recorded"], run["warmup"], linears) != (2, 1, 2):
        fail(f"marked steps from an open call: {run['calls_recorded']} calls after {run['warmup']} warm-up, "
             f"{linears} aten::linear in the shown call; want 2 calls after 1 (step 0), 2 linears")


def check_nothing_recorded():
    """A script that calls no model, and one whose only model call is the warm-up one: the text
    report judges nothing (no "no copies" verdict) and one line says why."""
    scripts = {"import torch\nprint(torch.ones(3).t().sum())\n": "no module holding parameters was called",
               "import torch\ntorch.nn.Linear(2, 2)(torch.ones(2))\n": "the code ran 1 model call, none after the 1 warm-up ones"}
    with tempfile.TemporaryDirectory() as d:
        for code, why in scripts.items():
            script = os.path.join(d, "s.py")
            with open(script, "w") as f:
                f.write(code)
            out = subprocess.run([sys.executable, "-m", "layoutprof", script], capture_output=True, text=True)
            if out.returncode != 0 or f"layoutprof: nothing recorded: {why}" not in out.stderr or \
                    "Verdict: nothing to judge: no call was recorded" not in out.stderr:
                fail(f"nothing recorded: exit {out.returncode}, stderr {out.stderr[-400:]!r}, want {why!r}")
    print("nothing recorded: said so, no verdict on copies")


def check_workers_and_threads():
    """DataLoader workers neither record nor report; a thread's ops stay out of the model's rows."""
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([sys.executable, "-m", "layoutprof", "--quiet", "--json", os.path.join(d, "r.json"),
                              os.path.join(HERE, "workers_threads.py")], capture_output=True, text=True, cwd=d)
        files = sorted(os.listdir(d))
        if out.returncode != 0 or files != ["r.json"]:
            fail(f"workers and threads: exit {out.returncode}, files {files}: {out.stderr[-300:]!r}")
            return
        report = json.load(open(os.path.join(d, "r.json")))
        copies = {row["module"]: {k: v for k, v in row["copies"].items() if v} for row in report["modules"]}
        if report["summary"]["copies"].get("implicit_layout") or \
                copies.get("(outside the model)", {}).get("explicit_layout") != 20 or \
                any(c.get("explicit_layout") for m, c in copies.items() if m != "(outside the model)"):
            fail(f"workers and threads: copies by module {copies}: want the thread's 20 explicit copies "
                 f"outside the model, none of the workers'")
        print(f"workers and threads: one report, copies by module {copies}")


ENDLESS = """
import sys, time, torch
model = torch.nn.Linear(8, 8).eval()
with torch.no_grad():
    for i in range(10 ** 6):
        model(torch.randn(2, 8).t().contiguous().t())
        if i == 3:
            print("recorded", flush=True)
        time.sleep(0.01)
"""


def check_interrupted():
    """A script stopped by SIGINT or SIGTERM: its reports written, status interrupted, and the
    signal's own ending (KeyboardInterrupt's traceback; killed by SIGTERM)."""
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "endless.py")
        with open(script, "w") as f:
            f.write(ENDLESS)
        for sig, name in ((signal.SIGINT, "SIGINT"), (signal.SIGTERM, "SIGTERM")):
            report = os.path.join(d, f"{name}.json")
            proc = subprocess.Popen([sys.executable, "-m", "layoutprof", "--quiet", "--calls", "2", "--json", report, script],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,  # SIGINT even if a `&` ignored it
                                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            proc.stdout.readline()  # "recorded": the warm-up call and the 2 recorded ones are done
            proc.send_signal(sig)
            try:
                _, err = proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:  # never left running: it holds perf ring buffers
                proc.kill()
                _, err = proc.communicate()
                err += f"\n(still running 120 s after {name}: killed)"
            run = json.load(open(report))["run"] if os.path.exists(report) else None
            ended = proc.returncode == -signal.SIGTERM if sig == signal.SIGTERM else "KeyboardInterrupt" in err
            if run is None or (run["status"], run["calls_recorded"]) != ("interrupted", 2) or \
                    not run["error"].startswith(name) or not ended:
                fail(f"{name}: exit {proc.returncode}, report {run and (run['status'], run['calls_recorded'], run['error'])}")
        print(f"interrupted: reports written, status interrupted ({run and run['error']})")


NEVER_EXITED = """
import sys, torch, layoutprof
sys.path.insert(0, {tests!r})
from block_model import Block
model = Block().eval()
p = layoutprof.profile(json={report!r}).__enter__()  # never exited
with torch.no_grad():
    for _ in range(3):
        model(torch.randn(2, 8, 16))
        p.step()
"""


def check_never_exited():
    """A profile entered and never exited: its reports are written as the interpreter exits,
    status interrupted, with the steps it recorded."""
    with tempfile.TemporaryDirectory() as d:
        report, script = os.path.join(d, "r.json"), os.path.join(d, "never_exited.py")
        with open(script, "w") as f:
            f.write(NEVER_EXITED.format(tests=os.path.dirname(os.path.abspath(__file__)), report=report))
        out = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300)
        run = json.load(open(report))["run"] if os.path.exists(report) else None
        if out.returncode != 0 or run is None or run["status"] != "interrupted" or run["calls_recorded"] != 3 or \
                "never stopped" not in run["error"]:
            fail(f"a profile never exited: exit {out.returncode} {out.stderr[-300:]!r}, report "
                 f"{run and (run['status'], run['calls_recorded'], run['error'])}")
            return
        print(f"never exited: reports written at exit ({run['error']})")


POOL_IN_BLOCK = """
import os, re, torch, layoutprof
torch.set_num_threads(2)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU()).eval()
x = torch.randn(8, 3, 64, 64)
before = len(os.listdir("/proc/self/task"))
with torch.no_grad(), layoutprof.profile(warmup=0, calls=3) as p:
    for i in range(3):
        model(x)
        if i == 1:
            during = len(os.listdir("/proc/self/task")) - 1  # less the sampler's reader
        p.step()
sampled = int(re.search(r"on (\\d+) thread", p.report["run"]["counter_read"]).group(1))
print(before, during, sampled)
"""


def check_pool_started_in_block():
    """LibTorch's intra-op pool, started by the first recorded call (no warm-up): its threads are
    sampled from the next call on, as every thread that existed when the block began."""
    out = subprocess.run([sys.executable, "-c", POOL_IN_BLOCK], capture_output=True, text=True, timeout=300)
    try:
        before, during, sampled = map(int, out.stdout.split()[-3:])
    except ValueError:
        fail(f"a pool started in the block: exit {out.returncode}, {out.stdout[-200:]!r} {out.stderr[-300:]!r}")
        return
    if during <= before:
        print(f"pool started in the block: not checked, the pool existed before the block ({before} threads)")
        return
    if sampled != during:
        fail(f"a pool started in the block: {sampled} threads sampled, {during} ran the recorded calls "
             f"({before} before the block)")
        return
    print(f"pool started in the block: {sampled} threads sampled ({before} before the block)")


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
    """in_process.py SAMPLES_DIR: the checks above, run by pytest (test_in_process.py)."""
    if len(sys.argv) != 2:
        print("usage: in_process.py SAMPLES_DIR (the .pt2 samples of this torch: BUILD/samples)", file=sys.stderr)
        return 2
    import pytest
    return pytest.main([os.path.join(HERE, "test_in_process.py"), "--samples-dir", sys.argv[1]])


if __name__ == "__main__":
    sys.exit(main())
