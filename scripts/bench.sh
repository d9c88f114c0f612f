#!/usr/bin/env bash
# Overhead of recording, side by side in one run: for each model, the ratio of a recorded call
# to a plain forward() in the same process (median of REPS interleaved pairs), for layoutprof's
# observer and for torch.profiler(record_shapes=True) of the same torch version. Two ratios each:
# "fwd", the forward() under the observer alone, and "call", everything a recorded call costs
# (layoutprof: start(), forward, stop() converting the events, which are kept; torch.profiler:
# entering and leaving the profiler and building its event list). Lower is better.
# layoutprof records as a run does: the first call with every op's tensors ("first call",
# one sample), the others with names, times and counters only (the medians). "empty observer"
# is the same forward under a RecordFunction callback that does nothing: what any observer
# costs before it records anything.
# The transformer runs at short sequence lengths so that its ops are small and per-op
# recording cost dominates: the op-heavy case.
#
#   scripts/bench.sh                          against Debian's LibTorch 1.13
#   TORCH_PYTHON=wheel scripts/bench.sh       against the tested 2.x wheel (see scripts/setup.sh)
#   scripts/bench.sh --counters               the counters' table only
#   scripts/bench.sh --startup                start-up time and RSS of the report commands,
#                                             without LibTorch and with it (bench_startup.py)
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(scripts/setup.sh)
[ "${1:-}" != --startup ] || exec python3 scripts/bench_startup.py "$B" "${REPS:-21}"
source scripts/torch-env.sh
torch_env_resolve  # TORCH_PY: the torch.profiler side runs on the same torch
REPS=${REPS:-15}
row() {  # name model shape [layoutprof-bench options]
  local lp tp
  lp=$("$B/layoutprof-bench" "$2" --input "$3" --reps "$REPS" "${@:4}")
  local back=""
  for a in "${@:4}"; do [ "$a" = "--backward" ] && back="--backward"; done
  tp=$("$TORCH_PY" scripts/bench_torch_profiler.py "$2" "$3" "$REPS" $back 2>/dev/null)
  python3 - "$1" "$3" "$lp" "$tp" <<'PY'
import json, sys
name, shape, lp, tp = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
counters = f" + {lp['counters']} counters" if lp["counters"] else ""
read = f"{lp['counter_read_ns']:.0f}" if lp["counters"] else "-"
callbacks = f"{lp['rf_empty_ns'] - lp['rf_bare_ns']:.0f} / {lp['rf_observer_ns'] - lp['rf_bare_ns']:.0f}" if lp.get("rf_observer_ns") else "-"
print(f"| {name}{counters} | {shape} | {lp['plain_ms']:.2f} | {lp['ratio']:.3f} | {lp['call_ratio']:.3f} | {lp['first_call_ratio']:.3f} | {lp['empty_observer_ratio']:.3f} "
      f"| {tp['plain_ms']:.2f} | {tp['ratio']:.3f} | {tp['call_ratio']:.3f} | {lp['ops']} | {tp['ops']} | {read} | {callbacks} |")
PY
}
echo "LibTorch $TORCH_VERSION ($B), torch.profiler from $TORCH_PY; $(nproc) cores; reps: $REPS;"
if [ "${1:-}" != --counters ]; then
echo "plain times are medians in ms, ratios are medians of recorded over plain (measured);"
echo "callbacks: ns per op event of RecordFunction made and ended in a loop with no op, over a bare one,"
echo "under the empty callback / under layoutprof's (its stop() included)"
echo "| model | input | plain | layoutprof fwd | layoutprof call | layoutprof first call | empty observer | plain (py) | torch.profiler fwd | torch.profiler call | op events | profiler events | ns per counter read | callbacks ns per op event |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
row resnet18 "$B/samples/resnet18.pt" 8x3x224x224
row small_transformer "$B/samples/small_transformer.pt" 1x16x256
row small_transformer "$B/samples/small_transformer.pt" 1x4x256
# A scripted loop of tiny ops (17 op events per row, under a microsecond each): the most
# op-heavy case there is, where RecordFunction itself (the empty-observer column) is the floor.
row op_loop "$B/samples/op_loop.pt" 600x8x8
# A CNN of many tiny ops: torchvision's mobilenet_v2 at 32x32 (about 1,200 op events, a plain
# forward about 12 ms), scripted once into the cache.
MODELS="${LAYOUTPROF_CACHE:-$HOME/.cache/layoutprof}/bench-models/torch-$TORCH_VERSION"
mkdir -p "$MODELS"
if [ ! -f "$MODELS/mobilenet_v2.pt" ]; then
  "$TORCH_PY" - "$MODELS/mobilenet_v2.pt" <<'PY'
