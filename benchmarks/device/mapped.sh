#!/bin/bash
# GPU machine side, issue 11 (MAPPED: registered mmapped shards read by the copy engine and a gather kernel): the
# acceptance measurements in ONE call (about 4-5 minutes), each ratio from one run:
#   a. hot sequential   `bench --no-direct --no-verify --paths MAPPED,BOUNCE` on 4 GiB from the disk's page cache
#                       (warmed by a cat), then on tmpfs (/dev/shm): the ratios, without the per-batch readback and
#                       CRC that would sit in the loop; the bench prints the pinned host-to-device ceiling of the same
#                       run; CPU s/GB per path. Then once more on the page cache with every batch checked (1 round)
#   b. hot shuffled     shuffle-peers.sh with PATHS=MAPPED,BOUNCE CEILING=1 RANDOM_FLAGS="--hot --epochs 3
#                       --warmup-epochs 1": `random --hot` at 784 B / 4 KiB / 64 KiB records, each round's loader timed
#                       over 3 epochs after an untimed one (a training loop's steady state, as the gather ceiling is
#                       timed after its own warm-up epoch: the GPU's first touch of newly registered pages, the JIT) (pread ceiling, gather ceilings over pinned memory and over the
#                       registered shards (page cache), each path), PyTorch's DataLoader
#                       (benchmarks/peers/torch_shuffle.py) on the same files; then `bench --shuffle global` at 784 B
#                       on 512 MiB, 3 rounds (every batch checked byte-exact, the gather ceiling row in the same run;
#                       heap B/batch is the lowest round: one round of 32 batches carries the JVM's one-time costs)
#   c. cold epoch 0     `bench --drop-caches --paths MAPPED,BOUNCE` on the disk data (page cache dropped before the
#                       raw O_DIRECT ceiling and before each path)
# Then one summary table of the ratios the issue's acceptance names: MAPPED / pinned ceiling (page cache, tmpfs);
# shuffled MAPPED records/s and GB/s against the gather ceiling and against PyTorch; CPU s/GB MAPPED / BOUNCE; cold
# epoch 0 MAPPED / raw O_DIRECT.
# Before MAPPED is merged (ReadPath has no MAPPED in the packed jars) the script says so on one line and runs
# every part with BOUNCE alone, so it can be tried; the MAPPED cells of the summary are then "-".
#   SEQ_SIZE=4GiB (QUICK=1: 1GiB)   SHUFFLE_SIZE=6GiB per record size (QUICK=1: 256MiB)   ROUNDS=3 (QUICK=1: 1)
#   (6 GiB: a shuffled MAPPED epoch of 2 GiB lasts well under 0.1 s, short enough for the epoch's start to weigh)
#   SECTIONS="hot-seq shuffled cold" picks and orders the parts
# JSON reports go to $OUT (bench-*/bench.json, shuffle-peers.json) and the log to $OUT/mapped.log when OUT is set.
# Fails soft: a part that fails is reported, the rest still run; exit 1 if any failed.
# Pack first, here: benchmarks/device/pack.sh; then carrying .device: bash benchmarks/device/mapped.sh
set -u -o pipefail
source "$(dirname "$0")/common.sh"
[ -n "${OUT:-}" ] && exec > >(tee "$OUT/mapped.log") 2>&1
source .device/env.sh
if [ -n "${QUICK:-}" ]; then
  seq_size="${SEQ_SIZE:-1GiB}"; shuffle_size="${SHUFFLE_SIZE:-256MiB}"; rounds="${ROUNDS:-1}"
else
  seq_size="${SEQ_SIZE:-4GiB}"; shuffle_size="${SHUFFLE_SIZE:-6GiB}"; rounds="${ROUNDS:-3}"
fi
sections="${SECTIONS:-hot-seq shuffled cold}"
reports="${OUT:-$work/mapped-reports}"
mkdir -p "$reports"
failed=0
t0=$SECONDS

