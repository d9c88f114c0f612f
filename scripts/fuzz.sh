#!/usr/bin/env bash
# Fuzzes a reader of outside text with libFuzzer (Debian's clang 14, with ASan and UBSan):
#
#   scripts/fuzz.sh TARGET SECONDS     TARGET: input_spec, tlb, events, fraction, report, pt2, or all
#
# Builds the targets (tests/fuzz, without LibTorch) into build-fuzz/, seeds each from
# tests/fuzz/corpus/TARGET (specs, reports layoutprof wrote for the samples, small .pt2 exports), runs it for
# SECONDS (each, for all), and prints the executions and what it found. A finding (crash,
# sanitizer report, leak, timeout) is kept in build-fuzz/findings/TARGET/ and the script exits
# 1; add it to tests/fuzz/regressions/TARGET/ once fixed, where every test run replays it.
# FUZZ_JOBS=N runs N processes of a target at once (libFuzzer -fork).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=(input_spec tlb events fraction report pt2)
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS (TARGET: ${TARGETS[*]} all)}
seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS}
if [ "$target" = all ]; then list=("${TARGETS[@]}"); else list=("$target"); fi
for t in "${list[@]}"; do
  [[ " ${TARGETS[*]} " == *" $t "* ]] || { echo "fuzz: no target '$t' (${TARGETS[*]})" >&2; exit 2; }
done

source scripts/torch-env.sh  # install_missing
PACKAGES=(clang-14 libclang-rt-14-dev cmake ninja-build libpfm4-dev nlohmann-json3-dev libsimdjson-dev libcli11-dev libfmt-dev libzip-dev)
install_missing fuzz "${PACKAGES[@]}"

B=${FUZZ_BUILD_DIR:-build-fuzz}
# Every suite's builds share the cache: one CI run's nearly fill ccache's default 5 GB (4.45 GB seen).
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-15G}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# Paths relative to the checkout, and no working directory in the hash: another clone (CI's)
# reuses what this one compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
if [ ! -f "$B/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLAYOUTPROF_FUZZ=ON -DLAYOUTPROF_WERROR=ON >&2
fi
cmake --build "$B" -j "$(nproc)" --target "${list[@]/#/fuzz_}" >&2

status=0
for t in "${list[@]}"; do
  corpus="$B/corpus/$t" findings="$B/findings/$t"
  mkdir -p "$corpus" "$findings"
  seeds=(tests/fuzz/corpus/"$t")
  [ -d "tests/fuzz/regressions/$t" ] && seeds+=("tests/fuzz/regressions/$t")
  log="$B/fuzz-$t.log"
  # -timeout: an input that takes longer is a hang; -rss_limit_mb: memory a reader must not need.
  set +e
  "$B/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    ${FUZZ_JOBS:+-fork=$FUZZ_JOBS} -artifact_prefix="$findings/" "$corpus" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  found=$(find "$findings" -type f | wc -l)
  echo "fuzz: $t: ${execs:-?} executions in ${seconds} s, corpus $(find "$corpus" -type f | wc -l) inputs, findings: $found (exit $rc)"
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    status=1
    grep -m3 -E 'ERROR|SUMMARY|runtime error|terminate' "$log" >&2 || tail -5 "$log" >&2
  fi
done
exit $status
