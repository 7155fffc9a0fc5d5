#!/usr/bin/env bash
# The keyboard path, with the keys the menus show: from puzzle 01 Ctrl+L opens its lesson,
# Ctrl+PgDn the next puzzle in the catalog's order (04 under lesson 0002) and Ctrl+PgUp the one
# before; Ctrl+H shows a hint; typing goes to the editor and Ctrl+Enter runs it to a result.
#   $1 = the warpbook executable, $2 = the source root.
set -euo pipefail
exe=$1
src=$2
source "$src/tests/common/gui_display.sh"
gui_setup 1600x1000
cd "$src"
cat > "$tmp/script.txt" <<SCRIPT
wait-hello 60
open puzzle 01-vector-add
key ctrl+l
frames 2
expect lesson 0001-programs-not-threads
key ctrl+pagedown
frames 2
expect puzzle 04-matrix-add-2d
key ctrl+pageup
frames 2
expect puzzle 01-vector-add
key ctrl+h
frames 2
expect hints-shown 1
type // tried
frames 2
expect editor-contains // tried
key ctrl+enter
wait-result 300
expect verdict failed
expect file-contains // tried
quit
SCRIPT
if ! "$exe" --data-dir "$tmp/data" --script "$tmp/script.txt" --window-size 1600x1000 >"$tmp/out.txt" 2>&1; then
  cat "$tmp/out.txt"
  echo "FAIL: the scripted window run failed"
  exit 1
fi
cat "$tmp/out.txt"
