#!/bin/bash
# Build machine side: builds the jars and packs .device/ for the GPU machine (a Java 25 runtime, the CLI's
# runtime jars, the modules' test jars and the JUnit console launcher), using ../shared/gpu/prepare.sh.
#   benchmarks/device/pack.sh            # jars only (GPU test suite, benchmarks on generated data)
#   benchmarks/device/pack.sh --data DIR # plus a data directory (e.g. ../shared/datasets/fashion-mnist);
#                                          the test jars are left out then, to stay under the 64 MiB a call carries
# Then run on the GPU machine with .device carried, e.g. `bash benchmarks/device/gpu-tests.sh`.
set -euo pipefail
cd "$(dirname "$0")/../.."
./mvnw -q -DskipTests package
tests=(cli/target/device-tests $(ls */target/*-tests.jar))
[[ " $* " == *" --data "* ]] && tests=()
../shared/gpu/prepare.sh cli/target/lib cli/target/gds-loader-cli-*[0-9T].jar "${tests[@]}" "$@"
