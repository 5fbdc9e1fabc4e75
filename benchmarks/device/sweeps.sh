#!/bin/bash
# The scenario matrix on the GPU machine: cold sweeps of I/O size, I/O threads and prefetch depth (GDS and
# bounce, page cache dropped before every measurement), then page-cache-hot and tmpfs runs against the
# pinned host-to-device ceiling (doctor's pinned-copy line). Reports (JSON, CSV, Markdown) go to $OUT/reports
# (or ./reports); the GPU machine's runtime has no AWT, so draw the plots afterwards with `gdsloader plot`.
# SECTIONS=hot skips the sweeps.
# Pack first: benchmarks/device/pack.sh
set -u
source "$(dirname "$0")/common.sh"
reports="${OUT:-$PWD}/reports"
mkdir -p "$reports"
source .device/env.sh
gdsq doctor --data "$work" | grep -E "GPU 0|cuFile mode|pinned memory"
gdsq generate --out "$work/s2" --size 2GiB --shards 8
[ "${SECTIONS:-all}" = hot ] || {
gdsq sweep "$work/s2" --vary io-size --values 64KiB,256KiB,1MiB,4MiB,16MiB --paths GDS,BOUNCE --drop-caches --out "$reports"
gdsq sweep "$work/s2" --vary threads --values 1,2,4,8,16 --paths GDS,BOUNCE --drop-caches --out "$reports"
gdsq sweep "$work/s2" --vary depth --values 1,2,4 --paths GDS,BOUNCE --drop-caches --out "$reports"
}
echo "=== page cache hot, buffered reads, 16 threads"
cat "$work"/s2/*.npy > /dev/null
gdsq bench --no-direct --no-verify --paths BOUNCE,HOST --threads 16 --rounds 2 --out "$reports/hot" "$work/s2"
rm -rf "$work/s2"
echo "=== tmpfs (/dev/shm), 16 threads"
gdsq generate --out /dev/shm/gdsloader-s4 --size 4GiB --shards 16
gdsq bench --no-verify --paths BOUNCE,HOST --threads 16 --rounds 2 --out "$reports/tmpfs" /dev/shm/gdsloader-s4
gdsq bench --paths BOUNCE --threads 16 /dev/shm/gdsloader-s4 | grep -E "^BOUNCE"   # the same, every batch verified
rm -rf /dev/shm/gdsloader-s4 "$work"
