#!/usr/bin/env bash
# What layoutprof costs on op-heavy models, side by side with plain runs of the same calls:
# memory and time per op event, for the text report, --json, render and check, and what each
# more recorded call costs (scripts/bench_scale.py says how each figure is measured).
# Models: samples/op_loop.pt at 600, 6000, 16500 and 60000 rows (about 10k, 100k, 280k and
# 1M op events per call: per-op figures that stay level show linear growth) and torchvision's
# swin_t at batch 1 (about 20,000).
#
#   scripts/bench-scale.sh                      this tree, against Debian's LibTorch 1.13
#   scripts/bench-scale.sh --against REV        also REV's layoutprof (built once in a worktree
#                                               under ~/.cache/layoutprof), in the same table
#   TORCH_PYTHON=wheel scripts/bench-scale.sh   against the tested 2.x wheel
# ROWS (default "600 6000 16500 60000") sets the loop's rows; ITERS (default 20) the
# many-calls runs; REPEAT (default 3) the tries per run, of which the best is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
AGAINST=""
[ "${1:-}" = "--against" ] && AGAINST=$2
B=$(scripts/setup.sh)
source scripts/torch-env.sh
torch_env_resolve
CACHE=${LAYOUTPROF_CACHE:-$HOME/.cache/layoutprof}
MODELS="$CACHE/bench-models/torch-$TORCH_VERSION"
mkdir -p "$MODELS"
if [ ! -f "$MODELS/swin_t.pt" ]; then
  "$TORCH_PY" - "$MODELS/swin_t.pt" <<'PY'
import sys, torch, torchvision
torch.jit.script(torchvision.models.swin_t().eval()).save(sys.argv[1] + ".tmp")
import os; os.replace(sys.argv[1] + ".tmp", sys.argv[1])
PY
fi
builds=(--build new "$B")
if [ -n "$AGAINST" ]; then
  rev=$(git rev-parse --short "$AGAINST")
  tree="$CACHE/bench-$rev"
  [ -d "$tree" ] || git worktree add --detach "$tree" "$rev" >&2
  old=$(cd "$tree" && BUILD_DIR="$tree/$(basename "$B")" scripts/setup.sh)
  builds=(--build "$rev" "$old" "${builds[@]}")
fi
echo "LibTorch $TORCH_VERSION; $(nproc) cores; wall and peak RSS measured per process; per op: derived"
models=()
for rows in ${ROWS:-600 6000 16500 60000}; do
  models+=(--model "op_loop/$rows" "$B/samples/op_loop.pt" "${rows}x8x8")
done
common=(--bench "$B/layoutprof-bench" --work "$B/bench-scale" --iters "${ITERS:-20}" --repeat "${REPEAT:-3}")
python3 scripts/bench_scale.py "${common[@]}" "${models[@]}" --model swin_t "$MODELS/swin_t.pt" 1x3x224x224 "${builds[@]}"
# swin_t's large activations make the heap's peak depend on glibc's moving mmap threshold
# (scripts/bench_scale.py --help): again with the threshold fixed, for plain and recorded runs.
echo
python3 scripts/bench_scale.py "${common[@]}" --env MALLOC_MMAP_THRESHOLD_=131072 \
  --model swin_t "$MODELS/swin_t.pt" 1x3x224x224 "${builds[@]}"
