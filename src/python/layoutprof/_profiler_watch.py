"""PyTorch's profiler and layoutprof's GPU tracer share CUPTI's Activity API, which is one per
process: its buffer callbacks and enabled record kinds. While a profile records, the profiler's
calls into its C++ half (torch.autograd.profiler's _prepare_profiler, _enable_profiler and
_disable_profiler, which torch.profiler.profile goes through too) are wrapped: before a session
that traces CUDA activity prepares or starts, layoutprof's tracer stops (the call so far kept),
and it starts again with the call after that session ends. The calls in between are reported as
not traced: the profiler's own trace has their GPU time. A session already running as the
profile begins pauses the tracer from the start.

The watch holds no session: it asks for the profile's current one each time (a by="call"
profile that turns to steps replaces its session, and a session kept alive past that keeps its
recorder's callbacks too)."""
import torch
import torch.autograd.profiler as _autograd_profiler

_NAMES = ("_prepare_profiler", "_enable_profiler", "_disable_profiler")
WHILE_PROFILING = "not traced while a torch.profiler session traced CUDA activity (its own trace has that GPU time)"


def _traces_cuda(activities):
    from torch.profiler import ProfilerActivity
    try:
        return ProfilerActivity.CUDA in activities
    except TypeError:  # not a collection: take it as tracing the GPU, the careful side
        return True


def _profiler_running():
    running = getattr(_autograd_profiler, "_is_profiler_enabled", False)
    enabled = getattr(torch.autograd, "_profiler_enabled", None)
    return bool(running or (enabled is not None and enabled()))


class ProfilerWatch:
    def __init__(self):
        self._session = lambda: None  # the profile's current native session
        self._original = {}
        self._profiling = False  # a profiler session that traces CUDA is on

    def install(self, session):
        """session(): the profile's native session now."""
        self._session = session
        for name in _NAMES:
            if hasattr(_autograd_profiler, name):
                self._original[name] = getattr(_autograd_profiler, name)
        if len(self._original) != len(_NAMES):
            self._original = {}  # another torch: left alone (the report's notes say nothing then)
            return
        _autograd_profiler._prepare_profiler = self._wrap_start(self._original["_prepare_profiler"])
        _autograd_profiler._enable_profiler = self._wrap_start(self._original["_enable_profiler"])
        _autograd_profiler._disable_profiler = self._wrap_stop(self._original["_disable_profiler"])
        if _profiler_running():
            self._pause()

    def remove(self):
        for name, original in self._original.items():
            setattr(_autograd_profiler, name, original)
        self._original = {}
        self._session = lambda: None

    def session_replaced(self):
        """The profile's session is a new one: paused too while a profiler session runs."""
        if self._profiling:
            self._pause()

    def _pause(self):
        self._profiling = True
        session = self._session()
        if session is not None:
            session.pause_gpu(WHILE_PROFILING)

    def _wrap_start(self, original):
        def start(config, activities, *args, **kwargs):
            if _traces_cuda(activities):
                self._pause()
            return original(config, activities, *args, **kwargs)
        return start

    def _wrap_stop(self, original):
        def stop(*args, **kwargs):
            try:
                return original(*args, **kwargs)
            finally:
                if self._profiling:
                    self._profiling = False
                    session = self._session()
                    if session is not None:
                        session.resume_gpu()
        return stop
