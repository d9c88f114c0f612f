"""Module paths of eager ops: global forward hooks tell the recorder which module runs.

The first module called while the hooks are on that holds parameters or buffers is the model
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


class ModuleHooks:
    def __init__(self):
        self.root = None
        self.root_calls = 0  # forward() calls of the model so far
        self._ids = {}
        self._handles = []
        self._model_depth = 0  # the model's forward() calls under way (it may call itself)
        self._begins = self._ends = None
        self._learnt = None

    def on_model_call(self, begins, ends):
        """Calls begins() as the model's outermost forward() starts, and ends(error, output) as
        it returns (error "") or raises (error: the exception, in one line; output None)."""
        self._begins, self._ends = begins, ends

    def on_model_learnt(self, learnt):
        """Calls learnt(model) once the model is known: the user's module, unwrapped."""
        self._learnt = learnt

    def install(self):
        hooks = torch.nn.modules.module
        try:  # torch 2.x: called when a forward() raises, too, so the module stack stays right
            leave = hooks.register_module_forward_hook(self._leave, always_call=True)
        except TypeError:
            leave = hooks.register_module_forward_hook(self._leave)
        self._handles = [hooks.register_module_forward_pre_hook(self._enter), leave]

    def remove(self):
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def _enter(self, module, _args):
        key = id(module)
        module_id = self._ids.get(key)
        if module_id is None:
            module_id = self._learn(module)
        if module is self.root:
            self.root_calls += 1
            self._model_depth += 1
            if self._model_depth == 1 and self._begins is not None:
                self._begins()
        _native.enter_module(module_id)

    def _leave(self, module, _args, output):
        _native.leave_module()
        if module is self.root:
            self._model_depth -= 1
            if self._model_depth == 0 and self._ends is not None:
                self._ends(_raised(output), output)

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


def _raised(output):
    """A forward hook with always_call runs in torch's `except` when forward() raised, with no
    output: the exception in flight, in one line; "" when forward() returned."""
    error = sys.exc_info()[1] if output is None else None
    return f"{type(error).__name__}: {error}".splitlines()[0] if error is not None else ""


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
