#!/bin/bash
# GPU machine side, issue 11: the hot shuffled MAPPED path across prefetch depths, this build against a baseline
# build (packed by `pack.sh --baseline REF`) in one run, with both gather ceilings of each record size measured once
# in the same run: over pinned memory (cudaHostAlloc) and over the dataset's own shards, mapped and registered as the
# MAPPED path registers them (the page cache's scattered 4 KiB pages).
#   gdsloader random --hot --paths MAPPED --batch-bytes $BATCH_BYTES --no-direct --depth D --rounds $ROUNDS --json
#   SIZE=2GiB per record size   SIZES="784 4096 65536"   DEPTHS="4 8 16"   ROUNDS=3   BATCH_BYTES=16MiB
#   BUILDS="old new" (old needs a packed baseline; BUILDS=new runs this build only)
#   VARIANTS="--epochs 1;--epochs 5 --warmup-epochs 1" runs each depth and build once per ';'-separated set of extra
#   `random` flags (default: one run, no extra flags); the summary names the set and the GPU busy fraction
# Prints one summary line per record size, depth and build: median records/s, GB/s, and the ratios to both
# ceilings. Writes $OUT/mapped-sweep.json (every JSON row, with size, depth and build) when OUT is set.
set -u -o pipefail
source "$(dirname "$0")/common.sh"
source .device/env.sh
size="${SIZE:-2GiB}"
rounds="${ROUNDS:-3}"
builds="${BUILDS:-old new}"
results="$work/mapped-sweep.json"
: > "$results"
failed=0
for rec in ${SIZES:-784 4096 65536}; do
  d="$work/sweep-$rec"
  rm -rf "$d"
  show gdsq generate --out "$d" --size "$size" --shards "${SHARDS:-16}" --record-bytes "$rec" --align 4096 \
    || { echo "mapped-sweep: generating $rec B failed"; failed=$((failed + 1)); continue; }
  first=1
  IFS=';' read -r -a variants <<< "${VARIANTS:-}"
  [ ${#variants[@]} = 0 ] && variants=("")
  for depth in ${DEPTHS:-4 8 16}; do
   for v in "${variants[@]}"; do
    for b in $builds; do
      cp='.device/lib/*'
      if [ "$b" = old ]; then
        [ -f .device/baseline/classpath ] || { echo "mapped-sweep: no baseline packed"; exit 2; }
        cp="$(baseline_cp)"
      fi
      flags="--no-ceiling"
      if [ $first = 1 ] && [ "$b" = new ]; then flags=""; first=0; fi
      echo "--- $rec B, depth $depth, $b build, flags '$v'"
      out="$(GDS_CP="$cp" show gdsq random --hot --paths MAPPED --threads 16 --batch-bytes "${BATCH_BYTES:-16MiB}" \
        --no-direct --depth "$depth" --rounds "$rounds" $flags $v --json "$d" 2>&1)"
      rc=$?
      echo "$out" | grep -v '^{'
      [ $rc = 0 ] || { echo "mapped-sweep: $rec B depth $depth $b failed (exit $rc)"; failed=$((failed + 1)); }
      echo "$out" | grep '^{' | V="$v" python3 -c "import json,os,sys; [print(json.dumps(dict(json.loads(l), size=$rec, depth=$depth, build='$b', variant=os.environ['V']))) for l in sys.stdin]" >> "$results"
    done
   done
  done
  rm -rf "$d"
done
echo "=== mapped-sweep summary (median of $rounds rounds; GB/s = 1e9 B/s)"
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for size in sorted({r["size"] for r in rows}):
    ceil = {r["reader"]: r for r in rows if r["size"] == size and r["reader"].startswith("gather")}
    g = ceil.get("gather", {}).get("gbps"); gr = ceil.get("gather-registered", {}).get("gbps")
    print("%6d B: gather ceiling pinned %s GB/s, page cache (registered shards) %s GB/s" % (size,
          "-" if g is None else "%.2f" % g, "-" if gr is None else "%.2f" % gr))
    for r in rows:
        if r["size"] == size and r["reader"] == "loader":
            print("%6d B depth %2d %-3s %-28s: %11.0f rec/s %7.2f GB/s  x pinned gather %s  x page-cache gather %s  CPU s/GB %s  GPU busy %s" % (
                size, r["depth"], r["build"], "'%s'" % r.get("variant", ""), r["records_per_s"] or 0, r["gbps"] or 0,
                "-" if not g else "%.2f" % (r["gbps"] / g), "-" if not gr else "%.2f" % (r["gbps"] / gr),
                r.get("cpu_s_per_gb"), r.get("gpu_busy")))
PY
[ -n "${OUT:-}" ] && cp "$results" "$OUT/mapped-sweep.json"
[ $failed = 0 ]
