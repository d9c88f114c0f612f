"""The Python package on a CUDA device (scripts/gpu-check runs it on a GPU machine): an eager
training step, the compiled cases of samples/sample_compiled.py with their tensors on the GPU
(inductor's Triton kernels), and a model compiled with mode="reduce-overhead" (CUDA graphs).
Each case runs under layoutprof.profile with one warm-up step; its report goes to DIR/NAME.json
and one row of gpu-check's table to stdout:

    in_process_cuda.py DIR
    in_process_cuda.py --ladder      each step of a recording, from an import to a CUDA training
                                     step, in a process of its own: the first that crashes is named

The rows say what the report holds, not what it should: a GPU run is read, then fixed on the
CPU machine. Needs the samples folder on sys.path (for sample_compiled).
"""
import json
import os
import sys
import time
import traceback

import torch
from torch import nn

import layoutprof

STEPS = 3
DEVICE = os.environ.get("GPU_CHECK_DEVICE", "cuda")  # cpu: a dry run of this script on the CPU machine


class TrainNet(nn.Module):
    """A channels_last batch into NCHW weights, and a reshape of a transposed view."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 32, 3, padding=1)
        self.c2 = nn.Conv2d(32, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 16, 10)

    def forward(self, x):
        y = self.c2(self.c1(x).relu()).relu()            # [n, 32, 16, 16]
        tokens = y.flatten(2).transpose(1, 2)             # [n, 256, 32]
        z = tokens.reshape(x.shape[0], 16, -1).mean(1)    # a copy: not viewable
        return self.fc(z)


def eager_training_step(mark):
    torch.manual_seed(0)
    model = TrainNet().to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(STEPS):
        x = torch.randn(8, 3, 16, 16, device=DEVICE).to(memory_format=torch.channels_last)
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
        mark()


def reduce_overhead(mark):
    import sample_compiled
    torch.manual_seed(0)
    model = torch.compile(sample_compiled.SmallCnn().to(DEVICE).eval(), mode="reduce-overhead")
    x = torch.randn(8, 3, 16, 16, device=DEVICE)
    with torch.no_grad():
        for _ in range(STEPS + 2):  # cudagraph trees record on the 2nd call, replay from the 3rd
            model(x)
            mark()


def profiler_inside(mark):
    """torch.profiler started inside a block: layoutprof's GPU tracer pauses for it, and its CUDA
    kernel events are its own, counted for the table (the report says which calls went untraced)."""
    model = TrainNet().to(DEVICE)
    x = torch.randn(8, 3, 16, 16, device=DEVICE)
    for _ in range(STEPS):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as prof:
            model(x).sum().backward()
            torch.cuda.synchronize()
        mark()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    print(f"torch.profiler inside a block: {len(kernels)} CUDA events in its last step", file=sys.stderr)
    if not kernels:
        raise RuntimeError("torch.profiler inside a layoutprof block saw no CUDA events")


def profiler_kernels(model, x):
    """A torch.profiler session over one training step on its own: its CUDA kernel events."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        model(x).sum().backward()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def profiler_orders():
    """torch.profiler before a block and after it, in one process: each keeps its CUDA events, and
    the block between them has GPU time per op. One table row."""
    model = TrainNet().to(DEVICE)
    x = torch.randn(8, 3, 16, 16, device=DEVICE)
    before = profiler_kernels(model, x)
    p = layoutprof.profile(warmup=1)
    with p:
        for _ in range(STEPS):
            model(x).sum().backward()
            p.step()
    after = profiler_kernels(model, x)
    gpu = p.report["summary"].get("gpu") or {}
    print(f"| in process: torch.profiler before and after a block | {DEVICE} | {p.report['summary']['ops']} | - | "
          f"{gpu.get('gpu_ns', 0) / 1e6:.3f} | - | profiler CUDA events before {before}, after {after} | "
          f"{'ok' if before and after and gpu.get('gpu_ns', 0) > 0 else 'FAILED'} |", flush=True)


def cases():
    import sample_compiled
    out = [("eager_training_step", eager_training_step)]
    out += [("compiled_" + c.name, c.run) for c in sample_compiled.CASES]
    out.append(("compiled_reduce_overhead", reduce_overhead))
    if DEVICE == "cuda":
        out.append(("torch_profiler_inside", profiler_inside))
    return out


def row(name, report, seconds):
    s = report["summary"]
    gpu = s.get("gpu") or {}
    compiled = report.get("compiled") or {}
    names = report["ops"].get("names", [])
    kernels = sum(1 for n in names if "triton_" in n or "cpp_fused" in n)
    graphs = "-" if not compiled else (f"{len(compiled.get('graphs', []))} graphs, "
                                        f"{len(compiled.get('recompiles', []))} recompiles, "
                                        f"{compiled.get('summary', {}).get('copies_per_call', '-')} copies/call")
    gpu_text = (f"{gpu['gpu_ns'] / 1e6:.3f}" if gpu.get("gpu_ns", 0) > 0 else
                "; ".join(x for x in report["run"].get("not_measured", []) if "GPU" in x or "gpu" in x)[:60] or "-")
    print(f"| in process: {name} | {DEVICE} | {s['ops']} | {s['copies']['implicit_layout']} | {gpu_text} | "
          f"{gpu.get('copy_gpu_ns', 0) / 1e6:.3f} | kernel names {kernels}; {graphs} | "
          f"{report['run']['status']} ({seconds:.0f} s) |", flush=True)


