#!/usr/bin/env bash
# Sets layoutprof up on a Debian 12 machine: the Debian packages it needs (installed only if
# missing), a CMake build in build/, and the large sample models (resnet18, small_transformer)
# in build/samples/. Safe to run again; does only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(g++ cmake ninja-build ccache pkg-config libpfm4-dev
          libtorch-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev googletest
          python3-torch python3-torchvision python3-jsonschema)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

BUILD_DIR=${BUILD_DIR:-build}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" >&2

# Torch lives in Debian's python3-torch: always /usr/bin/python3, whatever python3 is on PATH.
if [ ! -f "$BUILD_DIR/samples/.done" ]; then
  echo "setup: making the large samples in $BUILD_DIR/samples" >&2
  mkdir -p "$BUILD_DIR/samples"
  /usr/bin/python3 samples/make_samples.py --out "$BUILD_DIR/samples" --large >&2
  touch "$BUILD_DIR/samples/.done"
fi
