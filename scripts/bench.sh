#!/usr/bin/env bash
# Overhead of recording, side by side in one run: for each model, the ratio of a recorded
# forward() to a plain forward() in the same process (median of REPS interleaved pairs), for
# layoutprof's observer and for torch.profiler(record_shapes=True). Lower is better; the
# target is layoutprof's ratio at or below torch.profiler's on both models.
# The transformer runs at short sequence lengths so that its ops are small and per-op
# recording cost dominates: the op-heavy case.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
B=${BUILD_DIR:-build}
REPS=${REPS:-15}
row() {  # name model shape [layoutprof-bench options]
  local lp tp
  lp=$("$B/layoutprof-bench" "$2" --input "$3" --reps "$REPS" "${@:4}")
  tp=$(/usr/bin/python3 scripts/bench_torch_profiler.py "$2" "$3" "$REPS")
  /usr/bin/python3 - "$1" "$3" "$lp" "$tp" <<'PY'
import json, sys
name, shape, lp, tp = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
counters = f" + {lp['counters']} counters" if lp["counters"] else ""
read = f"{lp['counter_read_ns']:.0f}" if lp["counters"] else "-"
print(f"| {name}{counters} | {shape} | {lp['plain_ms']:.2f} | {lp['recorded_ms']:.2f} | {lp['ratio']:.3f} "
      f"| {tp['plain_ms']:.2f} | {tp['recorded_ms']:.2f} | {tp['ratio']:.3f} | {lp['ops']} | {read} |")
PY
}
echo "threads: $(nproc) cores; reps: $REPS; times are medians in ms (measured)"
echo "| model | input | plain | layoutprof | layoutprof ratio | plain (py) | torch.profiler | torch.profiler ratio | op events | ns per counter read |"
echo "|---|---|---|---|---|---|---|---|---|---|"
row resnet18 "$B/samples/resnet18.pt" 8x3x224x224
row small_transformer "$B/samples/small_transformer.pt" 1x16x256
row small_transformer "$B/samples/small_transformer.pt" 1x4x256
# With the default counters on (what a plain `layoutprof` run does): every top-level op and
# every copy reads each thread's groups at its start and end.
row resnet18 "$B/samples/resnet18.pt" 8x3x224x224 --counters
row small_transformer "$B/samples/small_transformer.pt" 1x4x256 --counters
