#!/usr/bin/env python3
"""End-to-end test of scripts/export.py: nn.Module in, model.pt2 or model.pt out, layoutprof runs.

usage: export_test.py PYTHON_UNDER_TEST [LAYOUTPROF_BINARY]

Writes a few small modules to a temporary folder, runs scripts/export.py on them with
PYTHON_UNDER_TEST and checks what it did. With --torchscript: a scriptable module is scripted,
its archive computes what the module computes and its source ranges name the module's file; a
module torch.jit.script cannot compile is traced instead, and says so; a module that neither
scripts nor traces fails, leaving no file behind (and an existing -o untouched). By default,
under torch 2.x: the module is exported to model.pt2, which torch.export.load loads and which
computes what the module computes, its stack traces naming the module's file; --dynamic gives a
program with range constraints that runs at another batch size. Under torch 1.x the default
exits 2 with one line pointing at --torchscript. Bad arguments exit 2 with one line. The
programs are inspected by PYTHON_UNDER_TEST itself (an archive saved by torch 2.x need not load
in 1.13), in a checker that builds its inputs and takes its weights without export.py's help.
With LAYOUTPROF_BINARY (built against that torch's LibTorch), the printed layoutprof commands
are run too, a .pt2's report saying model_format "pt2" and naming the module's file. One line
per check; exit 1 if any failed.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile

EXPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "export.py")
EXPORT = os.path.normpath(EXPORT)
TIMEOUT_S = 300

# The user's code, as a file of its own: its name must show up in the archives' source ranges.
MODELS = '''
import torch
from torch import nn


class ConvNet(nn.Module):
    """Scriptable: a convolution and a BatchNorm, fed a channels_last input."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.norm = nn.BatchNorm2d(8)

    def forward(self, x):
        y = self.norm(self.conv(x))
        return torch.relu(y).flatten(1)


class VarArgs(nn.Module):
    """torch.jit.script cannot compile a *args forward; tracing it with two inputs works."""

    def forward(self, *xs):
        y = xs[0]
        if len(xs) > 1:  # Python control flow, fixed at trace time
            y = y + xs[1].transpose(1, 2)
        return y.relu()


class Neither(nn.Module):
    """Neither scripts (*args) nor traces (an int among the outputs)."""

    def forward(self, *xs):
        return {"sum": xs[0].sum(), "count": len(xs)}


def make_convnet():
    return ConvNet()


def returns_int():
    return 3


NOT_A_MODULE = 42
'''

# Run by PYTHON_UNDER_TEST: loads an archive, builds its inputs and an eager module holding the
# archive's weights, and reports what it finds as JSON.
CHECKER = r'''
import json, sys, warnings
import torch
sys.path.insert(0, sys.argv[3])
import lp_export_models as models

case, archive = sys.argv[1], sys.argv[2]
batch = int(sys.argv[4]) if len(sys.argv) > 4 else 2
torch.manual_seed(123)
if case in ("conv", "train"):
    eager = models.ConvNet()
    inputs = [torch.randn(batch, 3, 8, 8).contiguous(memory_format=torch.channels_last)]
else:
    eager = models.VarArgs()
    inputs = [torch.randn(batch, 3, 4), torch.randn(batch, 3, 4).transpose(1, 2)]
if archive.endswith(".pt2"):
    # A torch.export program: loaded with torch.export.load, run through .module(); the
    # mode is fixed in it (a .pt2 has no train/eval switch).
    program = torch.export.load(archive)
    loaded = program.module()
    report = {"loads": True, "training": None}
    state = dict(program.state_dict)
    stack_traces = "\n".join(n.meta.get("stack_trace") or "" for n in program.graph.nodes)
    report["graph_names_file"] = report["inlined_names_file"] = models.__file__ in stack_traces
else:
    loaded = torch.jit.load(archive)
    report = {"loads": True, "training": loaded.training}
    state = loaded.state_dict()
    report["graph_names_file"] = models.__file__ in str(loaded.graph)
    report["inlined_names_file"] = models.__file__ in str(loaded.inlined_graph)
