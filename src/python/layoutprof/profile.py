"""layoutprof.profile(): records the ops an eager model runs inside a `with` block.

Calls are steps: the block is one recorded call unless the code marks steps with p.step()
(as torch.profiler's schedule does). The first `warmup` steps run unrecorded, then `calls`
steps are recorded (all of them when calls is None).
"""
import json as _json

import torch

from . import _native
from ._module_hooks import ModuleHooks


def _one_line(exc):
    text = f"{type(exc).__name__}: {exc}"
    return text.splitlines()[0] if text else type(exc).__name__


class profile:
    """with layoutprof.profile(json="r.json", html="r.html", text="-") as p: model(x)

    json, html, text: files to write the report to when the block ends ("-": stdout).
    warmup: steps (p.step()) run before the first recorded one; calls: steps recorded (None: all).
    name: what the report calls the recorded code (default: the model's class).
    After the block, p.report is the JSON report as a dict.
    """

    def __init__(self, json=None, html=None, text=None, warmup=0, calls=None, name=None, max_ops=0):
        if warmup < 0 or (calls is not None and calls < 1):
            raise ValueError("layoutprof.profile: warmup must be >= 0 and calls >= 1")
        self._outputs = [("json", json), ("html", html), ("text", text)]
        self._warmup, self._calls, self._name, self._max_ops = warmup, calls, name, max_ops
        self._session = None
        self._hooks = ModuleHooks()
        self._step = 0
        self.report = None

    def __enter__(self):
        self._session = _native.Session(name=self._name or "eager", torch_version=torch.__version__,
                                        threads=torch.get_num_threads(), training=torch.is_grad_enabled(),
                                        warmup=self._warmup, max_ops=self._max_ops)
        self._hooks.install()
        self._begin_if_recorded()
        return self

    def step(self):
        """Ends the current step and begins the next."""
        if self._session.in_call:
            self._session.end_call()
        self._step += 1
        self._begin_if_recorded()

    def __exit__(self, exc_type, exc, _tb):
        self._hooks.remove()
        if self._session.in_call:
            self._end_last_step(exc)
        root = self._hooks.root
        if root is not None:
            self._session.describe_model(self._name or type(root).__name__, "train" if root.training else "eval")
        report = self._session.finish()
        for fmt, path in self._outputs:
            if path is not None:
                report.write(fmt, path)
        self.report = _json.loads(report.text("json"))
        return False  # what the block raised goes on

    def _end_last_step(self, exc):
        """A step begun by the last p.step() that ran nothing is not a call: it is dropped."""
        ran_nothing = self._hooks.root_calls == self._root_calls_at_begin
        if exc is None and ran_nothing and self._session.calls > 0:
            self._session.drop_call()
        else:
            self._session.end_call("" if exc is None else _one_line(exc))

    def _begin_if_recorded(self):
        recorded = self._step - self._warmup
        if recorded >= 0 and (self._calls is None or recorded < self._calls):
            self._root_calls_at_begin = self._hooks.root_calls
            self._session.begin_call()
