#!/bin/bash
# The loader's measurements on the GPU machine: overlap of I/O with the consumer's GPU compute, random reads
# under a global shuffle against O_DIRECT pread threads, one loader per GPU as ranks of one job (two GPUs on
# nvidia-h200-x2; ranks share the GPU otherwise), time to first batch and heap allocation per batch.
# Pack first: benchmarks/device/pack.sh
set -u
source "$(dirname "$0")/common.sh"
source .device/env.sh
nvidia-smi --query-gpu=index,name,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
gdsq generate --out "$work/g2" --size 2GiB --shards 8
for p in BOUNCE GDS; do
  # batch 64: 223 batches of 9.6 MB, so the pipeline's fill (one t_io before the first compute) costs 0.4%, not 3%
  echo "=== overlap, $p, O_DIRECT from storage, 223 batches"; gdsq overlap --path $p --batch-size 64 "$work/g2"
done
echo "=== overlap, BOUNCE, buffered from page cache"; gdsq overlap --path BOUNCE --no-direct "$work/g2"
for p in BOUNCE GDS; do
  echo "=== latency, $p, page cache"; gdsq latency --path $p --no-direct "$work/g2"
done
echo "=== latency, BOUNCE, O_DIRECT"; gdsq latency --path BOUNCE "$work/g2"
for rec in 4096 65536; do
  gdsq generate --out "$work/r$rec" --size 1GiB --shards 4 --record-bytes $rec --align 4096
  echo "=== random reads, $rec-byte records, cold"; gdsq random --drop-caches "$work/r$rec"
  rm -rf "$work/r$rec"
done
for p in BOUNCE GDS; do
  echo "=== ranks, $p"; gdsq ranks --path $p "$work/g2"
done
rm -rf "$work"
