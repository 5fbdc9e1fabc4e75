#!/bin/bash
# GPU machine side: runs the GPU test suite (test classes tagged @Tag("gpu"), from the modules' test jars)
# with the JUnit console launcher; ALL=1 runs every test class instead; CLASSES=REGEX only the classes whose
# fully qualified name matches. Exit status is JUnit's.
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
# CLASSES=REGEX keeps the test classes whose fully qualified name matches, e.g. CLASSES='.*Mapped.*GpuTest'
[ -n "${CLASSES:-}" ] && filter+=(--include-classname "$CLASSES")
# the JVM flags of bin/jvm-flags (pack.sh carries it); tests that start a child JVM pass it on (gds.jvm.flags)
[ -f .device/jvm-flags ] || { echo ".device/jvm-flags is missing: pack first (benchmarks/device/pack.sh)" >&2; exit 2; }
exec java "@$PWD/.device/jvm-flags" -Dgds.jvm.flags="$PWD/.device/jvm-flags" -jar .device/lib/junit-platform-console-standalone-*.jar execute \
  --class-path "$cp" --scan-class-path "$(IFS=:; echo "${roots[*]}")" "${filter[@]}" --details=tree --disable-banner --fail-if-no-tests
