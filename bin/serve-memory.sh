# shellcheck shell=bash
# bin/serve-memory.sh: the JVM memory caps of `gdsloader serve`, derived from its --memory-budget.
#
# SOURCE this file (do not execute it), then call   gds_serve_memory "$@"   with the gdsloader command line.
#
# When the command is `serve` (the first argument), sets gds_serve_flags to
#   -Xmx<H>m -XX:MaxDirectMemorySize=<D>m
# where, for the budget B (serve --memory-budget SIZE or --memory-budget=SIZE; 4GiB, serve's default, if absent):
#   H = 256 MiB + B/16, at most 4096 MiB   (Java heap: requests, sessions' bookkeeping, gRPC objects; no batch data)
#   D = 128 MiB + B/32, at most 2048 MiB   (NIO direct buffers and Netty's pooled transport buffers, which count
#                                           against MaxDirectMemorySize)
# and exports, unless the caller set them, MALLOC_ARENA_MAX=2 (glibc otherwise keeps up to 8 malloc arenas per core,
# each holding on to freed native memory after a burst of threads) and MALLOC_MMAP_THRESHOLD_=1048576 (1 MiB: every
# malloc of 1 MiB or more, a session's ring among them, is its own mmap, returned to the system by its free; glibc's
# default threshold rises to 32 MiB after the first such free, and rings freed from the heap then stayed resident).
# Measured with a 1 GiB budget, 200 idle connections and 2 x 48 clients (issue 21, finding 6): 50 s after the flood
# the RSS was 903-1080 MiB above its pre-flood level without these, 450-627 MiB with the caps and MALLOC_ARENA_MAX
# alone, about 95 MiB with all of them.
# The budget itself is native memory outside both caps (the sessions' rings, FFM/cudaHostAlloc), so serve's resident
# set is expected to stay within   B + H + D + 256 MiB   (the last for metaspace, JIT code, thread stacks and malloc
# arenas); service/README.md "Memory of the serve process" states the same margin.
# The caps go before GDSLOADER_JAVA_OPTS on the java line: a -Xmx or -XX:MaxDirectMemorySize there wins (the JVM takes
# the last). A SIZE this cannot read (the CLI then refuses it, naming it) gives no caps; other commands get none.
# Sizes as serve reads them: digits, then b, k, m, g, t or p, optionally followed by i and/or b (any case): powers of
# 1024 with i or a bare letter, of 1000 with a bare b (e.g. 1GiB, 512m, 2GB, 4096).

# _gds_size_bytes SIZE: prints SIZE in bytes, or nothing if it is not a size (or beyond 2^62 bytes).
_gds_size_bytes() {
  local s digits unit base power mult
  s=$(printf '%s' "$1" | tr -d ' \t')
  digits=${s%%[!0-9]*}
  unit=$(printf '%s' "${s#"$digits"}" | tr '[:upper:]' '[:lower:]')
  [ -n "$digits" ] && [ "${#digits}" -le 18 ] || return 0
  case $unit in
    '' | b) power=0 ;;
    k | ki | kib | kb) power=1 ;;
    m | mi | mib | mb) power=2 ;;
    g | gi | gib | gb) power=3 ;;
    t | ti | tib | tb) power=4 ;;
    p | pi | pib | pb) power=5 ;;
    *) return 0 ;;
  esac
  case $unit in ?b) base=1000 ;; *) base=1024 ;; esac
  mult=1
  while [ "$power" -gt 0 ]; do
    mult=$((mult * base))
    power=$((power - 1))
  done
  digits=$((10#$digits))
  if [ "$mult" -gt 1 ] && [ "$digits" -gt $(((1 << 62) / mult)) ]; then return 0; fi
  printf '%s\n' $((digits * mult))
}

# gds_serve_memory ARGS...: sets gds_serve_flags (empty unless ARGS is a serve command) and, for serve, exports
# MALLOC_ARENA_MAX (2) and MALLOC_MMAP_THRESHOLD_ (1048576), each unless already set.
gds_serve_memory() {
  gds_serve_flags=''
  [ "${1:-}" = serve ] || return 0
  export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
  export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-1048576}"
  local size='4GiB' bytes heap direct mib=$((1 << 20))
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      --memory-budget) size=${2:-}; shift ;;
      --memory-budget=*) size=${1#--memory-budget=} ;;
      --) break ;;
    esac
    shift
  done
  bytes=$(_gds_size_bytes "$size")
  [ -n "$bytes" ] || return 0
  heap=$(((256 * mib + bytes / 16) / mib))
  direct=$(((128 * mib + bytes / 32) / mib))
  [ "$heap" -le 4096 ] || heap=4096
  [ "$direct" -le 2048 ] || direct=2048
  gds_serve_flags="-Xmx${heap}m -XX:MaxDirectMemorySize=${direct}m"
}
