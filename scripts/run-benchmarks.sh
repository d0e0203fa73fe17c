#!/usr/bin/env bash
# Runs every benchmark program and prints its report. Usage: scripts/run-benchmarks.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
"$build/bench/engine_bench"
echo
"$build/bench/service_bench"
echo
/usr/bin/python3 "$(dirname "$0")/../bench/compute_bench.py" --build "$build"
