"""Where torch.compile's records come from, per release: the one place that knows the releases.

torch 2.13 and 2.14 (the releases CI tests: the 2.13.0 CPU wheel and the 2.14.1 CUDA wheel)
emit every record _compile_watch.py reads through torch._logging's structured trace
(torch._logging._internal.trace_structured, with the same record names in both), and read the
C++ kernels' profiling switch as torch._inductor.config.cpp.enable_kernel_profile (environment
TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE when the config is not yet imported), and the provenance
switch as torch._inductor.config.trace.provenance_tracking_level (INDUCTOR_PROVENANCE). A torch without
the structured trace (before 2.3) gives none of them: the report lists them as not measured.
"""
import linecache
import os
import sys
import types

import torch

_RECORDS = ("compilation_metrics", "recompile_reasons", "dynamo_output_graph", "create_symbol",
            "inductor_post_grad_graph", "inductor_output_code", "dynamo_graph_break_reason")
_KERNEL_PROFILE_ENV = "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE"
_PROVENANCE_ENV = "INDUCTOR_PROVENANCE"


def _code_objects(code):
    """`code` and every code object defined inside it (closures, lambdas, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _package_codes():
    """Every code object of layoutprof's Python modules: functions, methods, and what they define."""
    seen = set()
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "layoutprof" or name.startswith("layoutprof.")):
            continue
        for value in vars(module).values():
            members = vars(value).values() if isinstance(value, type) and value.__module__ == name else [value]
            for member in members:
                fn = getattr(member, "__func__", member)  # a staticmethod or classmethod's function
                code = getattr(fn, "__code__", None)
                if isinstance(code, types.CodeType) and getattr(fn, "__module__", None) == name:
                    for c in _code_objects(code):
                        if id(c) not in seen:
                            seen.add(id(c))
                            yield c


def keep_frames_eager(standin):
    """Dynamo converts no frame of layoutprof's: a frame of its code (the profile's bookkeeping,
    the watches' handlers) runs as it is, and so does every frame it calls; the stand-in for
    Module.__call__ (`standin`, a function) runs as it is while what it calls, torch's own
    Module.__call__ and through it the user's forward(), is converted as without layoutprof, the
    same code object with the same cache entries. torch 2.13 and 2.14:
    torch._C._dynamo.eval_frame.set_code_exec_strategy with _FrameExecStrategy(SKIP, SKIP) and
    (SKIP, DEFAULT), torch._dynamo.eval_frame.skip_code's own call, which needs no import of
    torch._dynamo (so that nothing is imported that the program does not import). Returns False
    where this torch has no such call."""
    frames = getattr(getattr(torch._C, "_dynamo", None), "eval_frame", None)
    if frames is None or not hasattr(frames, "set_code_exec_strategy"):
        return False
    action, strategy, set_strategy = frames._FrameAction, frames._FrameExecStrategy, frames.set_code_exec_strategy
    mine = standin.__code__
    for code in _package_codes():
        if code is not mine:
            set_strategy(code, strategy(action.SKIP, action.SKIP))
    set_strategy(mine, strategy(action.SKIP, action.DEFAULT))
    if "torch._dynamo" in sys.modules:
        # Its file is no user's: the "# File:" line of a graph node names the user's line.
        from torch.fx.experimental.symbolic_shapes import uninteresting_files
        uninteresting_files().add(mine.co_filename)
    return True


_UNPATCHED = ("torch._dynamo.utils", "torch._dynamo.variables.nn_module")


def dynamo_calls_modules_as(call):
    """Dynamo inlines a module call straight to its forward() when the module's __call__ is the
    Module.__call__ it captured as it was imported (torch._dynamo.utils.unpatched_nn_module_call,
    imported by name into torch._dynamo.variables.nn_module; 2.13 and 2.14); any other __call__ is
    traced as a user's. While layoutprof's stand-in is Module.__call__, dynamo must take it for
    torch's (call: the stand-in), and torch's once it is gone (call: torch's own), whenever
    torch._dynamo was first imported: otherwise it traces other frames, with other guards, than
    without layoutprof, and keeps doing so after the profile."""
    for name in _UNPATCHED:
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "unpatched_nn_module_call"):
            module.unpatched_nn_module_call = call


def compiled_frame():
    """(locals, positional parameter names) of the frame dynamo is compiling now, from inside one
    of its structured trace records (dynamo_start, recompile_reasons), or ({}, []): the `locals`
    and `code` arguments of torch._dynamo.convert_frame._compile on the calling stack (2.13 and
    2.14)."""
    frame = sys._getframe(1)
    for _ in range(60):
        if frame is None:
            break
        if frame.f_code.co_name == "_compile" and frame.f_code.co_filename.endswith("convert_frame.py"):
            found, code = frame.f_locals.get("locals"), frame.f_locals.get("code")
            params = list(code.co_varnames[:code.co_argcount]) if isinstance(code, types.CodeType) else []
            return (found if isinstance(found, dict) else {}), params
        frame = frame.f_back
    return {}, []


def calling_user_frame():
    """(file, line, code) of the innermost frame on the calling stack that is the user's (outside
    torch, the installed packages, the logging module and layoutprof): from inside dynamo's
    compile, the line that called the compiled function or module. None where there is none."""
    mine = os.path.dirname(os.path.abspath(__file__))
    frame = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if not (path.startswith(("<frozen", mine)) or "/torch/" in path or "/site-packages/" in path
                or "/logging/" in path):
            return path, frame.f_lineno, linecache.getline(path, frame.f_lineno).strip()
        frame = frame.f_back
    return None


def interned_strings():
    """{index: text} of the strings the structured trace interned before a watch listened (a
    "str" record is written once per process): torch._logging.structured.INTERN_TABLE, 2.13 and
    2.14; {} where there is none."""
    structured = sys.modules.get("torch._logging.structured")
    table = getattr(structured, "INTERN_TABLE", None)
    return {index: text for text, index in table.items()} if isinstance(table, dict) else {}


def has_structured_trace():
    try:
        from torch._logging._internal import trace_structured  # noqa: F401
    except ImportError:
        return False
    return True


def observer_effects(frames_kept_eager, inductor):
    """What layoutprof changes in what is compiled while a profile is under way, with its cost:
    the settings kernel_profile() and provenance() switch on for the graphs inductor compiled
    then (`inductor`: it compiled some), and, where this torch cannot keep layoutprof's frames out
    of dynamo's graphs, that."""
    effects = [] if not inductor else ["inductor's C++ kernels profiled (torch._inductor.config.cpp.enable_kernel_profile): each "
               "generated kernel call is a RecordFunction event, as a recorded op is (scripts/BENCHMARKS.md: "
               "what a recorded op costs); the kernels compute the same",
               "inductor's provenance tracking (trace.provenance_tracking_level 1): a map from each kernel call to "
               "its graph nodes, made at compile time only; the generated code is the same"]
    if not frames_kept_eager:
        effects.append(f"torch {torch.__version__} has no torch._C._dynamo.eval_frame.set_code_exec_strategy: dynamo "
                       "may convert layoutprof's own frames, so graphs, breaks and recompiles may differ from a run "
                       "without layoutprof")
    return effects


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
