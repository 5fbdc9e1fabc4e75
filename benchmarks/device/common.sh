# Sourced by the GPU machine's scripts in this folder: goes to the repository root, makes the work folder,
# and defines `gds` (the CLI from the carried jars, with the JVM flags of bin/jvm-flags that pack.sh carried as
# .device/jvm-flags) and `gdsq` (the same without progress lines and explicit-path notices). The caller sources
# .device/env.sh itself.
#   jvm_flags    the JVM flags of `gds`: one "@file" argument naming .device/jvm-flags (used as "${jvm_flags[@]}")
#   GDS_CP       the class path `gds` runs with (default .device/lib/*); before-after.sh sets it to baseline_cp's
#   baseline_cp  prints the class path of the baseline build that `pack.sh --baseline` packed
#   show CMD...  prints "+ CMD..." and runs it
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ -f .device/jvm-flags ] || { echo ".device/jvm-flags is missing: pack first (benchmarks/device/pack.sh)" >&2; exit 2; }
jvm_flags=("@$PWD/.device/jvm-flags")
work="${WORK:-$PWD/.work}"
mkdir -p "$work"
gds() { java "${jvm_flags[@]}" \
          -Djava.util.logging.SimpleFormatter.format='%4$s: %5$s%6$s%n' \
          -cp "${GDS_CP:-.device/lib/*}" dev.gdsloader.cli.GdsLoaderMain "$@"; }
gdsq() { gds "$@" 2>&1 | grep -v '^INFO: gdsloader path [A-Z]*: requested\|^round \|^measuring\|^computing\|^\[\|^t_c = '; }
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1; }
baseline_cp() {
  if [ -f .device/baseline/classpath ]; then paste -sd: .device/baseline/classpath; else echo '.device/baseline/*:.device/lib/*'; fi
}
show() { echo "+ $*"; "$@"; }
