"""A line fix applied to the user's code for one measurement (the what-if work): the function
that runs the line is recompiled from its source with that line's expression changed, and its
code object swapped in while the variant runs, then restored. Two edits, the two fix actions
that name a line (src/report_model/fix_action.h):
- contiguous_at: `.contiguous(memory_format=F)` on the result of the call the op came from
  (`x.permute(0, 3, 1, 2)` -> `x.permute(0, 3, 1, 2).contiguous(...)`);
- swap_operands: the two operands of a commutative elementwise op exchanged (`a + b` -> `b + a`,
  `torch.add(a, b)` -> `torch.add(b, a)`); never one that is not commutative (`sub`, `alpha=`).

Nothing else of the program changes: the function object keeps its identity, globals, defaults
and closure cells; only its __code__ is the edited one, and only inside `applied()`. Where the
line cannot be edited exactly so (no such expression on it, several alike, another closure),
`Refused` says why in one line, and nothing is applied.
"""
import ast
import contextlib
import gc
import linecache
import types

# The ATen ops a call on the user's line runs, by the Python names that call them.
_NAMES = {"aten::permute": ("permute",), "aten::transpose": ("transpose", "swapaxes", "swapdims"),
          "aten::t": ("t",), "aten::reshape": ("reshape",), "aten::view": ("view",),
          "aten::expand": ("expand", "expand_as"), "aten::narrow": ("narrow",), "aten::movedim": ("movedim",),
          "aten::unsqueeze": ("unsqueeze",), "aten::squeeze": ("squeeze",), "aten::flatten": ("flatten",),
          "aten::cat": ("cat", "concat", "concatenate"), "aten::stack": ("stack",)}
_SUBSCRIPTED = ("aten::slice", "aten::select", "aten::index")
# Commutative elementwise ops: their Python operators and names.
_COMMUTATIVE = {"aten::add": (ast.Add, ("add",)), "aten::mul": (ast.Mult, ("mul", "multiply")),
                "aten::maximum": (None, ("maximum",)), "aten::minimum": (None, ("minimum",))}
_FORMATS = ("contiguous_format", "channels_last", "channels_last_3d")


class Refused(Exception):
    """The fix cannot be applied to the line as it is written: why, in one line."""


def _callee(node):
    """`permute` of `x.permute(...)` and of `torch.permute(...)`; "" for another call."""
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _op_result(function, line, op):
    """The expression on `line` whose result the op made: the one call of the op's names there,
    else its one subscript (a slice), else the line's one call."""
    names = _NAMES.get(op, (op.split("::")[-1].rstrip("_"),))
    calls = [n for n in ast.walk(function) if isinstance(n, ast.Call) and n.lineno == line]
    named = [n for n in calls if _callee(n) in names]
    if op in _SUBSCRIPTED:
        named = [n for n in ast.walk(function) if isinstance(n, ast.Subscript) and n.lineno == line
                 and isinstance(n.ctx, ast.Load)]
    found = named or (calls if len(calls) == 1 else [])
    if len(found) != 1:
        raise Refused(f"line {line} has {len(found) or 'no'} expression{'s' if len(found) != 1 else ''} "
                      f"that could be {op}'s: not one to change")
    return found[0]


def _contiguous(node, format_name):
    """`(node).contiguous(memory_format=torch.F)`, naming torch without a global of the user's."""
    torch_module = ast.Call(func=ast.Name("__import__", ast.Load()), args=[ast.Constant("torch")], keywords=[])
    fmt = ast.Attribute(value=torch_module, attr=format_name, ctx=ast.Load())
    return ast.Call(func=ast.Attribute(value=node, attr="contiguous", ctx=ast.Load()), args=[],
                    keywords=[ast.keyword(arg="memory_format", value=fmt)])


