"""layoutprof.profile(): records the ops an eager model runs inside a `with` block.

Which calls are recorded: by steps (the default), the block is one recorded call unless the
code marks steps with p.step() (or layoutprof.step()), as torch.profiler's schedule does;
by="call" counts the outermost module's forward() calls instead (what `python -m layoutprof
script.py` uses, since it cannot change the script) until the code marks a step: from that
first mark on, steps are counted, everything before it being step 0 (a warm-up step, never
recorded: it began before the count did). Either way the first
`warmup` steps or calls run unrecorded, then `calls` are recorded (all of them when calls is
None). A model call whose output needs gradients is a training step: its recorded call goes on
through the loss and the backward pass, until the backward pass is done (or the model is called
again, or the block ends).

With autograd on, the backward pass of a recorded call begins with the engine's first backward
function: its ops are charged to their forward ops, and the first recorded call gives every
parameter's gradient verdict. In a torchrun job of several processes, each rank writes its own
reports ("r.json" becomes "r.rank0.json"), and DDP's grad-strides warning is recorded from the
block's start. A process forked from the block (a DataLoader worker) records nothing.
"""
import atexit
import json as _json
import linecache
import os
import sys
import threading
from types import FrameType, TracebackType
from typing import Any, Iterable, Literal, Optional, Sequence, Union

import torch

from . import _native, _what_if
from ._compile_api import observer_effects
from ._compile_watch import CompileWatch
from ._ddp import GradWarnings, rank
from ._ddp_buckets import DdpBuckets
from ._layout_warnings import LayoutWarnings
from ._graph_replays import GraphReplays
from ._profiler_watch import ProfilerWatch
from ._warning_tap import WarningTap
from ._module_hooks import ModuleHooks, one_line, tensors_in, unwrapped


_under_way: list["profile"] = []  # the profiles whose blocks are under way in this process, the innermost last


def step() -> None:
    """Marks the end of a step of the profile under way (the innermost `with layoutprof.profile()`
    block, or the script's run under `python -m layoutprof`); a run that counted the model's calls
    counts the marked steps from here on. Does nothing when no profile is under way, so a script
    can keep its marks when it runs unprofiled."""
    if _under_way:
        _under_way[-1].step()


class Terminated(BaseException):
    """SIGTERM, as python -m layoutprof raises it so that the reports are written."""


def _interrupted(exc: Optional[BaseException]) -> Optional[str]:
    """The signal that ended the block: "SIGINT" (KeyboardInterrupt), "SIGTERM", or None."""
    if isinstance(exc, KeyboardInterrupt):
        return "SIGINT"
    return "SIGTERM" if isinstance(exc, Terminated) else None


def _failure(exc: Optional[BaseException]) -> str:
    """What a block's exception says in the report, in one line ("" for none, or sys.exit():
    a script's exit code is its own)."""
    return "" if exc is None or isinstance(exc, SystemExit) else one_line(exc)


