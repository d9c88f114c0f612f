"""DDP's and AccumulateGrad's gradient-stride warnings, as the user's process shows them.

DistributedDataParallel warns once per process when a gradient's strides differ from its
bucket view's (the parameter's, when DDP built its buckets): "Grad strides do not match bucket
view strides ... grad.sizes() = [...], strides() = [...] bucket_view.sizes() = [...], strides() =
[...]". AccumulateGrad warns once per process when it adds a gradient into a .grad that does not
obey the gradient layout contract with its parameter: "grad and param do not obey the gradient
layout contract ... grad.sizes() = [...], strides() = [...] param.sizes() = [...], strides() =
[...]". torch turns these C++ warnings into Python UserWarnings; GradWarnings listens from the
session's start (they often come in the first step, a warm-up one) and keeps what they name.
"""
import os
import re

_MARKS = {"ddp": "Grad strides do not match bucket view strides",
          "accumulate": "grad and param do not obey the gradient layout contract"}
# The lines the report keeps them under (analysis/grads.h: kDdpSeen, kAccumulateGradSeen).
_SEEN = {"ddp": "DDP's grad-strides warning", "accumulate": "AccumulateGrad's gradient-layout warning"}
_SIZES = re.compile(r"(grad|bucket_view|param)\.sizes\(\) = \[([^\]]*)\], strides\(\) = \[([^\]]*)\]")


def parse(message):
    """The warning's tensors: {"kind": "ddp" or "accumulate", "grad_sizes": [...],
    "grad_strides": [...], and "bucket_view_..." or "param_..." alike}; None for another warning."""
    text = str(message)
    kind = next((k for k, mark in _MARKS.items() if mark in text), None)
    if kind is None:
        return None
    found = {"kind": kind}
    for which, sizes, strides in _SIZES.findall(text):
        found[f"{which}_sizes"] = [int(v) for v in sizes.split(",") if v.strip()]
        found[f"{which}_strides"] = [int(v) for v in strides.split(",") if v.strip()]
    return found


def rank():
    """This process's rank in a torchrun job of more than one process; None otherwise."""
    try:
        return int(os.environ["RANK"]) if int(os.environ.get("WORLD_SIZE", "1")) > 1 else None
    except ValueError:
        return None


class GradWarnings:
    """Keeps the gradient-stride warnings it hears (a WarningTap's listener)."""

    def __init__(self):
        self.seen = []  # parse()'s dicts, with "step": the model call or step (0-based) it came in
        self.step = 0
        self.unit = "model call"  # what step counts: "model call" or "step"

    def heard(self, message, _filename, _lineno):
        found = parse(message)
        if found is not None:
            self.seen.append(dict(found, step=self.step, unit=self.unit))

    def lines(self, ddp_used):
        """What the report states as measured: each warning, and that DDP gave none where it
        was used (AccumulateGrad's silence the session states itself, for a training step)."""
        where = f"rank {rank()}" if rank() is not None else "this process"
        out = []
        for w in self.seen:
            other = "bucket view" if w["kind"] == "ddp" else "param"
            key = other.replace(" ", "_")
            out.append(f"{_SEEN[w['kind']]} ({where}, {w['unit']} {w['step'] + 1}): grad sizes {w.get('grad_sizes')} "
                       f"strides {w.get('grad_strides')}, {other} strides {w.get(key + '_strides')}")
        if ddp_used and not any(w["kind"] == "ddp" for w in self.seen):
            out.append(f"{_SEEN['ddp']} ({where}): none, listened from the start of the profiled block")
        return out
