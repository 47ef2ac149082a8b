#!/bin/sh
# NPD custom-plugin check. Exit 0 = OK, 1 = problem (condition True), 2 = unknown.
# Usage: gpu-check.sh <check>; expected values come from the DaemonSet environment.
check="$1"
smi() { nsenter -t 1 -m -- nvidia-smi "$@" 2>/dev/null; }
case "$check" in
  nvidia-smi)
    smi --list-gpus >/dev/null || { echo "nvidia-smi failed"; exit 1; } ;;
  gpu-count)
    n=$(smi --list-gpus | grep -c '^GPU ') || true
    [ "$n" -ge "${NUM_GPUS:-1}" ] || { echo "found $n of ${NUM_GPUS} GPUs"; exit 1; } ;;
  nvlink)
    out=$(smi nvlink --status) || { echo "nvlink status unavailable"; exit 2; }
    [ -n "$out" ] || exit 2
    n=$(printf '%s\n' "$out" | grep -c '<inactive>') || true
    [ "$n" -eq 0 ] || { echo "$n NVLink links inactive"; exit 1; } ;;
  ecc)
    s=$(smi --query-gpu=ecc.errors.uncorrected.aggregate.dram --format=csv,noheader,nounits \
        | awk '$1 ~ /^[0-9]+$/ {s += $1} END {print s + 0}')
    [ "$s" -eq 0 ] || { echo "$s uncorrected ECC errors"; exit 1; } ;;
  ib)
    total=0; active=0
    for f in /sys/class/infiniband/*/ports/*/state; do
      [ -e "$f" ] || continue
      total=$((total + 1)); grep -q ACTIVE "$f" && active=$((active + 1))
    done
    [ "$total" -eq 0 ] && exit 0
    [ "$active" -eq "$total" ] || { echo "$active of $total IB ports active"; exit 1; } ;;
  dcgm)
    [ "${DCGM_SOURCE}" = "host-dcgmi" ] || exit 2
    out=$(nsenter -t 1 -m -- dcgmi health -c 2>/dev/null) || { echo "dcgmi health failed"; exit 1; }
    rows=$(printf '%s\n' "$out" | grep -c 'Overall Health') || true
    [ "$rows" -eq 1 ] && printf '%s\n' "$out" | grep 'Overall Health' | grep -q Healthy \
      || { echo "DCGM reports unhealthy"; exit 1; } ;;
  *) echo "unknown check $check"; exit 2 ;;
esac
exit 0
