"""A CUDA graph's replay launches every kernel it holds with one cudaGraphLaunch, and no op event
marks it. While a profile records, torch.cuda.CUDAGraph.replay (which cudagraph trees, the
graphs of torch.compile's mode="reduce-overhead", call too) runs inside an op of layoutprof's
own, layoutprof::cuda_graph_replay: the recorder sees the replay in its place among the ops,
with its module and line, and the GPU tracer charges the graph's kernels to it, each named with
its graph and node ids."""
import threading

import torch

OP = "layoutprof::cuda_graph_replay"
_library = None  # the op's definition: one per process, kept for its life
_token = None    # the op's tensor argument (it dispatches on the CPU key)
_replaying = threading.local()  # the graph and replay of the op running on this thread


def _define():
    global _library, _token
    if _library is None:
        library = torch.library.Library("layoutprof", "DEF")
        library.define("cuda_graph_replay(Tensor token) -> ()")
        library.impl("cuda_graph_replay", _run, "CPU")
        _library, _token = library, torch.empty(0)


def _run(_token_arg):
    graph, replay = _replaying.current
    replay(graph)


def in_op(replay):
    """replay(graph), run inside the op."""
    def replay_in_op(graph):
        _define()
        _replaying.current = (graph, replay)
        try:
            torch.ops.layoutprof.cuda_graph_replay(_token)
        finally:
            _replaying.current = None
    return replay_in_op


class GraphReplays:
    """Wraps torch.cuda.CUDAGraph.replay while installed; remove() puts back what was there."""
    _MISSING = object()

    def __init__(self):
        self._installed = False
        self._own = self._MISSING  # the class's own replay before (missing: inherited)

    def install(self):
        cls = getattr(torch.cuda, "CUDAGraph", None)
        if cls is None or not hasattr(torch, "library") or self._installed:
            return
        self._own = cls.__dict__.get("replay", self._MISSING)
        cls.replay = in_op(cls.replay)
        self._installed = True

    def remove(self):
        if not self._installed:
            return
        cls = torch.cuda.CUDAGraph
        if self._own is self._MISSING:
            del cls.replay
        else:
            cls.replay = self._own
        self._installed = False
