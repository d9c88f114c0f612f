"""DDP's grad-strides warning, as the user's process shows it.

DistributedDataParallel warns once per process when a gradient's strides differ from its
bucket view's (the parameter's, when DDP was built): "Grad strides do not match bucket view
strides ... grad.sizes() = [...], strides() = [...] bucket_view.sizes() = [...], strides() =
[...]". torch turns that C++ warning into a Python UserWarning; DdpWarnings listens from the
session's start (DDP often warns in the first step, a warm-up one) and keeps what it names.
"""
import os
import re

_MARK = "Grad strides do not match bucket view strides"
_SIZES = re.compile(r"(grad|bucket_view)\.sizes\(\) = \[([^\]]*)\], strides\(\) = \[([^\]]*)\]")


def parse(message):
    """The warning's grad and bucket view: {"grad_sizes": [...], "grad_strides": [...],
    "bucket_view_sizes": [...], "bucket_view_strides": [...]}; None for another warning."""
    text = str(message)
    if _MARK not in text:
        return None
    found = {}
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


class DdpWarnings:
    """Keeps DDP's grad-strides warnings it hears (a WarningTap's listener)."""

    def __init__(self):
        self.seen = []  # parse()'s dicts, with "step": the model call or step (0-based) it came in
        self.step = 0
        self.unit = "model call"  # what step counts: "model call" or "step"

    def heard(self, message, _filename, _lineno):
        found = parse(message)
        if found is not None:
            self.seen.append(dict(found, step=self.step, unit=self.unit))

    def details(self, ddp_used):
        """What the report states as measured after "DDP's grad-strides warning": each
        warning, or that DDP gave none."""
        where = f"rank {rank()}" if rank() is not None else "this process"
        out = [f"({where}, {w['unit']} {w['step'] + 1}): grad sizes {w.get('grad_sizes')} strides "
               f"{w.get('grad_strides')}, bucket view strides {w.get('bucket_view_strides')}" for w in self.seen]
        if not out and ddp_used:
            out.append(f"({where}): none, listened from the start of the profiled block")
        return out
