#!/bin/bash
# GPU machine side, issue 10 item 3: per-piece routing (small pieces through staging, large through cuFile, as
# kvikio's gds_threshold) against today's GDS path, on Fashion-MNIST's 60,000 training images (784-byte records).
# The images become .npy shards (`gdsloader convert idx`, 10,000 records each); then `gdsloader random` loads them
# with a global shuffle (every piece one record) on path GDS with GDSLOADER_GDS_THRESHOLD=0 (every piece through
# cuFile: today's GDS path), on GDS with the default threshold (routed), and on BOUNCE, interleaved per pair:
#   hot:  page cache warm, --no-direct (buffered staged reads), ROUNDS_HOT epochs per process
#   cold: --drop-caches before every epoch, O_DIRECT, ROUNDS_COLD epochs per process
# Prints records/s per variant and routed/today, bounce/today.
#   REPS=2 (QUICK=1: 1) hot pairs   REPS_COLD=1 cold pairs   ROUNDS_HOT=5 (QUICK=1: 3)
#   ROUNDS_COLD=2 (QUICK=1: 0, cold skipped)   THREADS=16
#   BATCH_BYTES=1MiB (1337 records: 45 batches an epoch)
# Pack with the data first: benchmarks/device/pack.sh --fmnist-train ../shared/datasets/fashion-mnist [--baseline]
# Writes $OUT/fmnist-routing.json when OUT is set. Fails soft: a failed run is reported and left out.
set -u -o pipefail
source "$(dirname "$0")/common.sh"
source .device/env.sh
if [ -n "${QUICK:-}" ]; then reps="${REPS:-1}"; hot="${ROUNDS_HOT:-3}"; cold="${ROUNDS_COLD:-0}"
else reps="${REPS:-2}"; hot="${ROUNDS_HOT:-5}"; cold="${ROUNDS_COLD:-2}"; fi
reps_cold="${REPS_COLD:-1}"
threads="${THREADS:-16}"
batch="${BATCH_BYTES:-1MiB}"
if ! ls .device/data/fashion-mnist/train-images-idx3-ubyte.xz >/dev/null 2>&1; then
  echo "fmnist-routing: no Fashion-MNIST in .device/data: pack with benchmarks/device/pack.sh --fmnist DIR"; exit 2
fi
# does this build read GDSLOADER_GDS_THRESHOLD? (the name is in a class file's constant pool)
knows="$(python3 - .device/lib/gds-loader-*.jar <<'PY'
import sys, zipfile
print(any(b"GDSLOADER_GDS_THRESHOLD" in z.read(n) for j in sys.argv[1:] for z in [zipfile.ZipFile(j)]
          for n in z.namelist() if n.endswith(".class")))
PY
)"
[ "$knows" = True ] || echo "fmnist-routing: NOTE: no class of this build mentions GDSLOADER_GDS_THRESHOLD: 'routed' and 'today' are the same code"
idx="$work/fashion-mnist"
npy="$work/fmnist-npy"
rm -rf "$npy"
bash benchmarks/device/fmnist-unpack.sh "$idx" > /dev/null || { echo "fmnist-routing: unpacking failed"; exit 1; }
show gdsq convert idx --out "$npy" --records-per-shard 10000 "$idx/train-images-idx3-ubyte" || { echo "fmnist-routing: convert failed"; exit 1; }
data="$npy/train"
results="$work/fmnist-routing.json"
failed=0
: > "$results"
one() { # temperature variant rounds random-args...
  local t="$1" v="$2" r="$3" path=GDS out; shift 3
  [ "$v" = bounce ] && path=BOUNCE
  [ "$t" = hot ] && cat "$data"/*.npy > /dev/null
  echo "--- $t, $v"
  out="$(if [ "$v" = today ]; then export GDSLOADER_GDS_THRESHOLD=0; echo "+ export GDSLOADER_GDS_THRESHOLD=0"
         else unset GDSLOADER_GDS_THRESHOLD; fi
         show gdsq random --paths "$path" --threads "$threads" --batch-bytes "$batch" --no-ceiling --rounds "$r" --json "$@" "$data" 2>&1)"
  rc=$?
  echo "$out" | grep -v '^{'
  [ $rc = 0 ] || { echo "fmnist-routing: $t $v failed (exit $rc)"; failed=$((failed + 1)); }
  echo "$out" | grep '^{' | python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), temperature='$t', variant='$v'))) for l in sys.stdin]" >> "$results"
}
for rep in $(seq "$reps"); do
  for v in today routed bounce; do one hot "$v" "$hot" --no-direct; done
done
if [ "$cold" -gt 0 ]; then
  for rep in $(seq "$reps_cold"); do
    for v in today routed bounce; do one cold "$v" "$cold" --drop-caches; done
  done
fi
echo "=== summary: Fashion-MNIST train images (60,000 x 784 B), global shuffle, $threads threads, batches of $batch; records/s median over processes' medians"
python3 - "$results" "${OUT:-}" <<'PY'
import json, os, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
summary = {}
for t in ("hot", "cold"):
    rps = {v: [r["records_per_s"] for r in rows if r["temperature"] == t and r["variant"] == v and r["records_per_s"]]
           for v in ("today", "routed", "bounce")}
    if not any(rps.values()):
        continue
    med = {v: statistics.median(x) if x else None for v, x in rps.items()}
    taken = {v: sorted({r["taken"] for r in rows if r["temperature"] == t and r["variant"] == v}) for v in rps}
    summary[t] = {"records_per_s": med, "runs": rps, "taken": taken}
    line = "%-4s " % t + "  ".join("%s %s rec/s %s" % (v, "%.0f" % med[v] if med[v] else "-", "/".join(taken[v])) for v in rps)
    if med["today"] and med["routed"]:
        line += "  routed/today %.2f" % (med["routed"] / med["today"])
        summary[t]["routed_over_today"] = med["routed"] / med["today"]
    if med["today"] and med["bounce"]:
        line += "  bounce/today %.2f" % (med["bounce"] / med["today"])
    print(line)
if sys.argv[2]:
    json.dump({"rows": rows, "summary": summary}, open(os.path.join(sys.argv[2], "fmnist-routing.json"), "w"), indent=1)
PY
[ $failed = 0 ] || { echo "fmnist-routing: $failed run(s) failed"; exit 1; }
