#!/usr/bin/env bash
# Kind smoke Job: print the marker, then leave a result file on the run's PVC.
set -euo pipefail
marker="${KIND_SMOKE_MARKER:-tau kind job smoke complete}"
out="${TAU_OUTPUT_DIR:-./outputs}"
mkdir -p "$out"
printf '%s\n' "$marker" > "$out/result.txt"
echo "$marker"
