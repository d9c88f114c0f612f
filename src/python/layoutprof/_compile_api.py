"""Where torch.compile's records come from, per release: the one place that knows the releases.

torch 2.13 and 2.14 (the releases CI tests: the 2.13.0 CPU wheel and the 2.14.1 CUDA wheel)
emit every record _compile_watch.py reads through torch._logging's structured trace
(torch._logging._internal.trace_structured, with the same record names in both), and read the
C++ kernels' profiling switch as torch._inductor.config.cpp.enable_kernel_profile (environment
TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE when the config is not yet imported). A torch without
the structured trace (before 2.3) gives none of them: the report lists them as not measured.
"""
import os
import sys

import torch

_RECORDS = ("compilation_metrics", "recompile_reasons", "dynamo_output_graph", "create_symbol",
            "inductor_post_grad_graph", "inductor_output_code", "dynamo_graph_break_reason")
_KERNEL_PROFILE_ENV = "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE"


def dynamo_skips(code):
    """Dynamo compiles no frame of `code` (its callees as usual), and leaves its file out of the
    user's stack it gives each graph node (the "# File:" line of a node is the user's line):
    layoutprof's stand-in for Module.__call__, which a compiled module calls first and every
    traced module call goes through, is not the user's code. torch._dynamo.eval_frame.skip_code
    and the set torch.fx.experimental.symbolic_shapes.uninteresting_files() returns (cached),
    in 2.13 and 2.14; only once torch._dynamo is loaded (before, nothing was compiled)."""
    if "torch._dynamo" not in sys.modules:
        return
    from torch._dynamo.eval_frame import skip_code
    from torch.fx.experimental.symbolic_shapes import uninteresting_files
    skip_code(code)
    uninteresting_files().add(code.co_filename)


def has_structured_trace():
    try:
        from torch._logging._internal import trace_structured  # noqa: F401
    except ImportError:
        return False
    return True


def compile_sources():
    """What a report's "compiled" section was read from: {"torch", "records", "not_measured"}."""
    if has_structured_trace():
        return {"torch": torch.__version__, "records": "torch._logging structured trace (torch.__trace): " +
                ", ".join(_RECORDS), "not_measured": []}
    return {"torch": torch.__version__, "records": "",
            "not_measured": [f"torch.compile's records: torch {torch.__version__} has no structured trace "
                             "(torch._logging._internal.trace_structured, torch 2.3 and later)"]}


def kernel_profile(on):
    """Turns inductor's C++ kernel events on (each generated kernel a RecordFunction event, for
    the graphs compiled from here on); returns a function that puts the setting back."""
    config = sys.modules.get("torch._inductor.config")
    if config is not None and hasattr(config, "cpp") and hasattr(config.cpp, "enable_kernel_profile"):
        before = config.cpp.enable_kernel_profile
        config.cpp.enable_kernel_profile = on
        return lambda: setattr(config.cpp, "enable_kernel_profile", before)
    before = os.environ.get(_KERNEL_PROFILE_ENV)
    os.environ[_KERNEL_PROFILE_ENV] = "1" if on else "0"

    def restore():
        loaded = sys.modules.get("torch._inductor.config")
        if loaded is not None and hasattr(loaded, "cpp"):
            loaded.cpp.enable_kernel_profile = before == "1"
        if before is None:
            os.environ.pop(_KERNEL_PROFILE_ENV, None)
        else:
            os.environ[_KERNEL_PROFILE_ENV] = before
    return restore
