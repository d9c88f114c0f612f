"""Module paths of eager ops: every module call tells the recorder which module runs.

While installed, ModuleHooks stands in for torch.nn.Module.__call__ (restored on removal): a
module call enters the module's path, runs torch's own __call__ (hooks and all) and leaves it,
raised or not. This costs a fraction of what global forward hooks cost, which move every module
call off torch's fast path. It changes nothing torch.compile captures (tests/python/observer_checks.py):
dynamo takes it for torch's own Module.__call__ while it stands in, converts none of layoutprof's
frames (its bookkeeping runs as plain Python even inside a compiled module's call), and where it
inlines a module call into a graph, the stand-in only passes the call on.

The first module called while installed that holds parameters or buffers is the model
(so a transform such as torchvision's Normalize, a module without either, called on the data
before the model, is not): its named_modules() give every submodule its path ("layer4.0.conv2";
"" for the model itself). A model wrapped in DistributedDataParallel, DataParallel or
torch.compile is named as the user's own module names itself, without the wrapper's "module."
or "_orig_mod." prefix. A module outside that tree (a transform, a loss module) is named by its
class.
"""
import itertools
import sys

import torch

from . import _native
from ._compile_api import dynamo_calls_modules_as, keep_frames_eager


class ModuleHooks:
    def __init__(self):
        self.root = None
        self.root_calls = 0  # forward() calls of the model so far
        self._ids = {}
        self._call = None  # torch's Module.__call__, while ours stands in
        self.frames_kept_eager = True  # dynamo converts none of layoutprof's frames (keep_frames_eager)
        self._model_depth = 0  # the model's forward() calls under way (it may call itself)
        self._begins = self._ends = None
        self._learnt = None
        self._inputs = None
        self._outputs = None

    def on_model_call(self, begins, ends):
        """Calls begins(args, kwargs) as the model's outermost forward() starts, and
        ends(error, output) as it returns (error "") or raises (error: the exception, in one
        line; output None)."""
        self._begins, self._ends = begins, ends

    def on_model_inputs(self, inputs):
        """Calls inputs(args, kwargs, frame) as the model's outermost forward() starts (after
        begins()), frame being the caller's: the line of the model call."""
        self._inputs = inputs

    def on_model_outputs(self, outputs):
        """Calls outputs(output) as the model's outermost forward() returns."""
        self._outputs = outputs

    def on_model_learnt(self, learnt):
        """Calls learnt(model) once the model is known: the user's module, unwrapped."""
        self._learnt = learnt

    def install(self):
        torch_call = self._call = torch.nn.Module.__call__
        ids, enter, leave, compiling = self._ids, _native.enter_module, _native.leave_module, _compiling()
        learn, begins, returns, getframe = self._learn, self._model_call_begins, self._model_call_returns, sys._getframe

        def call(module, *args, **kwargs):
            # Dynamo never converts this frame, nor any frame of the bookkeeping it calls
            # (learn, begins, returns: keep_frames_eager); torch_call is converted as without
            # layoutprof. Where dynamo inlines a module call into a graph, it passes the call on.
            if compiling() or self._call is None:  # inlined; or left bound in an OptimizedModule
                return torch_call(module, *args, **kwargs)
            module_id = ids.get(id(module))
            if module_id is None:
                module_id = learn(module)
            model = module is self.root
            if model:
                begins(args, kwargs, getframe(1))
            enter(module_id)
            try:
                output = torch_call(module, *args, **kwargs)
            except BaseException as e:
                leave()
                if model:
                    returns(e, None)
                raise
            leave()
            if model:
                returns(None, output)
            return output

        torch.nn.Module.__call__ = call
        self.frames_kept_eager = keep_frames_eager(call)
        dynamo_calls_modules_as(call)

    def remove(self):
        if self._call is not None:
            torch.nn.Module.__call__ = self._call
            dynamo_calls_modules_as(self._call)
            self._call = None

    def _model_call_begins(self, args, kwargs, caller):
        self.root_calls += 1
        self._model_depth += 1
        if self._model_depth == 1 and self._begins is not None:
            self._begins(args, kwargs)
        if self._model_depth == 1 and self._inputs is not None:
            self._inputs(args, kwargs, caller)

    def _model_call_returns(self, error, output):
        self._model_depth -= 1
        if self._model_depth == 0 and self._ends is not None:
            self._ends(one_line(error) if error is not None else "", output)
        if error is None and self._model_depth == 0 and self._outputs is not None:
            self._outputs(output)

    def _learn(self, module):
        if self.root is None and _holds_state(module):
            self.root = module
            model = unwrapped(module)
            self._ids[id(module)] = _native.module_id("")
            for name, sub in model.named_modules():  # named by their path, even if seen before
                self._ids[id(sub)] = _native.module_id(name)
            if self._learnt is not None:
                self._learnt(model)
        if id(module) not in self._ids:
            self._ids[id(module)] = _native.module_id(type(module).__name__)
        return self._ids[id(module)]


def one_line(exc):
    """An exception as a report states it: "Type: message", its first line, and the line that
    names the op it raised in where there is one (compiled code's stride check says "Error in
    op: torch.ops.aten.X.default" on a line of its own)."""
    lines = f"{type(exc).__name__}: {exc}".splitlines() or [type(exc).__name__]
    named = [line.strip() for line in lines[1:] if line.strip().startswith("Error in op:")]
    return lines[0] + (f" ({named[0]})" if named else "")


def _compiling():
    """torch.compiler.is_compiling (torch 2.3 and later; before, torch._dynamo's), or a
    function that says False."""
    compiler = getattr(torch, "compiler", None)
    if compiler is not None and hasattr(compiler, "is_compiling"):
        return compiler.is_compiling
    try:
        from torch._dynamo import is_compiling
        return is_compiling
    except ImportError:
        return lambda: False


def _holds_state(module):
    """The module has parameters or buffers (its own or its submodules')."""
    return next(itertools.chain(module.parameters(), module.buffers()), None) is not None


def unwrapped(module):
    """The user's module inside DistributedDataParallel, DataParallel or torch.compile's
    wrapper (even nested: DDP around a compiled model); others as they are."""
    wrappers = (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)
    while True:
        if isinstance(module, wrappers):
            module = module.module
        elif type(module).__name__ == "OptimizedModule" and isinstance(getattr(module, "_orig_mod", None), torch.nn.Module):
            module = module._orig_mod
        else:
            return module


def tensors_in(value):
    """The tensors in a model call's arguments or output: itself, or those in its tuples, lists
    and dicts."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    return []