# MAPPED is in the packed build when the loader jar's ReadPath enum names it
has_mapped="$(python3 - <<'PY'
import glob, zipfile
for j in glob.glob('.device/lib/*.jar'):
    try:
        z = zipfile.ZipFile(j)
        b = z.read('dev/gdsloader/loader/ReadPath.class')
    except KeyError:
        continue
    print('yes' if b'MAPPED' in b else 'no')
    break
else:
    print('no')
PY
)"
if [ "$has_mapped" = yes ]; then
  paths=MAPPED,BOUNCE
else
  paths=BOUNCE
  echo "mapped.sh: ReadPath.MAPPED is not in this build (.device/lib): every part runs with BOUNCE only; the MAPPED cells of the summary are '-'"
fi
# the shuffled loader rows time 4 epochs per round at 6 GiB: MAPPED only unless SHUFFLE_PATHS says more (BOUNCE at 784 B
# would take minutes; the acceptance's CPU ratio is the sequential one)
shuffle_paths="${SHUFFLE_PATHS:-${paths%%,*}}"
echo "mapped.sh: paths $paths (shuffled: $shuffle_paths), sequential $seq_size, shuffled $shuffle_size per record size, $rounds round(s)"

disk="$work/mapped-seq"
shm="/dev/shm/gdsloader-mapped-seq"
cleanup() { rm -rf "$disk" "$shm" "$work/mapped-shuffle-784"; }
trap cleanup EXIT

part() { echo; echo "=== $1 ($((SECONDS - t0)) s so far)"; }
fail() { echo "mapped.sh: $1"; failed=$((failed + 1)); }

gen() { # DIR SIZE [RECORD_BYTES]
  rm -rf "$1"
  show gdsq generate --out "$1" --size "$2" --shards 16 --record-bytes "${3:-150528}" --align 4096 >/dev/null
}