import sys, os, torch, torchvision
torch.jit.script(torchvision.models.mobilenet_v2().eval()).save(sys.argv[1] + ".tmp")
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
PY
fi
row mobilenet_v2 "$MODELS/mobilenet_v2.pt" 1x3x32x32
# With the default counters on (what a plain `layoutprof` run does): every top-level op and
# every copy reads each thread's groups at its start and end.
row resnet18 "$B/samples/resnet18.pt" 8x3x224x224 --counters
row small_transformer "$B/samples/small_transformer.pt" 1x4x256 --counters
fi
# The counters' modes (issue: counters that cost nothing per op), interleaved round by round in
# one process: whole recorded calls without counters, with the default events sampled (a run's
# default) and counted, each as a ratio to a plain forward; the counters' own cost is the median
# of the paired differences with the call without counters, per op event and per sample.
counters_row() {  # name model shape
  local lp tp
  lp=$("$B/layoutprof-bench" "$2" --input "$3" --reps "$REPS" --counter-modes)
  tp=$("$TORCH_PY" scripts/bench_torch_profiler.py "$2" "$3" "$REPS" 2>/dev/null)
  python3 - "$1" "$3" "$lp" "$tp" <<'PY'
import json, sys
name, shape, lp, tp = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
print(f"| {name} | {shape} | {lp['plain_ms']:.2f} | {lp['none_ratio']:.3f} | {lp['sampled_ratio']:.3f} | {lp['counted_ratio']:.3f} "
      f"| {tp['call_ratio']:.3f} | {lp['ops']:.0f} | {lp['samples_per_call']:.1f} | {lp['sampled_ns_per_op_event']:.0f} "
      f"| {lp['sampled_ns_per_sample']:.0f} | {lp['counted_ns_per_op_event']:.0f} | {lp['sampled_events'] or 'none'} |")
PY
}
echo
echo "Counters: ratios of a whole recorded call to a plain forward (medians); the counters' own cost"
echo "is the median paired difference with the call without counters (ns per op event, per sample)"
echo "| model | input | plain ms | no counters | sampled (default) | counted | torch.profiler call | op events | samples per call | sampled ns per op event | sampled ns per sample | counted ns per op event | events sampled, one every |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
counters_row resnet18 "$B/samples/resnet18.pt" 8x3x224x224
counters_row resnet18 "$B/samples/resnet18.pt" 1x3x224x224
counters_row small_transformer "$B/samples/small_transformer.pt" 1x16x256
counters_row small_transformer "$B/samples/small_transformer.pt" 1x4x256
counters_row op_loop "$B/samples/op_loop.pt" 600x8x8
[ "${1:-}" != --counters ] || exit 0
# Training steps (--backward): forward with autograd, backward from a seeded gradient, the
# gradients cleared; every floating-point parameter trained. Ratios of a recorded step to a
# plain step.
row "small_transformer step" "$B/samples/small_transformer.pt" 1x16x256 --backward
row "grad_channels_last_input step" "$B/samples/grad_channels_last_input.pt" 2x8x6x6:channels_last --backward
