#!/bin/bash
# GPU machine side: `bench` of the baseline build (packed by `pack.sh --baseline [REF]`, default 1de11af) against
# this build in one run, interleaved in ABBA order (old new, new old, ...: neither build always runs second, on a warm
# page cache that the run before left), on one generated dataset:
#   cold: bench --drop-caches --paths GDS,BOUNCE (O_DIRECT; every batch checked against the files' CRC32C)
#   hot:  page cache warm (cat > /dev/null), bench --no-direct --no-verify --paths BOUNCE --threads 16 --rounds 2
# Old runs with the baseline's exact class path (baseline_cp in common.sh: .device/baseline/classpath), new with
# .device/lib/*; both with the same JVM flags (JVM_FLAGS). One summary line per case: median GB/s new vs old and
# new/old.
#   SIZE=3GiB (QUICK=1: 1GiB)   REPS=2 (QUICK=1: 1; pairs of old+new per case)   SHARDS=16
#   CASES="cold hot"   COLD_PATHS=GDS,BOUNCE   HOT_PATHS=BOUNCE
# Writes $OUT/before-after.json (every run's rows and the summary) when OUT is set. Fails soft: a failed run is
# reported and left out of the medians.
set -u -o pipefail
source "$(dirname "$0")/common.sh"
source .device/env.sh
if [ ! -f .device/baseline/classpath ]; then
  echo "before-after: no baseline packed (.device/baseline/classpath): pack with benchmarks/device/pack.sh --baseline [REF]"
  exit 2
fi
if [ -n "${QUICK:-}" ]; then size="${SIZE:-1GiB}"; reps="${REPS:-1}"; else size="${SIZE:-3GiB}"; reps="${REPS:-2}"; fi
old_cp="$(baseline_cp)"
new_cp='.device/lib/*'
d="$work/before-after-data"
res="$work/before-after"
rm -rf "$d" "$res"
mkdir -p "$res"
failed=0
echo "before-after: old = $(cat .device/baseline/ref 2>/dev/null || echo '?'), new = this tree; $size, $reps pair(s) per case"
echo "old class path: $old_cp"
show gdsq generate --out "$d" --size "$size" --shards "${SHARDS:-16}" --align 4096 || { echo "before-after: generate failed"; exit 1; }
one() { # case version rep bench-args...
  local c="$1" v="$2" rep="$3" cp="$new_cp"; shift 3
  [ "$v" = old ] && cp="$old_cp"
  echo "--- $c, $v build, pair $rep"
  GDS_CP="$cp" show gdsq bench "$@" --out "$res/$c-$v-$rep" "$d" || { echo "before-after: $c $v pair $rep failed (exit $?)"; failed=$((failed + 1)); }
}
for c in ${CASES:-cold hot}; do
  [ "$c" = hot ] && cat "$d"/*.npy > /dev/null
  for rep in $(seq "$reps"); do
    order="old new"; [ $((rep % 2)) = 0 ] && order="new old" # ABBA: neither build always runs second
    for v in $order; do
      case "$c" in
        cold) one cold "$v" "$rep" --drop-caches --paths "${COLD_PATHS:-GDS,BOUNCE}";;
        hot) one hot "$v" "$rep" --no-direct --no-verify --paths "${HOT_PATHS:-BOUNCE}" --threads 16 --rounds 2;;
        *) echo "before-after: unknown case $c (cold, hot)";;
      esac
    done
  done
done
echo "=== summary: bench GB/s (1e9 B/s), median over pairs; new / old"
python3 - "$res" "${OUT:-}" <<'PY'
import glob, json, os, statistics, sys
res, out = sys.argv[1], sys.argv[2]
runs = []
for f in sorted(glob.glob(os.path.join(res, "*", "bench.json"))):
    case, version, rep = os.path.basename(os.path.dirname(f)).split("-")
    report = json.load(open(f))["reports"]["default"]
    for row in report["rows"]:
        runs.append({"case": case, "version": version, "rep": int(rep), "path": row["requested"], "taken": row["taken"],
                     "gbps": row["gbps"], "checksum": row.get("checksum"), "ceiling_gbps": report.get("ceilingGbps")})
summary = []
for case in ("cold", "hot"):
    for path in sorted({r["path"] for r in runs if r["case"] == case}):
        g = {v: [r["gbps"] for r in runs if r["case"] == case and r["path"] == path and r["version"] == v] for v in ("old", "new")}
        if not g["old"] or not g["new"]:
            print("%-4s %-7s: missing runs (old %d, new %d)" % (case, path, len(g["old"]), len(g["new"])))
            continue
        o, n = statistics.median(g["old"]), statistics.median(g["new"])
        bad = [r for r in runs if r["case"] == case and r["path"] == path and r["checksum"] not in (None, "OK", "not checked")]
        summary.append({"case": case, "path": path, "old_gbps": o, "new_gbps": n, "ratio": n / o, "old_runs": g["old"],
                        "new_runs": g["new"]})
        print("%-4s %-7s: new %.3f GB/s %s vs old %.3f GB/s %s  new/old %.3f%s" % (
            case, path, n, ["%.3f" % x for x in g["new"]], o, ["%.3f" % x for x in g["old"]], n / o,
            "  CHECKSUM: " + ", ".join("%s %s" % (r["version"], r["checksum"]) for r in bad) if bad else ""))
if out:
    json.dump({"runs": runs, "summary": summary}, open(os.path.join(out, "before-after.json"), "w"), indent=1)
    for f in glob.glob(os.path.join(res, "*", "bench.json")): # every run's full report, for the CPU s/GB and stalls
        os.makedirs(os.path.join(out, "before-after"), exist_ok=True)
        os.replace(f, os.path.join(out, "before-after", os.path.basename(os.path.dirname(f)) + ".json"))
PY
rm -rf "$d"
[ $failed = 0 ] || { echo "before-after: $failed run(s) failed"; exit 1; }
