#!/bin/bash
# The loader's measurements on the GPU machine (best on nvidia-h200-x2 for the two-rank run):
# overlap of I/O with the consumer's GPU compute, one loader per GPU as ranks of one job, time to first
# batch and heap allocation per batch. Pack first: benchmarks/device/pack.sh
set -u
cd "$(dirname "$0")/../.."
work="${WORK:-$PWD/.work}"
mkdir -p "$work"
source .device/env.sh
gds() { java --enable-native-access=ALL-UNNAMED -Djava.util.logging.SimpleFormatter.format='%4$s: %5$s%6$s%n' \
          -cp '.device/lib/*' dev.gdsloader.cli.GdsLoaderMain "$@" 2>&1 | grep -v '^INFO: gdsloader path'; }
nvidia-smi --query-gpu=index,name,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
gds generate --out "$work/g2" --size 2GiB --shards 8
for p in BOUNCE GDS; do
  echo "=== overlap, $p, page cache warm"; gds overlap --path $p "$work/g2"
done
for p in BOUNCE GDS; do
  echo "=== ranks, $p"; gds ranks --path $p "$work/g2"
done
for p in BOUNCE GDS; do
  echo "=== latency, $p"; gds latency --path $p "$work/g2"
done
rm -rf "$work"
