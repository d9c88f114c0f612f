"""The command on a CUDA device (scripts/gpu-check runs it on a GPU machine): every sample of
samples/manifest.json with --device cuda, as TorchScript and as its .pt2 where it has one, and
the training samples (those with gradient expectations) once more with --backward. One row of
gpu-check's table per run, as each ends; the JSON reports go to OUT:

    command_cuda.py BUILD OUT [JOBS]

JOBS runs at a time (default 1): processes share the GPU by time slices, so a kernel's time is
its own, but the wall times in the status column are not.
"""
import json
import os
from concurrent.futures import ThreadPoolExecutor
import subprocess
import sys
import time

DEVICE = os.environ.get("GPU_CHECK_DEVICE", "cuda")  # cpu: a dry run of this script on the CPU machine


def model_path(build, name):
    for folder in (os.path.join(build, "samples"), "samples"):
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    return None


def runs(manifest):
    """(label, file, inputs, extra flags) for each run."""
    for s in manifest["samples"]:
        yield s["name"], s["file"], s["inputs"], []
        if s.get("pt2"):
            yield s["name"] + " (.pt2)", s["pt2"]["file"], s["pt2"].get("inputs", s["inputs"]), []
        if "grads" in s:
            yield s["name"] + " --backward", s["file"], s["inputs"], ["--backward"]


def run_one(build, out, label, path, inputs, flags):
    """Runs it; returns its table row."""
    report = os.path.join(out, label.replace(" ", "_").replace("(", "").replace(")", "").replace("--", "") + ".json")
    args = [os.path.join(build, "layoutprof"), path, "--device", DEVICE, "--json", report, "--format", "json"] + flags
    for spec in inputs:
        args += ["--input", spec]
    start = time.time()
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.time() - start
    if not os.path.exists(report):
        err = " ".join(done.stderr.strip().splitlines()[-1:])[:160]
        return f"| {label} | {' '.join(inputs)} | - | - | - | - | - | exit {done.returncode}: {err} |"
    r = json.load(open(report))
    g = r["summary"].get("gpu") or {}
    return (f"| {label} | {' '.join(inputs)} | {r['summary']['ops']} | {r['summary']['copies']['implicit_layout']} | "
          f"{g.get('gpu_ns', 0) / 1e6:.3f} | {g.get('copy_gpu_ns', 0) / 1e6:.3f} | "
          f"unattributed {g.get('unattributed', '-')} | {r['run']['status']} ({took:.0f} s, exit {done.returncode}) |")


def main(build, out, jobs):
    os.makedirs(out, exist_ok=True)
    manifest = json.load(open("samples/manifest.json"))
    with ThreadPoolExecutor(jobs) as pool:
        pending = []
        for label, name, inputs, flags in runs(manifest):
            path = model_path(build, name)
            if path is None:
                print(f"| {label} | {' '.join(inputs)} | - | - | - | - | - | not run: {name} was not made |", flush=True)
                continue
            pending.append(pool.submit(run_one, build, out, label, path, inputs, flags))
        for done in pending:
            print(done.result(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