LADDER = [
    ("import", "import layoutprof"),
    # The session's start, one part at a time: its one process-wide act (RecordFunction's
    # callbacks) alone, then the recent-op rings, the perf counters, the GPU tracer.
    ("session, nothing on", "p = layoutprof.profile(recent_ops=0, counters=False, gpu=False)\nwith p:\n"
                            "    torch.ones(3).add(1)\n    p.step()"),
    ("session + recent ops", "p = layoutprof.profile(counters=False, gpu=False)\nwith p:\n"
                             "    torch.ones(3).add(1)\n    p.step()"),
    ("session + counters", "p = layoutprof.profile(gpu=False)\nwith p:\n    torch.ones(3).add(1)\n    p.step()"),
    ("cpu op", "p = layoutprof.profile()\nwith p:\n    torch.ones(3).add(1)\n    p.step()"),
    ("cuda op", "p = layoutprof.profile()\nwith p:\n    torch.ones(3, device='cuda').add(1)\n    p.step()"),
    ("cuda forward", "m = TrainNet().cuda()\np = layoutprof.profile()\nwith p:\n"
                     "    m(torch.randn(2, 3, 16, 16, device='cuda'))\n    p.step()"),
    ("cuda backward, no profile", "m = TrainNet().cuda()\nm(torch.randn(2, 3, 16, 16, device='cuda')).sum().backward()"),
    ("cuda backward", "m = TrainNet().cuda()\np = layoutprof.profile()\nwith p:\n"
                      "    m(torch.randn(2, 3, 16, 16, device='cuda')).sum().backward()\n    p.step()"),
    ("cuda training step, warm-up", "p = layoutprof.profile(warmup=1)\nwith p:\n"
                                    "    eager_training_step(p.step)"),
]


def ladder():
    """Each rung in its own process (a crash kills only it), with Python's stack on a fatal signal."""
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    for name, code in LADDER:
        prog = (f"import sys; sys.path.insert(0, {here!r})\nimport torch\nimport layoutprof\n"
                f"from in_process_cuda import *\n{code}\nprint('ok')")
        out = subprocess.run([sys.executable, "-X", "faulthandler", "-c", prog], capture_output=True, text=True,
                             timeout=300)
        print(f"in-process ladder: {name}: exit {out.returncode}", flush=True)
        if out.returncode != 0:
            print(out.stderr[-3000:], flush=True)
            if out.returncode < 0:
                native_stack(prog)
            return


def native_stack(prog):
    """A crashed rung again under gdb (cuda-gdb where that is the one there): the native stack."""
    import shutil
    import subprocess
    debugger = shutil.which("gdb") or shutil.which("cuda-gdb")
    if debugger is None:
        print("in-process ladder: no gdb here for the native stack", flush=True)
        return
    try:
        out = subprocess.run([debugger, "-batch", "-ex", "run", "-ex", "bt 40", "--args", sys.executable, "-c", prog],
                             capture_output=True, text=True, timeout=180)
        lines = [l for l in out.stdout.splitlines() if l.startswith("#") or "signal" in l.lower()]
        print("\n".join(lines[-60:]), flush=True)
    except subprocess.TimeoutExpired:
        print(f"in-process ladder: {debugger} took over 180 s", flush=True)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(out_dir, "inductor"))
    for name, run in cases():
        torch._dynamo.reset()
        start = time.time()
        previous = torch.get_default_device()
        torch.set_default_device(DEVICE)  # the compiled cases make their tensors on the GPU
        try:
            p = layoutprof.profile(warmup=1)
            with p:
                run(p.step)
            if DEVICE == "cuda":
                torch.cuda.synchronize()
            with open(os.path.join(out_dir, name + ".json"), "w") as f:
                json.dump(p.report, f)
            with open(os.path.join(out_dir, name + ".txt"), "w") as f:
                f.write(p.text())
            row(name, p.report, time.time() - start)
        except Exception as e:  # noqa: BLE001  # every case gets its row
            traceback.print_exc(file=sys.stderr)
            first = str(e).splitlines()[0][:120] if str(e) else ""
            print(f"| in process: {name} | {DEVICE} | - | - | - | - | - | raised {type(e).__name__}: {first} |", flush=True)
        finally:
            torch.set_default_device(previous)
    if DEVICE == "cuda":
        profiler_orders()


if __name__ == "__main__":
    if sys.argv[1] == "--ladder":
        ladder()
    else:
        main(sys.argv[1])
