#!/bin/bash
# GPU machine side, issue 13 (multi-GPU in one node), in ONE call. On a machine with two or more GPUs
# (nvidia-h200-x2) the acceptance; on one GPU the degenerate checks, so the script and the commands are tried:
#   1. topology   `gdsloader doctor --data DIR` and `nvidia-smi topo -m` in the same call (the link class doctor
#                 derives per GPU pair and per GPU -> data disk, to compare with topo's matrix)
#   2. p2p        two GPUs: `gdsloader p2p` (GPU 0 -> GPU 1, 1 MiB..1 GiB: host-staged, cudaMemcpyPeerAsync with peer
#                 access off and on, a copy kernel into the peer, the pinned host-to-device ceiling; each byte-exact);
#                 one GPU: `gdsloader p2p` must refuse in one line (exit 2), then `gdsloader p2p --same-device`
#   3. fan-out    `gdsloader fanout` on generated data: the group (--devices 0,1; one GPU: --devices 0, the group of
#                 one) against GPU 0 alone, per path (MAPPED and BOUNCE): hot (page cache warm, every member's batches
#                 checked byte-exact against GPU 0 alone in an untimed epoch; each member's batches/s over GPU 0 alone's,
#                 storage bytes group/alone) and, for BOUNCE, cold (page cache dropped before each timed epoch: epoch
#                 time group/alone; MAPPED reads the shards at build into registered pages a drop cannot evict)
#   4. GPU tests  DeviceGroupGpuTest and PeerCopyBenchGpuTest (gpu-tests.sh with CLASSES)
# Then a summary of the acceptance ratios: p2p PEER_ON / HOST_STAGED at each size; fan-out slowest member / alone
# (hot, >= 0.9), storage group / alone (1.00), epoch group / alone (cold, <= 1.05).
#   SIZE=4GiB (QUICK=1: 1GiB) generated data   PATHS="MAPPED BOUNCE"   SECTIONS="topology p2p fanout tests"
# Reports go to $OUT (doctor.txt, topo.txt, p2p/, fanout-*/, multigpu.log) when OUT is set, else under .work/.
# Fails soft: a part that fails is reported, the rest still run; exit 1 if any failed.
# Pack first, here: benchmarks/device/pack.sh; then carrying .device: bash benchmarks/device/multigpu.sh
set -u -o pipefail
source "$(dirname "$0")/common.sh"
[ -n "${OUT:-}" ] && exec > >(tee "$OUT/multigpu.log") 2>&1
source .device/env.sh
size="${SIZE:-$([ -n "${QUICK:-}" ] && echo 1GiB || echo 4GiB)}"
paths="${PATHS:-MAPPED BOUNCE}"
sections="${SECTIONS:-topology p2p fanout tests}"
reports="${OUT:-$work/multigpu-reports}"
mkdir -p "$reports"
failed=0
t0=$SECONDS
part() { echo; echo "=== $1 ($((SECONDS - t0)) s so far)"; }
fail() { echo "multigpu.sh: $1"; failed=$((failed + 1)); }
gpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')"
if [ "$gpus" -ge 2 ]; then group=0,1; else group=0; fi
echo "multigpu.sh: $gpus GPU(s) visible: group --devices $group, paths $paths, data $size"
data="$work/multigpu-data"
trap 'rm -rf "$data"' EXIT