for s in $sections; do
  case "$s" in
    hot-seq)
      part "a. hot sequential: page cache, then tmpfs"
      if gen "$disk" "$seq_size"; then
        cat "$disk"/*.npy > /dev/null
        show gdsq bench --no-direct --no-verify --paths "$paths" --threads 16 --rounds "$rounds" --out "$reports/bench-hot-pagecache" "$disk" \
          || fail "hot sequential bench on the page cache failed"
        show gdsq bench --no-direct --paths "$paths" --threads 16 --rounds 1 --out "$reports/bench-hot-pagecache-checked" "$disk" \
          || fail "hot sequential bench on the page cache, every batch checked, failed (or a batch was not byte-exact)"
      else
        fail "generating $seq_size on the disk failed"
      fi
      if gen "$shm" "$seq_size"; then
        show gdsq bench --no-direct --no-verify --paths "$paths" --threads 16 --rounds "$rounds" --out "$reports/bench-hot-tmpfs" "$shm" \
          || fail "hot sequential bench on tmpfs failed"
        rm -rf "$shm"
      else
        fail "generating $seq_size on /dev/shm failed"
      fi
      ;;
    shuffled)
      part "b. hot global shuffle: random --hot with the gather ceiling, against PyTorch's DataLoader"
      PATHS="$shuffle_paths" CEILING=1 RANDOM_FLAGS="${SHUFFLE_FLAGS:---hot --epochs 3 --warmup-epochs 1}" SIZE="$shuffle_size" ROUNDS="$rounds" OUT= \
        bash benchmarks/device/shuffle-peers.sh || fail "shuffle-peers.sh reported a failure"
      cp "$work/shuffle-peers.json" "$reports/shuffle-peers.json" 2>/dev/null
      d="$work/mapped-shuffle-784"
      if gen "$d" 512MiB 784; then
        cat "$d"/*.npy > /dev/null
        show gdsq bench --shuffle global --no-direct --paths "$paths" --threads 16 --batch-bytes 16MiB --rounds 3 \
          --out "$reports/bench-shuffle-784" "$d" || fail "bench --shuffle global at 784 B failed (or a batch was not byte-exact)"
        rm -rf "$d"
      else
        fail "generating 784 B records failed"
      fi
      ;;
    cold)
      part "c. cold epoch 0: page cache dropped before the O_DIRECT ceiling and before each path"
      [ -d "$disk" ] || gen "$disk" "$seq_size" || fail "generating $seq_size on the disk failed"
      show gdsq bench --drop-caches --paths "$paths" --threads 16 --rounds 1 --out "$reports/bench-cold" "$disk" \
        || fail "cold bench failed"
      ;;
    *) fail "unknown section '$s' (hot-seq shuffled cold)";;
  esac
done

echo
echo "=== summary (one run each; GB/s = 1e9 B/s; CPU s/GB = process CPU seconds per 1e9 bytes delivered) ($((SECONDS - t0)) s)"
python3 - "$reports" <<'PY'
import json, os, re, sys
d = sys.argv[1]
def bench(name):
    f = os.path.join(d, name, "bench.json")
    return json.load(open(f))["reports"]["default"] if os.path.exists(f) else None
def row(rep, path):
    return next((r for r in rep["rows"] if r["requested"] == path), None) if rep else None
def pinned(rep):
    for n in (rep or {}).get("notes", []):
        m = re.search(r"pinned ([0-9.]+) GB/s", n)
        if m:
            return float(m.group(1))
    return None
def num(v):
    return v if isinstance(v, (int, float)) else None
def f(v, fmt="%.3f"):
    return "-" if v is None else fmt % v
def ratio(a, b):
    return a / b if a is not None and b else None
lines = []
def add(what, value, target, cmd):
    lines.append((what, value, target, cmd))
for name, label in (("bench-hot-pagecache", "page cache"), ("bench-hot-tmpfs", "tmpfs")):
    rep = bench(name)
    m, b, p = row(rep, "MAPPED"), row(rep, "BOUNCE"), pinned(rep)
    mg, bg = (num(m["gbps"]) if m else None), (num(b["gbps"]) if b else None)
    add("hot sequential, %s: MAPPED %s / pinned %s GB/s" % (label, f(mg), f(p, "%.1f")), f(ratio(mg, p), "%.2f"), ">= 0.95",
        "bench --no-direct")
    add("hot sequential, %s: BOUNCE %s / pinned" % (label, f(bg)), f(ratio(bg, p), "%.2f"), "-", "bench --no-direct")
    mc, bc = (num(m.get("cpuSecondsPerGigabyte")) if m else None), (num(b.get("cpuSecondsPerGigabyte")) if b else None)
    add("CPU s/GB, hot sequential %s: MAPPED %s / BOUNCE %s" % (label, f(mc), f(bc)), f(ratio(mc, bc), "%.3f"), "<= 0.1",
        "bench --no-direct")
for name, label in (("bench-hot-pagecache", "hot sequential, page cache"), ("bench-shuffle-784", "global shuffle, 784 B")):
    rep = bench(name)
    for p in ("MAPPED", "BOUNCE"):
        h = num(row(rep, p).get("heapBytesPerBatch")) if row(rep, p) else None  # absent before bench reported it
        if h is not None:
            add("heap B/batch in steady state, %s: %s" % (label, p), f(h, "%.0f"), "<= 1024", "bench --no-direct")
rep = bench("bench-hot-pagecache-checked")
for p in ("MAPPED", "BOUNCE"):
    r = row(rep, p)
    if r:
        add("hot sequential, page cache, every batch checked: %s %s GB/s, checksum %s" % (p, f(r["gbps"]), r["checksum"]),
            f(ratio(r["gbps"], pinned(rep)), "%.2f"), "byte-exact", "bench --no-direct")
sp = os.path.join(d, "shuffle-peers.json")
rows = [json.loads(l) for l in open(sp) if l.strip()] if os.path.exists(sp) else []
targets = {784: ("records/s", 20e6), 4096: ("GB/s", 40.0), 65536: ("GB/s", 45.0)}
for size in sorted({r["size"] for r in rows}):
    get = lambda **k: next((r for r in rows if r["size"] == size and all(r.get(a) == v for a, v in k.items())), None)
    peer, gather, gather_pc = get(reader="peer"), get(reader="gather"), get(reader="gather-registered")
    m, b = get(reader="loader", path="MAPPED"), get(reader="loader", path="BOUNCE")
    unit, goal = targets.get(size, ("GB/s", None))
    add("hot shuffle %d B: MAPPED %s rec/s, %s GB/s (GPU busy %s); gather ceiling, page cache %s GB/s" % (size,
        f(m and m["records_per_s"], "%.0f"), f(m and m["gbps"]), f(m and m.get("gpu_busy"), "%.2f"),
        f(gather_pc and gather_pc["gbps"])),
        f(ratio(m and m["gbps"], gather_pc and gather_pc["gbps"]), "%.2f"),
        ">= 0.8 and %s %s" % (f(goal, "%.0f" if unit == "GB/s" else "%.0e"), unit), "random --hot")
    one = get(reader="gather-one-buffer")
    add("hot shuffle %d B: MAPPED / gather ceiling, page cache, one buffer %s GB/s (the GPU's L2 holds it)" % (size,
        f(one and one["gbps"])), f(ratio(m and m["gbps"], one and one["gbps"]), "%.2f"), "-", "random --hot")
    add("hot shuffle %d B: MAPPED / gather ceiling, pinned %s GB/s" % (size, f(gather and gather["gbps"])),
        f(ratio(m and m["gbps"], gather and gather["gbps"]), "%.2f"), "-", "random --hot")
    add("hot shuffle %d B: MAPPED / PyTorch (records/s %s / %s)" % (size, f(m and m["records_per_s"], "%.0f"),
        f(peer and peer["records_per_s"], "%.0f")), f(ratio(m and m["records_per_s"], peer and peer["records_per_s"]), "%.1f"),
        ">= 10", "random --hot vs torch_shuffle.py")
    add("hot shuffle %d B: BOUNCE / PyTorch" % size, f(ratio(b and b["records_per_s"], peer and peer["records_per_s"]), "%.1f"),
        "-", "random --hot vs torch_shuffle.py")
    add("CPU s/GB, hot shuffle %d B: MAPPED %s / BOUNCE %s" % (size, f(m and m["cpu_s_per_gb"]), f(b and b["cpu_s_per_gb"])),
        f(ratio(m and m["cpu_s_per_gb"], b and b["cpu_s_per_gb"]), "%.3f"), "-", "random --hot")
rep = bench("bench-shuffle-784")
if rep:
    g = rep.get("gather") or {}
    for p in ("MAPPED", "BOUNCE"):
        r = row(rep, p)
        if r:
            add("bench --shuffle global 784 B: %s %s GB/s, checksum %s; gather ceiling %s GB/s" % (p, f(r["gbps"]), r["checksum"],
                f(num(g.get("gigabytesPerSecond")))), f(ratio(r["gbps"], num(g.get("gigabytesPerSecond"))), "%.2f"),
                "byte-exact", "bench --shuffle global")
rep = bench("bench-cold")
for p in ("MAPPED", "BOUNCE"):
    r = row(rep, p)
    add("cold epoch 0: %s %s GB/s / raw O_DIRECT %s GB/s" % (p, f(r and r["gbps"]), f(rep and rep["ceilingGbps"])),
        f(r and r["ceilingRatio"], "%.2f"), ">= 0.9" if p == "MAPPED" else "-", "bench --drop-caches")
w = max(len(l[0]) for l in lines) if lines else 10
print("%-*s %8s %22s  %s" % (w, "measurement", "ratio", "acceptance", "command"))
for what, value, target, cmd in lines:
    print("%-*s %8s %22s  %s" % (w, what, value, target, cmd))
PY
[ $failed = 0 ] || { echo "mapped.sh: $failed part(s) failed"; exit 1; }
