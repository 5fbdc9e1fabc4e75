#!/bin/bash
# The walking skeleton's proof on the GPU machine (one call, ~3 minutes):
#   1. without udev records (DEVICE_NO_UDEV_FIX=1): doctor names the cause, AUTO falls back to bounce;
#   2. with them: doctor; Fashion-MNIST -> .npy -> bench, cold; loader CRC32 of a shard == numpy's;
#   3. a generated 4 GiB dataset, page cache dropped before the ceiling and before each path.
# Prepare on the build machine first:
#   benchmarks/device/pack.sh --data ../shared/datasets/fashion-mnist
# then run it there with .device carried: bash benchmarks/device/skeleton-proof.sh
set -u
source "$(dirname "$0")/common.sh"
echo "=== storage: $(df -hT "$work" | tail -1)"

echo "=== 1. no udev records for the disk (DEVICE_NO_UDEV_FIX=1)"
# a machine kept warm from an earlier call already has the records env.sh wrote: set them aside meanwhile
[ -d /run/udev/data ] && mv /run/udev/data /run/udev/data.gdsloader-aside
DEVICE_NO_UDEV_FIX=1 source .device/env.sh
gds convert idx --out "$work/fm" .device/data/*.gz
gds doctor --data "$work/fm/test"
gds checksum --path AUTO "$work/fm/test/images-00000.npy"
gds bench --paths GDS "$work/fm/test"; echo "exit status of an explicit GDS bench: $?"

echo "=== 2. with udev records"
[ -d /run/udev/data.gdsloader-aside ] && mv /run/udev/data.gdsloader-aside /run/udev/data
unset DEVICE_NO_UDEV_FIX
source .device/env.sh
gds doctor --data "$work/fm/test"
gds bench --drop-caches --batch-bytes 4MiB "$work/fm/train"
for p in GDS BOUNCE HOST; do gds checksum --path $p "$work/fm/test/images-00000.npy"; done
python3 -c "import numpy as np, zlib; a = np.load('$work/fm/test/images-00000.npy'); print('numpy', a.shape, a.dtype, 'crc32=%d' % zlib.crc32(a.tobytes()))"

echo "=== 3. 4 GiB generated, cold"
gds generate --out "$work/gen4g" --size 4GiB --shards 16
gds bench --drop-caches --rounds 3 "$work/gen4g"
ls -la /tmp/gdsloader-cufile-*.log 2>/dev/null | tail -2; tail -5 /tmp/gdsloader-cufile-*.log 2>/dev/null | tail -8
rm -rf "$work"
