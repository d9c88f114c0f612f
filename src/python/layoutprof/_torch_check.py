"""The torch this process imports must be the one layoutprof's native part was built against, and
its native module must share torch's pybind11 internals (one registry of bound types)."""


def check_torch() -> None:
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



def check_native_abi(native_id: str, shares_torch_registry: bool) -> None:
    """Raises ImportError, in one line, when the native module (built for pybind11 internals
    `native_id`) does not see torch's bound classes in its pybind11 registry: it was built with
    another pybind11 or compiler family than this torch, and the two keep apart registries."""
    if not shares_torch_registry:
        raise ImportError(
            f"layoutprof's native module was built for pybind11 internals {native_id}, which are not this torch's "
            "(its classes are not in that registry): rebuild layoutprof against this torch with the compiler "
            "family torch was built with")
