"""The arguments of a frame dynamo compiles, as its guards name them, described in layoutprof's
layout vocabulary: what a recompile's "before" and "after" say.

Dynamo names a guarded tensor by its source in the frame: `x`, `kw['y']`, `xs[1]`, `self.w`,
`x._base`, or as a shape guard does, `L['x'].stride()[0]`. resolve() evaluates such a name over
the frame's locals (names, constant subscripts and attributes only: nothing is called).
"""
import ast
import linecache
import re

import torch

from . import _native

_MAX_SNAPSHOT = 32  # tensors described per compile
_SHORT_DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
                 torch.int64: "i64", torch.int32: "i32", torch.int8: "i8", torch.uint8: "u8", torch.bool: "b8"}
# "tensor 'kw['y']' stride mismatch at index 0. expected 4, actual 1" (a tensor match guard)
_TENSOR_GUARD = re.compile(r"tensor '(.+?)' (stride|size|dtype|device|requires_grad|dispatch key set)\w* mismatch"
                           r"(?: at index (\d+))?\.?(?: expected (\S+?),? actual (\S+?)\.?$)?")
# "L['x'].stride()[1] == 1", "Eq(L['kw']['y'].size()[0], 8)" (a shape guard, once a dim is dynamic)
_SHAPE_GUARD = re.compile(r"(L\[[^\]]+\](?:\[[^\]]+\]|\.\w+)*)\.(stride|size)\(\)\[(\d+)\]")


def guard(reason):
    """Dynamo's guard failure, parsed: {"tensor", "kind", "dim", "expected", "actual"}; kind is
    stride, size, dtype, device, requires_grad or dispatch_key_set for a tensor's guard, "other"
    (tensor "") for any other."""
    text = reason.split(": ", 1)[1] if re.match(r"^\d+/\d+: ", reason) else reason
    m = _TENSOR_GUARD.search(text)
    if m:
        return {"tensor": m.group(1), "kind": m.group(2).replace(" ", "_"), "dim": int(m.group(3) or -1),
                "expected": m.group(4) or "", "actual": m.group(5) or ""}
    m = _SHAPE_GUARD.search(text)
    if m:
        return {"tensor": source_name(m.group(1)), "kind": m.group(2), "dim": int(m.group(3)),
                "expected": "", "actual": ""}
    return {"tensor": "", "kind": "other", "dim": -1, "expected": "", "actual": ""}


def source_name(source):
    """Dynamo's local source as the user's code names it: L['x'] -> x, L['kw']['y'] -> kw['y']."""
    text = source.strip()
    if text.startswith(("L['", 'L["')):
        end = text.index("]")
        return text[3:end - 1] + text[end + 1:]
    return text


def resolve(source, frame_locals):
    """The value `source` names in frame_locals, or None where it names nothing there."""
    try:
        node = ast.parse(source_name(source), mode="eval").body
    except SyntaxError:
        return None
    return _value(node, frame_locals)


def _value(node, frame_locals):
    if isinstance(node, ast.Name):
        return frame_locals.get(node.id)
    if isinstance(node, ast.Attribute):
        inner = _value(node.value, frame_locals)
        return getattr(inner, node.attr, None) if inner is not None else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        inner = _value(node.value, frame_locals)
        try:
            return inner[node.slice.value] if inner is not None else None
        except (KeyError, IndexError, TypeError):
            return None
    return None


def _dims(values):
    return "x".join(str(v) for v in values)


def describe(tensor):
    """"strided: a view of a 2x9 tensor, i64[2, 1][9, 1]": the layout's word, what it is a view
    of where it is one, and its dtype, sizes and strides."""
    if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.strided:
        return ""
    sizes, strides = list(tensor.shape), list(tensor.stride())
    words = _native.layout_label(sizes, strides)
    base = tensor._base
    if base is not None and base.numel() != tensor.numel():
        words += f": a view of a {_dims(base.shape)} tensor"
    dtype = _SHORT_DTYPES.get(tensor.dtype, str(tensor.dtype).replace("torch.", ""))
    return f"{words}, {dtype}[{', '.join(map(str, sizes))}][{', '.join(map(str, strides))}]"


