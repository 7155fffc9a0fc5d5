#!/usr/bin/env bash
# While a new check runs, the previous result stays on show marked "previous run" (stale) until the
# new check has an answer or a failing case; and the Results pane's "attempt N" counts the
# learner's own Runs. On a fresh data folder, puzzle 02: the starter (a wrong answer), then the
# solution's background check (a row in the store too) is let finish; the solution, run, holds the
# starter's result stale while its cases pass and is "attempt 2" although it is the store's third
# row; the solution once more (a changed comment, so checked anew) keeps the last result stale
# to the end.
#   $1 = the warpbook executable, $2 = the source root.
set -euo pipefail
exe=$1
src=$2
source "$src/tests/common/gui_display.sh"
gui_setup 1600x1000
cd "$src"
{ cat solutions/02-row-sum.cu; echo "// once more"; } >"$tmp/again.cu"
cat > "$tmp/script.txt" <<SCRIPT
wait-hello 60
open puzzle 02-row-sum
expect stale false
click run
wait-result 600
expect verdict wrong_answer
expect attempt-shown 1
expect stale false
wait 1
wait-idle 600
load solutions/02-row-sum.cu
click run
expect stale-shown
expect stale true
wait-result 600
expect verdict passed
expect stale false
expect attempt-shown 2
load $tmp/again.cu
click run
expect stale true
wait-result 600
expect stale false
expect attempt-shown 3
expect attempts 3
quit
SCRIPT
if ! "$exe" --data-dir "$tmp/data" --script "$tmp/script.txt" --window-size 1600x1000 >"$tmp/out.txt" 2>&1; then
  cat "$tmp/out.txt"
  echo "FAIL: the scripted window run failed"
  exit 1
fi
cat "$tmp/out.txt"
