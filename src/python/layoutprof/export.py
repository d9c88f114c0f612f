#!/usr/bin/env python3
"""Export an nn.Module to a program layoutprof can profile: torch.export's .pt2 or TorchScript.

usage: python -m layoutprof.export package.module:factory --input SPEC [--input SPEC ...] [-o FILE]
                                  [--dynamic | --torchscript [--method auto|script|trace]]
                                  [--eval|--train] [--path DIR]
       scripts/export.py ...   (the same, from a clone, under any torch, without the package installed)

package.module:factory names what to export: a class or a function of no arguments that
returns an nn.Module, or an nn.Module instance itself. --input takes layoutprof's spec
(DIMxDIM...[:dtype][:format][:grad]) and builds the same inputs layoutprof will: seeded
random normal for floating types, small random integers otherwise, laid out in the format.

By default the module goes through torch.export.export with those inputs and is saved with
torch.export.save (-o model.pt2; PyTorch 2.x). --dynamic marks dimension 0 of every input
dynamic (a torch.export.Dim; inputs whose dimension 0 has the same size share one), so that the
program takes other batch sizes. The mode (--eval or --train) is fixed in the program.

--torchscript writes a TorchScript archive instead (-o model.pt; any PyTorch). --method auto
(the default) scripts the module and, when torch.jit.script cannot compile it, traces it with
those inputs instead (saying why, and what a trace does not keep).

Either is written through a temporary file beside -o and only replaces it once loaded back
(torch.export.load(...).module(), or torch.jit.load), run on the inputs, compared with the
module's own outputs and checked for debug info (the stack traces or source ranges that let
layoutprof name the model's file:line). Progress goes to stderr; the layoutprof command to run
is printed last, on stdout.

Exit status: 0 written; 1 the module runs but could not be made into a working program;
2 nothing to export (bad arguments, torch.export asked of a PyTorch 1.x, import or factory
failed, bad --input, the module itself fails on the inputs).
"""

import argparse
import contextlib
import importlib
import inspect
import os
import re
import shlex
import sys
import tempfile
import warnings
from typing import List, NamedTuple, Optional

PROG = "export.py"
EXIT_FAILED = 1
EXIT_USAGE = 2

# Bytes per element, as layoutprof's input_spec.cpp has them; the keys are the dtype names.
DTYPE_SIZES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i8": 1, "u8": 1,
               "bool": 1}
FLOATING = ("f32", "f64", "f16", "bf16")
FORMATS = ("contiguous", "channels_last", "channels_last_3d")
MAX_DIMS = 64          # layoutprof's kMaxInputDims
MAX_DIM = 1 << 40      # the largest size layoutprof accepts for one dimension

# torch 2.x marks every torch.jit entry point with a FutureWarning such as "`torch.jit.script`
# is deprecated. Please switch to `torch.compile` or `torch.export`." (and on Python 3.14+
# "... is not supported in Python 3.14+ and may break."). They are gathered into one note.
TORCHSCRIPT_DEPRECATION = re.compile(r"`torch\.jit\.[\w.]+` is (deprecated|not supported)")


class UsageError(Exception):
    """Nothing to export: exit 2 with this one line."""


class ExportError(Exception):
    """The module could not be made into a working program: exit 1 with this one line."""


def say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def one_line(text: str, most: int = 300) -> str:
    """The first non-empty line of text, without control characters, at most `most` chars."""
    line = next((l.strip() for l in str(text).splitlines() if l.strip()), "")
    line = re.sub(r"[\x00-\x1f\x7f]", "?", line).rstrip(" :")
    return line if len(line) <= most else line[:most] + "..."


