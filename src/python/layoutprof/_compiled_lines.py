"""The user's line of an op that inductor's generated code runs.

Inside a compiled region the nearest frame outside torch is the generated module's call(), at a
line of inductor's code; the native probe asks user_line() once per new such line. Two maps:
- the graphs compiled while a profile listened: inductor's provenance (each kernel call with the
  post-grad FX nodes it runs, and their dynamo nodes) joined to the post-grad graph's "# File:"
  lines and to the modules of dynamo's nodes that use a parameter, learnt by the CompileWatch
  (_inductor_code.call_sites): a fused kernel's line is its layout copy's;
- any other generated module (compiled before the profile): inductor's own line map
  (torch._inductor.codecache.PyCodeCache.linemaps, read by PyCodeCache.stack_frames_for_code,
  as torch's tracebacks of compiled code read it; 2.13 and 2.14), which gives each line the
  node whose code begins above it, coarser: a kernel call may get the node before it.
Code that FX generated (a GraphModule's forward, "<eval_with_key>.N": torch.export's
ep.module(), symbolic_trace) is read through its own line map (GraphModule._lineno_map, from
its _prologue_start, as torch._utils reads it in 2.13 and 2.14) to the node, and the node's
stack trace to the user's line.
"""
import gc
import os
import re
import sys

_library = ()
_learnt = {}  # generated file -> {line: (file, line, module path inside the compiled module)}
_moved = {}   # a path inductor's cache gave that is not there -> where its file is now
_fx_modules = {}  # "<eval_with_key>.N" -> the GraphModule whose forward it is (None: not found)
_STACK_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def existing_path(path):
    """`path`, or where its file is now. Inductor's cache gives back a graph compiled in another
    checkout (another CI clone) with that checkout's paths in its nodes' stack traces and line
    map: the loaded module of the same file name whose path shares the longest tail stands in."""
    if not path or path in _moved or os.path.exists(path):
        return _moved.get(path, path)
    parts, best, best_n = path.split(os.sep), path, 0
    for module in list(sys.modules.values()):
        f = getattr(module, "__file__", None)
        if not isinstance(f, str) or os.path.basename(f) != parts[-1]:
            continue
        theirs, n = f.split(os.sep), 0
        while n < min(len(theirs), len(parts)) and theirs[-1 - n] == parts[-1 - n]:
            n += 1
        if n > best_n:
            best, best_n = f, n
    _moved[path] = best
    return best


def existing_where(where):
    """"file:line" with the file as existing_path() finds it."""
    path, _, line = where.rpartition(":")
    return f"{existing_path(path)}:{line}" if path else where


def learn(path, sites):
    _learnt.setdefault(os.path.abspath(path), {}).update(sites)


def install(native, library_folders):
    global _library
    _library = tuple(library_folders)
    native.translate_lines(user_line)


def user_line(file, line):
    """(file, line[, module]) of the user's code behind line `line` of generated module `file`, or
    None (not inductor's code, or a line no node owns: argument checks, allocations). The module
    is the FX node's path inside the compiled module, when its dynamo node uses a parameter."""
    if file.startswith("<eval_with_key>"):
        return _fx_line(file, line)
    learnt = _learnt.get(os.path.abspath(file))
    if learnt and line in learnt:
        path, at, module = learnt[line]
        return existing_path(path), at, module
    codecache = sys.modules.get("torch._inductor.codecache")
    cache = getattr(codecache, "PyCodeCache", None)
    if cache is None or file not in getattr(cache, "linemaps", {}):
        return None
    for frame in cache.stack_frames_for_code(file, line) or []:  # the innermost first
        if not frame["filename"].startswith(_library):
            return existing_path(frame["filename"]), int(frame["line"])
    return None


def _graph_module(file):
    """The GraphModule whose generated forward() is `file` (each has a class of its own), found
    once per file among the live objects."""
    if file not in _fx_modules:
        fx = sys.modules.get("torch.fx")
        found = None
        for obj in gc.get_objects() if fx is not None else []:
            # type(), not isinstance(): the latter reads __class__, which some objects warn on
            # (torch.distributed.reduce_op), into the user's program.
            forward = getattr(type(obj), "forward", None) if issubclass(type(obj), fx.GraphModule) else None
            if getattr(getattr(forward, "__code__", None), "co_filename", None) == file:
                found = obj
                break
        _fx_modules[file] = found
    return _fx_modules[file]


def _fx_line(file, line):
    """(file, line) of the user's code behind line `line` of FX's generated `file`: the node there,
    and the innermost frame of its stack trace outside torch; None where there is none."""
    gm = _graph_module(file)
    lines = getattr(gm, "_lineno_map", None) or {}
    index = lines.get(line - getattr(gm, "_prologue_start", 0))
    if index is None:
        return None
    node = next((n for i, n in enumerate(gm.graph.nodes) if i == index), None)
    frames = _STACK_FRAME.findall((node.meta.get("stack_trace") or "") if node is not None else "")
    for path, at in reversed(frames):
        if not path.startswith(_library):
            return existing_path(path), int(at)
    return None
