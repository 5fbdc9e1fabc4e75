#!/bin/bash
# GPU machine side: JFR profiles of the two measurements that stay below their acceptance (session 5), printed as
# JFR views on the GPU machine (the carried JRE has jdk.jfr and its `jfr` tool), so that the next change is aimed:
#   a. MAPPED, hot global shuffle, 784 B records (0.73 of the registered-shard gather ceiling; >= 0.8 asked):
#      `random --hot --paths MAPPED --threads 16 --batch-bytes 16MiB --no-direct --rounds 3 --no-ceiling` on SIZE
#      of shards, one JVM recording (settings=profile)
#   b. CUDA IPC delivery (0.51 of the same loader in-process; >= 0.9 asked): `serve-bench --clients 1 --epochs 2`
#      on 2 GiB of 150528-byte records; every JVM of it records (JAVA_TOOL_OPTIONS): the bench JVM (server and
#      in-process loader) and the IPC child
#   c. (PARTS=hosts) HOST delivery to many clients (1.71x one client at 32 clients, session 7; >= 2x asked):
#      `serve-bench --clients 32 --epochs 2` on 2 GiB of 150528-byte records, the bench JVM (server and its 32
#      clients) recording
# Views per recording: hot-methods (Java samples), native-methods (threads in native code: CUDA waits, socket I/O),
# thread-cpu-load, contention-by-site. The .jfr files stay in $OUT/jfr when OUT is set (at most 16 MiB each come back).
#   SIZE=6GiB   PARTS="mapped ipc"   LINES=25 (rows per view)
# Pack first, here: benchmarks/device/pack.sh; then carrying .device: bash benchmarks/device/profile.sh
# every java below runs with .device/jvm-flags (common.sh's jvm_flags)
set -u -o pipefail
source "$(dirname "$0")/common.sh"
source .device/env.sh
size="${SIZE:-6GiB}"
lines="${LINES:-25}"
dir="${OUT:-$work}/jfr"
mkdir -p "$dir"
jfr_tool="$(dirname "$(command -v java)")/jfr"
[ -x "$jfr_tool" ] || { echo "profile.sh: no jfr tool beside $(command -v java)"; exit 2; }
failed=0
views() {
  for v in hot-methods native-methods thread-cpu-load contention-by-site; do
    echo "--- $v: $(basename "$1")"
    "$jfr_tool" view --width 180 "$v" "$1" 2>&1 | head -n "$lines"
  done
}
# 2 GiB of 150528-byte records in DIR's bench/ (made anew), in the page cache; fails the part when generate fails
serve_data() {
  rm -rf "$1"
  gdsq generate --out "$1/bench" --size 2GiB --shards 16 --record-bytes 150528 --align 4096 >/dev/null || return 1
  cat "$1"/bench/*.npy > /dev/null
}
for part in ${PARTS:-mapped ipc}; do
  case "$part" in
    mapped)
      d="$work/profile-784"
      rm -rf "$d"
      gdsq generate --out "$d" --size "$size" --shards 16 --record-bytes 784 --align 4096 >/dev/null || { failed=1; continue; }
      cat "$d"/*.npy > /dev/null
      echo "=== a. MAPPED hot global shuffle, 784 B, $size"
      java "${jvm_flags[@]}" -XX:StartFlightRecording=filename="$dir/mapped-784.jfr",settings=profile \
        -cp "${GDS_CP:-.device/lib/*}" dev.gdsloader.cli.GdsLoaderMain random --hot --paths MAPPED --threads 16 \
        --batch-bytes 16MiB --no-direct --rounds 3 --no-ceiling "$d" 2>&1 | grep -E "records/s|loader MAPPED" || failed=1
      rm -rf "$d"
      views "$dir/mapped-784.jfr"
      ;;
    ipc)
      d="$work/profile-ipc/bench"
      serve_data "$work/profile-ipc" || { failed=1; continue; }
      echo "=== b. CUDA IPC delivery against the same loader in-process, 2 GiB"
      JAVA_TOOL_OPTIONS="-XX:StartFlightRecording=filename=$dir/ipc-%p.jfr,settings=profile" \
        java "${jvm_flags[@]}" -cp "${GDS_CP:-.device/lib/*}" dev.gdsloader.cli.GdsLoaderMain serve-bench "$d" \
        --clients 1 --epochs 2 2>&1 | grep -E "^(loopback|host-1|ipc)" | cut -c1-120 || failed=1
      rm -rf "$work/profile-ipc"
      for f in "$dir"/ipc-*.jfr; do
        views "$f"
      done
      ;;
    hosts)
      d="$work/profile-hosts/bench"
      serve_data "$work/profile-hosts" || { failed=1; continue; }
      echo "=== c. HOST delivery to 32 clients at once, 2 GiB"
      java "${jvm_flags[@]}" -XX:StartFlightRecording=filename="$dir/hosts.jfr",settings=profile \
        -cp "${GDS_CP:-.device/lib/*}" dev.gdsloader.cli.GdsLoaderMain serve-bench "$d" \
        --clients 32 --epochs 4 --ipc-epochs 1 2>&1 | grep -E "^(loopback|host-|ipc)" | cut -c1-120 || failed=1
      rm -rf "$work/profile-hosts"
      views "$dir/hosts.jfr"
      ;;
    *) echo "profile.sh: unknown part $part (mapped, ipc, hosts)"; failed=1;;
  esac
done
exit "$failed"