for s in $sections; do
  case "$s" in
    topology)
      part "1. topology: doctor and nvidia-smi topo -m, same call"
      show gds doctor --data "$work" | tee "$reports/doctor.txt" || fail "doctor failed"
      show nvidia-smi topo -m | tee "$reports/topo.txt" || fail "nvidia-smi topo -m failed"
      ;;
    p2p)
      part "2. p2p"
      if [ "$gpus" -ge 2 ]; then
        show gds p2p --src 0 --dst 1 --out "$reports/p2p" || fail "p2p failed (or a way was not byte-exact)"
      else
        out="$(gds p2p --out "$reports/p2p-refused" 2>&1)"; rc=$?
        echo "$out"
        [ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q 'needs two GPUs, found 1' \
          || fail "p2p on one GPU should refuse in one line with exit 2 (got exit $rc)"
        show gds p2p --same-device --out "$reports/p2p" || fail "p2p --same-device failed (or a way was not byte-exact)"
      fi
      ;;
    fanout)
      part "3. fan-out: group --devices $group against GPU 0 alone"
      rm -rf "$data"
      if show gdsq generate --out "$data" --size "$size" --shards 16 --record-bytes 150528 --align 4096 >/dev/null; then
        for p in $paths; do
          cat "$data"/*.npy > /dev/null
          show gdsq fanout --devices "$group" --path "$p" --no-direct --threads 16 --batch-size 445 --epochs 2 \
            --out "$reports/fanout-$p" "$data" || fail "fanout hot $p failed (or a batch was not byte-exact)"
          if [ "$p" = MAPPED ]; then
            # MAPPED reads the files at build (mapped, registered: pinned pages a drop cannot evict): no cold epoch
            echo "fanout cold: skipped for MAPPED (it reads the shards when the loader is built; see BENCHMARKS.md)"
            continue
          fi
          show gdsq fanout --devices "$group" --path "$p" --threads 16 --batch-size 445 --epochs 1 --cold \
            --out "$reports/fanout-$p" "$data" || fail "fanout cold $p failed"
        done
      else
        fail "generating $size failed"
      fi
      ;;
    tests)
      part "4. GPU tests: DeviceGroupGpuTest, PeerCopyBenchGpuTest"
      CLASSES='.*(DeviceGroupGpuTest|PeerCopyBenchGpuTest)' bash benchmarks/device/gpu-tests.sh || fail "GPU tests failed"
      ;;
    *) fail "unknown section '$s' (topology p2p fanout tests)";;
  esac
done

echo
echo "=== summary (GB/s = 1e9 B/s) ($((SECONDS - t0)) s)"
python3 - "$reports" <<'PY'
import glob, json, os, sys
d = sys.argv[1]
p = os.path.join(d, "p2p", "p2p.json")
if os.path.exists(p):
    r = json.load(open(p))["report"]
    print("p2p GPU %d -> GPU %d, peer access %s%s" % (r["src"], r["dst"], r["canAccessPeer"], ("; " + r["note"]) if r["note"] else ""))
    rows = r["rows"]
    for size in sorted({x["bytes"] for x in rows}):
        g = {x["way"]: x for x in rows if x["bytes"] == size}
        cells = ", ".join("%s %.1f%s" % (w, g[w]["gbps"], "" if g[w]["exact"] else " NOT EXACT") for w in g)
        on, staged = g.get("PEER_ON"), g.get("HOST_STAGED")
        ratio = "%.2f" % (on["gbps"] / staged["gbps"]) if on and staged and staged["gbps"] else "-"
        print("  %5d MiB: %s; PEER_ON / HOST_STAGED %s" % (size >> 20, cells, ratio))
for f in sorted(glob.glob(os.path.join(d, "fanout-*", "fanout-*.json"))):
    j = json.load(open(f))
    r = j["result"]
    kind = "cold" if r["cold"] else "hot"
    path = os.path.basename(os.path.dirname(f))[len("fanout-"):]
    target = "slowest member / alone %.3f (>= 0.9)" % j["worstRateRatio"] if kind == "hot" else \
        "epoch group / alone %.3f (<= 1.05)" % j["epochRatio"]
    print("fanout %s %s, GPUs %s: %s; storage group / alone %.3f (1.00); byte-exact %s" % (path, kind, r["group"]["devices"],
          target, j["storageRatio"], {None: "not checked", True: "yes", False: "NO"}[r["exact"]]))
PY
[ $failed = 0 ] || { echo "multigpu.sh: $failed part(s) failed"; exit 1; }
