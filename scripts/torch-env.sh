# Sourced by the set-up scripts: which LibTorch to build against, and where.
#
# TORCH_PYTHON unset   Debian's libtorch-dev (1.13) and /usr/bin/python3 (python3-torch) for the
#                      samples; build folder build/.
# TORCH_PYTHON=PATH    the LibTorch inside that interpreter's torch package (a PyPI wheel, CPU or
#                      CUDA): torch.utils.cmake_prefix_path, the wheel's C++ ABI flag (TorchConfig
#                      passes it on as TORCH_CXX_FLAGS), its CUDA version; build-torch-VERSION/.
# TORCH_PYTHON=wheel   the 2.x wheel the project tests against (LAYOUTPROF_WHEEL, by default
#                      torch 2.14.1 with CUDA 13 and torchvision 0.29.1), installed once with pip
#                      into a venv under LAYOUTPROF_CACHE (~/.cache/layoutprof) and reused.

LAYOUTPROF_WHEEL=${LAYOUTPROF_WHEEL:-"torch==2.14.1 torchvision==0.29.1"}
LAYOUTPROF_CACHE=${LAYOUTPROF_CACHE:-$HOME/.cache/layoutprof}

# install_missing WHO PACKAGE...: installs from Debian's archive those not installed yet
# (sudo when not root); WHO prefixes the line saying so.
install_missing() {
  local who=$1 p
  shift
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "$who: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

# The venv for LAYOUTPROF_WHEEL, made (or finished) if needed; prints its python.
wheel_python() {
  local name venv
  name=$(echo "$LAYOUTPROF_WHEEL" | tr -c 'A-Za-z0-9.=\n' '_' | tr -s '_=' '-')
  venv="$LAYOUTPROF_CACHE/venv-$name"
  if [ ! -f "$venv/.complete" ]; then
    echo "setup: installing $LAYOUTPROF_WHEEL into $venv (once; several GB)" >&2
    mkdir -p "$LAYOUTPROF_CACHE"
    "${LAYOUTPROF_VENV_PYTHON:-python3}" -m venv "$venv" >&2
    # shellcheck disable=SC2086
    "$venv/bin/python" -m pip install -q --disable-pip-version-check $LAYOUTPROF_WHEEL >&2
    touch "$venv/.complete"
  fi
  model_libraries "$venv"
  echo "$venv/bin/python"
}

# Model libraries for the samples exported from them (transformers, timm), installed without
# their dependencies so that the venv's torch stays as it is, plus the few pure-Python packages
# they import. Once per venv; a machine without them skips those samples (unmade.json).
MODEL_LIBRARIES=(transformers==5.23.0 timm==1.0.31 safetensors==0.8.0 huggingface-hub==2.4.0
                 packaging==26.4 regex==2026.11.19 tqdm==4.70.1 pyyaml==6.0.4 httpx2==2.16.2
                 httpcore2==2.16.2 h11==0.16.0 idna==3.20 truststore==0.10.5)
model_libraries() {
  local venv=$1
  [ -f "$venv/.model-libraries" ] && return 0
  echo "setup: installing ${MODEL_LIBRARIES[*]} into $venv (once)" >&2
  if "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "${MODEL_LIBRARIES[@]}" >&2; then
    touch "$venv/.model-libraries"
  else
    echo "setup: the model libraries did not install; their samples are skipped" >&2
  fi
}

# A CUDA toolkit for a CUDA wheel's CMake files where the machine has none: NVIDIA's toolkit
# wheels of the wheel's CUDA version (nvcc, runtime headers, CUPTI) in a venv of their own,
# made once under LAYOUTPROF_CACHE, with the unversioned library names CMake looks for.
# Prints the toolkit's root. CUDA 13 wheels put the toolkit in nvidia/cu13/.
cuda_toolkit_from_pypi() {
  local version=$1 major=${1%%.*} venv="$LAYOUTPROF_CACHE/cuda-$1"
  local root="$venv/toolkit"
  if [ ! -f "$venv/.complete" ]; then
    echo "setup: no CUDA toolkit (nvcc) here; installing CUDA $version's from PyPI into $venv" >&2
    "${LAYOUTPROF_VENV_PYTHON:-python3}" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install -q --disable-pip-version-check \
      "nvidia-cuda-nvcc==$version.*" "nvidia-cuda-runtime==$version.*" "nvidia-cuda-cccl==$version.*" \
      "nvidia-cuda-crt==$version.*" "nvidia-nvvm==$version.*" "nvidia-cuda-cupti==$version.*" >&2
    local site
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    if [ ! -x "$site/nvidia/cu$major/bin/nvcc" ]; then
      echo "setup: CUDA $version's toolkit wheels have no nvidia/cu$major/bin/nvcc; install a CUDA" \
        "$major toolkit and set CUDAToolkit_ROOT" >&2
      return 1
    fi
    ln -sfn "$site/nvidia/cu$major" "$root"
    ln -sfn lib "$root/lib64" 2>/dev/null || true
    for lib in cudart cupti; do
      ln -sf "$(basename "$(ls "$root"/lib/lib$lib.so.* | head -n 1)")" "$root/lib/lib$lib.so"
    done
    touch "$venv/.complete"
  fi
  echo "$root"
}

# Sets TORCH_PY, TORCH_VERSION, BUILD_DIR (unless set) and TORCH_CMAKE_ARGS.
torch_env_resolve() {
  TORCH_CMAKE_ARGS=()
  if [ -z "${TORCH_PYTHON:-}" ]; then
    TORCH_PY=/usr/bin/python3  # Debian's python3-torch, whatever python3 is first on PATH
    TORCH_VERSION=$(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null | sed 's/[-+].*//')
    BUILD_DIR=${BUILD_DIR:-build}
    TORCH_CMAKE_ARGS=(-DLAYOUTPROF_TORCH_PYTHON="$TORCH_PY")
    return
  fi
  if [ "$TORCH_PYTHON" = wheel ]; then
    TORCH_PY=$(wheel_python)
  else
    TORCH_PY=$TORCH_PYTHON
  fi
  local info dir prefix cuda
  info=$("$TORCH_PY" -c '
import os, torch
print(torch.__version__)
print(os.path.dirname(torch.__file__))
print(torch.utils.cmake_prefix_path)
print(torch.version.cuda or "cpu")') || {
    echo "setup: $TORCH_PY cannot import torch" >&2
    return 1
  }
  { read -r TORCH_VERSION; read -r dir; read -r prefix; read -r cuda; } <<<"$info"
  BUILD_DIR=${BUILD_DIR:-build-torch-$TORCH_VERSION}
  # The torch folder itself first: its lib/ must win over Debian's libtorch.so and libc10.so,
  # which TorchConfig's find_library would otherwise take from the system paths.
  TORCH_CMAKE_ARGS=(-DCMAKE_PREFIX_PATH="$dir;$prefix" -DLAYOUTPROF_TORCH_PYTHON="$TORCH_PY")
  if [ "$cuda" != cpu ]; then
    # A CUDA wheel: TorchConfig needs a CUDA toolkit of the same major version (nvcc, headers),
    # and NVRTC, which the wheel's nvidia-cuda-nvrtc has when the toolkit does not.
    local root=${CUDAToolkit_ROOT:-/usr/local/cuda}
    if [ ! -x "$root/bin/nvcc" ] && command -v nvcc >/dev/null; then
      root=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
    fi
    if [ ! -x "$root/bin/nvcc" ]; then
      root=$(cuda_toolkit_from_pypi "$cuda") || return 1
    fi
    TORCH_CMAKE_ARGS+=(-DCUDA_TOOLKIT_ROOT_DIR="$root" -DCUDAToolkit_ROOT="$root"
                       -DCMAKE_CUDA_COMPILER="$root/bin/nvcc")
    local nvrtc
    nvrtc=$(ls "$root"/lib64/libnvrtc.so "$root"/lib/libnvrtc.so 2>/dev/null | head -n 1 || true)
    if [ -z "$nvrtc" ]; then
      nvrtc=$(ls "$(dirname "$dir")"/nvidia/cu"${cuda%%.*}"/lib/libnvrtc.so.* \
                 "$(dirname "$dir")"/nvidia/cuda_nvrtc/lib/libnvrtc.so.* 2>/dev/null |
              grep -v builtins | head -n 1 || true)
      [ -n "$nvrtc" ] && TORCH_CMAKE_ARGS+=(-DCUDA_nvrtc_LIBRARY="$nvrtc")
    fi
  fi
}
