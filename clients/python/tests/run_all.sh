#!/usr/bin/env bash
# Every check of the Python client (clients/python), for the GPU machine (python3 with numpy, pyarrow, torch, cupy;
# no network). The gds-loader CLI comes from, in this order: GDSLOADER_CMD; ./gdsloader if cli/target is built; the
# jars benchmarks/device/pack.sh carried in .device/ (the GPU machine has no Maven: pack here, carry .device, and
# this script sources .device/env.sh for its JRE and CUDA libraries). From the repository root:
#
#   bash clients/python/tests/run_all.sh
#
# Stages (each prints PASS/FAIL lines; the script exits 1 if any stage failed):
#   1. build            ./mvnw -q -B -DskipTests package, only when neither cli/target nor .device/lib is there
#                       (BUILD=1 forces it, SKIP_BUILD=1 skips it)
#   2. unit             pure parts: request/metadata/dtype/state handling (unit_protocol.py)
#   3. contract         the client against a small Python implementation of the contract (contract_selftest.py)
#   4. end to end       the client against the real ./gdsloader serve: HOST and CUDA_IPC, ranks, PAD, dtypes,
#                       checkpoint resume, kill -9 + restart, auth, PyTorch loop over 2 epochs (flight_tests.py)
#   5. throughput       HOST delivery records/s and GB/s, loader and bare pyarrow (bench_host.py; BENCH_ARGS=...)
# REQUIRE_GPU=1 (the default here) makes a GPU test that cannot run a failure, not a skip.
# ONLY="e2e" (or unit, contract, bench) runs one stage; TESTS="kill" filters flight_tests.py by name.
set -uo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd -- "$here/../../.." && pwd)
py=${PYTHON:-python3}
export REQUIRE_GPU=${REQUIRE_GPU:-1}
export PYTHONPATH="$repo/clients/python${PYTHONPATH:+:$PYTHONPATH}"
if [ -f "$repo/.device/env.sh" ] && [ -d "$repo/.device/lib" ]; then
  # shellcheck disable=SC1091
  source "$repo/.device/env.sh" # the carried JRE on PATH, the CUDA libraries on LD_LIBRARY_PATH
elif [ -z "${JAVA_HOME:-}" ] && [ -d /usr/lib/jvm/temurin-25-jdk-amd64 ]; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
only=${ONLY:-}
status=0
failed=()

stage() {
  local name=$1
  shift
  if [ -n "$only" ] && [ "$only" != "$name" ]; then return 0; fi
  echo
  echo "######## $name: $*"
  if "$@"; then
    echo "######## $name: OK"
  else
    echo "######## $name: FAILED"
    status=1
    failed+=("$name")
  fi
}

cd "$repo" || exit 2
"$py" -c 'import numpy, pyarrow, pyarrow.flight; print("python", __import__("sys").version.split()[0], "numpy", numpy.__version__, "pyarrow", pyarrow.__version__)' || {
  echo "FAIL: $py lacks numpy or pyarrow (with Flight)"
  exit 1
}
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' 2>/dev/null || echo "note: no torch"
"$py" -c 'import cupy; print("cupy", cupy.__version__, "devices", cupy.cuda.runtime.getDeviceCount())' 2>/dev/null || echo "note: no cupy/GPU"

built=$(ls "$repo"/cli/target/gds-loader-cli-*.jar 2>/dev/null | head -1)
if [ "${SKIP_BUILD:-0}" != 1 ] && { [ "${BUILD:-0}" = 1 ] || { [ -z "$built" ] && [ ! -d "$repo/.device/lib" ]; }; } &&
  { [ -z "$only" ] || [ "$only" = e2e ] || [ "$only" = bench ]; }; then
  stage build ./mvnw -q -B -DskipTests package
fi
"$py" -c 'import sys; sys.path.insert(0, sys.argv[1]); import harness; print("gds-loader CLI:", " ".join(harness.GDSLOADER))' "$here"
stage unit "$py" "$here/unit_protocol.py"
stage contract "$py" "$here/contract_selftest.py"
# shellcheck disable=SC2086
stage e2e "$py" "$here/flight_tests.py" ${TESTS:-}
# shellcheck disable=SC2086
stage bench "$py" "$here/bench_host.py" ${BENCH_ARGS:---size 1GiB --record-bytes 150528 --batch-size 128 --epochs 3}

echo
if [ $status -eq 0 ]; then
  echo "run_all: every stage passed"
else
  echo "run_all: FAILED stages: ${failed[*]}"
fi
exit $status