def describe(error: BaseException) -> str:
    """An exception as one line: its type, its first line and, for TorchScript's compiler
    errors (which quote the offending source below the message), the file:line it names."""
    text = one_line(error) or "(no message)"
    where = re.search(r'File "([^"]+)", line (\d+)', str(error))
    if where:
        path = where.group(1)
        rel = os.path.relpath(path) if os.path.isabs(path) else path
        text += f" ({rel if not rel.startswith('..') else path}:{where.group(2)})"
    return f"{type(error).__name__}: {text}"


# ---------------------------------------------------------------------------------------
# --input specs: the grammar and the checks of layoutprof's parse_input_spec
# ---------------------------------------------------------------------------------------

class InputSpec(NamedTuple):
    text: str
    sizes: List[int]
    dtype: str
    format: str            # contiguous, channels_last, channels_last_3d or perm
    perm: Optional[List[int]]
    grad: bool


def parse_spec(text: str) -> InputSpec:
    def fail(why: str):
        raise UsageError(f"--input '{one_line(text, 200)}': {why}")

    def number(item: str, what: str) -> int:
        if not item or not item.isascii() or not item.isdigit():
            fail(f"'{item}' is not a {what}")
        if int(item) > MAX_DIM:
            fail(f"'{item}' is too large")
        return int(item)

    fields = text.split(":")
    if not fields[0]:
        fail("expected DIMxDIM...[:dtype][:format][:grad]")
    grad = len(fields) > 1 and fields[-1] == "grad"
    if grad:
        fields.pop()
    if len(fields) > 3:
        fail("too many ':' fields (expected shape[:dtype][:format][:grad])")
    sizes = [number(d, "dimension") for d in fields[0].split("x")]
    if len(sizes) > MAX_DIMS:
        fail(f"more than {MAX_DIMS} dimensions")

    dtype, fmt, perm = "f32", "contiguous", None
    for i, f in enumerate(fields[1:], start=1):
        if f in DTYPE_SIZES and i == 1:
            dtype = f
        elif f in FORMATS:
            fmt = f
        elif f.startswith("perm="):
            fmt, perm = "perm", [number(p, "dim index") for p in f[len("perm="):].split(",")]
            if len(perm) != len(sizes):
                fail(f"perm= lists {len(perm)} dims for a {len(sizes)}-D shape")
            if sorted(perm) != list(range(len(sizes))):
                fail(f"perm= must list each dim 0..{len(sizes) - 1} once")
        elif i == 1:
            fail(f"unknown dtype or format '{f}' (dtypes: {' '.join(DTYPE_SIZES)}; formats: "
                 f"{' '.join(FORMATS)} perm=...)")
        else:
            fail(f"unknown format '{f}' ({', '.join(FORMATS)}, perm=...)")
    if fmt == "channels_last" and len(sizes) != 4:
        fail("channels_last needs a 4-D shape")
    if fmt == "channels_last_3d" and len(sizes) != 5:
        fail("channels_last_3d needs a 5-D shape")
    if grad and dtype not in FLOATING:
        fail(f":grad needs a floating-point dtype ({', '.join(FLOATING)}), not {dtype}")
    count = 1
    for d in sizes:
        count *= d
    if count * DTYPE_SIZES[dtype] >= 1 << 63:
        fail("its tensor would take more than 2^63 bytes")
    return InputSpec(text, sizes, dtype, fmt, perm, grad)


def make_input(spec: InputSpec, torch, requires_grad: bool):
    """The tensor layoutprof's runner makes for this spec: the same generator calls (randn,
    or randint below 10, below 2 for bool) in the same order after the same seed."""
    dtype = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
             "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32,
             "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool}[spec.dtype]

    def random(sizes):
        if spec.dtype in FLOATING:
            return torch.randn(sizes, dtype=dtype)
        return torch.randint(0, 2 if spec.dtype == "bool" else 10, sizes, dtype=dtype)

    try:
        if spec.format == "channels_last":
            t = random(spec.sizes).contiguous(memory_format=torch.channels_last)
        elif spec.format == "channels_last_3d":
            t = random(spec.sizes).contiguous(memory_format=torch.channels_last_3d)
        elif spec.format == "perm":
            # Allocated in the physical dim order perm names, viewed back to the given shape.
            physical = random([spec.sizes[d] for d in spec.perm])
            back = [spec.perm.index(d) for d in range(len(spec.perm))]
            t = physical.permute(back)
        else:
            t = random(spec.sizes)
    except RuntimeError as e:  # most often: more memory than the machine has
        raise UsageError(f"--input '{spec.text}': cannot make the tensor: {describe(e)}")
    # :grad only matters to training steps (layoutprof --backward), so only under --train.
    return t.requires_grad_(requires_grad and spec.grad)


