#!/usr/bin/env bash
# The learner's Run comes first. On a fresh data folder, puzzle 22: the starter's run ends with its
# own verdict while its cases show one by one; the solution's figures for the roofline then start in
# the background, and the next Run (the solution) cancels them, goes first and passes: no run ends
# as "runner died". Then Run twice in a row: the second press cancels the first check and checks
# the file as it is now, which is the only answer shown.
#   $1 = the warpbook executable, $2 = the source root.
set -euo pipefail
exe=$1
src=$2
source "$src/tests/common/gui_display.sh"
gui_setup 1600x1000
cd "$src"
cat > "$tmp/script.txt" <<SCRIPT
wait-hello 60
open puzzle 22-flash-attention
click run
expect running 100
wait-partial 300
wait-result 600
expect verdict wrong_answer
expect attempts 1
wait-background 30
expect background-running
load solutions/22-flash-attention.cu
click run
expect running 100
wait-result 900
expect verdict passed
load puzzles/22-flash-attention/starter.cu
click run
wait-partial 300
click run
expect running 100
wait-result 600
expect verdict wrong_answer
expect superseded 1
quit
SCRIPT
if ! "$exe" --data-dir "$tmp/data" --script "$tmp/script.txt" --window-size 1280x800 >"$tmp/out.txt" 2>&1; then
  cat "$tmp/out.txt"
  echo "FAIL: the scripted window run failed"
  exit 1
fi
cat "$tmp/out.txt"
if grep -q "runner_died" "$tmp/out.txt"; then
  echo "FAIL: a run was lost to a runner that died"
  exit 1
fi
