# Sourced by the GPU machine's scripts in this folder: goes to the repository root, makes the work folder,
# and defines `gds` (the CLI from the carried jars, with the JVM flags of bin/jvm-flags that pack.sh carried as
# .device/jvm-flags; $jvm_flags is that @file argument) and `gdsq` (the same without progress lines and
# explicit-path notices). The caller sources .device/env.sh itself.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ -f .device/jvm-flags ] || { echo ".device/jvm-flags is missing: pack first (benchmarks/device/pack.sh)" >&2; exit 2; }
jvm_flags="@$PWD/.device/jvm-flags"
work="${WORK:-$PWD/.work}"
mkdir -p "$work"
gds() { java "$jvm_flags" \
          -Djava.util.logging.SimpleFormatter.format='%4$s: %5$s%6$s%n' \
          -cp '.device/lib/*' dev.gdsloader.cli.GdsLoaderMain "$@"; }
gdsq() { gds "$@" 2>&1 | grep -v '^INFO: gdsloader path [A-Z]*: requested\|^round \|^measuring\|^computing\|^\[\|^t_c = '; }
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1; }
