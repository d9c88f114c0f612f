#!/usr/bin/env bash
# Sets layoutprof up on a Debian 12 machine: the Debian packages it needs (installed only if
# missing), a CMake build, and the sample models that are not committed. Safe to run again;
# does only what is missing. Prints nothing on stdout but, last, the build folder.
#
# Which LibTorch to build against:
#   scripts/setup.sh                          Debian's libtorch-dev (1.13), into build/
#   TORCH_PYTHON=/path/to/python scripts/setup.sh
#                                             the LibTorch inside that Python's torch (any 2.x
#                                             wheel, CPU or CUDA), into build-torch-VERSION/
#   TORCH_PYTHON=wheel scripts/setup.sh       the tested 2.x wheel (torch 2.14.1 with CUDA and
#                                             torchvision 0.29.1), in a venv it makes once under
#                                             ~/.cache/layoutprof/ (LAYOUTPROF_CACHE)
# BUILD_DIR overrides the build folder. LAYOUTPROF_SANITIZE=address,undefined builds with those
# sanitizers (layoutprof's code; LibTorch is used as it is), reusing build/'s samples.
# LAYOUTPROF_WERROR=ON makes warnings errors (scripts/test.sh sets it; off otherwise).
# BUILD_TARGETS="a b" builds only those targets (and what they need); the default is all.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/torch-env.sh

PACKAGES=(g++ cmake ninja-build ccache pkg-config libpfm4-dev
          libcli11-dev nlohmann-json3-dev libsimdjson-dev libfmt-dev libzip-dev libgtest-dev libgmock-dev googletest
          python3-jsonschema python3-venv chromium chromium-driver python3-selenium time)
# Debian's LibTorch and its Python (for the samples), unless another torch is asked for.
[ -n "${TORCH_PYTHON:-}" ] || PACKAGES+=(libtorch-dev python3-torch python3-torchvision)

install_missing setup "${PACKAGES[@]}"

torch_env_resolve  # TORCH_PY, TORCH_VERSION, BUILD_DIR, TORCH_CMAKE_ARGS (scripts/torch-env.sh)
# Every suite's builds share the cache: one CI run's nearly fill ccache's default 5 GB (4.45 GB seen).
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-15G}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# Paths relative to the checkout, and no working directory in the hash: another clone (CI's)
# reuses what this one compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
sanitize_args=()
if [ -n "${LAYOUTPROF_SANITIZE:-}" ]; then
  flags="-fsanitize=$LAYOUTPROF_SANITIZE -fno-omit-frame-pointer -fno-sanitize-recover=all"
  sanitize_args=(-DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$LAYOUTPROF_SANITIZE")
fi
werror=${LAYOUTPROF_WERROR:-OFF}
# The tests link the C++ API statically; liblayoutprof (position-independent, hidden objects) is
# built and checked by scripts/packaging.sh.
options=(-DLAYOUTPROF_WERROR="$werror" -DLAYOUTPROF_SHARED_API=OFF)
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  echo "setup: configuring $BUILD_DIR against LibTorch $TORCH_VERSION${LAYOUTPROF_SANITIZE:+ with -fsanitize=$LAYOUTPROF_SANITIZE}" >&2
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${options[@]}" \
    "${TORCH_CMAKE_ARGS[@]}" ${sanitize_args[@]+"${sanitize_args[@]}"} >&2
elif ! grep -qx "LAYOUTPROF_WERROR:BOOL=$werror" "$BUILD_DIR/CMakeCache.txt" ||
     ! grep -qx "LAYOUTPROF_SHARED_API:BOOL=OFF" "$BUILD_DIR/CMakeCache.txt"; then
  cmake -S . -B "$BUILD_DIR" "${options[@]}" >&2
fi
targets=()
[ -z "${BUILD_TARGETS:-}" ] || read -ra targets <<<"--target $BUILD_TARGETS"
cmake --build "$BUILD_DIR" -j "$(nproc)" ${targets[@]+"${targets[@]}"} >&2

# Every sample this torch can script, the large ones included, so that each build's tests run
# on archives its own torch scripted (the committed ones are 1.13's, the 2.x-only ones 2.x's).
# Made again whenever a file they are made from changes: make_samples.py and the modules it
# imports (samples/sample_*.py: the table's machinery, the check, one module per sample family).
stamp=$(sha256sum $(printf '%s\n' samples/make_samples.py samples/sample_*.py | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)
if [ -n "${LAYOUTPROF_SANITIZE:-}" ] && [ -z "${TORCH_PYTHON:-}" ]; then
  # The same torch makes the same samples: build/'s (made first if missing).
  [ "$(cat build/samples/.done 2>/dev/null)" = "$stamp" ] || BUILD_DIR=build LAYOUTPROF_SANITIZE= scripts/setup.sh >/dev/null
  ln -sfn "$PWD/build/samples" "$BUILD_DIR/samples"
elif [ "$(cat "$BUILD_DIR/samples/.done" 2>/dev/null)" != "$stamp" ]; then
  echo "setup: making samples in $BUILD_DIR/samples with $TORCH_PY (torch $TORCH_VERSION)" >&2
  mkdir -p "$BUILD_DIR/samples"
  "$TORCH_PY" samples/make_samples.py --out "$BUILD_DIR/samples" --large >&2
  echo "$stamp" > "$BUILD_DIR/samples/.done"
fi
echo "$BUILD_DIR"