def snapshot(frame_locals):
    """{source: description} of the tensors among a frame's locals and one level inside their
    lists, tuples and dicts, named as dynamo names them."""
    out = {}
    for name, value in frame_locals.items():
        for source, item in _members(name, value):
            if len(out) >= _MAX_SNAPSHOT:
                return out
            if isinstance(item, torch.Tensor):
                out[source] = describe(item)
    return out


def _members(name, value):
    yield name, value
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value[:_MAX_SNAPSHOT]):
            yield f"{name}[{i}]", item
    elif isinstance(value, dict):
        for key, item in list(value.items())[:_MAX_SNAPSHOT]:
            if isinstance(key, (str, int)):
                yield f"{name}[{key!r}]", item


def caller_expression(tensor, params, call_code):
    """The caller's own expression for the compiled function's argument `tensor` (dynamo's name
    in the callee: `ids`, `kw['scale']`, `xs[1]`), read from the call's line: `ids[:, -1:]` in
    `step(ids[:, -1:])`; "" where the line does not tell. `params`: the compiled function's
    positional parameters, in order ("self" first for a module's forward)."""
    root = re.match(r"^\w+", tensor or "")
    try:
        call = next((n for n in ast.walk(ast.parse(call_code.strip().rstrip(":"))) if isinstance(n, ast.Call)), None)
    except SyntaxError:
        return ""
    if root is None or call is None:
        return ""
    name, rest = root.group(0), tensor[root.end():]
    keyword = re.match(r"^\[['\"](\w+)['\"]\](.*)$", rest)
    if name not in params and keyword:  # **kw: the keyword of the call
        value = next((k.value for k in call.keywords if k.arg == keyword.group(1)), None)
        return ast.unparse(value) + keyword.group(2) if value is not None else ""
    if name not in params:
        return ""
    position = params.index(name) - (1 if params[:1] == ["self"] else 0)
    value = call.args[position] if 0 <= position < len(call.args) else None
    if value is None or isinstance(value, ast.Starred):
        value = next((k.value for k in call.keywords if k.arg == name), None)
    return _item_text(value, rest) if value is not None else ""


def _item_text(node, rest):
    """`node`'s code with the subscripts `rest` applied; an item of a list or tuple written out
    in the call is that item's own code."""
    item = re.match(r"^\[(\d+)\](.*)$", rest)
    if item and isinstance(node, (ast.List, ast.Tuple)) and int(item.group(1)) < len(node.elts):
        return _item_text(node.elts[int(item.group(1))], item.group(2))
    return ast.unparse(node) + rest


def assigned_at(name, called_at):
    """Where the calling function last assigns the bare name `name` before its line `called_at`
    ("file:line"): ("file:line", that line's code), or None (a parameter, a global, an expression
    that is no name). Read from the source, not run: the nearest assignment above the call in
    the innermost function around it."""
    file, _, line = called_at.rpartition(":")
    if not re.fullmatch(r"[A-Za-z_]\w*", name or "") or not line.isdigit():
        return None
    tree = _parsed(file)
    if tree is None:
        return None
    line = int(line)
    scope = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= line <= (node.end_lineno or node.lineno) and node.lineno >= getattr(scope, "lineno", 0):
            scope = node
    found = None
    for node in ast.walk(scope):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) else []
        hit = any(isinstance(t, ast.Name) and t.id == name for t in targets)
        if hit and node.lineno < line and (found is None or node.lineno > found):
            found = node.lineno
    if found is None:
        return None
    return f"{file}:{found}", linecache.getline(file, found).strip()


_trees = {}


def _parsed(file):
    """A source file's syntax tree, parsed once; None where it cannot be read or parsed."""
    if file not in _trees:
        try:
            _trees[file] = ast.parse("".join(linecache.getlines(file)) or "\n")
        except (SyntaxError, ValueError):
            _trees[file] = None
    return _trees[file]
