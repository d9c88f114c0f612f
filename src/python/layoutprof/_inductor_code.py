"""What a compiled graph's text says about layouts: the graphs dynamo and inductor print (their
placeholders and nodes, each with its sizes and strides and the user's line above it) and the
code inductor generates (its call(): the buffers it allocates, the kernels it runs on them).

Read from the structured trace's payloads (torch._logging's "torch.__trace" records), which
inductor writes on a cache hit as on a miss, so the answers hold for a cached compile too.
Plain text parsing with no torch import: tests feed it recorded payloads.
"""
import re

# name: "f32[2, 3, 16, 16][768, 256, 16, 1]cpu"  (a placeholder, or a node's value)
_TENSOR = re.compile(r'(\w+): "([a-z]+\d*)\[([^\]]*)\]\[([^\]]*)\](\w*(?::\d+)?)"')
_NODE = re.compile(r'^\s+(\w+): "([a-z]+\d*)\[([^\]]*)\]\[([^\]]*)\][^"]*" = ([\w.]+)\((\w*)')
_FILE = re.compile(r"^\s+# File: (.*?):(\d+) in (\w+), code: (.*)$")
_ITEMSIZE = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1, "b8": 1,
             "c64": 8, "c128": 16}
_TORCH_DTYPE = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
                "int32": "i32", "int8": "i8", "uint8": "u8", "bool": "b8"}
_PARAM_ARG = re.compile(r"\b([Ll]_\w+?_(?:parameters|buffers)_\w+?_)(?=[,)\s])")
_PARAM = re.compile(r"^[Ll]_(?:self|[a-z])_((?:modules_\w+?_)*)(parameters|buffers)_(\w+?)_$")


def _dims(text):
    """"2, 3, 16, 16" -> [2, 3, 16, 16]; a symbolic dim stays a string ("s0")."""
    return [int(d) if d.strip().lstrip("-").isdigit() else d.strip() for d in text.split(",") if d.strip()]


class Layout:
    """A tensor's dtype, sizes and strides, as the graphs print them."""

    def __init__(self, dtype, sizes, strides):
        self.dtype, self.sizes, self.strides = dtype, list(sizes), list(strides)

    def text(self):
        return f"{self.dtype}[{', '.join(map(str, self.sizes))}][{', '.join(map(str, self.strides))}]"

    def known(self):
        return all(isinstance(d, int) for d in self.sizes + self.strides)

    def numel(self):
        n = 1
        for d in self.sizes:
            n *= d if isinstance(d, int) else 0
        return n

    def nbytes(self):
        return self.numel() * _ITEMSIZE.get(self.dtype, 4)

    def order(self):
        """The dims from the outermost stride to the innermost (size-1 dims left out): what a
        copy changes when it changes the layout."""
        dims = [d for d in range(len(self.sizes)) if self.sizes[d] != 1]
        return tuple(sorted(dims, key=lambda d: (-self.strides[d], d)))

    def is_channels_last(self):
        return len(self.sizes) == 4 and self.known() and self.order()[-1:] == (1,) and self.sizes[1] != 1


def parse_layout(text):
    """"f32[2, 3][3, 1]" -> Layout, or None."""
    m = re.match(r"^([a-z]+\d*)\[([^\]]*)\]\[([^\]]*)\]", text)
    return Layout(m.group(1), _dims(m.group(2)), _dims(m.group(3))) if m else None


def channels_last_text(text):
    layout = parse_layout(text)
    return layout is not None and layout.is_channels_last()


def _module_path(modules):
    """"modules_units_modules_0_modules_conv_dw_" -> ["units", "0", "conv_dw"]: dynamo joins the
    path's names with "_modules_", and a name may hold underscores of its own."""
    inner = modules[len("modules_"):-1] if modules else ""
    return inner.split("_modules_") if inner else []


