"""The backend pass against oneDNN's own log, counted independently.

For resnet18 at batch 8 (an NCHW batch, and a channels_last batch into NCHW weights), in the
TorchScript archive (and the .pt2 program on a 2.x torch): layoutprof's reorders per call, by role
(activation, weight) and by conversion (from, to), equal those of a separate plain run of the same
model under torch's oneDNN verbose switch, counted here without layoutprof's code; each activation
and weight reorder is charged to a convolution with its module and line. Then: the user's own
output from inside the model comes out whole and as often as the calls (one more with the pass),
with no oneDNN line in it; a user's own ONEDNN_VERBOSE is left alone (the pass is skipped, saying
so, and their log is theirs); --no-backend turns the pass off.

usage: backend_pass_check.py LAYOUTPROF SAMPLES_DIR WORK_DIR     (run with the samples' torch)
Prints "backend: N passed, M failed" last; exits 1 on any failure.
"""
import collections
import json
import os
import re
import subprocess
import sys

import torch

LAYOUTPROF, SAMPLES, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
failures = []
passed = 0


def check(ok, what):
    global passed
    if ok:
        passed += 1
    else:
        failures.append(what)
        print("FAILED:", what, flush=True)


# The reference: a plain run of the model, oneDNN's log switched on for one call after warm-up.
REFERENCE = r'''
import sys, torch
path, fmt = sys.argv[1], sys.argv[2]
if path.endswith(".pt2"):
    m = torch.export.load(path).module()
else:
    m = torch.jit.load(path)
    m.eval()
x = torch.randn(8, 3, 224, 224)
if fmt == "channels_last":
    x = x.contiguous(memory_format=torch.channels_last)
with torch.no_grad():
    for _ in range(2):
        m(x)
    sys.stdout.flush()
    print("REFERENCE-CALL", flush=True)
    torch._C._verbose.mkldnn_set_verbose(1)
    m(x)
    torch._C._verbose.mkldnn_set_verbose(0)
'''


DTYPES = ("f32", "f16", "bf16", "f64", "s32", "s8", "u8", "undef")


def exec_fields(line):
    """(kind, {arg: format}, problem) of an exec line of either oneDNN version, else None."""
    f = line.strip().split(",")
    if "exec" not in f[:6]:
        return None
    e = f.index("exec")
    kind, mds, problem = f[e + 2], f[e + 5], f[-2]
    formats = {}
    for token in mds.split():
        parts = token.split(":")
        v3 = len(parts) > 1 and parts[1] in DTYPES  # 3.x: src:f32:..., 2.x: src_f32:...
        arg = parts[0] if v3 else parts[0].rsplit("_", 1)[0]
        formats[arg] = parts[parts.index("blocked") + 1] if "blocked" in parts else "undef"
    return kind, formats, problem


