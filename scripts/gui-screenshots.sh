#!/usr/bin/env bash
# Screenshots of the window in every state a check can leave it in, at the window sizes the GUI is
# tried at: lesson 0010 at its bar chart; puzzle 02 with a runtime fault (a missing bounds guard),
# a wrong answer (the starter) and a compile error; puzzle 22 (slow enough on the simulator to
# catch) while its solution's check runs, passing, and that result gone stale while the next check
# runs. Each size starts from a fresh data folder.
#   scripts/gui-screenshots.sh build/warpbook OUT_DIR [SIZES...]   (default 1280x800 1600x1000 1920x1080)
set -euo pipefail
exe=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1280x800 1600x1000 1920x1080)
src=$(cd "$(dirname "$0")/.." && pwd)
source "$src/tests/common/gui_display.sh"
gui_setup 1920x1080
mkdir -p "$out"
cd "$src"

# The learner's files for puzzle 02: one thread a row with no bounds guard (the grid has a thread
# for every row and more), and the starter with a line that does not compile.
cat >"$tmp/fault.cu" <<'CU'
extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += x[(long long)r * cols + c];
  y[r] = s;
}
CU
sed 's/^  int r = blockIdx.x;/  int r = blockIdx.x;\n  oops;/' puzzles/02-row-sum/starter.cu >"$tmp/compile.cu"
grep -q oops "$tmp/compile.cu" || { echo "the starter changed: no line to break"; exit 1; }
# Puzzle 22's solution with a comment changed: checked anew, so its result goes stale meanwhile.
{ cat solutions/22-flash-attention.cu; echo "// once more"; } >"$tmp/again22.cu"

for size in "${sizes[@]}"; do
  rm -rf "$tmp/data"
  # How far down lesson 0010 its bar chart is at this size (the column's width sets the wrap).
  case $size in
  1280x800) lesson_scroll=2350 ;;
  1920x1080) lesson_scroll=1300 ;;
  *) lesson_scroll=1500 ;;
  esac
  cat >"$tmp/script.txt" <<SCRIPT
wait-hello 60
open lesson 0010-attention
scroll-lesson $lesson_scroll
wait 1
mouse 5 5
frames 4
screenshot $out/lesson-figure-$size.png
open puzzle 02-row-sum
load $tmp/fault.cu
click run
wait-result 600
mouse 5 5
frames 4
screenshot $out/runtime-fault-$size.png
load puzzles/02-row-sum/starter.cu
click run
wait-result 600
mouse 5 5
frames 4
screenshot $out/wrong-answer-$size.png
load $tmp/compile.cu
click run
wait-result 600
mouse 5 5
frames 4
screenshot $out/compile-error-$size.png
open puzzle 22-flash-attention
load solutions/22-flash-attention.cu
click run
mouse 5 5
wait-partial 300
frames 2
screenshot $out/running-$size.png
wait-result 900
mouse 5 5
frames 4
screenshot $out/passing-$size.png
load $tmp/again22.cu
click run
mouse 5 5
frames 6
expect stale true
screenshot $out/stale-$size.png
wait-result 900
quit
SCRIPT
  "$exe" --data-dir "$tmp/data" --script "$tmp/script.txt" --window-size "$size" >"$tmp/out.txt" 2>&1 ||
    { cat "$tmp/out.txt"; echo "FAIL at $size"; exit 1; }
  echo "$size: done"
done
ls -la "$out"
