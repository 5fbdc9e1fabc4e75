#!/bin/bash
# gds-loader against its peers on the same shards, in one run on the GPU machine: PyTorch DataLoader
# (mmap np.load, 8 workers, pin_memory=True, .to('cuda', non_blocking=True)) and torch.cuda.gds.GdsFile.
# Cold: page cache dropped before each reader. Warm: data in the page cache, buffered reads for everyone.
# Pack first: benchmarks/device/pack.sh
set -u
source "$(dirname "$0")/common.sh"
source .device/env.sh
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
gdsq generate --out "$work/p4" --size 4GiB --shards 16
echo "=== cold: gds-loader, 3 rounds (page cache dropped before every measurement), naive baseline and copy ceilings"
gdsq bench --drop-caches --rounds 3 --paths GDS,BOUNCE "$work/p4"
echo "=== cold: peers (torch.cuda.gds three times)"
for i in 1 2 3; do drop; python3 benchmarks/peers/torch_gds.py "$work/p4"; done
drop; python3 benchmarks/peers/torch_dataloader.py "$work/p4"
echo "=== warm (page cache): gds-loader, buffered reads, 16 threads, no per-batch check"
cat "$work"/p4/*.npy > /dev/null
gdsq bench --no-direct --no-verify --paths BOUNCE --threads 16 --rounds 2 "$work/p4"
echo "=== warm (page cache): PyTorch DataLoader"
python3 benchmarks/peers/torch_dataloader.py "$work/p4"
rm -rf "$work"
