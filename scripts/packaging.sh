#!/usr/bin/env bash
# Builds layoutprof as a packager or a user does, with plain CMake and no help from
# scripts/setup.sh, and checks what `cmake --install` puts under a prefix:
#   gcc-release   GCC 12, -DCMAKE_BUILD_TYPE=Release, against Debian's LibTorch 1.13
#   clang         clang 14 (CMake's default build type), against Debian's LibTorch 1.13
#   gcc-wheel     GCC 12, Release, against the tested 2.x wheel (TORCH_PYTHON=wheel's venv)
#   clang-wheel   clang 14, against the same wheel
# Each builds the installed programs with warnings as errors (so "builds clean" is checked),
# then installs into a fresh prefix and runs the installed layoutprof: --version, a model run
# with --json, render of that report. The C++ API is one shared library exporting only the
# layoutprof namespace (nm -D). Then samples/cpp, a program using the C++ API, is built against
# the installed package (find_package(layoutprof), with every find_package of the library's own
# dependencies disabled) and its report of a TorchScript
# model is compared with the installed command's (copies, bytes, module paths); the wheel's
# package is shown to refuse Debian's LibTorch at configure time. The tests are not built here
# (the other suites build and run them). The last line is the summary: "packaging: N passed,
# N failed".
#
#   scripts/packaging.sh [VARIANT...]     default: all four
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/torch-env.sh
install_missing packaging g++ clang-14 cmake ninja-build ccache libtorch-dev python3-torch \
  libpfm4-dev libcli11-dev nlohmann-json3-dev libsimdjson-dev libfmt-dev libzip-dev
# Every suite's builds share the cache: one CI run's nearly fill ccache's default 5 GB (4.45 GB seen).
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-15G}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
variants=("$@")
((${#variants[@]})) || variants=(gcc-release clang gcc-wheel clang-wheel)
passed=0 failed=0

check() {  # description command...
  if "${@:2}" >"$log" 2>&1; then
    passed=$((passed + 1)); echo "ok    $1"
  else
    failed=$((failed + 1)); echo "FAIL  $1 (last lines of $log:)"; tail -n 15 "$log" | sed 's/^/      /'
  fi
}

configure() {  # variant build_dir
  local cc=gcc cxx=g++ type=(-DCMAKE_BUILD_TYPE=Release) torch=()
  case "$1" in clang*) cc=clang-14 cxx=clang++-14 type=() ;; esac
  TORCH_PREFIX_PATH="" TORCH_OTHER_ARGS=()  # for the sample program, beside the package's prefix
  if [[ "$1" == *wheel ]]; then
    TORCH_PYTHON=wheel torch_env_resolve || return 1
    torch=("${TORCH_CMAKE_ARGS[@]}")
    local arg
    for arg in "${torch[@]}"; do
      case "$arg" in -DCMAKE_PREFIX_PATH=*) TORCH_PREFIX_PATH=${arg#-DCMAKE_PREFIX_PATH=} ;;
                     *) TORCH_OTHER_ARGS+=("$arg") ;; esac
    done
  fi
  rm -rf "$2"
  CC=$cc CXX=$cxx cmake -S . -B "$2" -G Ninja ${type[@]+"${type[@]}"} -DLAYOUTPROF_WERROR=ON \
    -DLAYOUTPROF_BUILD_TESTS=OFF ${torch[@]+"${torch[@]}"}
}

# Each step says what failed: a function run as a condition ignores set -e.
installed_programs_work() {  # prefix
  local out=$1/../check
  mkdir -p "$out"
  "$1/bin/layoutprof" --version | grep "^layoutprof .*(LibTorch " || return 1
  [ -x "$1/libexec/layoutprof/layoutprof-run" ] || { echo "no libexec/layoutprof/layoutprof-run"; return 1; }
  [ -f "$1/share/layoutprof/report.schema.json" ] || { echo "no share/layoutprof/report.schema.json"; return 1; }
  [ ! -e "$1/bin/layoutprof-bench" ] || { echo "the bench was installed"; return 1; }
  "$1/bin/layoutprof" samples/transpose_reshape.pt --input 2x8x16 --warmup 0 --iters 1 \
    --counters off --json "$out/r.json" || return 1
  "$1/bin/layoutprof" render "$out/r.json" | grep "Heatmap"
}

# The sample program against the installed package: its report of the model (but for its own
# "preprocess" row) has the copies, bytes and module paths the installed command reports; a
# session it never stops still writes its report, status interrupted.
sample_matches_command() {  # variant prefix build_dir
  local out=$3/sample-check model=samples/layernorm_drift.pt input=2x16x8x8 cc=gcc cxx=g++
  mkdir -p "$out"
  case "$1" in clang*) cc=clang-14 cxx=clang++-14 ;; esac
  rm -rf "$3/sample"
  # liblayoutprof's own dependencies are not the program's: finding any of them is refused.
  local dep private=()
  for dep in fmt simdjson nlohmann_json libzip PFM; do private+=(-DCMAKE_DISABLE_FIND_PACKAGE_$dep=ON); done
  CC=$cc CXX=$cxx cmake -S samples/cpp -B "$3/sample" -G Ninja -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" "${private[@]}" \
    ${TORCH_OTHER_ARGS[@]+"${TORCH_OTHER_ARGS[@]}"} -DCMAKE_PREFIX_PATH="$2${TORCH_PREFIX_PATH:+;$TORCH_PREFIX_PATH}" ||
    return 1
  cmake --build "$3/sample" || return 1
  "$3/sample/layoutprof-sample" "$model" "$input" --json "$out/sample.json" || return 1
  "$2/bin/layoutprof" "$model" --input "$input" --counters off --json "$out/command.json" >/dev/null || return 1
  "$3/sample/layoutprof-sample" "$model" "$input" --json "$out/unstopped.json" --no-stop || return 1
  /usr/bin/python3 scripts/compare_copies.py "$out/command.json" "$out/sample.json" --skip-module preprocess \
    --interrupted "$out/unstopped.json"
}

