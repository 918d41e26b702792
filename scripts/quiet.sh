#!/usr/bin/env bash
# The set-up's terminal: one line per stage ("set-up: venv (.venv) … installed"). The tools'
# own output (apt, pip, setuptools, maturin, cargo, clang) goes to a log per stage
# (results/logs/setup/<stage>.log, appended, each command headed by its time and words)
# and reaches the terminal only when a stage fails: then its last lines and the log's path.
#
#   scripts/quiet.sh begin LABEL                 print "set-up: LABEL … " (the line stays open)
#   scripts/quiet.sh run LOG CMD [ARG...]        run CMD with its output appended to LOG; silent
#                                                when it succeeds; when it fails, print (stderr)
#                                                "FAILED (exit N): CMD", its last $QUIET_TAIL (30)
#                                                lines of output and LOG's path, and exit N
#   scripts/quiet.sh end [FILE [NEW [MISSING]]]  close the line: NEW ("built") when FILE changed
#                                                since this make started, "ok (already there)"
#                                                when it is older, MISSING ("not built") when
#                                                there is no FILE; "ok" without FILE (or FILE -)
#   scripts/quiet.sh already FILE LABEL          print "set-up: LABEL … ok (already there)" when
#                                                FILE is older than this make (its stage had
#                                                nothing to do; a stage that ran said so itself)
#
# "This make started" is $SETUP_T0 (nanoseconds since the epoch; the Makefile sets it);
# without it a stage says "ok". Under `make -n`, which runs only the recipe lines that call
# $(MAKE), `run` runs CMD in the open and writes no log, so the sub-make's plan shows.
set -uo pipefail

usage() {
  sed -n '7,19p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# "new" (changed since this make started), "old", "missing" or "unknown" (no SETUP_T0)
age() {
  local m
  if ! m=$(date -r "$1" +%s%N 2>/dev/null) || ! [[ $m =~ ^[0-9]+$ ]]; then
    echo missing
  elif ! [[ ${SETUP_T0:-} =~ ^[0-9]+$ ]]; then
    echo unknown
  elif (( m >= SETUP_T0 )); then
    echo new
  else
    echo old
  fi
}

# `make -n`: single-letter flags come first in MAKEFLAGS ("n", "kn -- SCALE=quick")
dry_run() {
  local first=${MAKEFLAGS:-}
  first=${first%% *}
  [[ $first =~ ^[A-Za-z]+$ && $first == *n* ]]
}

run() {
  local log=$1 start rc
  shift
  if dry_run; then
    exec "$@"
  fi
  mkdir -p "$(dirname "$log")" || exit
  printf '\n== %s  %s\n' "$(date '+%Y-%m-%d %H:%M:%S')" "$*" >>"$log" || exit
  start=$(stat -c %s "$log") || exit
  # stdin closed: a prompt nobody can see would wait for ever
  "$@" </dev/null >>"$log" 2>&1
  rc=$?
  if (( rc != 0 )); then
    {
      printf 'FAILED (exit %d): %s\n' "$rc" "$*"
      tail -c +"$((start + 1))" "$log" | tail -n "${QUIET_TAIL:-30}" | sed 's/^/  /'
      printf '  (its whole output: %s)\n' "$log"
    } >&2
  fi
  exit "$rc"
}

end() {
  local file=${1:--} new=${2:-built} missing=${3:-not built}
  if [[ $file == - ]]; then
    echo ok
    return 0
  fi
  case $(age "$file") in
    new) echo "$new" ;;
    old) echo "ok (already there)" ;;
    missing) echo "$missing" ;;
    *) echo ok ;;
  esac
}

already() {
  if [[ $(age "$1") == old ]]; then
    echo "set-up: $2 … ok (already there)"
  fi
  return 0
}

verb=${1:-}
[ $# -gt 0 ] && shift
case $verb in
  begin) [ $# -eq 1 ] || usage; printf 'set-up: %s … ' "$1" ;;
  run) [ $# -ge 2 ] || usage; run "$@" ;;
  end) [ $# -le 3 ] || usage; end "$@" ;;
  already) [ $# -eq 2 ] || usage; already "$@" ;;
  *) usage ;;
esac