def _swap(function, line, op):
    """Exchanges the operands of the line's one `op` (`a + b`, `torch.add(a, b)`, `a.add(b)`)."""
    operator, names = _COMMUTATIVE.get(op, (None, ()))
    if not names:
        raise Refused(f"{op} is not a commutative elementwise op: its operands cannot be swapped")
    binops = [n for n in ast.walk(function) if isinstance(n, ast.BinOp) and n.lineno == line
              and operator is not None and isinstance(n.op, operator)]
    calls = [n for n in ast.walk(function) if isinstance(n, ast.Call) and n.lineno == line and _callee(n) in names]
    if len(binops) + len(calls) != 1:
        raise Refused(f"line {line} has {len(binops) + len(calls) or 'no'} {op.split('::')[-1]} operations: "
                      "not one to swap")
    if binops:
        b = binops[0]
        b.left, b.right = b.right, b.left
        return
    call = calls[0]
    if any(k.arg == "alpha" for k in call.keywords) or len(call.args) > 2:
        raise Refused(f"{op} with alpha is not commutative (a + alpha * b): its operands are not swapped")
    if isinstance(call.func, ast.Attribute) and len(call.args) == 1 and not _is_torch(call.func.value):
        call.func.value, call.args[0] = call.args[0], call.func.value  # a.add(b) -> b.add(a)
    elif len(call.args) == 2:
        call.args[0], call.args[1] = call.args[1], call.args[0]
    else:
        raise Refused(f"the {op} call on line {line} does not name both operands positionally")


def _is_torch(node):
    return isinstance(node, ast.Name) and node.id == "torch"


def _enclosing(tree, line):
    """The innermost function definition whose body holds `line`."""
    found = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno:
            if found is None or node.lineno >= found.lineno:
                found = node
    if found is None:
        raise Refused(f"line {line} is in no function: only a function's code can be swapped for a variant")
    return found


def _code_named(code, name, first_line):
    if code.co_name == name and code.co_firstlineno == first_line:
        return code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found = _code_named(const, name, first_line)
            if found is not None:
                return found
    return None


def _running(file, first_line, name):
    """The function objects whose code is the definition at file:first_line."""
    return [f for f in gc.get_objects() if type(f) is types.FunctionType  # never another object's __class__
            and f.__code__.co_filename == file and f.__code__.co_firstlineno == first_line
            and f.__code__.co_name == name]


def rewritten(where, op, kind, format_name="contiguous_format"):
    """[(function, its edited code)] for the fix `kind` (contiguous_at, swap_operands) of `op` at
    `where` ("file:line"): every live function object of the definition that holds the line.
    Raises Refused where the line cannot be edited so."""
    file, _, line_text = where.rpartition(":")
    if not line_text.isdigit() or not file:
        raise Refused(f"{where!r} is no file:line")
    line, source = int(line_text), "".join(linecache.getlines(file))
    if not source:
        raise Refused(f"{file}: its source cannot be read")
    tree = ast.parse(source, filename=file)
    function = _enclosing(tree, line)
    first_line = function.decorator_list[0].lineno if function.decorator_list else function.lineno
    if kind == "contiguous_at":
        if format_name not in _FORMATS:
            raise Refused(f"memory format {format_name!r}: not one of {', '.join(_FORMATS)}")
        target = _op_result(function, line, op)
        _replace(function, target, _contiguous(target, format_name))
    elif kind == "swap_operands":
        _swap(function, line, op)
    else:
        raise Refused(f"{kind}: not a fix applied to a line")
    return _compiled(tree, function, file, first_line)


def _replace(root, old, new):
    for parent in ast.walk(root):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list) and any(v is old for v in value):
                value[[i for i, v in enumerate(value) if v is old][0]] = new
                return
    raise Refused("the expression to change was not found again in its function")


def _compiled(tree, function, file, first_line):
    """Each live function of that definition with its edited code: compiled from the whole
    file's tree (so that nesting, class cells and line numbers are the original's)."""
    ast.fix_missing_locations(tree)
    module = compile(tree, file, "exec", dont_inherit=True)
    code = _code_named(module, function.name, first_line) or _code_named(module, function.name, function.lineno)
    if code is None:
        raise Refused(f"{function.name} at {file}:{function.lineno}: its compiled code was not found")
    live = _running(file, code.co_firstlineno, function.name)
    if not live:
        raise Refused(f"{function.name} at {file}:{function.lineno} is not a function this process runs")
    for f in live:
        if f.__code__.co_freevars != code.co_freevars:
            raise Refused(f"{function.name}'s closure differs from its source's ({f.__code__.co_freevars} against "
                          f"{code.co_freevars}): not swapped")
    return [(f, code) for f in live]


@contextlib.contextmanager
def applied(edits):
    """Inside the block, each function runs its edited code; after it, its own again."""
    before = [(f, f.__code__) for f, _ in edits]
    try:
        for f, code in edits:
            f.__code__ = code
        yield
    finally:
        for f, code in before:
            f.__code__ = code
