"""Where torch.compile's records come from, per release: the one place that knows the releases.

torch 2.13 and 2.14 (the releases CI tests: the 2.13.0 CPU wheel and the 2.14.1 CUDA wheel)
emit every record _compile_watch.py reads through torch._logging's structured trace
(torch._logging._internal.trace_structured, with the same record names in both), and read the
C++ kernels' profiling switch as torch._inductor.config.cpp.enable_kernel_profile (environment
TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE when the config is not yet imported), and the provenance
switch as torch._inductor.config.trace.provenance_tracking_level (INDUCTOR_PROVENANCE). A torch without
the structured trace (before 2.3) gives none of them: the report lists them as not measured.
"""
import os
import sys

import torch

_RECORDS = ("compilation_metrics", "recompile_reasons", "dynamo_output_graph", "create_symbol",
            "inductor_post_grad_graph", "inductor_output_code", "dynamo_graph_break_reason")
_KERNEL_PROFILE_ENV = "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE"
_PROVENANCE_ENV = "INDUCTOR_PROVENANCE"


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


def _switch(section, name, env, value):
    """Sets torch._inductor.config.<section>.<name> to `value` (its environment variable `env`
    while the config is not yet imported: it reads it on import) for the graphs compiled from
    here on; returns a function that puts the setting back."""
    config = sys.modules.get("torch._inductor.config")
    if config is not None and hasattr(getattr(config, section, None), name):
        before = getattr(getattr(config, section), name)
        setattr(getattr(config, section), name, value)
        return lambda: setattr(getattr(config, section), name, before)
    before = os.environ.get(env)
    os.environ[env] = str(int(value))

    def restore():
        loaded = sys.modules.get("torch._inductor.config")
        if loaded is not None and hasattr(getattr(loaded, section, None), name):
            setattr(getattr(loaded, section), name, type(value)(int(before or 0)))
        if before is None:
            os.environ.pop(env, None)
        else:
            os.environ[env] = before
    return restore


def kernel_profile(on):
    """Inductor's C++ kernel events (each generated kernel a RecordFunction event)."""
    return _switch("cpp", "enable_kernel_profile", _KERNEL_PROFILE_ENV, bool(on))


def provenance(on):
    """Inductor's provenance records (trace.provenance_tracking_level 1): each kernel call of the
    generated code with the post-grad FX nodes it runs, the structured trace's
    "inductor_provenance_tracking_node_mappings" artifact (cppCodeToPost), on a cache hit too."""
    return _switch("trace", "provenance_tracking_level", _PROVENANCE_ENV, 1 if on else 0)
