#!/bin/bash
# GPU machine side: `gdsloader random --hot` on the buffered (page-cache) paths, the baseline build (packed by
# `pack.sh --baseline REF`) against this build in one run, ABBA order, on one generated dataset per record size:
#   gdsloader random --hot --paths $PATHS --threads 16 --batch-bytes 16MiB --no-direct --no-ceiling --rounds $ROUNDS
#   SIZE=2GiB per record size   SIZES="784 4096"   PATHS=BOUNCE,HOST   ROUNDS=2   REPS=2 (pairs)
# The rows of BENCHMARKS.md's "global shuffle against PyTorch" table, old and new side by side; prints each run's
# records/s lines and a summary of new/old per path and size (median over reps). $OUT/random-before-after.json when
# OUT is set.
set -u -o pipefail
source "$(dirname "$0")/common.sh"
source .device/env.sh
[ -f .device/baseline/classpath ] || { echo "random-before-after: no baseline packed"; exit 2; }
results="$work/random-before-after.json"
: > "$results"
failed=0
for rec in ${SIZES:-784 4096}; do
  d="$work/rba-$rec"
  rm -rf "$d"
  show gdsq generate --out "$d" --size "${SIZE:-2GiB}" --shards 16 --record-bytes "$rec" --align 4096 \
    || { echo "random-before-after: generating $rec B failed"; failed=$((failed + 1)); continue; }
  cat "$d"/*.npy > /dev/null
  for rep in $(seq "${REPS:-2}"); do
    order="old new"; [ $((rep % 2)) = 0 ] && order="new old"
    for b in $order; do
      cp='.device/lib/*'; [ "$b" = old ] && cp="$(baseline_cp)"
      out="$(GDS_CP="$cp" show gdsq random --hot --paths "${PATHS:-BOUNCE,HOST}" --threads 16 --batch-bytes 16MiB \
        --no-direct --no-ceiling --rounds "${ROUNDS:-2}" --json "$d" 2>&1)"
      rc=$?
      echo "$out" | grep -v '^{'
      [ $rc = 0 ] || { echo "random-before-after: $rec B $b failed (exit $rc)"; failed=$((failed + 1)); }
      echo "$out" | grep '^{' | python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), size=$rec, build='$b', rep=$rep))) for l in sys.stdin]" >> "$results"
    done
  done
  rm -rf "$d"
done
python3 - "$results" <<'PY'
import json, os, shutil, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("=== random-before-after summary (median over reps of each run's records/s)")
for size in sorted({r["size"] for r in rows}):
    for reader in sorted({r.get("reader") for r in rows if r["size"] == size and r.get("reader")}):
        sel = lambda b, k: [r[k] for r in rows if r["size"] == size and r.get("reader") == reader and r["build"] == b
                            and r.get(k) is not None]
        if sel("old", "records_per_s") and sel("new", "records_per_s"):
            o, n = statistics.median(sel("old", "records_per_s")), statistics.median(sel("new", "records_per_s"))
            co, cn = statistics.median(sel("old", "cpu_s_per_gb") or [0]), statistics.median(sel("new", "cpu_s_per_gb") or [0])
            print("%6d B %-8s new %12.0f records/s  old %12.0f records/s  new/old %.3f  CPU s/GB new %.3f old %.3f"
                  % (size, reader, n, o, n / o, cn, co))
if os.environ.get("OUT"):
    shutil.copy(sys.argv[1], os.path.join(os.environ["OUT"], "random-before-after.json"))
PY
[ $failed = 0 ] || { echo "random-before-after: $failed run(s) failed"; exit 1; }