class profile:
    """with layoutprof.profile(json="r.json", html="r.html", text="-") as p: model(x)

    json, html, text: files to write the report to when the block ends ("-": stdout).
    warmup: steps (or calls, by="call") run before the first recorded one; calls: how many are
    recorded (None: all). by: "step" (p.step() marks them) or "call" (the model's forward calls,
    until the code marks a step: then its steps).
    name: what the report calls the recorded code (default: the model's class).
    lines: read each op's source line from the Python stack (False: module paths only, cheaper).
    accept: birthplaces (and hazards' lines) made on purpose, as "file.py:24" (what --accept
    takes): listed in the report, not counted, not gated.
    counters: perf events sampled over the recorded calls on every thread of the process, per op
    and module, as the command samples them (True: its default events, task-clock and the DTLB
    and cache events the CPU has, task-clock every 20 ms, a tenth of the command's rate, since
    your calls pay for each sample; a list of libpfm4 names: those, as --events takes them,
    "task-clock:period=2000000" for the command's rate; False: none). Sampled figures are means
    over the recorded calls. What cannot open is listed in the report with the reason.
    gpu: GPU time per op through CUPTI, where the process has a CUDA device and layoutprof was
    built with CUPTI; while a torch.profiler session traces CUDA, the calls it overlaps are not
    traced (its trace has them), and the report says so. False: not traced.
    recent_ops: between the recorded calls, each thread's latest ops (this many to twice as many)
    are recorded, so that a failure there (a warm-up step, metrics code) is explained; it costs
    what a recorded call's op costs (scripts/BENCHMARKS.md). 0: none.
    what_if: after the block, the shown call's model and arguments are run again as they were
    and with the fixes of the top `what_if` causes applied, timed in interleaved rounds for at
    most `what_if_budget` seconds (src/python/README.md, What-if); the report holds what they
    measured (its "what_if" block with every call of the rounds, each cause's "what_if"), p.what_if
    the same with every variant in one list.
    0 (the default): not run.
    After the block, p.report is the JSON report as a dict, p.text() the text report.
    """

    def __init__(self, json: Optional[str] = None, html: Optional[str] = None, text: Optional[str] = None,
                 warmup: int = 0, calls: Optional[int] = None, by: str = "step", name: Optional[str] = None,
                 max_ops: int = 0, lines: bool = True, accept: Union[str, Iterable[str]] = (),
                 recent_ops: int = 4096, counters: Union[bool, Sequence[str]] = True, gpu: bool = True,
                 what_if: int = 0, what_if_budget: float = 60.0) -> None:
        if warmup < 0 or (calls is not None and calls < 1):
            raise ValueError("layoutprof.profile: warmup must be >= 0 and calls >= 1")
        if isinstance(what_if, bool) or not isinstance(what_if, int) or what_if < 0 or what_if_budget <= 0:
            raise ValueError(f"layoutprof.profile: what_if={what_if!r}, what_if_budget={what_if_budget!r}: the "
                             "number of causes whose fixes are measured (0: none) and a budget in seconds")
        self._what_if, self._what_if_budget = what_if, float(what_if_budget)
        self._shown_call: Any = None  # the shown call's model and arguments, kept for the what-if
        self.what_if: Optional[dict[str, Any]] = None
        if by not in ("step", "call"):
            raise ValueError(f"layoutprof.profile: by={by!r}: 'step' or 'call'")
        self._outputs = [("json", json), ("html", html), ("text", text)]
        self._warmup, self._calls, self._by, self._name, self._max_ops = warmup, calls, by, name, max_ops
        self._lines = lines
        self._recent_ops = recent_ops
        if isinstance(counters, str) or not isinstance(counters, (bool, list, tuple)):
            raise ValueError(f"layoutprof.profile: counters={counters!r}: True, False or a list of event names")
        self._counters = counters
        self._gpu = bool(gpu)
        self._profiler = ProfilerWatch()  # torch.profiler takes CUPTI: the GPU tracer yields
        self._graphs = GraphReplays()  # a CUDA graph's replay is an op of its own
        self._accept = [str(a) for a in ([accept] if isinstance(accept, str) else accept)]
        self._session: Any = None  # _native.Session once entered
        self._hooks = ModuleHooks()
        self._index = 0  # the step, or the model's call, under way
        self._native_report: Any = None  # _native.Report once the block is over
        self._failed = False  # a recorded call raised: no call is recorded after it
        self._awaited: Optional[object] = None  # the recorded call whose backward pass ends it (by="call")
        self._ddp = GradWarnings()
        self._buckets = DdpBuckets()  # what DDP's grad-strides check compares with
        self._warned = LayoutWarnings()
        self._tap = WarningTap(self._ddp, self._warned)  # shown warnings to both, one hook
        # torch.compile's records over the whole run; a frame's compile is not recorded (its
        # fake-tensor ops are the compiler's).
        self._compiles = CompileWatch(lambda: self._index, _native.pause_thread, self._maker_of)
        self._pid: Optional[int] = None  # the process that records
        self._model: Any = None  # the user's module, once it is known
        self._parameters: Optional[list[tuple[str, torch.Tensor]]] = None  # its named parameters
        self._buffers: Optional[list[tuple[str, torch.Tensor]]] = None  # and its named buffers
        self._root_calls_at_begin = 0
        self.report: Optional[dict[str, Any]] = None

    def __enter__(self) -> "profile":
        if self._session is not None:
            raise RuntimeError("layoutprof.profile: this profile was entered before; make a new one")
        if any(not p._forked() for p in _under_way):
            raise RuntimeError("layoutprof.profile: another profile is under way in this process (an outer block, "
                               "or python -m layoutprof): one records at a time")
        self._session = self._new_session()
        if self._by == "call":
            self._hooks.on_model_call(self._model_call_begins, self._model_call_ends)
        self._hooks.on_model_learnt(self._model_learnt)
        self._hooks.on_model_inputs(self._model_inputs)
        self._hooks.on_model_outputs(self._model_outputs)
        self._pid = os.getpid()
        _native.read_user_lines(self._lines)
        self._tap.install()
        self._compiles.install()
        self._profiler.install(lambda: self._session)
        self._graphs.install()
        self._ddp.unit = self._buckets.unit = "model call" if self._by == "call" else "step"
        self._buckets.install()
        self._hooks.install()
        _under_way.append(self)
        atexit.register(self._at_exit)
        if self._by == "step":
            self._begin_if_recorded()
        return self

    def step(self) -> None:
        """Ends the current step and begins the next. In a by="call" profile, the first mark
        turns it to counting steps: everything before it is step 0."""
        if self._forked():
            return
        if self._by == "call":
            self._count_steps()
        if self._session.in_call:
            self._session.end_call()
        self._index += 1
        self._ddp.step = self._index
        self._begin_if_recorded()

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 _tb: Optional[TracebackType]) -> Literal[False]:
        if not self._close():
            return False  # a forked process: its parent reports
        if _interrupted(exc):
            self._session.interrupt(_interrupted(exc))
        elif self._session.in_call:
            self._end_last(exc)
        elif _failure(exc) and not self._failed:
            self._session.fail(_failure(exc))
        self._report()
        return False  # what the block raised goes on

    def _at_exit(self) -> None:
        """The interpreter exits with the block never ended (a profile entered by hand, never
        exited): its reports are written all the same, status interrupted."""
        if self._close():
            self._session.not_stopped("as the interpreter exited")
            self._report()

    def _close(self) -> bool:
        """The block ends: hooks removed. False in a forked process, which does not report."""
        if self in _under_way:
            _under_way.remove(self)
        atexit.unregister(self._at_exit)
        self._hooks.remove()
        self._buckets.remove()
        self._tap.remove()
        self._compiles.remove()
        self._profiler.remove()
        self._graphs.remove()
        _native.read_user_lines(True)
        return not self._forked()

    def _report(self) -> None:
        """The run's notes, the analysis, and the files asked for."""
        root = self._hooks.root
        if root is not None:
            model = unwrapped(root)
            self._session.describe_model(self._name or type(model).__name__, "train" if model.training else "eval")
        for line in self._ddp.lines(isinstance(root, torch.nn.parallel.DistributedDataParallel)):
            self._session.note_gradient_warning(line)
        buckets = self._buckets.for_call(root, self._warmup)
        if buckets is not None:
            self._session.note_ddp_buckets(*buckets)
        for where, code, text in self._warned.seen:
            self._session.note_layout_warning(where, code, text)
        compiled = self._compiles.report()
        if compiled is not None:
            compiled["observer"] = observer_effects(self._hooks.frames_kept_eager,
                                                    any(e["graphs"] for e in self._compiles.compiles.values()))
            self._session.note_compiled(_json.dumps(compiled))
        self._native_report = self._session.finish()
        self.report = _json.loads(self._native_report.text("json"))
        if self._what_if:
            self._measure_fixes()
        for fmt, path in self._outputs:
            if path is not None:
                self._native_report.write(fmt, rank_path(path))

    def _measure_fixes(self) -> None:
        """what_if=N: the top causes' fixes applied to the shown call and measured, put into the
        report (its "what_if" block and each cause's "what_if")."""
        report = self.report
        assert report is not None  # _report() read it just before
        device = "cuda" if report["run"]["device"].startswith("cuda") else "cpu"
        variants = self._native_report.what_if_plans(self._what_if)
        if report["run"]["status"] != "ok" or self._shown_call is None:
            why = "the run did not end well" if report["run"]["status"] != "ok" else "no model call was recorded"
        else:
            why = "" if variants else "no cause with a fix to measure"
        self.what_if = _what_if.measure(self._shown_call, variants, rounds=_WHAT_IF_ROUNDS,
                                        budget_s=self._what_if_budget, device=device,
                                        causes=report["causes"]) if not why else \
            _what_if.nothing_measured(why, _WHAT_IF_ROUNDS, self._what_if_budget, device)
        self._native_report.note_what_if(_json.dumps(self.what_if))
        self.report = _json.loads(self._native_report.text("json"))

    def nothing_recorded(self) -> str:
        """Why no call was recorded, in one line ("" when one was)."""
        if self.report is None or self.report["run"]["calls_recorded"] > 0 or self.report["summary"]["ops"] > 0:
            return ""  # recorded calls, or the ops before a failure outside them
        if self._by == "call" and self._hooks.root is None:
            return ("no module holding parameters was called in this process (a model run in processes "
                    "the code starts, as torch.multiprocessing.spawn does, is not recorded: run it under "
                    "torchrun -m layoutprof)")
        unit = f"model call{'' if self._index == 1 else 's'}" if self._by == "call" else \
            f"step{'' if self._index == 1 else 's'}"
        return f"the code ran {self._index} {unit}, none after the {self._warmup} warm-up ones"

    def text(self) -> str:
        """The text report (as the command prints it), once the block is over."""
        return self._native_report.text("text") if self._native_report is not None else ""

    def _end_last(self, exc: Optional[BaseException]) -> None:
        """The call open as the block ends: it failed if the block raised; a step begun by the
        last p.step() that ran nothing is no call, and is dropped."""
        ran_nothing = self._hooks.root_calls == self._root_calls_at_begin
        if _failure(exc) == "" and self._by == "step" and ran_nothing and self._session.calls > 0:
            self._session.drop_call()
        else:
            self._session.end_call(_failure(exc))

    def _new_session(self) -> Any:
        session = _native.Session(name=self._name or "eager", torch_version=torch.__version__,
                                  threads=torch.get_num_threads(), autograd=torch.is_grad_enabled(),
                                  warmup=self._warmup, max_ops=self._max_ops, recent_ops=self._recent_ops,
                                  counters=bool(self._counters), gpu=self._gpu,
                                  events=[] if isinstance(self._counters, bool) else [str(e) for e in self._counters])
        session.accept(self._accept)
        return session

    def _count_steps(self) -> None:
        """The code marked its first step: steps are counted from here on, not the model's calls.
        Calls recorded by then (step 0 called the model more than `warmup` times) are forgotten
        with the session that holds them: a report's calls are all steps. Step 0 began before the
        count did: it is a warm-up step, never recorded."""
        self._by = "step"
        self._hooks.on_model_call(None, None)
        self._ddp.unit = self._buckets.unit = "step"
        self._awaited = None
        self._failed = False
        self._warmup = max(self._warmup, 1)
        if self._session.in_call:
            self._session.drop_call()
        self._session = self._new_session()
        self._profiler.session_replaced()
        if self._parameters is not None:
            self._session.note_model_tensors(self._parameters, self._buffers)
            self._session.watch_parameters(self._parameters)
        self._index = 0

    def _maker_of(self, tensor: torch.Tensor) -> Optional[tuple[str, str, str]]:
        """(op, 'file:line', code) of the recorded op that made `tensor`'s view, or None."""
        return self._session.maker_of(tensor) if self._session is not None and not self._forked() else None

    def _forked(self) -> bool:
        """This is a process forked from the recording one (a DataLoader worker): it records nothing."""
        return os.getpid() != self._pid

    def _model_learnt(self, model: torch.nn.Module) -> None:
        self._model = model
        self._note_model_tensors()
        if self._session.in_call or not self._session.calls:
            self._session.watch_parameters(self._parameters)

    def _model_outputs(self, output: Any) -> None:
        """What the model returned in the shown call: a copy it wrote and returned is used."""
        if self._forked() or not self._session.in_call or self._session.calls:
            return
        for t in tensors_in(output):
            self._session.note_output(t)

    def _model_inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any], frame: FrameType) -> None:
        """The shown call's model inputs, with the line of the call: a layout they arrive with
        is traced to them (its causes name the argument and the line)."""
        if self._forked():
            return
        self._buckets.call_begins(self._hooks.root, self._index)
        if not self._session.in_call or self._session.calls:
            return
        root = self._hooks.root
        if self._what_if and self._shown_call is None and root is not None:  # the step's first model call
            self._shown_call = _what_if.Call(root, args, kwargs, backward=torch.is_grad_enabled() and
                                             any(p.requires_grad for p in root.parameters()))
        where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
        code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
        call = f"the model call at {where}" + (f" (`{code}`)" if code else "")
        named = [(f"argument {i}", a) for i, a in enumerate(args)] + [(f"argument {k!r}", v) for k, v in kwargs.items()]
        for name, value in named:
            for t in tensors_in(value):
                self._session.note_input(t, f"{name} of {call}")

    def _model_call_begins(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self._forked():
            return
        if self._session.in_call:  # the last call's backward pass never came
            self._end_call("")
        self._ddp.step = self._index
        self._begin_if_recorded(_strided_arguments(args, kwargs))

    def _model_call_ends(self, error: str, output: Any) -> None:
        if self._forked():
            return
        if self._session.in_call and (error or not self._await_backward(output)):
            self._end_call(error)
        self._index += 1

    def _end_call(self, error: str) -> None:
        self._awaited = None
        self._session.end_call(error)
        self._failed = bool(error)

    def _await_backward(self, output: Any) -> bool:
        """A training step's call goes on until its backward pass is done: hooks on the
        output's gradients queue the call's end with the autograd engine. False when no
        output needs a gradient."""
        tensors = [t for t in tensors_in(output) if t.requires_grad] if torch.is_grad_enabled() else []
        if not tensors:
            return False
        call, thread = object(), threading.get_ident()
        self._awaited = call

        def done() -> None:
            # On the thread that began the call (a GPU's backward runs on the engine's own
            # threads: there, the next model call or the block's end ends it).
            if self._awaited is call and threading.get_ident() == thread and self._session.in_call:
                self._end_call("")

        queued: list[bool] = []

        def output_grad(_grad: torch.Tensor) -> None:
            if not queued:
                queued.append(True)
                torch.autograd.Variable._execution_engine.queue_callback(done)

        for t in tensors:
            t.register_hook(output_grad)
        return True

    def _begin_if_recorded(self, arguments: Sequence[torch.Tensor] = ()) -> None:
        """`arguments`: the model call's tensors laid out other than contiguous, whose makers
        among the recent ops name where a compiled model's recompile began (maker_of)."""
        if self._forked():
            return
        recorded = self._index - self._warmup
        if not self._failed and recorded >= 0 and (self._calls is None or recorded < self._calls):
            self._root_calls_at_begin = self._hooks.root_calls
            if self._model is not None and self._session.calls == 0 and not self._session.in_call:
                self._note_model_tensors()  # as the shown call finds them: code may have set them since
            self._session.begin_call(list(arguments))

    def _note_model_tensors(self) -> None:
        """The model's parameters and buffers as they are now (`.data =`, set_, a state dict
        assigned, a new Parameter between calls change them), under their names."""
        self._parameters = list(self._model.named_parameters())
        self._buffers = list(self._model.named_buffers())
        self._session.note_model_tensors(self._parameters, self._buffers)


_WHAT_IF_ROUNDS = 30  # at most; the budget may stop them sooner


def rank_path(path: str) -> str:
    """Each rank's own file in a torchrun job of several processes: r.json -> r.rank0.json."""
    r = rank()
    if r is None or path == "-":
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}.rank{r}{ext}"


def _strided_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sequence[torch.Tensor]:
    """A model call's tensors laid out other than contiguous, where a compiled function may be
    called (dynamo loaded): a recompile on one is traced to the line that made it."""
    if "torch._dynamo" not in sys.modules:
        return ()
    tensors = tensors_in(list(args) + list(kwargs.values()))
    return [t for t in tensors if t.layout == torch.strided and not t.is_contiguous()]
