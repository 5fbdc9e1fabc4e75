#!/bin/bash
# The scenario matrix on the GPU machine: cold sweeps of I/O size, I/O threads and prefetch depth (GDS and
# bounce, page cache dropped before every measurement), then page-cache-hot and tmpfs runs against the
# pinned host-to-device ceiling (doctor's pinned-copy line). Reports (JSON, CSV, Markdown) go to $OUT/reports
# (or ./reports); the GPU machine's runtime has no AWT, so draw the plots afterwards with `gdsloader plot`.
# SECTIONS=hot skips the sweeps.
# Pack first: benchmarks/device/pack.sh
set -u
cd "$(dirname "$0")/../.."
work="${WORK:-$PWD/.work}"
reports="${OUT:-$PWD}/reports"
mkdir -p "$work" "$reports"
source .device/env.sh
gds() { java --enable-native-access=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED -Djava.util.logging.SimpleFormatter.format='%4$s: %5$s%6$s%n' \
          -cp '.device/lib/*' dev.gdsloader.cli.GdsLoaderMain "$@" 2>&1 | grep -v '^INFO: gdsloader path\|^round \|^measuring\|^computing'; }
gds doctor --data "$work" | grep -E "GPU 0|cuFile mode|pinned memory"
gds generate --out "$work/s2" --size 2GiB --shards 8
[ "${SECTIONS:-all}" = hot ] || {
gds sweep "$work/s2" --vary io-size --values 64KiB,256KiB,1MiB,4MiB,16MiB --paths GDS,BOUNCE --drop-caches --out "$reports"
gds sweep "$work/s2" --vary threads --values 1,2,4,8,16 --paths GDS,BOUNCE --drop-caches --out "$reports"
gds sweep "$work/s2" --vary depth --values 1,2,4 --paths GDS,BOUNCE --drop-caches --out "$reports"
}
echo "=== page cache hot, buffered reads, 16 threads"
cat "$work"/s2/*.npy > /dev/null
gds bench --no-direct --no-verify --paths BOUNCE,HOST --threads 16 --rounds 2 --out "$reports/hot" "$work/s2"
rm -rf "$work/s2"
echo "=== tmpfs (/dev/shm), 16 threads"
gds generate --out /dev/shm/gdsloader-s4 --size 4GiB --shards 16
gds bench --no-verify --paths BOUNCE,HOST --threads 16 --rounds 2 --out "$reports/tmpfs" /dev/shm/gdsloader-s4
gds bench --paths BOUNCE --threads 16 /dev/shm/gdsloader-s4 | grep -E "^BOUNCE"   # the same, every batch verified
rm -rf /dev/shm/gdsloader-s4 "$work"
