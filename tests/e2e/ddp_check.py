#!/usr/bin/env python3
"""A real DistributedDataParallel run confirms layoutprof's gradient layout predictions.

For each training sample of the manifest (the ones with "grads"): layoutprof --backward
predicts which parameters DDP will warn about (ddp_warning: the two lines DDP prints, for DDP
built around the model as it is); then two processes train the same archive under DDP (gloo
backend on 127.0.0.1) for a few steps, capturing DDP's "Grad strides do not match bucket view strides" warning. DDP warns
once per process, for the first parameter it meets, so the check is: it warns exactly when
layoutprof predicts at least one such parameter, and the sizes and strides it prints are
one of layoutprof's predicted pairs.

usage: ddp_check.py LAYOUTPROF SAMPLES_DIR WORK_DIR   (run with the torch that matches the
       LibTorch layoutprof was built against)
"""

import importlib.util
import json
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_SAMPLES = os.path.join(HERE, "..", "..", "samples", "make_samples.py")
STEPS = 3


def child(rank: int, port: int, path: str, specs, unused: bool) -> None:
    import warnings
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    spec = importlib.util.spec_from_file_location("make_samples", MAKE_SAMPLES)
    samples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(samples)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    module = torch.jit.load(path)
    module.train()
    model = DDP(module, find_unused_parameters=unused)
    torch.manual_seed(0)
    inputs = [samples.make_input(s) for s in specs]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(STEPS):
            out = model(*inputs)
            torch.manual_seed(1)
            out.backward(torch.randn(out.shape))
            for p in module.parameters():
                p.grad = None
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print(json.dumps({"warnings": [str(w.message) for w in caught]}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ddp_warnings(path: str, specs, unused: bool) -> str:
    """Both ranks' output (stdout and stderr: C++ warnings that bypass Python's go there)."""
    port = free_port()
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "RANK", str(port), path,
           json.dumps(specs), "1" if unused else "0"]
    procs = [subprocess.Popen([c if c != "RANK" else str(r) for c in cmd], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
             for r in (0, 1)]
    text = ""
    for p in procs:
        out, err = p.communicate(timeout=300)
        if p.returncode != 0:
            raise SystemExit(f"DDP run of {path} failed (exit {p.returncode}):\n{err}")
        for line in out.splitlines():
            try:
                text += "\n".join(json.loads(line)["warnings"]) + "\n"
            except (ValueError, KeyError, TypeError):
                text += line + "\n"
        text += err
    return text


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], json.loads(sys.argv[5]), sys.argv[6] == "1")
        return 0
    layoutprof, samples_dir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    manifest = json.load(open(os.path.join(samples_dir, "manifest.json")))
    failures = 0
    checked = 0
    for entry in manifest["samples"]:
        if "grads" not in entry:
            continue
        path = os.path.join(samples_dir, entry["file"])
        report = os.path.join(work, entry["name"] + ".json")
        cmd = [layoutprof, path, "--backward", "--no-counters", "--json", report]
        for spec in entry["inputs"]:
            cmd += ["--input", spec]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        params = json.load(open(report))["parameters"]
        predicted = [p["ddp_warning"] for p in params if p["ddp_warning"]]
        unused = any(p["grad_verdict"] == "no_grad" for p in params)
        text = ddp_warnings(path, entry["inputs"], unused)
        warned = "Grad strides do not match bucket view strides" in text
        # "bucket_view.sizes() = [...], strides() = [...] (Triggered internally at ...)"
        lines = [line.strip().split(" (Triggered")[0] for line in text.splitlines()
                 if line.strip().startswith(("grad.sizes() =", "bucket_view.sizes() ="))]
        printed = [lines[i:i + 2] for i in range(0, len(lines) - 1, 2)]
        ok = warned == bool(predicted) and all(pair in predicted for pair in printed)
        if warned and not printed:
            ok = False  # warned without the lines: nothing to compare
        checked += 1
        failures += not ok
        print(f"{entry['name']}: layoutprof predicts {len(predicted)} parameter(s) DDP warns about; "
              f"DDP {'warned' if warned else 'did not warn'}"
              + (f", printing {printed[0]}" if printed else "") + (" -> OK" if ok else " -> MISMATCH"))
        if not ok:
            print(f"  predicted: {predicted}\n  DDP output:\n{text}")
    if checked == 0:
        print("no training samples in the manifest")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