# ---------------------------------------------------------------------------------------
# The module
# ---------------------------------------------------------------------------------------

def load_module(target: str, search_dir: str, torch):
    """Imports package.module and resolves :attr (dotted attributes allowed) to an nn.Module:
    the attribute itself, or what calling it with no arguments returns. Returns (module, the
    files its code is in)."""
    if "(" in target or ")" in target:
        raise UsageError(f"'{target}': arguments are not supported; name a class or a function "
                         "taking none (write a small factory function that passes them)")
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"'{target}': expected package.module:factory (e.g. mymodels:ResNet)")
    sys.path.insert(0, os.path.abspath(search_dir))
    try:
        py_module = importlib.import_module(module_name)
    except Exception as e:  # ImportError, or whatever the module's own code raised
        raise UsageError(f"cannot import {module_name} (from {os.path.abspath(search_dir)} and "
                         f"sys.path): {describe(e)}")
    obj = py_module
    for i, part in enumerate(attr.split(".")):
        if not hasattr(obj, part):
            owner = ".".join([module_name] + attr.split(".")[:i])
            where = f" ({py_module.__file__})" if i == 0 and getattr(py_module, "__file__", None) else ""
            raise UsageError(f"{owner}{where} has no attribute '{part}'")
        obj = getattr(obj, part)

    if isinstance(obj, torch.nn.Module):
        module = obj
    elif callable(obj):
        try:
            module = obj()
        except Exception as e:
            raise UsageError(f"calling {target}() raised {describe(e)}")
        if not isinstance(module, torch.nn.Module):
            raise UsageError(f"{target}() returned {type(module).__name__}, not an nn.Module")
    else:
        kind = "a Python module" if inspect.ismodule(obj) else type(obj).__name__
        raise UsageError(f"{target} ({kind}) is neither an nn.Module nor a class or function "
                         "returning one")

    files = set()
    for source in (type(module), py_module):
        try:
            files.add(os.path.realpath(inspect.getsourcefile(source)))
        except (TypeError, OSError):
            pass  # a built-in or C extension class: no source file to point at
    return module, files


class CapturedWarnings:
    """Records the warnings torch.export and torch.jit emit while exporting, scripting, tracing,
    saving and loading, so that TorchScript's deprecation warnings under torch 2.x become one note
    and the rest (the tracer's own warnings above all) are shown once each, on one line."""

    def __init__(self):
        self.deprecation: Optional[str] = None
        self._seen = set()

    def __enter__(self):
        self._catcher = warnings.catch_warnings(record=True)
        self._records = self._catcher.__enter__()
        return self

    def __exit__(self, *exc):
        self._catcher.__exit__(*exc)
        for w in self._records:
            message = one_line(w.message)
            if TORCHSCRIPT_DEPRECATION.search(message):
                self.deprecation = self.deprecation or message
            elif (w.category, message) not in self._seen:
                self._seen.add((w.category, message))
                say(f"warning: {w.category.__name__}: {message} "
                    f"({os.path.basename(w.filename)}:{w.lineno})")
        return False


def snapshot(module):
    """The module's parameters and buffers, to put back after a forward() in training mode
    (BatchNorm's running statistics move on every call)."""
    return {k: v.clone() for k, v in module.state_dict().items()}