def conv_shapes(problem):
    k = {m.group(1): int(m.group(2)) for m in re.finditer(r"([a-z]+)(\d+)", problem)}
    sp = [a for a in "dhw" if "i" + a in k]
    g = k.get("g", 1)
    src = [k["mb"], k["ic"]] + [k["i" + a] for a in sp]
    dst = [k["mb"], k["oc"]] + [k["o" + a] for a in sp]
    w = ([g, k["oc"] // g, k["ic"] // g] if g > 1 else [k["oc"], k["ic"]]) + [k["k" + a] for a in sp]
    return src, dst, w


def reference_counts(model, fmt):
    out = subprocess.run([sys.executable, "-c", REFERENCE, model, fmt], capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k not in ("ONEDNN_VERBOSE", "DNNL_VERBOSE")})
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    lines = out.stdout.split("REFERENCE-CALL\n", 1)[1].splitlines()
    execs = [e for e in map(exec_fields, lines) if e]
    convs = [conv_shapes(p) for kind, _, p in execs if kind == "convolution"]
    counts = collections.Counter()
    for kind, formats, problem in execs:
        if kind != "reorder":
            continue
        dims = [int(d) for d in problem.split("x")]
        act = any(dims in (s, d) for s, d, _ in convs)
        wei = any(dims == w for _, _, w in convs)
        role = "other" if act == wei else "activation" if act else "weight"
        counts[(role, formats.get("src"), formats.get("dst"))] += 1
    return counts, len(convs)


def profile(model, args, env=None):
    report = os.path.join(WORK, "report.json")
    cmd = [LAYOUTPROF, model, "--warmup", "2", "--iters", "1", "--no-counters", "--json", report] + args
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(" ".join(cmd) + ": " + out.stderr[-2000:])
    with open(report) as f:
        return json.load(f), out.stdout


def layoutprof_counts(report):
    counts = collections.Counter()
    for p in report["backend"]["primitives"]:
        if p["kind"] == "reorder":
            counts[(p["role"], p["from"], p["to"])] += 1
    return counts


def check_model(model, fmt):
    spec = "8x3x224x224" + (":f32:channels_last" if fmt == "channels_last" else "")
    name = f"{os.path.basename(model)} fed {fmt}"
    report, stdout = profile(model, ["--input", spec])
    b = report.get("backend", {})
    check(b.get("state") == "ran", f"{name}: the pass ran ({b.get('state')}: {b.get('reason')})")
    if b.get("state") != "ran":
        return
    want, convs = reference_counts(model, fmt)
    got = layoutprof_counts(report)
    check(got == want, f"{name}: reorders by role and conversion {dict(got)} == oneDNN's log {dict(want)}")
    check(convs > 0, f"{name}: the reference ran convolutions in oneDNN")
    for p in b["primitives"]:
        if p["kind"] == "reorder" and p["role"] in ("activation", "weight"):
            check(p["op"] is not None, f"{name}: a {p['role']} reorder is charged to an op")
    charged = [p for p in b["primitives"] if p["kind"] == "reorder" and p["op"] is not None]
    check(all("conv" in p["inner"] for p in charged), f"{name}: every charged reorder ran inside a convolution op")
    section = stdout[stdout.find("Backend conversions"):]
    check("Backend conversions" in stdout, f"{name}: the text report has its Backend conversions section")
    check(re.search(r"\n  1\. \S+ aten::\S*conv\S* at \S*resnet\.py:\d+", section) is not None,
          f"{name}: the ops that reordered are named with their module and line")
    activation = sum(n for (role, _, _), n in want.items() if role == "activation")
    verdict = next((l for l in stdout.splitlines() if l.startswith("Verdict:")), "")
    if activation:
        check("no implicit layout copies in a call" not in verdict and "activation reorder" in stdout,
              f"{name}: the verdict counts the {activation} activation reorders: {verdict}")


def check_user_output():
    """The user's prints from inside the model, whole and in order; a user's ONEDNN_VERBOSE left alone."""
    class Printing(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 16, 3)

        def forward(self, x):
            print("user line before the conv")
            y = self.conv(x)
            print("user line after the conv")
            return y

    path = os.path.join(WORK, "printing.pt")
    torch.jit.script(Printing()).save(path)
    env = {k: v for k, v in os.environ.items() if k not in ("ONEDNN_VERBOSE", "DNNL_VERBOSE")}
    with_pass, out_on = profile(path, ["--input", "4x3x32x32"], env)
    without, out_off = profile(path, ["--input", "4x3x32x32", "--no-backend"], env)
    on = out_on.count("user line before the conv\nuser line after the conv\n")
    off = out_off.count("user line before the conv\nuser line after the conv\n")
    check(on == off + 1 and off > 0, f"the user's lines come whole, once per call and once for the pass ({on} against {off})")
    check("onednn_verbose" not in out_on and "dnnl_verbose" not in out_on, "no oneDNN line reaches the user's stdout")
    check(without["backend"]["state"] == "off", "--no-backend: the pass is off and the report says so")
    if with_pass["backend"]["state"] == "ran":
        check(with_pass["figures"] == without["figures"], "the pass changes none of the run's figures")
    env["ONEDNN_VERBOSE"] = "1"
    theirs, out_theirs = profile(path, ["--input", "4x3x32x32"], env)
    check(theirs["backend"]["state"] == "skipped" and "ONEDNN_VERBOSE" in theirs["backend"]["reason"],
          f"a user's ONEDNN_VERBOSE is respected: {theirs['backend']}")
    check("verbose,exec" in out_theirs or "verbose,v1,primitive,exec" in out_theirs,
          "the user's own oneDNN log reaches their stdout untouched")


models = [os.path.join(SAMPLES, "resnet18.pt")]
if os.path.exists(os.path.join(SAMPLES, "resnet18.pt2")):
    models.append(os.path.join(SAMPLES, "resnet18.pt2"))
for model in models:
    for fmt in ("contiguous", "channels_last"):
        check_model(model, fmt)
check_user_output()
print(f"backend: {passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
