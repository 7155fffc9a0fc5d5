#!/usr/bin/env bash
# The window's Tune and Sweep buttons, under Xvfb on a fresh data folder: puzzle 01's solution is
# tuned (every BLOCK x ITEMS combination, on the simulator's performance model), the table is
# shown, "Use the fastest" writes @tune lines into the learner's file, then a sweep draws three
# series. The window's state is checked, and the screenshots are kept in WARPBOOK_GUI_SHOTS.
#   $1 = the warpbook executable, $2 = the source root.
set -euo pipefail
exe=$1
src=$2
source "$src/tests/common/gui_display.sh"
gui_setup 1600x1000
shots=${WARPBOOK_GUI_SHOTS:-$tmp}
mkdir -p "$shots"
cd "$src"
cat > "$tmp/script.txt" <<SCRIPT
wait-hello 60
open puzzle 01-vector-add
frames 3
load solutions/01-vector-add.cu
click tune
wait-result 600
frames 3
state $tmp/tuned.json
screenshot $shots/screenshot-tune.png
click tune-apply
frames 3
expect file-contains @tune BLOCK=
click sweep
wait-result 600
frames 3
state $tmp/swept.json
screenshot $shots/screenshot-sweep.png
quit
SCRIPT
"$exe" --data-dir "$tmp/data" --window-size 1600x1000 --script "$tmp/script.txt"
python3 - "$tmp" <<'PY'
import json, sys
t = json.load(open(sys.argv[1] + "/tuned.json"))
s = json.load(open(sys.argv[1] + "/swept.json"))
# BLOCK has 6 candidates (32..1024), ITEMS 5: every combination was tried.
assert t["tune_rows"] == 30, t["tune_rows"]
assert t["tune_winner"].startswith("BLOCK="), t["tune_winner"]
# The tuned configurations that passed are on the roofline beside the attempt trail.
assert t["roofline_points"] >= 10, t["roofline_points"]
assert s["sweep_series"] == 3, s["sweep_series"]
print("tune:", t["tune_winner"], "of", t["tune_rows"], "rows; sweep:", s["sweep_series"], "series")
PY
