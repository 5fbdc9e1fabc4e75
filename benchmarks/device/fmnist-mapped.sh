#!/bin/bash
# GPU machine side, issue 11 item 4: the Fashion-MNIST GPU training sample (FashionMnistGpuTraining: Arrow IPC shards,
# global shuffle, the MLP on cuBLAS/NVRTC) on MAPPED against BOUNCE in one call: the same model, seed and
# hyperparameters on each path, alternated REPS times, then one summary: final test accuracy per path (should match
# within noise), samples/s per path (median over epochs 1.. of every run: epoch 0 also pays the page cache and, on
# MAPPED, the first touch of the registered shards), the share of time the loop waited for data, and MAPPED/BOUNCE.
# Pack with the data first: benchmarks/device/pack.sh --fmnist ../shared/datasets/fashion-mnist
#   EPOCHS=10 (QUICK=1: 3)   REPS=1   IO_THREADS=4   PATHS="MAPPED BOUNCE"
# Writes $OUT/fmnist-mapped.json when OUT is set. Fails soft: a failed run is reported and left out; exit 1 if any.
set -u -o pipefail
source "$(dirname "$0")/common.sh"
source .device/env.sh
if [ -n "${QUICK:-}" ]; then epochs="${EPOCHS:-3}"; else epochs="${EPOCHS:-10}"; fi
reps="${REPS:-1}"
threads="${IO_THREADS:-4}"
paths="${PATHS:-MAPPED BOUNCE}"
if ! ls .device/data/fashion-mnist/train-images-idx3-ubyte.xz >/dev/null 2>&1; then
  echo "fmnist-mapped: no Fashion-MNIST in .device/data: pack with benchmarks/device/pack.sh --fmnist DIR"; exit 2
fi
idx="$work/fashion-mnist"
bash benchmarks/device/fmnist-unpack.sh "$idx" > /dev/null || { echo "fmnist-mapped: unpacking failed"; exit 1; }
log="$work/fmnist-mapped.log"
: > "$log"
failed=0
for rep in $(seq "$reps"); do
  for p in $paths; do
    echo "== rep $rep, path $p"
    echo "@@run rep=$rep path=$p" >> "$log"
    out="$(show java "$jvm_flags" -Djava.util.logging.SimpleFormatter.format='%4$s: %5$s%6$s%n' -cp '.device/lib/*' \
             dev.gdsloader.samples.FashionMnistGpuTraining "$idx" "$work/fmnist-arrow" "$epochs" "$p" "$threads" 2>&1)"
    rc=$?
    echo "$out"
    echo "$out" >> "$log"
    [ $rc = 0 ] || { echo "fmnist-mapped: rep $rep path $p failed (exit $rc)"; echo "@@failed" >> "$log"; failed=$((failed + 1)); }
  done
done
echo "=== summary: FashionMnistGpuTraining, $epochs epochs, $threads I/O threads, $reps rep(s) per path"
python3 benchmarks/device/fmnist_mapped_summary.py "$log" "${OUT:-}"
[ $failed = 0 ] || { echo "fmnist-mapped: $failed run(s) failed"; exit 1; }