if case == "train":
    report["running_stats_untouched"] = bool(
        torch.equal(state["norm.running_mean"], torch.zeros(8)) and
        torch.equal(state["norm.running_var"], torch.ones(8)) and
        int(state["norm.num_batches_tracked"]) == 0)
eager.load_state_dict(state)
eager.eval()
if not archive.endswith(".pt2"):
    loaded.eval()
with torch.no_grad():
    want, got = eager(*inputs), loaded(*inputs)
report["equal"] = bool(want.shape == got.shape and torch.allclose(want, got, rtol=1e-5, atol=1e-6))
report["max_diff"] = float((want - got).abs().max()) if want.shape == got.shape else None
report["models_file"] = models.__file__
# Whether this torch warns that TorchScript is deprecated (export.py must then say so once).
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch.jit.script(torch.nn.Identity())
report["torch_warns_deprecated"] = any("deprecated" in str(w.message) for w in caught)
report["torch"] = torch.__version__
report["has_export"] = hasattr(torch, "export") and hasattr(torch.export, "load")
print(json.dumps(report))
'''


class Checks:
    def __init__(self):
        self.failed = 0

    def __call__(self, name: str, ok: bool, detail: str = "") -> bool:
        # The detail (what was found instead) only where it failed.
        print(f"ok   {name}" if ok else f"FAIL {name}{': ' + detail if detail else ''}", flush=True)
        self.failed += not ok
        return ok

    def skip(self, name: str, why: str) -> None:
        print(f"skip {name}: {why}", flush=True)


def run(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=TIMEOUT_S)


def lines(text):
    return [l for l in text.splitlines() if l.strip()]


def last_line(text):
    return (lines(text) or [""])[-1]


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    python = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) == 3 else None
    check = Checks()
    work = tempfile.mkdtemp(prefix="layoutprof-export-")
    with open(os.path.join(work, "lp_export_models.py"), "w") as f:
        f.write(MODELS)
    with open(os.path.join(work, "checker.py"), "w") as f:
        f.write(CHECKER)

    def export(*args):
        return run([python, EXPORT, *args, "--path", work], cwd=work)

    def inspect(case, archive, batch=2):
        r = run([python, os.path.join(work, "checker.py"), case, archive, work, str(batch)],
                cwd=work)
        if r.returncode != 0:
            return {"loads": False, "error": (lines(r.stderr) or ["?"])[-1]}
        return json.loads(r.stdout)

    def note_lines(stderr):
        return [l for l in lines(stderr) if "note:" in l and "TorchScript" in l]

    def run_layoutprof(name, printed):
        if binary is None:
            return check.skip(name, "no LAYOUTPROF_BINARY given")
        if not os.path.exists(binary):
            return check.skip(name, f"{binary} does not exist")
        if not printed:
            return check(name, False, "export.py printed no command")
        words = shlex.split(printed)
        report = os.path.join(work, name.replace(" ", "_") + ".json")
        cmd = [binary] + words[1:] + ["--iters", "1", "--warmup", "0", "--json", report]
        r = run(cmd, cwd=work)
        if not check(name, r.returncode == 0, f"exit {r.returncode}: {last_line(r.stderr)}"):
            return None
        return open(report).read()

    def range_constraints(archive):
        """The program's range_constraints, read from the archive as layoutprof reads it."""
        with zipfile.ZipFile(archive) as z:
            name = next(n for n in z.namelist() if n.endswith("/models/model.json"))
            return json.loads(z.read(name)).get("range_constraints")

    probe = run([python, "-c", "import torch, torch.export; torch.export.load"], cwd=work)
    has_export = probe.returncode == 0

    # (1) A scriptable module, from a factory function, fed a channels_last input.
    r = export("lp_export_models:make_convnet", "--input", "2x3x8x8:f32:channels_last",
               "--torchscript", "-o", "conv.pt")
    check("scriptable: exit 0", r.returncode == 0, f"exit {r.returncode}: {lines(r.stderr)[-1:]}")
    check("scriptable: the command printed last", lines(r.stdout)[-1:] == [
        "layoutprof conv.pt --input 2x3x8x8:f32:channels_last"], repr(lines(r.stdout)[-1:]))
    check("scriptable: says it scripted, no fallback",
          any(l.startswith("export.py: scripted lp_export_models:make_convnet") for l in lines(r.stderr))
          and "torch.jit.trace" not in r.stderr, repr(lines(r.stderr)))
    got = inspect("conv", os.path.join(work, "conv.pt"))
    check("scriptable: archive loads", got.get("loads"), got.get("error", ""))
    check("scriptable: in eval mode", got.get("training") is False)
    check("scriptable: output equals the eager module's", got.get("equal") is True,
          f"largest difference {got.get('max_diff')}")
    check("scriptable: source ranges name the user's file",
          got.get("graph_names_file") is True and got.get("inlined_names_file") is True,
          got.get("models_file", ""))
    warns = got.get("torch_warns_deprecated")
    notes = note_lines(r.stderr)
    check(f"scriptable: {'one' if warns else 'no'} TorchScript deprecation note (torch {got.get('torch')})",
          len(notes) == (1 if warns else 0) and "FutureWarning" not in r.stderr,
          f"{len(notes)} note line(s)")
    if warns and notes:
        check("scriptable: the note quotes the warning and says layoutprof reads the archive",
              "is deprecated" in notes[0] and "torch.export" in notes[0] and "layoutprof" in notes[0],
              notes[0])
    report = run_layoutprof("scriptable: layoutprof runs the printed command", last_line(r.stdout))
    if report is not None:
        check("scriptable: layoutprof's report names the user's file",
              got.get("models_file", "?") in report)

    # --train: the command asks for training steps; BatchNorm's statistics are as made.
    r = export("lp_export_models:ConvNet", "--input", "2x3x8x8:f32:channels_last", "--train",
               "--torchscript", "-o", "train.pt")
    check("train: exit 0", r.returncode == 0, f"exit {r.returncode}: {lines(r.stderr)[-1:]}")
    check("train: the command asks for --backward", lines(r.stdout)[-1:] == [
        "layoutprof train.pt --input 2x3x8x8:f32:channels_last --backward"], repr(lines(r.stdout)[-1:]))
    got = inspect("train", os.path.join(work, "train.pt"))
    check("train: archive in training mode", got.get("training") is True, got.get("error", ""))
    check("train: running statistics not moved by export's own forward()",
          got.get("running_stats_untouched") is True)
    run_layoutprof("train: layoutprof runs the printed command", last_line(r.stdout))

    # The same traced: tracing runs forward() in training mode too, which must not show either.
    r = export("lp_export_models:ConvNet", "--input", "2x3x8x8:f32:channels_last", "--train",
               "--torchscript", "--method", "trace", "-o", "train_traced.pt")
    check("train, traced: exit 0", r.returncode == 0, f"exit {r.returncode}: {lines(r.stderr)[-1:]}")
    got = inspect("train", os.path.join(work, "train_traced.pt"))
    check("train, traced: running statistics not moved by the trace's forward()",
          got.get("running_stats_untouched") is True, got.get("error", ""))

    # (2) torch.jit.script cannot compile it: traced instead, saying why and what that means.
    specs = ["2x3x4", "2x4x3:perm=0,2,1"]  # the second viewed [2, 4, 3] over [2, 3, 4] memory
    r = export("lp_export_models:VarArgs", "--input", specs[0], "--input", specs[1],
               "--torchscript", "-o", "varargs.pt")
    err = lines(r.stderr)
    check("fallback: exit 0", r.returncode == 0, f"exit {r.returncode}: {err[-1:]}")
    check("fallback: says why scripting failed, on one line",
          sum("torch.jit.script failed" in l for l in err) == 1 and
          any("torch.jit.script failed" in l and "falling back to torch.jit.trace" in l and
              "variable number of arguments" in l for l in err), repr(err))
    check("fallback: warns a trace keeps these inputs' control flow only",
          any("traced archive" in l and "control flow" in l for l in err))
    check("fallback: says it traced", any(l.startswith("export.py: traced lp_export_models:VarArgs")
                                          for l in err))
    check("fallback: the command printed last",
          lines(r.stdout)[-1:] == [f"layoutprof varargs.pt --input {specs[0]} --input {specs[1]}"],
          repr(lines(r.stdout)[-1:]))
    got = inspect("varargs", os.path.join(work, "varargs.pt"))
    check("fallback: archive loads", got.get("loads"), got.get("error", ""))
    check("fallback: output equals the eager module's", got.get("equal") is True,
          f"largest difference {got.get('max_diff')}")
    check("fallback: source ranges name the user's file", got.get("graph_names_file") is True)
    run_layoutprof("fallback: layoutprof runs the printed command", last_line(r.stdout))

    r = export("lp_export_models:VarArgs", "--input", "2x3x4", "--torchscript", "--method", "script",
               "-o", "script_only.pt")
    check("--method script: fails with one line, exit 1, no file",
          r.returncode == 1 and len(lines(r.stderr)) == 1
          and not os.path.exists(os.path.join(work, "script_only.pt")),
          f"exit {r.returncode}: {lines(r.stderr)}")

    # (3) Nothing to export: exit 2, one line, no traceback, no file.
    bad = [
        ("bad module path", ["no_such_module_xyz:Net", "--input", "2x3"], "no_such_module_xyz"),
        ("no such attribute", ["lp_export_models:Nope", "--input", "2x3"], "Nope"),
        ("attribute not a module", ["lp_export_models:NOT_A_MODULE", "--input", "2x3"], "nn.Module"),
        ("factory returns no module", ["lp_export_models:returns_int", "--input", "2x3"], "nn.Module"),
        ("no ':factory'", ["lp_export_models", "--input", "2x3"], "package.module:factory"),
        ("bad --input dtype", ["lp_export_models:ConvNet", "--input", "2x3x8x8:f33"], "--input"),
        ("bad --input dims", ["lp_export_models:ConvNet", "--input", "2xx3"], "--input"),
        ("bad --input format rank", ["lp_export_models:ConvNet", "--input", "2x3:channels_last"],
         "--input"),
        ("bad --input perm", ["lp_export_models:ConvNet", "--input", "2x3x4:perm=0,0,1"], "--input"),
        ("inputs the module rejects", ["lp_export_models:ConvNet", "--input", "2x5x8x8"],
         "fails on these inputs"),
    ]
    bad_options = [  # each path refuses the other's option
        ("--method without --torchscript", ["lp_export_models:ConvNet", "--input", "2x3x8x8",
                                             "--method", "trace"], "--torchscript"),
        ("--dynamic with --torchscript", ["lp_export_models:ConvNet", "--input", "2x3x8x8",
                                          "--torchscript", "--dynamic"], "--dynamic"),
    ]
    # Both paths under torch 2.x; under 1.x the default path stops at torch.export, checked in (6).
    paths = [("--torchscript", ["--torchscript"], ".pt")]
    paths += [("pt2", [], ".pt2")] if has_export else []
    cases = [(f"{name} ({path})", args + extra, needle, suffix)
             for path, extra, suffix in paths for name, args, needle in bad]
    cases += [(name, args, needle, ".pt") for name, args, needle in bad_options]
    for name, args, needle, suffix in cases:
        out = os.path.join(work, "bad" + suffix)
        r = export(*args, "-o", out)
        err = lines(r.stderr)
        check(f"error, {name}: exit 2, one line", r.returncode == 2 and len(err) == 1 and needle in err[0]
              and "Traceback" not in r.stderr and not os.path.exists(out) and not r.stdout,
              f"exit {r.returncode}: {err}")

    # (4) Neither scripts nor traces: an error naming both reasons, and nothing written; an
    # archive already at -o is left as it was.
    out = os.path.join(work, "neither.pt")
    with open(out, "wb") as f:
        f.write(b"previous archive")
    r = export("lp_export_models:Neither", "--input", "2x3", "--torchscript", "-o", out)
    err = lines(r.stderr)
    check("neither: nonzero exit", r.returncode not in (0, None), f"exit {r.returncode}")
    check("neither: the error names both failures, on one line",
          bool(err) and "torch.jit.script failed" in err[-1] and "torch.jit.trace failed" in err[-1]
          and "Traceback" not in r.stderr, repr(err[-1:]))
    check("neither: no command printed", not r.stdout.strip(), repr(r.stdout))
    check("neither: existing -o untouched", open(out, "rb").read() == b"previous archive")
    fresh = os.path.join(work, "neither_fresh.pt")
    r = export("lp_export_models:Neither", "--input", "2x3", "--torchscript", "-o", fresh)
    check("neither: no file where there was none", r.returncode != 0 and not os.path.exists(fresh))
    leftovers = [n for n in os.listdir(work) if n.endswith(".tmp")]
    check("neither: no temporary file left", not leftovers, repr(leftovers))

    if has_export:
        check_pt2(check, work, export, inspect, run_layoutprof, range_constraints, note_lines)
    else:
        check_no_export(check, work, export, probe)

    if check.failed:
        print(f"FAILED: export.py under {python} ({check.failed} failed); files kept in {work}")
    else:
        print(f"passed: export.py under {python}")
        shutil.rmtree(work)
    return 1 if check.failed else 0


def check_pt2(check, work, export, inspect, run_layoutprof, range_constraints, note_lines):
    """(5) The default path under torch 2.x: torch.export programs (.pt2)."""
    r = export("lp_export_models:make_convnet", "--input", "2x3x8x8:f32:channels_last")
    err = lines(r.stderr)
    check("pt2: exit 0", r.returncode == 0, f"exit {r.returncode}: {err[-1:]}")
    check("pt2: model.pt2 by default, the command printed last", lines(r.stdout)[-1:] == [
        "layoutprof model.pt2 --input 2x3x8x8:f32:channels_last"], repr(lines(r.stdout)[-1:]))
    check("pt2: says it exported, no TorchScript in sight",
          any(l.startswith("export.py: exported lp_export_models:make_convnet") for l in err)
          and "torch.jit" not in r.stderr and not note_lines(r.stderr), repr(err))
    archive = os.path.join(work, "model.pt2")
    check("pt2: model.pt2 written, model.pt not", os.path.isfile(archive)
          and not os.path.exists(os.path.join(work, "model.pt")))
    got = inspect("conv", archive)
    check("pt2: loads with torch.export.load", got.get("loads"), got.get("error", ""))
    check("pt2: output equals the eager module's", got.get("equal") is True,
          f"largest difference {got.get('max_diff')}")
    check("pt2: stack traces name the user's file", got.get("graph_names_file") is True,
          got.get("models_file", ""))
    constraints = range_constraints(archive)
    check("pt2: static by default (no range_constraints)", constraints == {}, repr(constraints))
    report = run_layoutprof("pt2: layoutprof runs the printed command", last_line(r.stdout))
    if report is not None:
        report = json.loads(report)
        sources = [s[0] for s in report.get("ops", {}).get("sources", [])]
        check("pt2: layoutprof's report says model_format pt2",
              report.get("run", {}).get("model_format") == "pt2",
              repr(report.get("run", {}).get("model_format")))
        check("pt2: layoutprof's report has ops in the user's file",
              any(s.startswith(got.get("models_file", "?") + ":") for s in sources), repr(sources))

    # --dynamic: dimension 0 symbolic, constrained; the program runs at another batch size.
    r = export("lp_export_models:ConvNet", "--input", "2x3x8x8:f32:channels_last", "--dynamic",
               "-o", "dynamic.pt2")
    check("pt2 --dynamic: exit 0", r.returncode == 0,
          f"exit {r.returncode}: {lines(r.stderr)[-1:]}")
    archive = os.path.join(work, "dynamic.pt2")
    constraints = range_constraints(archive) if os.path.isfile(archive) else None
    check("pt2 --dynamic: range_constraints not empty", bool(constraints), repr(constraints))
    got = inspect("conv", archive, batch=5)
    check("pt2 --dynamic: at batch 5 too, output equals the eager module's",
          got.get("equal") is True, got.get("error", f"largest difference {got.get('max_diff')}"))
    run_layoutprof("pt2 --dynamic: layoutprof runs the printed command", last_line(r.stdout))

    # *args and a permuted input, dynamic: the inputs of one batch size share one Dim.
    specs = ["2x3x4", "2x4x3:perm=0,2,1"]
    r = export("lp_export_models:VarArgs", "--input", specs[0], "--input", specs[1], "--dynamic",
               "-o", "varargs.pt2")
    check("pt2 --dynamic, *args: exit 0", r.returncode == 0,
          f"exit {r.returncode}: {lines(r.stderr)[-1:]}")
    got = inspect("varargs", os.path.join(work, "varargs.pt2"), batch=3)
    check("pt2 --dynamic, *args: at batch 3, output equals the eager module's",
          got.get("equal") is True, got.get("error", f"largest difference {got.get('max_diff')}"))
    run_layoutprof("pt2 --dynamic, *args: layoutprof runs the printed command", last_line(r.stdout))

    # --train: the command asks for --backward; export's own forward() moves no statistics.
    r = export("lp_export_models:ConvNet", "--input", "2x3x8x8:f32:channels_last", "--train",
               "-o", "train.pt2")
    check("pt2 --train: exit 0, the command asks for --backward", r.returncode == 0 and
          lines(r.stdout)[-1:] == [
              "layoutprof train.pt2 --input 2x3x8x8:f32:channels_last --backward"],
          f"exit {r.returncode}: {lines(r.stderr)[-1:]} {lines(r.stdout)[-1:]}")
    got = inspect("train", os.path.join(work, "train.pt2"))
    check("pt2 --train: running statistics not moved by export's own forward()",
          got.get("running_stats_untouched") is True, got.get("error", ""))
    run_layoutprof("pt2 --train: layoutprof runs the printed command", last_line(r.stdout))

    # A program that does not export: exit 1, one line, an existing -o untouched, no temporary.
    out = os.path.join(work, "one.pt2")
    with open(out, "wb") as f:
        f.write(b"previous program")
    r = export("lp_export_models:ConvNet", "--input", "1x3x8x8", "--dynamic", "-o", out)
    err = lines(r.stderr)
    check("pt2 cannot export: exit 1, one line naming torch.export",
          r.returncode == 1 and len(err) == 1 and "torch.export.export failed" in err[0]
          and not r.stdout.strip(), f"exit {r.returncode}: {err}")
    check("pt2 cannot export: existing -o untouched", open(out, "rb").read() == b"previous program")
    leftovers = [n for n in os.listdir(work) if n.endswith(".tmp")]
    check("pt2: no temporary file left", not leftovers, repr(leftovers))


def check_no_export(check, work, export, probe):
    """(6) The default path under torch 1.x: one line saying to use --torchscript, exit 2."""
    r = export("lp_export_models:ConvNet", "--input", "2x3x8x8:f32:channels_last")
    err = lines(r.stderr)
    check(f"no torch.export ({last_line(probe.stderr)[:60]}): exit 2, one line naming --torchscript",
          r.returncode == 2 and len(err) == 1 and "torch.export needs PyTorch 2.x" in err[0]
          and "--torchscript" in err[0] and "Traceback" not in r.stderr and not r.stdout,
          f"exit {r.returncode}: {err}")
    check("no torch.export: nothing written", not os.path.exists(os.path.join(work, "model.pt2")))


if __name__ == "__main__":
    sys.exit(main())
