#!/bin/bash
# The loader's measurements on the GPU machine: overlap of I/O with the consumer's GPU compute, random reads
# under a global shuffle against O_DIRECT pread threads, one loader per GPU as ranks of one job (two GPUs on
# nvidia-h200-x2; ranks share the GPU otherwise), time to first batch and heap allocation per batch.
# Pack first: benchmarks/device/pack.sh
set -u
cd "$(dirname "$0")/../.."
work="${WORK:-$PWD/.work}"
mkdir -p "$work"
source .device/env.sh
gds() { java --enable-native-access=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED -Djava.util.logging.SimpleFormatter.format='%4$s: %5$s%6$s%n' \
          -cp '.device/lib/*' dev.gdsloader.cli.GdsLoaderMain "$@" 2>&1 | grep -v '^INFO: gdsloader path\|^round '; }
nvidia-smi --query-gpu=index,name,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
gds generate --out "$work/g2" --size 2GiB --shards 8
for p in BOUNCE GDS; do
  echo "=== overlap, $p, O_DIRECT from storage"; gds overlap --path $p "$work/g2"
done
echo "=== overlap, BOUNCE, buffered from page cache"; gds overlap --path BOUNCE --no-direct "$work/g2"
for p in BOUNCE GDS; do
  echo "=== latency, $p, page cache"; gds latency --path $p --no-direct "$work/g2"
done
echo "=== latency, BOUNCE, O_DIRECT"; gds latency --path BOUNCE "$work/g2"
for rec in 4096 65536; do
  gds generate --out "$work/r$rec" --size 1GiB --shards 4 --record-bytes $rec --align 4096
  echo "=== random reads, $rec-byte records, cold"; gds random --drop-caches "$work/r$rec"
  rm -rf "$work/r$rec"
done
for p in BOUNCE GDS; do
  echo "=== ranks, $p"; gds ranks --path $p "$work/g2"
done
rm -rf "$work"
