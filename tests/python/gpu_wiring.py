"""The package's GPU wiring, checked where there is no GPU (scripts/package-check.sh runs this):

- a profile on a machine without a CUDA device says so in one line, and gpu=False says that;
- torch.profiler and layoutprof's GPU tracer share CUPTI: while a profile records, a profiler
  session that traces CUDA pauses the tracer before it prepares or starts, and resumes it after
  it ends, in each order (started inside the block, running as the block begins, prepared
  for a schedule's warm-up before it); a session that traces the CPU only leaves it alone; after
  the block a profiler session pauses nothing;
- a real torch.profiler session (CPU activity) inside a profile: both record the same ops;
- a CUDA graph's replay runs inside the op layoutprof::cuda_graph_replay, recorded in its
  place, and torch.cuda.CUDAGraph.replay is its own again after the block.

The same with a GPU (real CUPTI, each coexistence order, graph kernels charged to the replay):
tests/gpu/in_process_cuda.py. Exits 1 naming each failure.
"""
import sys

import torch
import torch.autograd.profiler as autograd_profiler
from torch.profiler import ProfilerActivity

import layoutprof
from layoutprof import _graph_replays
from layoutprof._profiler_watch import _ENTRY_POINTS, ProfilerWatch, WHILE_PROFILING

failures = []


def fail(message):
    failures.append(message)
    print(f"FAILED: {message}")


def not_measured(report, start):
    return [line for line in report["run"]["not_measured"] if line.startswith(start)]


def check_no_device_and_turned_off():
    model = torch.nn.Linear(4, 4)
    for gpu, want in ((True, "GPU time: no CUDA device in this process"),
                      (False, "GPU time: turned off (gpu=False)")):
        with torch.no_grad(), layoutprof.profile(counters=False, gpu=gpu, by="call") as p:
            model(torch.randn(2, 4))
        if torch.cuda.is_available():
            return  # a GPU machine: tests/gpu/in_process_cuda.py
        if not_measured(p.report, "GPU time") != [want]:
            fail(f"gpu={gpu}: GPU time lines {not_measured(p.report, 'GPU time')}, want [{want!r}]")
    print("GPU time without a device, and turned off: one line each")


class StandInSession:
    """What the watch calls on the native session."""
    def __init__(self):
        self.calls = []

    def pause_gpu(self, why):
        self.calls.append(("pause", why))

    def resume_gpu(self):
        self.calls.append(("resume",))


def with_stand_in_profiler(body):
    """body(), with the profiler's C++ entry points stood in for (their real ones would start
    Kineto with CUDA activity on a machine without a GPU)."""
    names = ("_prepare_profiler", "_enable_profiler", "_disable_profiler")
    real = {n: getattr(autograd_profiler, n) for n in names}
    ran = []
    autograd_profiler._prepare_profiler = lambda config, activities, **kw: ran.append("prepare")
    autograd_profiler._enable_profiler = lambda config, activities, *a: ran.append("enable")
    autograd_profiler._disable_profiler = lambda: ran.append("disable")
    _ENTRY_POINTS.ensure_wrapped()  # as a profile finds them replaced: wrapped again
    try:
        return body(ran)
    finally:
        for n, f in real.items():
            setattr(autograd_profiler, n, f)


def check_profiler_orders():
    cuda = {ProfilerActivity.CPU, ProfilerActivity.CUDA}

    def started_inside(ran):
        session, watch = StandInSession(), ProfilerWatch()
        watch.install(lambda: session)
        autograd_profiler._prepare_profiler(None, {ProfilerActivity.CPU})
        cpu_only = list(session.calls)
        autograd_profiler._prepare_profiler(None, cuda)
        paused_first = session.calls == [("pause", WHILE_PROFILING)] and ran == ["prepare", "prepare"]
        autograd_profiler._enable_profiler(None, cuda)
        autograd_profiler._disable_profiler()
        watch.remove()
        calls, ran_in_block = len(session.calls), list(ran)
        autograd_profiler._prepare_profiler(None, cuda)  # after the block: nothing to pause
        autograd_profiler._disable_profiler()
        restored = len(session.calls) == calls
        if cpu_only or not paused_first or session.calls[-1] != ("resume",) or not restored or \
                ran_in_block != ["prepare", "prepare", "enable", "disable"]:
            fail(f"torch.profiler started inside a block: calls {session.calls}, profiler ran {ran_in_block}, "
                 f"CPU-only session paused it: {bool(cpu_only)}, left alone after the block: {restored}")

    def running_before(ran):
        session, watch = StandInSession(), ProfilerWatch()
        autograd_profiler._is_profiler_enabled = True
        try:
            watch.install(lambda: session)
        finally:
            autograd_profiler._is_profiler_enabled = False
        autograd_profiler._disable_profiler()
        watch.remove()
        if session.calls != [("pause", WHILE_PROFILING), ("resume",)]:
            fail(f"torch.profiler running as the block began: calls {session.calls}")

    def prepared_before(ran):
        # A schedule's warm-up: Kineto's CUPTI activity is on, the profiler not yet enabled.
        session, watch = StandInSession(), ProfilerWatch()
        autograd_profiler._prepare_profiler(None, cuda)
        watch.install(lambda: session)
        paused_first = session.calls == [("pause", WHILE_PROFILING)]
        autograd_profiler._enable_profiler(None, cuda)
        autograd_profiler._disable_profiler()
        watch.remove()
        if not paused_first or session.calls[-1] != ("resume",) or ran != ["prepare", "enable", "disable"]:
            fail(f"torch.profiler prepared (warm-up) as the block began: calls {session.calls}, profiler ran {ran}")

    with_stand_in_profiler(started_inside)
    with_stand_in_profiler(running_before)
    with_stand_in_profiler(prepared_before)
    print("torch.profiler and the GPU tracer: paused before a CUDA session, resumed after it, in each order "
          "(inside the block, running before it, prepared for a warm-up before it)")


def check_real_profiler_inside():
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    with torch.no_grad(), layoutprof.profile(counters=False, by="call") as p:
        with torch.profiler.profile(activities=[ProfilerActivity.CPU]) as prof:
            model(torch.randn(2, 8))
    theirs = {e.key for e in prof.key_averages()}
    ops = p.report["ops"]
    ours = {ops["names"][row[1]] for row in ops["rows"]}
    if not {"aten::linear", "aten::relu"} <= theirs & ours:
        fail(f"torch.profiler inside a profile: it saw {sorted(theirs)[:8]}, layoutprof {sorted(ours)}")
    print("torch.profiler (CPU) inside a profile: both recorded aten::linear and aten::relu")


def check_graph_replay_op():
    replayed = []
    replay = _graph_replays.in_op(lambda graph: replayed.append(graph))
    model = torch.nn.Linear(4, 4)
    with torch.no_grad(), layoutprof.profile(counters=False) as p:  # one step: the block
        model(torch.randn(2, 4))
        replay("graph")
    ops = p.report["ops"]
    names = [ops["names"][row[1]] for row in ops["rows"]]
    if replayed != ["graph"] or _graph_replays.OP not in names:
        fail(f"a graph replay: replayed {replayed}, ops {names}")
    cls = getattr(torch.cuda, "CUDAGraph", None)
    if cls is not None and "replay_in_op" in getattr(cls.replay, "__qualname__", ""):
        fail("torch.cuda.CUDAGraph.replay is still wrapped after the block")
    print(f"a CUDA graph's replay is the op {_graph_replays.OP}, recorded in its place")


def main():
    check_no_device_and_turned_off()
    check_profiler_orders()
    check_real_profiler_inside()
    check_graph_replay_op()
    print(f"gpu_wiring: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
