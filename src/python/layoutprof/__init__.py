"""layoutprof inside your Python: the memory layouts of an eager model's ops, recorded in process.

    import layoutprof
    with layoutprof.profile(json="r.json", html="r.html") as p:
        model(x)
    print(p.report["copies"])

The same recorder, analysis and reports as the `layoutprof` command (installed beside this
package), with `run.model_format` "eager".
"""
from ._torch_check import check_torch

check_torch()

from ._native import version as __version__  # noqa: E402
from .profile import profile  # noqa: E402

__all__ = ["profile", "__version__"]
