"""DDP's buckets, as its reducer builds them: the strides its grad-strides check compares with.

DistributedDataParallel views each parameter's slot in a gradient bucket with the parameter's
strides when the buckets are built (contiguous for a parameter that is not dense), and compares
every stride of the .grad with that view. It builds them at construction and rebuilds them once,
as a later forward begins (the second; later with static_graph=True; never with
find_unused_parameters=True), with the parameters' strides then. DdpBuckets keeps the strides of
both moments: at construction by standing in for DistributedDataParallel.__init__ while the
profile is under way (restored on removal); at the rebuild as the model call begins in which
DDP's `_has_rebuilt_buckets` turns true (so no rule of when DDP rebuilds is modelled). Of a DDP
built before the profile began, the construction strides are taken as its first call finds
them, and the report says so.
"""
import linecache
import sys

import torch


def _strides(module):
    """(name, strides) of each parameter that requires a gradient, as named_parameters() names it."""
    return [(name, list(p.stride())) for name, p in module.named_parameters() if p.requires_grad]


class DdpBuckets:
    def __init__(self):
        self._init = None  # DistributedDataParallel.__init__, while ours stands in
        self._built = {}  # id(ddp) -> (strides, when)
        self._rebuilt = {}  # id(ddp) -> (strides, when, index)
        self._pending = {}  # id(ddp) -> (strides, index): taken as the call began
        self.unit = "model call"  # what an index counts: "model call" or "step"

    def install(self):
        ddp_class = torch.nn.parallel.DistributedDataParallel
        init = self._init = ddp_class.__init__
        built, getframe = self._built, sys._getframe

        def construct(ddp, *args, **kwargs):
            init(ddp, *args, **kwargs)
            caller = getframe(1)
            where = f"{caller.f_code.co_filename}:{caller.f_lineno}"
            code = linecache.getline(caller.f_code.co_filename, caller.f_lineno).strip()
            built[id(ddp)] = (_strides(ddp.module), f"at construction, at {where}" + (f" (`{code}`)" if code else ""))

        ddp_class.__init__ = construct

    def remove(self):
        if self._init is not None:
            torch.nn.parallel.DistributedDataParallel.__init__ = self._init
            self._init = None

    def call_begins(self, root, index):
        """The model's call `index` begins (before DDP's forward, which may rebuild)."""
        if not isinstance(root, torch.nn.parallel.DistributedDataParallel):
            return
        key = id(root)
        self._note_rebuild(root)
        if key not in self._built:
            self._built[key] = (_strides(root.module), "before the profile began (assumed: the strides its first "
                                                       "recorded model call found)")
        if key not in self._rebuilt and not getattr(root, "_has_rebuilt_buckets", True):
            self._pending[key] = (_strides(root.module), index)

    def for_call(self, root, index):
        """(strides, when) of the buckets the call `index`'s backward reduces into; None
        without DDP."""
        if not isinstance(root, torch.nn.parallel.DistributedDataParallel) or id(root) not in self._built:
            return None
        self._note_rebuild(root)
        rebuilt = self._rebuilt.get(id(root))
        if rebuilt is not None and rebuilt[2] <= index:
            return rebuilt[0], rebuilt[1]
        return self._built[id(root)]

    def _note_rebuild(self, root):
        """DDP rebuilt its buckets in the call whose strides are pending: they are the rebuild's."""
        key = id(root)
        if key in self._pending and key not in self._rebuilt and getattr(root, "_has_rebuilt_buckets", False):
            strides, index = self._pending.pop(key)
            self._rebuilt[key] = (strides, f"again as {self.unit} {index + 1} began", index)
