# The Python package's builds (pip install ., LAYOUTPROF_PYTHON=ON): the LibTorch of
# the torch that the building Python imports, found as scripts/torch-env.sh finds a wheel's
# (its folder first, so that its lib/ wins over a system LibTorch; its cmake_prefix_path; for a
# CUDA wheel, a CUDA toolkit and the wheel's NVRTC). Skipped where Torch_DIR is given.
#
# LAYOUTPROF_TORCH_FROM: another Python whose torch (the same release as the building Python's)
# to take LibTorch from: the C++ objects are then those that Python's builds made (ccache), and
# only the files that include Python's headers compile anew (CI's Python 3.12 build).
find_package(Python 3.8 REQUIRED COMPONENTS Interpreter Development.Module)
set(LAYOUTPROF_TORCH_FROM "${Python_EXECUTABLE}" CACHE FILEPATH "the Python whose torch's LibTorch to build against")
execute_process(
  COMMAND ${LAYOUTPROF_TORCH_FROM} -c
          "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.utils.cmake_prefix_path); print(torch.version.cuda or 'cpu')"
  OUTPUT_VARIABLE _torch_info RESULT_VARIABLE _torch_rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _torch_rc EQUAL 0)
  # One line, unwrapped (NOTICE), then CMake's error, which wraps its text.
  message(NOTICE "layoutprof: ${LAYOUTPROF_TORCH_FROM} cannot import torch (pip's build isolation hides the venv's "
                 "torch): pip install --no-build-isolation, in a venv with torch")
  message(FATAL_ERROR "layoutprof: no torch to build against (the line above)")
endif()
string(REPLACE "\n" ";" _torch_info "${_torch_info}")
list(GET _torch_info 0 _torch_dir)
list(GET _torch_info 1 _torch_prefix)
list(GET _torch_info 2 _torch_cuda)
list(PREPEND CMAKE_PREFIX_PATH "${_torch_dir}" "${_torch_prefix}")
set(LAYOUTPROF_TORCH_PYTHON "${LAYOUTPROF_TORCH_FROM}" CACHE FILEPATH "Python whose torch matches LibTorch")
if(NOT _torch_cuda STREQUAL "cpu")
  # TorchConfig needs a CUDA toolkit of the wheel's major version: CUDAToolkit_ROOT if given,
  # else /usr/local/cuda, else the toolkit of the nvcc on PATH.
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  elseif(NOT CUDAToolkit_ROOT)
    find_program(_nvcc nvcc)
    if(NOT _nvcc)
      message(FATAL_ERROR "layoutprof: torch ${_torch_cuda} is a CUDA build and no nvcc was found: install "
                          "the CUDA toolkit, or pass -DCUDAToolkit_ROOT=... (pip: -Ccmake.define.CUDAToolkit_ROOT=...)")
    endif()
    get_filename_component(_nvcc "${_nvcc}" REALPATH)
    get_filename_component(CUDAToolkit_ROOT "${_nvcc}" DIRECTORY)
    get_filename_component(CUDAToolkit_ROOT "${CUDAToolkit_ROOT}" DIRECTORY)
  endif()
  # Cache entries, as the command line's -D would make them: FindCUDA reads its root from there.
  set(CUDAToolkit_ROOT "${CUDAToolkit_ROOT}" CACHE PATH "the CUDA toolkit")
  set(CUDA_TOOLKIT_ROOT_DIR "${CUDAToolkit_ROOT}" CACHE PATH "the CUDA toolkit")
  set(CMAKE_CUDA_COMPILER "${CUDAToolkit_ROOT}/bin/nvcc" CACHE FILEPATH "nvcc")
  # NVRTC from the wheel's own CUDA libraries where the toolkit has none.
  if(NOT EXISTS "${CUDAToolkit_ROOT}/lib64/libnvrtc.so" AND NOT EXISTS "${CUDAToolkit_ROOT}/lib/libnvrtc.so")
    string(REGEX MATCH "^[0-9]+" _cuda_major "${_torch_cuda}")
    get_filename_component(_site "${_torch_dir}" DIRECTORY)
    file(GLOB _nvrtc "${_site}/nvidia/cu${_cuda_major}/lib/libnvrtc.so.*" "${_site}/nvidia/cuda_nvrtc/lib/libnvrtc.so.*")
    list(FILTER _nvrtc EXCLUDE REGEX "builtins")
    if(_nvrtc)
      list(GET _nvrtc 0 _nvrtc)
      set(CUDA_nvrtc_LIBRARY "${_nvrtc}" CACHE FILEPATH "NVRTC")
    endif()
  endif()
endif()