# The C++ API is one shared library whose dynamic symbols are the layoutprof namespace's only
# (its classes, their type information), and no static library is installed.
one_library_exports_the_api() {  # prefix
  local lib=$1/lib/liblayoutprof.so symbols outside
  [ -f "$lib" ] || { echo "no $lib"; return 1; }
  if find "$1/lib" -name '*.a' | grep .; then echo "static libraries installed"; return 1; fi
  symbols=$(nm -D --defined-only -C "$lib" | cut -d' ' -f3-)
  outside=$(grep -vE '^((typeinfo|typeinfo name|vtable) for )?layoutprof::' <<<"$symbols" || true)
  echo "$(wc -l <<<"$symbols") exported symbols"
  [ -z "$outside" ] || { echo "outside the layoutprof namespace:"; head -20 <<<"$outside"; return 1; }
  grep -qx 'layoutprof::Session::Session(layoutprof::SessionOptions)' <<<"$symbols" ||
    { echo "layoutprof::Session's constructor is not exported"; return 1; }
  if grep -E 'layoutprof::(EagerSession|Recorder|Str|analyse)' <<<"$symbols"; then echo "internals exported"; return 1; fi
}

# The wheel's package, found beside Debian's LibTorch: refused at configure time, in one line.
refuses_another_torch() {  # wheel prefix build_dir
  local log=$2/refused.log
  rm -rf "$2/refused"
  if cmake -S samples/cpp -B "$2/refused" -G Ninja -DCMAKE_PREFIX_PATH="$1" >"$log" 2>&1; then
    echo "configured against Debian's LibTorch"; return 1
  fi
  grep -A1 "CMake Error" "$log"
  grep -qE "^ +layoutprof .* was built against LibTorch [0-9.]+ .*finds LibTorch 1\.13" "$log"
}

for v in "${variants[@]}"; do
  B=build-pkg-$v P=$PWD/build-pkg-$v/prefix log=build-pkg-$v.log
  echo "=== $v ===" >&2
  check "$v: configured with plain CMake" configure "$v" "$B"
  check "$v: layoutprof, layoutprof-run and the C++ API built without a warning" \
    cmake --build "$B" -j "$(nproc)" --target layoutprof layoutprof-run layoutprof_shared
  check "$v: cmake --install" cmake --install "$B" --prefix "$P"
  check "$v: the C++ API is one library, liblayoutprof, exporting only the layoutprof namespace" \
    one_library_exports_the_api "$P"
  check "$v: the installed layoutprof runs a model and renders its report" installed_programs_work "$P"
  check "$v: samples/cpp, built against the installed package, reports the model as the command does" \
    sample_matches_command "$v" "$P" "$B"
  if [[ "$v" == *wheel ]]; then
    check "$v: the package refuses another LibTorch at configure time, in one line" refuses_another_torch "$P" "$B"
  fi
done
echo "packaging: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
