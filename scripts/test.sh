#!/usr/bin/env bash
# Sets up (packages, builds, samples) and runs every test (unit, end-to-end, schema, the
# torch.profiler cross-check of the samples' expectations) against each LibTorch:
#
#   scripts/test.sh                     both: Debian's LibTorch 1.13 (build/) and the tested 2.x
#                                       wheel, torch 2.14.1 with CUDA (build-torch-2.14.1+cu130/)
#   scripts/test.sh --torch debian      Debian's 1.13 only
#   scripts/test.sh --torch wheel       the tested 2.x wheel only
#   TORCH_PYTHON=/path/to/python scripts/test.sh --torch python
#                                       the torch of that Python only (any 2.x wheel)
#   scripts/test.sh --torch sanitize    the whole suite built with AddressSanitizer and
#                                       UndefinedBehaviorSanitizer (build-asan/, Debian's 1.13:
#                                       layoutprof's code instrumented, LibTorch as it is)
#   scripts/test.sh --torch tsan        ThreadSanitizer (build-tsan/, Debian's 1.13): the recorder's
#                                       tests, and every sample run with --threads 2 (see README)
#   scripts/test.sh --torch fuzz        every libFuzzer target for FUZZ_SECONDS (default 20)
#   scripts/test.sh --torch packaging   plain CMake builds as packagers make them (Release with
#                                       GCC 12 against Debian's LibTorch, clang 14 against the
#                                       wheel's) and cmake --install (scripts/packaging.sh)
#   scripts/test.sh --torch pip-package the Python package pip-installed into a fresh venv with
#                                       the wheel's torch, and its in-process checks
#                                       (scripts/package-check.sh)
#
# `all` (the default, and CI) runs wheel, pip-package, debian, sanitize, tsan, fuzz and packaging.
# Other arguments go to ctest (e.g. -R Gate). Exits non-zero if any suite fails; a summary line
# per LibTorch comes last.
set -euo pipefail
cd "$(dirname "$0")/.."
export LAYOUTPROF_WERROR=ON  # every build tested here treats warnings as errors

which=all
if [[ "${1:-}" == "--torch" ]]; then
  which=${2:?"--torch needs debian, wheel, python or all"}
  shift 2
fi
case "$which" in
  all) suites=(wheel pip-package debian sanitize tsan fuzz packaging) ;;  # the 2.x build first: the 1.13 suite loads its archives
  debian | wheel | sanitize | tsan | fuzz | packaging | pip-package) suites=("$which") ;;
  python) [ -n "${TORCH_PYTHON:-}" ] || { echo "test: --torch python needs TORCH_PYTHON" >&2; exit 2; }
          suites=(python) ;;
  *) echo "test: --torch $which: expected debian, wheel, python, sanitize, tsan, fuzz, packaging, pip-package or all" >&2; exit 2 ;;
esac