def tensor_name(placeholder):
    """What the user calls a dynamo placeholder: L_x_ -> "x"; L_self_modules_c1_parameters_weight_
    -> "parameter `c1.weight`"."""
    m = _PARAM.match(placeholder)
    if m:
        path = _module_path(m.group(1))
        kind = "parameter" if m.group(2) == "parameters" else "buffer"
        return f"{kind} `{'.'.join(path + [m.group(3)])}`"
    name = re.sub(r"^[Ll]_", "", placeholder)
    return name[:-1] if name.endswith("_") else name


def module_of(placeholder):
    """The module path a parameter placeholder belongs to ("units.0.a"), or ""."""
    m = _PARAM.match(placeholder)
    return ".".join(_module_path(m.group(1))) if m else ""


def placeholders(graph_text):
    """A printed graph's tensor inputs, in order: [(name, Layout)] (symbolic ints left out)."""
    head = next((l for l in graph_text.splitlines() if l.strip().startswith("def forward(")), "")
    return [(m.group(1), Layout(m.group(2), _dims(m.group(3)), _dims(m.group(4)))) for m in _TENSOR.finditer(head)]


def nodes(graph_text):
    """A printed graph's nodes: {name: {"layout", "op", "arg", "where", "code", "module"}} in order;
    each node takes the "# File:" line above it (the user's line), and the module of the first
    parameter it uses."""
    out, where, code = {}, "", ""
    for line in graph_text.splitlines():
        f = _FILE.match(line)
        if f:
            where, code = f"{f.group(1)}:{f.group(2)}", f.group(4).strip()
            continue
        n = _NODE.match(line)
        if n:
            out[n.group(1)] = {"layout": Layout(n.group(2), _dims(n.group(3)), _dims(n.group(4))),
                               "op": n.group(5), "arg": n.group(6), "where": where, "code": code,
                               "module": next((module_of(p) for p in _PARAM_ARG.findall(line)), "")}
    return out


def graph_copies(post_grad_text):
    """The copies a post-grad graph keeps from the user's code (a clone or contiguous that changes
    the layout of its input: a reshape of a transposed view, a .contiguous()): [{"node", "bytes",
    "from", "to", "where", "code"}]."""
    found = nodes(post_grad_text)
    copies = []
    for name, n in found.items():
        if not re.search(r"aten\.(clone|contiguous|_to_copy)\b", n["op"]):
            continue
        src = found.get(n["arg"])
        if src is None or not (src["layout"].known() and n["layout"].known()):
            continue
        if src["layout"].order() == n["layout"].order():
            continue
        copies.append({"node": name, "bytes": n["layout"].nbytes(), "from": src["layout"].text(),
                       "to": n["layout"].text(), "where": n["where"], "code": n["code"]})
    return copies


_KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(cpp_pybinding|cpp|triton)\((.*)$")
_ALLOC = re.compile(r"^(\w+) = empty_strided_\w+\(\(([^)]*)\), \(([^)]*)\), torch\.(\w+)\)")
_VIEW = re.compile(r"^(\w+) = reinterpret_tensor\((\w+), \(([^)]*)\), \(([^)]*)\)")
_ASSERT = re.compile(r"^assert_size_stride\((\w+), \(([^)]*)\), \(([^)]*)\)")
_GROUPED = re.compile(r"^assert_size_stride_grouped\(\(([^)]*)\), \((.*)\), \((.*)\), '")
_EXTERN = re.compile(r"^(\w+) = extern_kernels\.(\w+)\(([^)]*)")
_META = re.compile(r"^assert_tensor_metadata\((\w+), \(([^)]*)\), \(([^)]*)\), torch\.(\w+)")
_CALL = re.compile(r"^(\w+)(?:\.run)?\(([^)]*)\)$")
_SOURCES = re.compile(r"^# Topologically Sorted Source Nodes: \[([^\]]*)\]")


def _kernel_outputs(code):
    """Each generated kernel's outputs by argument position: {name: [bool]}. A C++ kernel's
    non-const pointers are written (an in_out pointer is read and written); a Triton kernel's
    out_ptr and in_out_ptr arguments."""
    kernels = {}
    for line in code.splitlines():
        m = _KERNEL_DEF.match(line)
        if not m:
            continue
        if m.group(2).startswith("cpp"):
            types = re.findall(r"'([^']*)'", m.group(3).split("]", 1)[0])
            kernels[m.group(1)] = ["*" in t and "const" not in t for t in types]
        else:
            kernels[m.group(1)] = None  # read from its signature below
    for name in [k for k, v in kernels.items() if v is None]:
        sig = re.search(name + r"[^\n]*?\n(?:.*\n)*?def \w+\(([^)]*)\)", code)
        args = [a.strip() for a in sig.group(1).split(",")] if sig else []
        kernels[name] = ["out_ptr" in a for a in args]
    return kernels


def _tuples(text):
    """"(2, 3), (8, )" -> [[2, 3], [8]]."""
    return [_dims(t) for t in re.findall(r"\(([^()]*)\)", text)]


def _call_lines(code):
    """call()'s body (a Runner method, or a function in older releases): [(line number in the
    file, line)], up to the first line indented no deeper than its def."""
    lines = code.splitlines()
    start = next((i for i, l in enumerate(lines) if l.strip() in ("def call(self, args):", "def call(args):")), None)
    if start is None:
        return []
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for i in range(start + 1, len(lines)):
        if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) <= indent:
            break
        body.append((i + 1, lines[i]))
    return body


