"""layoutprof inside your Python: the memory layouts of an eager model's ops, recorded in process.

    import layoutprof
    with layoutprof.profile(json="r.json", html="r.html") as p:
        model(x)
    print(p.report["copies"])

A training loop marks its steps with layoutprof.step() (a no-op when nothing is profiled); then
the warm-up and recorded calls are whole steps: data, forward, loss, backward and optimizer.

The same recorder, analysis and reports as the `layoutprof` command (installed beside this
package), with `run.model_format` "eager".
"""
from ._torch_check import check_native_abi, check_torch

check_torch()

import os as _os  # noqa: E402

import torch as _torch  # noqa: E402

from . import _compiled_lines, _native  # noqa: E402

check_native_abi(_native.pybind11_internals_id, _native.shares_torch_pybind11())
from ._native import version as __version__  # noqa: E402
from .profile import profile, step  # noqa: E402

# An op's source line is the user's: the nearest frame outside torch's package and this one.
_LIBRARY = (_os.path.dirname(_torch.__file__) + _os.sep, _os.path.dirname(__file__) + _os.sep)
_native.watch_user_lines(*_LIBRARY)
# Inside a compiled region: the user's line of the FX node behind inductor's code, not the code's.
_compiled_lines.install(_native, _LIBRARY)

__all__ = ["profile", "step", "__version__"]