# One line per test that failed in a ctest log: "failed" when its second run failed too (the
# final list ctest prints), "flaky" when it passed on the second.
failure_lines() {
  awk '/^The following tests FAILED:/ { final = 1; next }
       final && match($0, /^[ \t]*[0-9]+ - /) { still[$1] = 1; next }
       /Test +#[0-9]+: / && /\*\*\*/ && !/\*\*\*Skipped/ {
         n = $0; sub(/.*Test +#/, "", n); sub(/:.*/, "", n)
         name = $0; sub(/.*Test +#[0-9]+: /, "", name); sub(/ .*/, "", name)
         seen[n] = name }
       END { for (n in seen) print "  " (n in still ? "failed" : "flaky (failed once, passed on its second run)") ": " seen[n] }' "$1" | sort
}

summary=() failed=0 newer_samples="" total=0 nfailed=0 skipped=0

# script_suite NAME PREFIX LOG COMMAND...: a suite run by a script whose last line is
# "PREFIX: N passed, M failed"; its counts join the totals, its summary line and failures the summary.
script_suite() {
  local name=$1 prefix=$2 log=$3 result last n_pass n_fail
  shift 3
  if "$@" | tee "$log"; then result=passed; else result=FAILED; failed=1; fi
  last=$(tail -n 1 "$log")
  n_pass=$(sed -n "s/^$prefix: \([0-9]*\) passed.*/\1/p" <<<"$last")
  n_fail=$(sed -n 's/.*passed, \([0-9]*\) failed.*/\1/p' <<<"$last")
  total=$((total + ${n_pass:-0} + ${n_fail:-0})); nfailed=$((nfailed + ${n_fail:-0}))
  [ -n "$n_pass" ] || failed=1
  summary+=("$name: $result: $last; $((SECONDS - start)) s")
  readarray -t -O "${#summary[@]}" summary < <(grep "^$prefix: FAILED" "$log" | sed 's/^/  /')
}
for suite in "${suites[@]}"; do
  start=$SECONDS
  if [[ "$suite" == fuzz ]]; then
    echo "=== libFuzzer targets, ${FUZZ_SECONDS:-20} s each ===" >&2
    mkdir -p build-fuzz
    if scripts/fuzz.sh all "${FUZZ_SECONDS:-20}" | tee build-fuzz/fuzz.log; then result=passed; else result=FAILED; failed=1; fi
    summary+=("fuzz: $result: $(grep -c 'findings: 0 (exit 0)' build-fuzz/fuzz.log || true) of $(grep -c 'findings: ' build-fuzz/fuzz.log || true) targets without a finding; $((SECONDS - start)) s")
    continue
  fi
  if [[ "$suite" == packaging ]]; then
    echo "=== Packagers' builds: plain CMake, GCC 12 and clang 14, cmake --install ===" >&2
    # Two of packaging.sh's four variants, one per compiler and LibTorch (the other two by hand:
    # scripts/packaging.sh gcc-wheel clang), to keep the whole run well under an hour.
    script_suite packaging packaging build-packaging.log scripts/packaging.sh gcc-release clang-wheel
    continue
  fi
  if [[ "$suite" == pip-package ]]; then
    echo "=== The Python package: pip install into a fresh venv, in-process recording ===" >&2
    script_suite pip-package package build-package.log env TORCH_PYTHON=wheel scripts/package-check.sh
    continue
  fi
  if [[ "$suite" == tsan ]]; then
    echo "=== ThreadSanitizer: the recorder's tests and every sample at --threads 2 ===" >&2
    # Only what tsan-runs.sh runs: the command (layoutprof-run with it) and the recorder's tests.
    build=$(env TORCH_PYTHON= BUILD_DIR=build-tsan LAYOUTPROF_SANITIZE=thread \
                BUILD_TARGETS="layoutprof recorder_tests" scripts/setup.sh)
    if scripts/tsan-runs.sh "$build" | tee "$build/tsan.log"; then result=passed; else result=FAILED; failed=1; fi
    summary+=("tsan: $result: $(tail -n 1 "$build/tsan.log"); $((SECONDS - start)) s")
    continue
  fi
  sanitize=()
  case "$suite" in
    debian) torch_python="" ;;
    wheel) torch_python=wheel ;;
    python) torch_python=$TORCH_PYTHON ;;
    sanitize) torch_python="" sanitize=(LAYOUTPROF_SANITIZE=address,undefined BUILD_DIR=build-asan) ;;
  esac
  echo "=== LibTorch: ${torch_python:-libtorch-dev (Debian)}${sanitize:+, ASan + UBSan} ===" >&2
  build=$(env TORCH_PYTHON=$torch_python BUILD_DIR= "${sanitize[@]}" scripts/setup.sh)
  version=$(sed -n 's/^LAYOUTPROF_TORCH_VERSION:[A-Z]*=//p' "$build/CMakeCache.txt")
  ctest_args=()
  if ((${#sanitize[@]})); then
    # Any report fails the test that saw it. LibTorch is not instrumented: the leaks it
    # allocates itself are not layoutprof's (tests/sanitizers/lsan.supp, matched on the three
    # frames kept per allocation). Not run here: the profiler cross-check (Python and torch
    # only, no layoutprof code), and the page-fault counts and sampled fault addresses of one
    # op (ASan's shadow memory faults pages in the recorder's own code, inside the op).
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:malloc_context_size=3"
    export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    ctest_args=(-E 'ProfilerCrossCheck|Counters.PageFaultsCountedOnAFreshTensorAndNoneOnAView|SampledCounters.FirstTouchFaults')
  fi
  # An archive scripted by the 2.x torch, for the 1.13 suite's "too new" test.
  # A test that fails is run once more (these VMs are noisy: the counters' tests share two cores
  # with another test); it fails the suite only if it fails twice, and the summary names every
  # test that needed the second run, so a flaky test is seen rather than hidden.
  if (cd "$build" && LAYOUTPROF_NEWER_SAMPLES=$newer_samples ctest --output-on-failure -j 2 --repeat until-pass:2 "${ctest_args[@]}" "$@" | tee ctest.log); then
    result=passed
  else
    result=FAILED
    failed=1
  fi
  counts=$(grep -E "tests passed|tests failed" "$build/ctest.log" | tail -n 1)
  # "100% tests passed, 0 tests failed out of 217"; skipped tests count as passed there.
  n_total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' <<<"$counts")
  n_failed=$(sed -n 's/.*, \([0-9]*\) tests failed.*/\1/p' <<<"$counts")
  n_skipped=$(grep -c "(Skipped)" "$build/ctest.log" || true)
  total=$((total + ${n_total:-0})); nfailed=$((nfailed + ${n_failed:-0})); skipped=$((skipped + n_skipped))
  [ -n "$n_total" ] || failed=1  # ctest ran nothing
  summary+=("LibTorch ${version:-?} ($build${sanitize:+, ASan + UBSan}): $result: ${counts:-no ctest summary}; $((SECONDS - start)) s")
  readarray -t -O "${#summary[@]}" summary < <(failure_lines "$build/ctest.log")
  unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
  [[ "$suite" == debian || "$suite" == sanitize ]] || newer_samples="$PWD/$build/samples"
done
echo
printf '%s\n' "${summary[@]}"
echo "tests: $((total - nfailed - skipped)) passed, $nfailed failed, $skipped skipped"
exit "$failed"
