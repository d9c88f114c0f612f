#!/usr/bin/env bash
# Sets up (packages, build, samples) and runs every test: unit, end-to-end and schema checks.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j 2 "$@"
