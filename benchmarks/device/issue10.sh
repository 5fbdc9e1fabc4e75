#!/bin/bash
# GPU machine side: issue 10's measurements in ONE call, in this order, each section headed and under a time guard:
#   1. gpu-tests       the GPU test suite (gpu-tests.sh); its summary counts and any failed test (full log:
#                      $OUT/gpu-tests.log)
#   2. before-after    bench cold and hot, baseline build against this one (before-after.sh)
#   3. shuffle-peers   shuffled hot records against PyTorch's DataLoader, 784 B / 4 KiB / 64 KiB (shuffle-peers.sh)
#   4. fmnist-routing  per-piece routing against today's GDS path on Fashion-MNIST (fmnist-routing.sh)
# Pack first, here: benchmarks/device/pack.sh --fmnist-train ../shared/datasets/fashion-mnist --baseline [REF]
#   (58.2 MiB with the working tree, of the 64 MiB a call carries; --fmnist instead of --fmnist-train: 61.8 MiB)
# Then, carrying .device:   bash benchmarks/device/issue10.sh            (full: about 6-8 minutes)
#                           QUICK=1 bash benchmarks/device/issue10.sh    (small sizes, no GPU suite: about 2 minutes)
#   SECTIONS="gpu-tests before-after shuffle-peers fmnist-routing" (QUICK=1: without gpu-tests) picks and orders them
#   BUDGET=560 seconds for all sections: each runs under `timeout` with the smaller of its own cap and what is left
#   (a section is skipped when under 20 s are left); caps: CAP_GPU_TESTS=180 CAP_BEFORE_AFTER=170
#   CAP_SHUFFLE_PEERS=170 CAP_FMNIST_ROUTING=100 (QUICK=1: 60 60 50 40)
# Fails soft: a section that fails or runs out of time is reported, and the next one runs. Everything printed also
# goes to $OUT/issue10.log; each section writes its JSON under $OUT (when OUT is set).
set -u -o pipefail
source "$(dirname "$0")/common.sh"
[ -n "${OUT:-}" ] && exec > >(tee "$OUT/issue10.log") 2>&1
t0=$SECONDS
source .device/env.sh
budget="${BUDGET:-560}"
if [ -n "${QUICK:-}" ]; then
  export QUICK
  sections="${SECTIONS:-before-after shuffle-peers fmnist-routing}"
  caps=(60 60 50 40)
else
  sections="${SECTIONS:-gpu-tests before-after shuffle-peers fmnist-routing}"
  caps=(180 170 170 100)
fi
cap() {
  case "$1" in
    gpu-tests) echo "${CAP_GPU_TESTS:-${caps[0]}}";; before-after) echo "${CAP_BEFORE_AFTER:-${caps[1]}}";;
    shuffle-peers) echo "${CAP_SHUFFLE_PEERS:-${caps[2]}}";; fmnist-routing) echo "${CAP_FMNIST_ROUTING:-${caps[3]}}";;
    *) echo 0;;
  esac
}
gpu_tests_summary() { # the suite's tree stays in the log; here its counts and failures only
  grep -E '^Test run finished|^\[ *[0-9]+ (containers|tests) (found|skipped|started|aborted|successful|failed) *\]' "$1"
  grep -E '✘' "$1" | head -40
  [ -n "${OUT:-}" ] && cp "$1" "$OUT/gpu-tests.log"
  return 0
}
echo "issue10: sections: $sections; budget ${budget} s; ${QUICK:+QUICK=1; }JVM flags: ${jvm_flags[*]}"
echo "baseline: $(cat .device/baseline/ref 2>/dev/null || echo 'none packed')"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null
declare -A status
for s in $sections; do
  left=$((budget - (SECONDS - t0)))
  limit=$(cap "$s")
  [ "$limit" -gt "$left" ] && limit=$left
  echo
  echo "######## $s (limit ${limit} s; $((SECONDS - t0)) s elapsed)"
  if [ "$limit" -lt 20 ]; then
    echo "issue10: $s skipped: ${left} s of the budget left"; status[$s]="skipped (no time left)"; continue
  fi
  start=$SECONDS
  case "$s" in
    gpu-tests) echo "+ bash benchmarks/device/gpu-tests.sh > $work/gpu-tests.log"
               timeout -k 5 "$limit" bash benchmarks/device/gpu-tests.sh > "$work/gpu-tests.log" 2>&1
               rc=$?; gpu_tests_summary "$work/gpu-tests.log"; (exit $rc);;
    before-after|shuffle-peers|fmnist-routing) echo "+ bash benchmarks/device/$s.sh"; timeout -k 5 "$limit" bash "benchmarks/device/$s.sh";;
    *) echo "issue10: unknown section $s"; false;;
  esac
  rc=$?
  case $rc in
    0) status[$s]="ok";;
    124|137) status[$s]="TIMED OUT after ${limit} s";;
    *) status[$s]="FAILED (exit $rc)";;
  esac
  echo "######## $s: ${status[$s]} in $((SECONDS - start)) s"
done
echo
echo "######## issue10 done in $((SECONDS - t0)) s"
for s in $sections; do printf '  %-15s %s\n' "$s" "${status[$s]}"; done
