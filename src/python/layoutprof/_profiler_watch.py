"""PyTorch's profiler and layoutprof's GPU tracer share CUPTI's Activity API, which is one per
process: its buffer callbacks and enabled record kinds. The profiler's calls into its C++ half
(torch.autograd.profiler's _prepare_profiler, _enable_profiler and _disable_profiler, which
torch.profiler.profile goes through too) are wrapped from the moment layoutprof is imported, so
that a session prepared before a profile begins is known: a schedule's warm-up has Kineto's
CUPTI activity on while the profiler does not count as enabled. While a profile records, before
a session that traces CUDA activity prepares or starts, layoutprof's tracer stops (the call so
far kept), and it starts again with the call after that session ends. The calls in between are
reported as not traced: the profiler's own trace has their GPU time. A session prepared or
running as the profile begins pauses the tracer from the start. A session prepared before
layoutprof was imported is seen only once it is enabled.

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


class _EntryPoints:
    """The process's one wrapper of the profiler's entry points: whether a session that traces
    CUDA is prepared or running (`cuda_session`), and the watches to tell as that changes."""

    def __init__(self):
        self.cuda_session = False
        self.watches = []

    def ensure_wrapped(self):
        """Wraps each entry point that is not wrapped already: at import, and again where
        something replaced one since (another tool, a test's stand-in). False on a torch
        without them (then nothing is watched)."""
        if not all(hasattr(_autograd_profiler, name) for name in _NAMES):
            return False
        for name in _NAMES:
            current = getattr(_autograd_profiler, name)
            if not getattr(current, "_layoutprof_wrapped", False):
                setattr(_autograd_profiler, name, self._wrap(name, current))
        return True

    def _wrap(self, name, original):
        if name == "_disable_profiler":
            def call(*args, **kwargs):
                try:
                    return original(*args, **kwargs)
                finally:
                    self.cuda_session = False
                    for watch in list(self.watches):
                        watch.profiler_ended()
        else:
            def call(config, activities, *args, **kwargs):
                if _traces_cuda(activities):
                    self.cuda_session = True
                    for watch in list(self.watches):
                        watch.profiler_began()
                return original(config, activities, *args, **kwargs)
        call._layoutprof_wrapped = True
        call.__wrapped__ = original
        return call


_ENTRY_POINTS = _EntryPoints()
_ENTRY_POINTS.ensure_wrapped()


class ProfilerWatch:
    def __init__(self):
        self._session = lambda: None  # the profile's current native session
        self._profiling = False  # a profiler session that traces CUDA is on
        self._installed = False

    def install(self, session):
        """session(): the profile's native session now."""
        self._session = session
        if not _ENTRY_POINTS.ensure_wrapped():
            return  # another torch: left alone (the report's notes say nothing then)
        self._installed = True
        _ENTRY_POINTS.watches.append(self)
        if _ENTRY_POINTS.cuda_session or _profiler_running():
            self.profiler_began()

    def remove(self):
        if self._installed:
            _ENTRY_POINTS.watches.remove(self)
        self._installed = False
        self._session = lambda: None

    def session_replaced(self):
        """The profile's session is a new one: paused too while a profiler session runs."""
        if self._profiling:
            self.profiler_began()

    def profiler_began(self):
        self._profiling = True
        session = self._session()
        if session is not None:
            session.pause_gpu(WHILE_PROFILING)

    def profiler_ended(self):
        if self._profiling:
            self._profiling = False
            session = self._session()
            if session is not None:
                session.resume_gpu()
