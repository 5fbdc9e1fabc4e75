#!/bin/bash
# GPU machine side, issue 10 item 4: shuffled records from the page cache, gds-loader against PyTorch's DataLoader
# on the same .npy shards in one run, for records of 784 B, 4 KiB and 64 KiB. Loader only on both sides (no
# compute: every batch released as soon as it arrives), global shuffle, same batch bytes.
#   loader: `gdsloader random --paths $PATHS --threads 16 --batch-bytes 16MiB --no-direct --no-ceiling --rounds R --json`
#   peer:   benchmarks/peers/torch_shuffle.py (BatchSampler over a random permutation, one np.take per shard per
#           batch from np.load(mmap_mode='r'), 8 workers, pin_memory=True, .to('cuda', non_blocking=True))
# Each size: generate the shards, warm the page cache (cat > /dev/null), then peer and loader one after the other.
# Prints a table: record size, peer records/s, loader records/s per path, loader/peer, CPU s/GB of each.
#   SIZE=2GiB per record size (QUICK=1: 256MiB)   SIZES="784 4096 65536"   SHARDS=16
#   PATHS=BOUNCE,HOST (GDS too: PATHS=GDS,BOUNCE,HOST; at 784 B that is one cuFileRead per record today)
#   THREADS=16   BATCH_BYTES=16MiB   WORKERS=8   ROUNDS=2 (QUICK=1: 1; epochs per process, medians reported)
#   CEILING=1 adds the buffered-pread ceiling row (no GPU) and the gather ceiling row (a kernel gathering random
#   records of the same size from pinned host memory) to each loader run
#   RANDOM_FLAGS="--hot" adds flags to the loader's `random` command (mapped.sh passes --hot)
# Every JSON line (peer and loader, with the record size) goes to $OUT/shuffle-peers.json when OUT is set.
# Fails soft: a size or reader that fails is reported and the rest still run. Pack first: benchmarks/device/pack.sh
set -u -o pipefail
source "$(dirname "$0")/common.sh"
source .device/env.sh
if [ -n "${QUICK:-}" ]; then size="${SIZE:-256MiB}"; rounds="${ROUNDS:-1}"; else size="${SIZE:-2GiB}"; rounds="${ROUNDS:-2}"; fi
sizes="${SIZES:-784 4096 65536}"
paths="${PATHS:-BOUNCE,HOST}"
threads="${THREADS:-16}"
batch="${BATCH_BYTES:-16MiB}"
batch_bytes="$(python3 -c "import sys; s=sys.argv[1]; u={'KiB':1<<10,'MiB':1<<20,'GiB':1<<30}; print(int(s[:-3])*u[s[-3:]] if s[-3:] in u else int(s))" "$batch")"
ceiling=--no-ceiling
[ -n "${CEILING:-}" ] && ceiling=""
results="$work/shuffle-peers.json"
failed=0
: > "$results"
echo "shuffle-peers: $size of .npy shards per record size ($sizes B), $threads I/O threads, batches of $batch, paths $paths, $rounds round(s), page cache warm"
for rec in $sizes; do
  d="$work/shuffle-$rec"
  echo "=== records of $rec B"
  rm -rf "$d"
  if ! show gdsq generate --out "$d" --size "$size" --shards "${SHARDS:-16}" --record-bytes "$rec" --align 4096; then
    echo "shuffle-peers: generating $rec B records failed; size skipped"; failed=$((failed + 1)); continue
  fi
  cat "$d"/*.npy > /dev/null
  out="$(show python3 benchmarks/peers/torch_shuffle.py "$d" --batch-bytes "$batch_bytes" --workers "${WORKERS:-8}" --rounds "$rounds" 2>&1)"
  rc=$?
  echo "$out"
  [ $rc = 0 ] || { echo "shuffle-peers: the peer failed at $rec B (exit $rc)"; failed=$((failed + 1)); }
  echo "$out" | grep '^{' | python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), reader='peer', size=$rec))) for l in sys.stdin]" >> "$results"
  cat "$d"/*.npy > /dev/null
  out="$(show gdsq random --paths "$paths" --threads "$threads" --batch-bytes "$batch" --no-direct $ceiling ${RANDOM_FLAGS:-} --rounds "$rounds" --json "$d" 2>&1)"
  rc=$?
  echo "$out" | grep -v '^{'
  [ $rc = 0 ] || { echo "shuffle-peers: the loader failed at $rec B (exit $rc)"; failed=$((failed + 1)); }
  echo "$out" | grep '^{' | python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), size=$rec))) for l in sys.stdin]" >> "$results"
  rm -rf "$d"
done
echo "=== summary: records/s, global shuffle, page cache warm; ratio = loader / peer; CPU s/GB = process CPU seconds per 1e9 bytes"
python3 - "$results" "$paths" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
paths = sys.argv[2].split(",")
def fmt(v, f="%.3f"):
    return "-" if v is None else f % v
head = "%-8s %12s" % ("size", "peer rec/s") + "".join(" %12s %8s" % (p + " rec/s", "x peer") for p in paths) \
       + " %9s" % "peer CPU" + "".join(" %9s" % (p + " CPU") for p in paths)
print(head)
for size in sorted({r["size"] for r in rows}):
    peer = next((r for r in rows if r["size"] == size and r.get("reader") == "peer"), None)
    pr = peer["records_per_s"] if peer else None
    line = "%-8s %12s" % (size, fmt(pr, "%.0f"))
    cpu = " %9s" % fmt(peer["cpu_s_per_gb"] if peer else None, "%.2f")
    for p in paths:
        r = next((r for r in rows if r["size"] == size and r.get("reader") == "loader" and r.get("path") == p), None)
        lr = r["records_per_s"] if r else None
        line += " %12s %8s" % (fmt(lr, "%.0f"), fmt(lr / pr if lr and pr else None, "%.2f"))
        cpu += " %9s" % fmt(r["cpu_s_per_gb"] if r else None, "%.2f")
    print(line + cpu)
PY
[ -n "${OUT:-}" ] && cp "$results" "$OUT/shuffle-peers.json"
[ $failed = 0 ] || { echo "shuffle-peers: $failed run(s) failed"; exit 1; }
