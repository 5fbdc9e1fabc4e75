#!/bin/bash
# GPU machine side: runs the GPU test suite (test classes tagged @Tag("gpu"), from the modules' test jars)
# with the JUnit console launcher; ALL=1 runs every test class instead. Exit status is JUnit's.
# Pack first on the build machine: benchmarks/device/pack.sh
# The jlinked runtime has no jar filesystem (jdk.zipfs), so the test jars are unpacked for scanning.
set -u
cd "$(dirname "$0")/../.."
source .device/env.sh
classes="${TMPDIR:-/tmp}/gdsloader-test-classes"
rm -rf "$classes"
roots=()
for j in .device/lib/*-tests.jar; do
  d="$classes/$(basename "$j" .jar)"
  python3 -m zipfile -e "$j" "$d"
  roots+=("$d")
done
cp="$(IFS=:; echo "${roots[*]}"):$(ls .device/lib/*.jar | tr '\n' ':')"
filter=(--include-tag gpu)
[ -n "${ALL:-}" ] && filter=()
exec java --enable-native-access=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED -jar .device/lib/junit-platform-console-standalone-*.jar execute \
  --class-path "$cp" --scan-class-path "$(IFS=:; echo "${roots[*]}")" "${filter[@]}" --details=tree --disable-banner --fail-if-no-tests
