"""The installed package's native module against the torch it runs with: it shares torch's
pybind11 internals, a module built for others is refused at import in one line, it exports
PyInit__native alone, and its stub (_native.pyi, for editors and mypy) names what it has. Run by
scripts/package-check.sh with the venv's Python; exit 1 on a failure."""
import ast
import os
import subprocess
import sys

import layoutprof
from layoutprof import _native
from layoutprof._torch_check import check_native_abi

failures = []


def check(ok, what):
    print(("passed: " if ok else "FAILED: ") + what)
    if not ok:
        failures.append(what)


check(_native.shares_torch_pybind11(),
      f"the native module's pybind11 internals ({_native.pybind11_internals_id}) hold torch's classes")
try:
    check_native_abi("__pybind11_internals_v4_gcc_libstdcpp_cxxabi1011__", False)
    check(False, "a module built for other pybind11 internals is refused")
except ImportError as e:
    said = str(e)
    check("\n" not in said and "v4_gcc_libstdcpp_cxxabi1011" in said and "rebuild layoutprof" in said,
          f"a module built for other pybind11 internals is refused in one line: {said}")
check_native_abi(_native.pybind11_internals_id, True)
exported = subprocess.run(["nm", "-D", "--defined-only", _native.__file__], capture_output=True, text=True, check=True)
symbols = [line.split()[-1] for line in exported.stdout.splitlines()]
check(symbols == ["PyInit__native"], f"{_native.__file__} exports {symbols[:5]} ({len(symbols)} symbols)")


def stub_names():
    """The stub's top-level names, and each class's, as {"": {...}, "Session": {...}}."""
    tree = ast.parse(open(os.path.join(os.path.dirname(_native.__file__), "_native.pyi")).read())
    names = {"": set()}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[""].add(node.name)
        if isinstance(node, ast.AnnAssign):
            names[""].add(node.target.id)
        if isinstance(node, ast.ClassDef):
            names[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef) and n.name != "__init__"}
    return names


def module_names(obj):
    return {n for n in dir(obj) if not n.startswith("__")}


stub = stub_names()
check(stub[""] == module_names(_native), f"_native.pyi's names are the module's: {stub[''] ^ module_names(_native)}")
for cls in ("Session", "Report"):
    have = module_names(getattr(_native, cls)) - {"_pybind11_conduit_v1_"}
    check(stub[cls] == have, f"_native.pyi's {cls} methods are the module's: {stub[cls] ^ have}")
print("layoutprof", layoutprof.__version__)
sys.exit(1 if failures else 0)
