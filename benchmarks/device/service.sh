#!/bin/bash
# GPU machine side, issue 12 (the prefetch service on Arrow Flight): the throughput acceptance in ONE call
# (about 2-4 minutes):
#   1. generates ~2 GiB of .npy shards (150528-byte records, 16 shards) and warms the page cache (cat);
#   2. `gdsloader serve-bench DATA --clients 1,32 --epochs 2 --ipc-epochs 20 --out $reports` (plus --python 'python3
#      clients/python/tests/bench_host.py' when python3 has pyarrow and clients/python is in this tree): one server in
#      that JVM; the rows: raw loopback TCP copy, 1 Java client (HOST delivery), 32 clients (rank r of 32),
#      the loader in-process vs CUDA IPC to a child JVM, and the Python client against the same server;
#   3. if python3 has pyarrow: `gdsloader serve` over the same data in its own JVM and the Python client's throughput
#      script against it (`bench_host.py --data DATA --location grpc://127.0.0.1:PORT --batch-size 128 --epochs 2`),
#      compared with serve-bench's host-1 row;
#   4. one summary of the four acceptance ratios.
#   SIZE=2GiB  BATCH=128  EPOCHS=2  IPC_EPOCHS=20 (the two CUDA IPC rows: an epoch there lasts under 0.1 s, mostly the
#   JIT warming the exchange's per-batch code when only 2 are measured)  CLIENTS=1,32  SERVE_BENCH_FLAGS= (e.g. --direct; the Python script leaves O_DIRECT
#   to the loader's choice, buffered for 2 GiB on this host, so with --direct/--no-direct its row is not like for like)
# The JSON report goes to $OUT/serve-bench/serve-bench.json, the Python line to $OUT/python-serve.json, the log to
# $OUT/service.log when OUT is set. Exit 1 if a part failed.
# Pack first, here: benchmarks/device/pack.sh; then carrying .device: bash benchmarks/device/service.sh
set -u -o pipefail
source "$(dirname "$0")/common.sh"
[ -n "${OUT:-}" ] && exec > >(tee "$OUT/service.log") 2>&1
source .device/env.sh
size="${SIZE:-2GiB}"; batch="${BATCH:-128}"; epochs="${EPOCHS:-2}"; ipc_epochs="${IPC_EPOCHS:-20}"; clients="${CLIENTS:-1,32}"
reports="${OUT:-$work/service-reports}"
mkdir -p "$reports/serve-bench"
root="$work/serve-bench-root"
data="$root/bench"
failed=0
t0=$SECONDS
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$root"; }
trap cleanup EXIT
fail() { echo "service.sh: $1"; failed=$((failed + 1)); }
part() { echo; echo "=== $1 ($((SECONDS - t0)) s so far)"; }

script=clients/python/tests/bench_host.py
python_ok=no
if [ -f "$script" ] && python3 -c 'import pyarrow.flight, numpy' 2>/dev/null; then
  python_ok=yes
else
  echo "service.sh: no Python client row: $( [ -f "$script" ] || echo "$script is not in this tree (branch pyclient not merged); ")$(python3 -c 'import pyarrow.flight' 2>&1 | tail -1)"
fi

part "1. generate $size and warm the page cache"
rm -rf "$root"
show gdsq generate --out "$data" --size "$size" --shards 16 --record-bytes 150528 --align 4096 >/dev/null || { fail "generate failed"; exit 1; }
cat "$data"/* > /dev/null

part "2. serve-bench (one server in its JVM; every row in this run)"
py=()
[ "$python_ok" = yes ] && py=(--python "python3 $script")
show gds serve-bench "$data" --clients "$clients" --epochs "$epochs" --ipc-epochs "$ipc_epochs" --batch-size "$batch" "${py[@]}" ${SERVE_BENCH_FLAGS:-} \
  --out "$reports/serve-bench" || fail "serve-bench failed"

if [ "$python_ok" = yes ]; then
  part "3. the Python client against gdsloader serve (its own JVM) on the same data"
  log="$work/serve.out"
  # `gds` spelled out with exec in a subshell (java @.device/jvm-flags through common.sh's jvm_flags): $! is the
  # server's JVM itself, so the kill below ends it (a backgrounded function would leave its java child running)
  ( exec java "${jvm_flags[@]}" -cp "${GDS_CP:-.device/lib/*}" dev.gdsloader.cli.GdsLoaderMain serve "$root" --port 0 ) > "$log" 2>&1 &
  server_pid=$!
  port=""
  for _ in $(seq 1 300); do
    port="$(sed -n 's/^gdsloader: serving .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")"
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -n "$port" ]; then
    show python3 "$script" --data "$data" --location "grpc://127.0.0.1:$port" --batch-size "$batch" --epochs "$epochs" \
      | tee "$work/python-serve.out" || fail "the Python client's script failed"
    sed -n 's/^BENCH_JSON //p' "$work/python-serve.out" | tail -1 > "$reports/python-serve.json"
  else
    fail "gdsloader serve did not say where it listens: $(tail -3 "$log")"
  fi
  kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; server_pid=""
fi

part "4. summary (GB/s = 1e9 B/s of dataset columns; one run each)"
python3 - "$reports" <<'PY'
import json, os, sys
d = sys.argv[1]
f = os.path.join(d, "serve-bench", "serve-bench.json")
rows = {r["id"]: r for r in json.load(open(f))["rows"]} if os.path.exists(f) else {}
ps = os.path.join(d, "python-serve.json")
pyserve = json.loads(open(ps).read() or "null") if os.path.exists(ps) else None
def g(i):
    r = rows.get(i)
    return r.get("gbps") if r else None
def fmt(v, p="%.3f"):
    return "-" if v is None else p % v
def ratio(a, b):
    return a / b if a is not None and b else None
many = sorted((r for r in rows if r.startswith("host-") and r != "host-1"), key=lambda r: int(r[5:]))
n = many[-1] if many else "host-32"
lines = [
    ("1 Java client %s GB/s / loopback TCP copy %s GB/s" % (fmt(g("host-1")), fmt(g("loopback"))), ratio(g("host-1"), g("loopback")), ">= 0.5"),
    ("%s clients %s GB/s / 1 client" % (n[5:], fmt(g(n))), ratio(g(n), g("host-1")), ">= 2"),
    ("CUDA IPC child %s GB/s / in-process loader %s GB/s" % (fmt(g("ipc")), fmt(g("ipc-in-process"))), ratio(g("ipc"), g("ipc-in-process")), ">= 0.9"),
    ("Python client in serve-bench %s GB/s / Java client" % fmt(g("python")), ratio(g("python"), g("host-1")), ">= 0.8"),
    ("Python client vs gdsloader serve %s GB/s / Java client" % fmt(pyserve and pyserve.get("GBps")),
     ratio(pyserve and pyserve.get("GBps"), g("host-1")), ">= 0.8"),
]
for i in ("ipc", "python"):
    if rows.get(i, {}).get("skipped"):
        print("%s skipped: %s" % (i, rows[i]["skipped"]))
w = max(len(l[0]) for l in lines)
print("%-*s %7s %10s" % (w, "measurement", "ratio", "acceptance"))
for what, r, target in lines:
    print("%-*s %7s %10s" % (w, what, fmt(r, "%.2f"), target))
PY
[ $failed = 0 ] || { echo "service.sh: $failed part(s) failed"; exit 1; }
