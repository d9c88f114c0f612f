#!/usr/bin/env bash
# ThreadSanitizer runs (scripts/test.sh --torch tsan), in a build made with
# LAYOUTPROF_SANITIZE=thread against Debian's LibTorch 1.13:
#
#   scripts/tsan-runs.sh BUILD_DIR
#
# - the recorder's tests (recorder_tests: the observer, its per-thread buffers, stop()), and
# - every sample that does not fork, run by layoutprof with --threads 2 (intra-op threads
#   recording into their own buffers while the main thread runs; two recorded calls), with the
#   counters sampled as a default run samples them, and cpu-clock read system-wide at intervals
#   (--bandwidth-events) so that the sampler's reading thread runs beside the calls.
# Any ThreadSanitizer report fails (exit code 66). LibTorch is not instrumented; the
# fork_wait sample is left out: its futures are freed by LibTorch's pool threads after a
# reference count decremented in LibTorch's (uninstrumented) code and in c10 header code
# inlined into layoutprof (instrumented), which ThreadSanitizer reports as races on LibTorch's
# own objects (README, Tests). The last line is the summary.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:?usage: scripts/tsan-runs.sh BUILD_DIR}
export TSAN_OPTIONS="exitcode=66 halt_on_error=0 second_deadlock_stack=1"
failed=0 runs=0
"$B/tests/recorder_tests" >"$B/tsan-recorder.log" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "tsan: recorder_tests FAILED (exit $rc): $B/tsan-recorder.log"; failed=1
  grep -m3 -A8 -e "WARNING: ThreadSanitizer" -e "Failure$" "$B/tsan-recorder.log"
else
  echo "tsan: recorder_tests passed, no report"
fi
while IFS=$'\t' read -r name file inputs; do
  args=()
  for i in $inputs; do args+=(--input "$i"); done
  log="$B/tsan-$name.log"
  "$B/layoutprof" "$B/samples/$file" "${args[@]}" --threads 2 --warmup 1 --iters 2 --bandwidth-events cpu-clock >"$log" 2>&1
  rc=$?
  runs=$((runs + 1))
  # 0, or 4 for the sample whose model raises: anything else (66: a report) fails.
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; then
    echo "tsan: $name FAILED (exit $rc): $log"; failed=1
    grep -m2 -A8 "WARNING: ThreadSanitizer" "$log"
  fi
done < <(python3 - "$B/samples/manifest.json" <<'PY'
import json, sys
for s in json.load(open(sys.argv[1]))["samples"]:
    if s["name"] == "fork_wait" or (s.get("large") and s["name"] != "resnet18"):
        continue  # (the large ones but resnet18 take minutes under ThreadSanitizer)
    expect = [e for e in s["expect"] if "1" in e["torch"]]
    if s.get("min_torch", 1) > 1 or not expect or expect[0]["status"] == "too_new":
        continue  # LibTorch 1.13 cannot load it
    print(s["name"], s["file"], " ".join(s["inputs"]), sep="\t")
PY
)
if [ "$failed" -eq 0 ]; then echo "tsan: recorder_tests and $runs samples at --threads 2: no report"
else echo "tsan: FAILED"; fi
exit "$failed"
