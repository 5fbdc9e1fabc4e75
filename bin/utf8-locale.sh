# shellcheck shell=sh
# bin/utf8-locale.sh: make the next java a gds-loader launcher runs see a UTF-8 locale.
#
# SOURCE this file (do not execute it), e.g.   . bin/utf8-locale.sh
#
# Java decodes file names and arguments with the locale's character set (sun.jnu.encoding): under LANG=C or
# POSIX that is ASCII, and every non-ASCII byte of a path becomes '?' ("cannot convert ... to Path", ENOENT).
# When `locale charmap` is not UTF-8 this exports LC_ALL=C.UTF-8 if `locale -a` lists it (as C.UTF-8 or C.utf8),
# else LC_ALL=en_US.UTF-8 if listed; else it leaves the locale alone and warns once on stderr.
# A UTF-8 locale already in force is left as it is. Prints nothing otherwise; returns 0.
# Plain POSIX sh; safe under `set -euo pipefail` and `set -f`. Helper names start with _gds_ and are removed.

_gds_charmap=$(locale charmap 2>/dev/null) || _gds_charmap=''
case $_gds_charmap in
  UTF-8 | utf-8 | UTF8 | utf8) ;;
  *)
    _gds_all=$(locale -a 2>/dev/null) || _gds_all=''
    _gds_utf8=''
    for _gds_l in C.UTF-8 C.utf8 en_US.UTF-8 en_US.utf8; do
      if printf '%s\n' "$_gds_all" | grep -qx -- "$_gds_l"; then
        case $_gds_l in C.*) _gds_utf8=C.UTF-8 ;; *) _gds_utf8=en_US.UTF-8 ;; esac
        break
      fi
    done
    if [ -n "$_gds_utf8" ]; then
      LC_ALL=$_gds_utf8
      export LC_ALL
    else
      echo "gdsloader: warning: the locale's character set is ${_gds_charmap:-unknown}, not UTF-8, and neither C.UTF-8 nor en_US.UTF-8 is installed (locale -a): file names outside ASCII will not be found" >&2
    fi
    ;;
esac
unset _gds_charmap _gds_all _gds_utf8 _gds_l
