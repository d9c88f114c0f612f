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
#
# Other arguments go to ctest (e.g. -R Gate). Exits non-zero if any suite fails; a summary line
# per LibTorch comes last.
set -euo pipefail
cd "$(dirname "$0")/.."

which=all
if [[ "${1:-}" == "--torch" ]]; then
  which=${2:?"--torch needs debian, wheel, python or all"}
  shift 2
fi
case "$which" in
  all) suites=(wheel debian) ;;  # the 2.x build first: the 1.13 suite loads its archives
  debian | wheel) suites=("$which") ;;
  python) [ -n "${TORCH_PYTHON:-}" ] || { echo "test: --torch python needs TORCH_PYTHON" >&2; exit 2; }
          suites=(python) ;;
  *) echo "test: --torch $which: expected debian, wheel, python or all" >&2; exit 2 ;;
esac

summary=() failed=0 newer_samples="" total=0 nfailed=0 skipped=0
for suite in "${suites[@]}"; do
  case "$suite" in
    debian) torch_python="" ;;
    wheel) torch_python=wheel ;;
    python) torch_python=$TORCH_PYTHON ;;
  esac
  echo "=== LibTorch: ${torch_python:-libtorch-dev (Debian)} ===" >&2
  build=$(TORCH_PYTHON=$torch_python BUILD_DIR= scripts/setup.sh)
  version=$(sed -n 's/^LAYOUTPROF_TORCH_VERSION:[A-Z]*=//p' "$build/CMakeCache.txt")
  start=$SECONDS
  # An archive scripted by the 2.x torch, for the 1.13 suite's "too new" test.
  if (cd "$build" && LAYOUTPROF_NEWER_SAMPLES=$newer_samples ctest --output-on-failure -j 2 "$@" | tee ctest.log); then
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
  summary+=("LibTorch ${version:-?} ($build): $result: ${counts:-no ctest summary}; $((SECONDS - start)) s")
  [[ "$suite" == debian ]] || newer_samples="$PWD/$build/samples"
done
echo
printf '%s\n' "${summary[@]}"
echo "tests: $((total - nfailed - skipped)) passed, $nfailed failed, $skipped skipped"
exit "$failed"
