#!/usr/bin/env bash
# Sets up and profiles the embedded default sample: torchvision's resnet18 at batch 8, fed a
# channels_last input as a data pipeline might hand it over. Extra arguments go to layoutprof.
# Against Debian's LibTorch 1.13 unless TORCH_PYTHON names another torch (see scripts/setup.sh).
# With a 2.x build the sample is the torch.export program (resnet18.pt2, exported on that
# input, which it stores), else the TorchScript archive.
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(scripts/setup.sh)
if [ -f "$B/samples/resnet18.pt2" ]; then
  model=("$B/samples/resnet18.pt2")
else
  model=("$B/samples/resnet18.pt" --input 8x3x224x224:f32:channels_last)
fi
exec "$B/layoutprof" "${model[@]}" --json "$B/resnet18-report.json" --html "$B/resnet18-report.html" "$@"