def restore(module, state, torch) -> None:
    with torch.no_grad():
        for k, v in module.state_dict().items():
            if k in state:
                v.copy_(state[k])


def difference(want, got, torch, where: str = "output") -> Optional[str]:
    """None when the program's output matches the module's, else where and how it differs.
    Floating tensors match within a tolerance for their precision; the rest exactly; lists
    and tuples alike (a trace returns tuples)."""
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"{where}: the module returns a tensor, the program a {type(got).__name__}"
        if want.shape != got.shape or want.dtype != got.dtype:
            return (f"{where}: the module returns {want.dtype} {list(want.shape)}, the program "
                    f"{got.dtype} {list(got.shape)}")
        want, got = want.detach(), got.detach()
        if want.is_floating_point():
            rtol, atol = {torch.float64: (1e-7, 1e-9), torch.float32: (1e-4, 1e-5)}.get(
                want.dtype, (1e-2, 1e-2))
            if not torch.allclose(want, got, rtol=rtol, atol=atol, equal_nan=True):
                err = (want.double() - got.double()).abs().nan_to_num(0).max().item()
                return f"{where}: values differ (largest difference {err:.3g})"
        elif not torch.equal(want, got):
            return f"{where}: values differ"
        return None
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(want) != len(got):
            return f"{where}: the module returns {len(want)} values, the program {got!r:.60}"
        for i, (w, g) in enumerate(zip(want, got)):
            d = difference(w, g, torch, f"{where}[{i}]")
            if d:
                return d
        return None
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(want) != set(got):
            return f"{where}: the module returns keys {sorted(map(str, want))}, the program {got!r:.60}"
        for k in want:
            d = difference(want[k], got[k], torch, f"{where}[{k!r}]")
            if d:
                return d
        return None
    return None if want == got else f"{where}: the module returns {want!r:.40}, the program {got!r:.40}"


def torchscript_debug_info(loaded, user_files) -> tuple:
    """(ops whose source range names one of user_files, ops with any source range, ops) in the
    loaded archive's inlined graph: the source ranges layoutprof reports as file:line."""
    ops = named = user = 0
    for line in str(loaded.inlined_graph).splitlines():
        if not re.search(r"= (aten|prim|quantized|prepacked)::|^\s*(aten|prim)::", line):
            continue
        if re.search(r"prim::(Constant|GetAttr|ListConstruct|TupleConstruct)", line):
            continue  # bookkeeping, not work layoutprof reports
        ops += 1
        where = re.search(r"# (.+):\d+:\d+$", line)
        if where:
            named += 1
            user += os.path.realpath(where.group(1)) in user_files
    return user, named, ops


def pt2_debug_info(program, user_files) -> tuple:
    """The same counts for an ExportedProgram: its call_function nodes and their stack traces
    (the frames of the forward()s that made each op, the user's file among them)."""
    ops = named = user = 0
    for node in program.graph.nodes:
        if node.op != "call_function":
            continue
        ops += 1
        trace = node.meta.get("stack_trace") or ""
        files = re.findall(r'File "([^"]+)", line \d+', trace)
        named += bool(files)
        user += any(os.path.realpath(f) in user_files for f in files)
    return user, named, ops


# ---------------------------------------------------------------------------------------
# The two formats: each makes the program, saves it to a path, loads it back
# ---------------------------------------------------------------------------------------

class Program(NamedTuple):
    how: str          # "exported", "scripted" or "traced", for the summary line
    loaded: object    # what was loaded back from the file: callable on the inputs
    debug: tuple      # (ops naming the user's files, ops with a source, ops)


def require_torch_export(torch) -> None:
    """The .pt2 path needs torch.export (PyTorch 2.x): say so in one line, before any work."""
    try:
        import torch.export  # noqa: F401  (a submodule: not always imported with torch)
    except ImportError:
        raise UsageError(f"torch.export needs PyTorch 2.x; {sys.executable} has torch "
                         f"{torch.__version__}: use --torchscript for a TorchScript archive "
                         "(model.pt), or a Python with torch 2.x")


