# shellcheck shell=sh
# bin/jdk25.sh: select a JDK 25 or newer for gds-loader.
#
# SOURCE this file (do not execute it), e.g.   . bin/jdk25.sh || exit 1
#
# Picks the first of:
#   1. $JAVA_HOME, if its `java -version` major is >= 25
#   2. /usr/lib/jvm/temurin-25-jdk-amd64, if present
#   3. the first JDK under /usr/lib/jvm (names containing "25" first) whose major is >= 25
# A candidate must have bin/java and bin/javac (a JDK, not a bare runtime).
#
# Success: exports JAVA_HOME, puts $JAVA_HOME/bin first on PATH, prints nothing, returns 0.
# Failure: prints one line to stderr, leaves JAVA_HOME and PATH alone, returns 1.
#
# Plain POSIX sh (mvnw sources it under /bin/sh = dash); safe under `set -euo pipefail`
# and under `set -f`.  Every helper name starts with _gds_ and is removed again at the end.

# _gds_probe DIR: set _gds_major to DIR's Java major version ('' if DIR is no usable JDK)
# and _gds_why to a short description of what DIR is.
_gds_probe() {
  _gds_major=''
  if [ ! -x "$1/bin/java" ]; then
    _gds_why='no bin/java'
    return 0
  fi
  # `java -version` prints e.g.  openjdk version "25.0.3" 2026-04-21 LTS  (or "1.8.0_402", "26-ea")
  _gds_v=$("$1/bin/java" -version 2>&1 </dev/null | sed -n 's/^[^"]* version "\([^"]*\)".*/\1/p') || _gds_v=''
  case $_gds_v in 1.*) _gds_v=${_gds_v#1.} ;; esac
  _gds_v=${_gds_v%%[!0-9]*}
  if [ -z "$_gds_v" ]; then
    _gds_why='java -version failed'
    return 0
  fi
  if [ ! -x "$1/bin/javac" ]; then
    _gds_why="Java $_gds_v runtime without javac"
    return 0
  fi
  _gds_major=$_gds_v
  _gds_why="Java $_gds_v"
}

# _gds_try DIR LABEL: pick DIR if it is a JDK >= 25 (return 0), else note LABEL in _gds_found.
_gds_try() {
  _gds_probe "$1"
  if [ -n "$_gds_major" ] && [ "$_gds_major" -ge 25 ]; then
    _gds_pick=$1
    return 0
  fi
  _gds_found="${_gds_found:+$_gds_found, }$2 ($_gds_why)"
  return 1
}

_gds_pick=''
_gds_found=''
_gds_seen='|'

if [ -n "${JAVA_HOME:-}" ]; then
  _gds_try "$JAVA_HOME" "JAVA_HOME=$JAVA_HOME" || :
  _gds_r=$(cd -P -- "$JAVA_HOME" 2>/dev/null && pwd) || _gds_r=''
  [ -z "$_gds_r" ] || _gds_seen="$_gds_seen$_gds_r|"
fi

if [ -z "$_gds_pick" ] && [ -d /usr/lib/jvm/temurin-25-jdk-amd64 ]; then
  _gds_try /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64 || :
  _gds_r=$(cd -P -- /usr/lib/jvm/temurin-25-jdk-amd64 2>/dev/null && pwd) || _gds_r=''
  [ -z "$_gds_r" ] || _gds_seen="$_gds_seen$_gds_r|"
fi

if [ -z "$_gds_pick" ]; then
  # Globbing may be switched off by the caller (set -f); switch it on for this loop only.
  case $- in *f*) _gds_noglob=1; set +f ;; *) _gds_noglob='' ;; esac
  for _gds_d in /usr/lib/jvm/*25* /usr/lib/jvm/*; do
    [ -x "$_gds_d/bin/java" ] || continue
    # skip aliases (java-1.17.0-openjdk-amd64 -> java-17-openjdk-amd64) and dirs already tried
    _gds_r=$(cd -P -- "$_gds_d" 2>/dev/null && pwd) || continue
    case $_gds_seen in *"|$_gds_r|"*) continue ;; esac
    _gds_seen="$_gds_seen$_gds_r|"
    if _gds_try "$_gds_d" "$_gds_r"; then break; fi
  done
  [ -z "$_gds_noglob" ] || set -f
fi

if [ -n "$_gds_pick" ]; then
  JAVA_HOME=$_gds_pick
  PATH="$JAVA_HOME/bin${PATH:+:$PATH}"
  export JAVA_HOME PATH
  _gds_rc=0
else
  printf '%s\n' "gds-loader needs JDK 25 or newer: set JAVA_HOME to one (found: ${_gds_found:-nothing})" >&2
  _gds_rc=1
fi

unset -f _gds_probe _gds_try
unset _gds_pick _gds_found _gds_seen _gds_r _gds_d _gds_v _gds_major _gds_why _gds_noglob
eval "unset _gds_rc; return $_gds_rc"