def _call_body(code):
    return [line.strip() for _number, line in _call_lines(code)]


class _CallReader:
    """Walks call(): the layout of every argument and buffer, and the copies that change one."""

    def __init__(self, code):
        self.kernels = _kernel_outputs(code)
        self.layouts, self.dtypes = {}, {}
        self.args = []
        self.conversions = []  # {"kernel", "input", "output", "from", "to", "bytes"}
        self.sources = []      # the last "Source Nodes" comment's node names
        self.extern_inputs = []  # (extern op, its argument names, its source nodes)
        self.returned = []

    def read(self, lines):
        for line in lines:
            self._line(line)
        return self

    def _line(self, line):
        if line.endswith("= args") and not self.args:
            self.args = [a.strip() for a in line.split("=")[0].split(",") if a.strip()]
        elif _SOURCES.match(line):
            self.sources = [s.strip() for s in _SOURCES.match(line).group(1).split(",")]
        elif _ASSERT.match(line):
            m = _ASSERT.match(line)
            self.layouts[m.group(1)] = (_dims(m.group(2)), _dims(m.group(3)))
        elif _GROUPED.match(line):
            m = _GROUPED.match(line)
            for name, sizes, strides in zip(m.group(1).split(","), _tuples(m.group(2)), _tuples(m.group(3))):
                self.layouts[name.strip()] = (sizes, strides)
        elif _ALLOC.match(line):
            m = _ALLOC.match(line)
            self.layouts[m.group(1)] = (_dims(m.group(2)), _dims(m.group(3)))
            self.dtypes[m.group(1)] = _TORCH_DTYPE.get(m.group(4), m.group(4))
        elif _VIEW.match(line):
            m = _VIEW.match(line)
            self.layouts[m.group(1)] = (_dims(m.group(3)), _dims(m.group(4)))
            self.dtypes[m.group(1)] = self.dtypes.get(m.group(2), "f32")
        elif _EXTERN.match(line):
            m = _EXTERN.match(line)
            args = [a.strip() for a in m.group(3).split(",") if "=" not in a]
            self.extern_inputs.append((m.group(2), m.group(1), args, self.sources))
        elif _META.match(line):
            m = _META.match(line)
            self.layouts[m.group(1)] = (_dims(m.group(2)), _dims(m.group(3)))
            self.dtypes[m.group(1)] = _TORCH_DTYPE.get(m.group(4), m.group(4))
        elif line.startswith("return ("):
            self.returned = [r.strip() for r in line[len("return ("):].rstrip(")").split(",") if r.strip()]
        elif _CALL.match(line) and _CALL.match(line).group(1) in self.kernels:
            self._kernel(_CALL.match(line))

    def _layout(self, name, dtype=None):
        if name not in self.layouts:
            return None
        sizes, strides = self.layouts[name]
        return Layout(dtype or self.dtypes.get(name, "f32"), sizes, strides)

    def _kernel(self, m):
        name, args = m.group(1), [a.strip() for a in m.group(2).split(",") if a.strip() and "=" not in a]
        written = self.kernels[name]
        outs = [a for i, a in enumerate(args) if i < len(written) and written[i]]
        ins = [a for i, a in enumerate(args) if i >= len(written) or not written[i]]
        for out in outs:
            o = self._layout(out)
            for src in ins:
                i = self._layout(src, o.dtype if o else None)
                if o is None or i is None or not (o.known() and i.known()) or o.sizes != i.sizes:
                    continue
                if o.order() != i.order():
                    self.conversions.append({"kernel": name, "input": src, "output": out, "from": i.text(),
                                             "to": o.text(), "bytes": o.nbytes()})
                    break


