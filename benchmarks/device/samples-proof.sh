#!/bin/bash
# GPU machine side: the samples' proof (issue 6). Pack first on the build machine:
#   benchmarks/device/pack.sh --fmnist ../shared/datasets/fashion-mnist
# Then, in one run: Fashion-MNIST unpacked to plain IDX; the Java MLP trained on the GPU fed by the loader
# (FashionMnistGpuTraining, Arrow IPC shards, global shuffle) and its PyTorch twin (same model and
# hyperparameters, DataLoader with 2 workers and pinned memory) one after the other in the same run; then
# DropIntoYourLoop summing the training images' bytes on the GPU, checked against numpy's sum of the IDX file.
#   EPOCHS=10 (default) PATHS="AUTO" (default; e.g. "GDS BOUNCE") IO_THREADS=4 (default; the loader's)
set -u
source "$(dirname "$0")/common.sh"
idx="$work/fashion-mnist"
bash benchmarks/device/fmnist-unpack.sh "$idx" >/dev/null
samples() { java --enable-native-access=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
              -Djava.util.logging.SimpleFormatter.format='%4$s: %5$s%6$s%n' -cp '.device/lib/*' "$@"; }
for p in ${PATHS:-AUTO}; do
  echo "== Java, gds-loader + cuBLAS/NVRTC, path $p"
  samples dev.gdsloader.samples.FashionMnistGpuTraining "$idx" "$work/fmnist-arrow" "${EPOCHS:-10}" "$p" "${IO_THREADS:-4}"
done
echo "== PyTorch, DataLoader(num_workers=2, pin_memory=True)"
python3 samples/python/fashion_mnist_mlp.py "$idx" "${EPOCHS:-10}" 2
echo "== DropIntoYourLoop"
samples dev.gdsloader.samples.DropIntoYourLoop "$work/fmnist-arrow/train" images
python3 -c "
import numpy as np, sys
a = np.fromfile(sys.argv[1], dtype=np.uint8, offset=16)
print('numpy sum of the IDX images:', int(a.sum(dtype=np.uint64)))" "$idx/train-images-idx3-ubyte"
