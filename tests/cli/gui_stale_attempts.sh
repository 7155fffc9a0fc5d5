#!/usr/bin/env bash
# While a new check runs, the previous result stays on show marked "previous run" (stale), and the
# Results pane's "attempt N" counts the learner's own Runs: on a fresh data folder, puzzle 02's
# starter is run, the solution's background check (a row in the store too) is let finish, and the
# second Run is "attempt 2" although it is the store's third row.
#   $1 = the warpbook executable, $2 = the source root.
set -euo pipefail
exe=$1
src=$2
source "$src/tests/common/gui_display.sh"
gui_setup 1600x1000
cd "$src"
cat > "$tmp/script.txt" <<SCRIPT
wait-hello 60
open puzzle 02-row-sum
expect stale false
click run
wait-result 600
expect attempt-shown 1
expect stale false
wait 1
wait-idle 600
click run
expect stale-shown
wait-result 600
expect stale false
expect attempt-shown 2
expect attempts 2
quit
SCRIPT
if ! "$exe" --data-dir "$tmp/data" --script "$tmp/script.txt" --window-size 1600x1000 >"$tmp/out.txt" 2>&1; then
  cat "$tmp/out.txt"
  echo "FAIL: the scripted window run failed"
  exit 1
fi
cat "$tmp/out.txt"