def conversions(output_code):
    """The layout conversions inductor's generated call() makes: a kernel that writes a buffer of
    an input's sizes in another order. Each with the extern kernel it feeds, if any:
    [{"kernel", "input", "output", "from", "to", "bytes", "input_index", "feeds", "feeds_sources",
    "returned"}] (input_index: the graph input's position, or -1 for an intermediate)."""
    reader = _CallReader(output_code).read(_call_body(output_code))
    for c in reader.conversions:
        c["input_index"] = reader.args.index(c["input"]) if c["input"] in reader.args else -1
        c["returned"] = c["output"] in reader.returned
        c["feeds"], c["feeds_sources"] = "", []
        for op, _out, args, sources in reader.extern_inputs:
            if c["output"] in args:
                c["feeds"], c["feeds_sources"] = op, sources
                break
    return reader.conversions


_STATEMENT = re.compile(r"^\s+(?:[\w, ]+ = )?([\w.]+?)(?:\.run)?\(")
_COPY_OP = re.compile(r"aten\.(clone|contiguous|_to_copy|copy_?)\b")


def _call_statements(code):
    """call()'s statements that call something: [(line number in the file, callee)]."""
    return [(number, m.group(1)) for number, line in _call_lines(code) for m in [_STATEMENT.match(line)] if m]


def _chosen_node(names, post_nodes):
    """The node whose line a kernel call running post-grad nodes `names` takes: a layout copy's
    when it has one (the line where a layout is changed), else the first node's that has a line."""
    known = [n for n in names if n in post_nodes and post_nodes[n]["where"]]
    return next((n for n in known if _COPY_OP.search(post_nodes[n]["op"])), known[0] if known else None)


def call_sites(output_code, provenance, post_nodes, pre_nodes):
    """The user's line of each kernel call in call(): {line number in the generated file: (file,
    line, module)}. `provenance` is inductor's node mappings: "cppCodeToPost" ({"<kernel>:<k>":
    [post-grad node names]}, k the call's order in the code) and "postToPre" (post-grad node ->
    dynamo's nodes); `post_nodes` and `pre_nodes` the post-grad and dynamo graphs' nodes (nodes():
    a dynamo node that uses a parameter knows its module, relative to the compiled module; ""
    unknown). Each provenance entry takes the next call() statement that calls its kernel."""
    statements = _call_statements(output_code)
    keyed = []
    for key, names in (provenance.get("cppCodeToPost") or {}).items():
        kernel, _, order = key.rpartition(":")
        if kernel and order.isdigit():
            keyed.append((int(order), kernel, names))
    to_pre = provenance.get("postToPre") or {}
    sites, at = {}, 0
    for _order, kernel, names in sorted(keyed, key=lambda k: k[0]):
        j = next((j for j in range(at, len(statements)) if statements[j][1] == kernel), None)
        if j is None:
            continue
        at = j + 1
        node = _chosen_node(names, post_nodes)
        path, _, line = post_nodes[node]["where"].rpartition(":") if node else ("", "", "")
        if path and line.isdigit():
            module = next((pre_nodes[p]["module"] for p in to_pre.get(node, []) if pre_nodes.get(p, {}).get("module")), "")
            sites[statements[j][0]] = (path, int(line), module)
    return sites