def dynamic_shapes(module, inputs, torch):
    """dynamic_shapes for torch.export.export marking dimension 0 of every input dynamic, by
    forward()'s parameter names (a *args parameter takes a tuple of them). Inputs whose
    dimension 0 has the same size share one Dim: export would otherwise refuse a model that
    combines them (a batch across several inputs) for lack of that equality."""
    dims = {}
    for t in inputs:
        if t.dim() > 0 and t.shape[0] not in dims:
            dims[t.shape[0]] = torch.export.Dim("batch" if not dims else f"batch{len(dims)}")

    def shape(t):
        return {0: dims[t.shape[0]]} if t.dim() > 0 else None

    try:
        signature = inspect.signature(module.forward)
        bound = signature.bind(*inputs).arguments
    except (TypeError, ValueError):  # no signature to read: export matches them by position
        return tuple(shape(t) for t in inputs)
    return {name: tuple(map(shape, value))
            if signature.parameters[name].kind == inspect.Parameter.VAR_POSITIONAL else shape(value)
            for name, value in bound.items()}


def write_pt2(module, inputs, args, path: str, user_files, notes: CapturedWarnings,
              torch) -> Program:
    state = snapshot(module) if args.train else None
    shapes = dynamic_shapes(module, inputs, torch) if args.dynamic else None
    try:
        with notes:
            program = torch.export.export(module, tuple(inputs), dynamic_shapes=shapes)
    except Exception as e:
        hint = ""
        if args.dynamic and any(t.dim() > 0 and t.shape[0] <= 1 for t in inputs):
            hint = " (--dynamic needs dimension 0 of every input to be 2 or more)"
        raise ExportError(f"torch.export.export failed{hint}: {describe(e)}")
    finally:
        if state is not None:
            restore(module, state, torch)
    # Through file objects: given a path, torch.export.load wants it to end in .pt2.
    with notes:
        with open(path, "wb") as f:
            torch.export.save(program, f)
        with open(path, "rb") as f:
            loaded = torch.export.load(f)
        runnable = loaded.module()
    how = "exported (dimension 0 dynamic)" if args.dynamic else "exported"
    return Program(how, runnable, pt2_debug_info(loaded, user_files))


def to_torchscript(module, inputs, method: str, training: bool, notes: CapturedWarnings, torch):
    """Returns (ScriptModule, "scripted" or "traced")."""
    script_error = None
    if method in ("auto", "script"):
        try:
            with notes:
                return torch.jit.script(module), "scripted"
        except Exception as e:
            script_error = describe(e)
            if method == "script":
                raise ExportError(f"torch.jit.script failed: {script_error}")
            say(f"torch.jit.script failed: {script_error}; falling back to torch.jit.trace")

    # check_trace=False: the check re-runs the trace with the same inputs, so it finds no more
    # than the comparison with the module's own outputs done on the saved archive below, and in
    # training mode (dropout) it fails on every model for the randomness alone.
    state = snapshot(module) if training else None
    try:
        with notes, torch.set_grad_enabled(training):
            traced = torch.jit.trace(module, tuple(inputs), check_trace=False)
    except Exception as e:
        because = f"torch.jit.script failed ({script_error}) and " if script_error else ""
        raise ExportError(f"cannot export: {because}torch.jit.trace failed: {describe(e)}")
    finally:
        if state is not None:
            restore(module, state, torch)
    if state is not None:
        # The trace holds the module's own tensors in the torches tried; in case one copies them.
        restore(traced, state, torch)
    mode = "training" if training else "eval"
    say(f"warning: a traced archive keeps only the control flow these inputs took in {mode} "
        "mode (which branches, how many loop turns, Python values read at trace time): other "
        "shapes or values may need another export")
    return traced, "traced"


