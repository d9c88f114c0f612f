"""The torch this process imports must be the one layoutprof's native part was built against."""


def check_torch():
    """Raises ImportError, in one line, when the torch found is another version or C++ ABI."""
    import torch

    from . import _build_info as built

    found = torch.__version__.split("+")[0]
    abi = bool(torch._C._GLIBCXX_USE_CXX11_ABI)
    if found != built.TORCH_VERSION or abi != built.CXX11_ABI:
        raise ImportError(
            f"layoutprof was built against torch {built.TORCH_VERSION} (C++11 ABI {int(built.CXX11_ABI)}) "
            f"but this Python imports torch {torch.__version__} (C++11 ABI {int(abi)}) from "
            f"{torch.__file__}: rebuild it here with {built.REBUILD}")
