#!/usr/bin/env bash
# An unknown subcommand: one line on stderr naming it (with the nearest command when one is
# close), exit 4, nothing on stdout, and never the window, even with a display and with top-level
# options before it. Usage: unit_unknown_command.sh WARPBOOK SOURCE_ROOT
set -euo pipefail
wb=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect LINE ARGS...: exit 4, stdout empty, stderr exactly LINE.
expect() {
  local want=$1
  shift
  set +e
  # A display that is not there: were the window to open, it would fail differently.
  DISPLAY=:0.unknown-display "$wb" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  set -e
  [ "$rc" = 4 ] || fail "warpbook $* exited $rc, not 4 ($(cat "$tmp/err"))"
  [ ! -s "$tmp/out" ] || fail "warpbook $* printed on stdout: $(head -3 "$tmp/out")"
  [ "$(cat "$tmp/err")" = "$want" ] || fail "warpbook $*: got '$(cat "$tmp/err")', want '$want'"
}

expect "warpbook: no command 'chek'; did you mean 'check'? (warpbook --help lists them)" chek 01 x.cu
expect "warpbook: no command 'chek'; did you mean 'check'? (warpbook --help lists them)" \
  --catalog "$root" chek 01 x.cu
expect "warpbook: no command 'lsit'; did you mean 'list'? (warpbook --help lists them)" \
  --catalog="$root" --data-dir "$tmp/data" lsit
expect "warpbook: no command 'roof'; did you mean 'roofline'? (warpbook --help lists them)" roof
expect "warpbook: no command 'frobnicate' (warpbook --help lists them)" frobnicate
expect "warpbook: no command 'x' (warpbook --help lists them)" --data-dir "$tmp/data" x
[ ! -e "$tmp/data" ] || fail "an unknown command must not touch the data folder"

# A known command after the same options still runs.
# (Into a file, not a pipe: grep -q stops reading at the first match, and a longer list then dies
# of SIGPIPE, which pipefail would report as a failure of the command.)
"$wb" --catalog "$root" --data-dir "$tmp/data" list >"$tmp/list" ||
  fail "warpbook --catalog DIR --data-dir DIR list exited $?"
grep -q "^puzzle 01-vector-add" "$tmp/list" ||
  fail "warpbook --catalog DIR --data-dir DIR list should list the puzzles"
echo "ok"