def write_torchscript(module, inputs, args, path: str, user_files, notes: CapturedWarnings,
                      torch) -> Program:
    scripted, how = to_torchscript(module, inputs, args.method, args.train, notes, torch)
    # A plain torch.jit.save keeps the debug info (source ranges); no freezing, no
    # optimize_for_inference, no lite-interpreter format, all of which drop or rewrite it.
    with notes:
        torch.jit.save(scripted, path)
        loaded = torch.jit.load(path)
    return Program(how, loaded, torchscript_debug_info(loaded, user_files))


# ---------------------------------------------------------------------------------------
# Export: the module's own outputs, the program written, loaded, run and compared
# ---------------------------------------------------------------------------------------

def import_torch():
    try:
        import torch  # after the arguments are checked: importing torch takes a while
    except ImportError as e:
        raise UsageError(f"{sys.executable} cannot import torch ({one_line(e)}): run this script "
                         "with the Python whose torch matches layoutprof's LibTorch")
    return torch


def eager_outputs(module, inputs, training: bool, torch):
    """The module's own outputs: it must run on these inputs at all, and the program agree."""
    state = snapshot(module) if training else None
    try:
        with torch.set_grad_enabled(training):
            return module(*inputs)
    except Exception as e:
        raise UsageError(f"the nn.Module itself (eager) fails on these inputs: {describe(e)}")
    finally:
        if state is not None:
            restore(module, state, torch)


def run_and_compare(program: Program, inputs, expected, training: bool, notes, torch) -> str:
    """Runs the loaded program on the inputs; returns what that showed, for the summary."""
    with notes, torch.set_grad_enabled(training):
        try:
            got = program.loaded(*inputs)
        except Exception as e:
            raise ExportError(f"the saved program does not run on these inputs: {describe(e)}")
    if training:
        return "ran it (outputs not compared in training mode)"
    diff = difference(expected, got, torch)
    if diff:
        say(f"warning: the program's outputs differ from the module's on these inputs: {diff}")
        return "ran it: outputs DIFFER from the module's"
    return "ran it: outputs match the module's"


@contextlib.contextmanager
def temporary_beside(out: str, shown: str):
    """A temporary file in -o's folder, with the permissions a plain open() would give it;
    removed unless the body has moved it onto -o, whatever ends the body (an interrupt too)."""
    folder = os.path.dirname(out)
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(out) + ".", suffix=".tmp",
                                   dir=folder)
    except OSError as e:
        raise UsageError(f"-o {shown}: cannot write in {folder}: {e.strerror}")
    os.close(fd)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # not mkstemp's 0600
        yield tmp
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def shown_files(files) -> str:
    return ", ".join(sorted(os.path.relpath(f) if not os.path.relpath(f).startswith("..") else f
                            for f in files)) or "its source"


