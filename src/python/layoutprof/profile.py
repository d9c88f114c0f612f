"""layoutprof.profile(): records the ops an eager model runs inside a `with` block.

Which calls are recorded: by steps (the default), the block is one recorded call unless the
code marks steps with p.step(), as torch.profiler's schedule does; by="call" counts the
outermost module's forward() calls instead (what `python -m layoutprof script.py` uses, since
it cannot change the script). Either way the first `warmup` steps or calls run unrecorded,
then `calls` are recorded (all of them when calls is None).
"""
import json as _json

import torch

from . import _native
from ._module_hooks import ModuleHooks


def _failure(exc):
    """What a block's exception says in the report, in one line ("" for none, or sys.exit():
    a script's exit code is its own)."""
    if exc is None or isinstance(exc, SystemExit):
        return ""
    text = f"{type(exc).__name__}: {exc}"
    return text.splitlines()[0]


class profile:
    """with layoutprof.profile(json="r.json", html="r.html", text="-") as p: model(x)

    json, html, text: files to write the report to when the block ends ("-": stdout).
    warmup: steps (or calls, by="call") run before the first recorded one; calls: how many are
    recorded (None: all). by: "step" (p.step() marks them) or "call" (the model's forward calls).
    name: what the report calls the recorded code (default: the model's class).
    After the block, p.report is the JSON report as a dict, p.text() the text report.
    """

    def __init__(self, json=None, html=None, text=None, warmup=0, calls=None, by="step", name=None, max_ops=0):
        if warmup < 0 or (calls is not None and calls < 1):
            raise ValueError("layoutprof.profile: warmup must be >= 0 and calls >= 1")
        if by not in ("step", "call"):
            raise ValueError(f"layoutprof.profile: by={by!r}: 'step' or 'call'")
        self._outputs = [("json", json), ("html", html), ("text", text)]
        self._warmup, self._calls, self._by, self._name, self._max_ops = warmup, calls, by, name, max_ops
        self._session = None
        self._hooks = ModuleHooks()
        self._index = 0  # the step, or the model's call, under way
        self._native_report = None
        self._failed = False  # a recorded call raised: no call is recorded after it
        self.report = None

    def __enter__(self):
        self._session = _native.Session(name=self._name or "eager", torch_version=torch.__version__,
                                        threads=torch.get_num_threads(), autograd=torch.is_grad_enabled(),
                                        warmup=self._warmup, max_ops=self._max_ops)
        if self._by == "call":
            self._hooks.on_model_call(self._model_call_begins, self._model_call_ends)
        self._hooks.install()
        if self._by == "step":
            self._begin_if_recorded()
        return self

    def step(self):
        """Ends the current step and begins the next."""
        if self._by != "step":
            raise RuntimeError("layoutprof.profile(by='call') counts the model's calls: p.step() has no use there")
        if self._session.in_call:
            self._session.end_call()
        self._index += 1
        self._begin_if_recorded()

    def __exit__(self, exc_type, exc, _tb):
        self._hooks.remove()
        if self._session.in_call:
            self._end_last(exc)
        elif _failure(exc) and not self._failed:
            self._session.fail(_failure(exc))
        root = self._hooks.root
        if root is not None:
            self._session.describe_model(self._name or type(root).__name__, "train" if root.training else "eval")
        self._native_report = self._session.finish()
        for fmt, path in self._outputs:
            if path is not None:
                self._native_report.write(fmt, path)
        self.report = _json.loads(self._native_report.text("json"))
        return False  # what the block raised goes on

    def text(self):
        """The text report (as the command prints it), once the block is over."""
        return self._native_report.text("text") if self._native_report is not None else ""

    def _end_last(self, exc):
        """The call open as the block ends: it failed if the block raised; a step begun by the
        last p.step() that ran nothing is no call, and is dropped."""
        ran_nothing = self._hooks.root_calls == self._root_calls_at_begin
        if _failure(exc) == "" and self._by == "step" and ran_nothing and self._session.calls > 0:
            self._session.drop_call()
        else:
            self._session.end_call(_failure(exc))

    def _model_call_begins(self):
        self._begin_if_recorded()

    def _model_call_ends(self, error):
        if self._session.in_call:
            self._session.end_call(error)
            self._failed = bool(error)
        self._index += 1

    def _begin_if_recorded(self):
        recorded = self._index - self._warmup
        if not self._failed and recorded >= 0 and (self._calls is None or recorded < self._calls):
            self._root_calls_at_begin = self._hooks.root_calls
            self._session.begin_call()
