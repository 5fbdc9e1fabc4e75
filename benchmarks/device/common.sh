# Sourced by the GPU machine's scripts in this folder: goes to the repository root, makes the work folder,
# and defines `gds` (the CLI from the carried jars, with the JVM flags FFM and Arrow Java need) and `gdsq`
# (the same without progress lines and explicit-path notices). The caller sources .device/env.sh itself.
#   JVM_FLAGS    (array) the flags of every java call of these scripts, one place: read from $JVM_FLAGS_FILE
#                (default bin/jvm-flags; one flag per line, '#' starts a comment) when that file exists, else the
#                flags FFM and Arrow Java need
#   GDS_CP       the class path `gds` runs with (default .device/lib/*); before-after.sh sets it to baseline_cp's
#   baseline_cp  prints the class path of the baseline build that `pack.sh --baseline` packed
#   show CMD...  prints "+ CMD..." and runs it
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
work="${WORK:-$PWD/.work}"
mkdir -p "$work"
jvm_flags_file="${JVM_FLAGS_FILE:-bin/jvm-flags}"
if [ -f "$jvm_flags_file" ]; then
  mapfile -t JVM_FLAGS < <(sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$jvm_flags_file" | grep -v '^$')
else
  JVM_FLAGS=(--enable-native-access=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED)
fi
gds() { java "${JVM_FLAGS[@]}" -Djava.util.logging.SimpleFormatter.format='%4$s: %5$s%6$s%n' \
          -cp "${GDS_CP:-.device/lib/*}" dev.gdsloader.cli.GdsLoaderMain "$@"; }
gdsq() { gds "$@" 2>&1 | grep -v '^INFO: gdsloader path [A-Z]*: requested\|^round \|^measuring\|^computing\|^\[\|^t_c = '; }
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1; }
baseline_cp() {
  if [ -f .device/baseline/classpath ]; then paste -sd: .device/baseline/classpath; else echo '.device/baseline/*:.device/lib/*'; fi
}
show() { echo "+ $*"; "$@"; }