def export(args, specs: List[InputSpec]) -> None:
    torch = import_torch()
    if not args.torchscript:
        require_torch_export(torch)
    torch.manual_seed(0)  # random weights: the same program on every export
    module, user_files = load_module(args.target, args.path, torch)
    module.train(args.train)
    torch.manual_seed(0)  # as layoutprof seeds before making its inputs
    inputs = [make_input(s, torch, args.train) for s in specs]
    expected = eager_outputs(module, inputs, args.train, torch)

    notes = CapturedWarnings()
    write = write_torchscript if args.torchscript else write_pt2
    out = os.path.abspath(args.output)
    with temporary_beside(out, args.output) as tmp:
        program = write(module, inputs, args, tmp, user_files, notes, torch)
        outputs = run_and_compare(program, inputs, expected, args.train, notes, torch)
        user, named, ops = program.debug
        if user == 0:
            say(f"warning: no op of the program names {shown_files(user_files)} (ops with source "
                f"lines: {named} of {ops}): layoutprof will not point at the model's lines")
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, out)

    if notes.deprecation:
        say(f"note: torch {torch.__version__} warns \"{notes.deprecation}\" TorchScript is "
            "deprecated and in maintenance; torch.export and torch.compile are where PyTorch is "
            "going. Nothing changes for this archive: it is an ordinary TorchScript archive, it "
            "loaded and ran above, and layoutprof profiles it. Without --torchscript, export.py "
            "writes a torch.export program (.pt2), which layoutprof profiles too.")
    kind, suffix = ("TorchScript archive", ".pt") if args.torchscript else ("torch.export program", ".pt2")
    if not args.output.endswith(suffix):
        say(f"note: {args.output} holds a {kind} (usually named *{suffix}); layoutprof "
            "recognises either kind by its contents")
    mode = "training" if args.train else "eval"
    say(f"{program.how} {args.target} ({mode} mode) -> {args.output}, {os.path.getsize(out)} "
        f"bytes; loaded and {outputs}; debug info: {user} of {ops} ops point at "
        f"{shown_files(user_files)}")

    command = ["layoutprof", args.output] + [w for s in specs for w in ("--input", s.text)]
    if args.train:
        command.append("--backward")  # the program was made for training steps
    print(" ".join(shlex.quote(w) for w in command), flush=True)


def check_output(path: str) -> None:
    """-o must name a file in an existing folder: checked before any work is done."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"-o {path}: no folder {folder}")
    if os.path.isdir(path):
        raise UsageError(f"-o {path}: is a folder")


def check_options(args) -> None:
    """--method belongs to --torchscript, --dynamic to the .pt2 path; -o's default to each."""
    if args.torchscript and args.dynamic:
        raise UsageError("--dynamic is for torch.export programs, not --torchscript")
    if not args.torchscript and args.method is not None:
        raise UsageError(f"--method {args.method} is for --torchscript; the default path uses "
                         "torch.export")
    args.method = args.method or "auto"
    args.output = args.output or ("model.pt" if args.torchscript else "model.pt2")


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line and exit 2, as every other error here
        say(f"{message} (see --help)")
        sys.exit(EXIT_USAGE)


def main(argv: Optional[List[str]] = None) -> int:
    parser = Parser(prog=PROG, description=__doc__.split("\n")[0],
                    formatter_class=argparse.RawDescriptionHelpFormatter,
                    epilog="\n".join(__doc__.split("\n")[6:]))
    parser.add_argument("target", metavar="package.module:factory",
                        help="a class or function of no arguments returning an nn.Module, "
                             "or an nn.Module instance")
    parser.add_argument("--input", action="append", required=True, metavar="SPEC",
                        help="DIMxDIM...[:dtype][:format][:grad], one per forward() argument, "
                             "as layoutprof takes them")
    parser.add_argument("-o", "--output", default=None,
                        help="the program (default: model.pt2, or model.pt with --torchscript)")
    parser.add_argument("--dynamic", action="store_true",
                        help="torch.export: dimension 0 of every input dynamic")
    parser.add_argument("--torchscript", action="store_true",
                        help="write a TorchScript archive instead of a torch.export program")
    parser.add_argument("--method", choices=("auto", "script", "trace"), default=None,
                        help="with --torchscript: auto, script falling back to trace (default)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--eval", dest="train", action="store_false", help="eval mode (default)")
    mode.add_argument("--train", dest="train", action="store_true",
                      help="training mode, for layoutprof --backward")
    parser.set_defaults(train=False)
    parser.add_argument("--path", default=os.getcwd(),
                        help="folder put first on sys.path to import from (default: the current one)")
    args = parser.parse_args(argv)
    try:
        check_options(args)
        specs = [parse_spec(s) for s in args.input]
        check_output(args.output)
        export(args, specs)
    except UsageError as e:
        say(str(e))
        return EXIT_USAGE
    except ExportError as e:
        say(str(e))
        return EXIT_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main())
