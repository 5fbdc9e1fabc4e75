#!/bin/bash
# GPU machine side: runs the GPU test suite (every test class named *GpuTest, from the modules' test jars)
# with the JUnit console launcher; ALL=1 runs every test class instead. Exit status is JUnit's.
# Pack first on the build machine: benchmarks/device/pack.sh
set -u
cd "$(dirname "$0")/../.."
source .device/env.sh
cp=$(ls .device/lib/*.jar | tr '\n' ':')
tests=$(ls .device/lib/*-tests.jar | tr '\n' ':')
filter=(--include-classname '.*GpuTest')
[ -n "${ALL:-}" ] && filter=()
exec java --enable-native-access=ALL-UNNAMED -jar .device/lib/junit-platform-console-standalone-*.jar execute \
  --class-path "$cp" --scan-class-path "$tests" "${filter[@]}" --details=tree --disable-banner
