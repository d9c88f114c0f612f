#!/usr/bin/env bash
# Sets up and profiles the embedded default sample: torchvision's resnet18 at batch 8, fed a
# channels_last input as a data pipeline might hand it over. Extra arguments go to layoutprof.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec "${BUILD_DIR:-build}/layoutprof" "${BUILD_DIR:-build}/samples/resnet18.pt" \
  --input 8x3x224x224:f32:channels_last --json "${BUILD_DIR:-build}/resnet18-report.json" "$@"
