#!/usr/bin/env bash
# The real window under Xvfb with Mesa's software OpenGL, on a fresh data folder: open puzzle 01,
# run its starter (fails), run its solution (passes on the simulator), with screenshots; then
# check the window's state, the store's rows and the screenshots.
#   $1 = the warpbook executable, $2 = the source root. WARPBOOK_GUI_SHOTS=DIR keeps the shots.
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
open lesson 0001-programs-not-threads
frames 4
screenshot $shots/gui-lesson.png
open puzzle 01-vector-add
frames 3
click run
wait-result 300
expect verdict failed
expect markers-at-least 1
frames 3
screenshot $shots/gui-starter.png
load solutions/01-vector-add.cu
key ctrl+enter
wait-result 300
expect verdict passed
expect attempts 2
expect file-contains @tune ITEMS
wait-idle 300
frames 4
screenshot $shots/gui-passed.png
state $tmp/state.json
quit
SCRIPT
if ! "$exe" --data-dir "$tmp/data" --script "$tmp/script.txt" --window-size 1280x800 >"$tmp/out.txt" 2>&1; then
  cat "$tmp/out.txt"
  echo "FAIL: the scripted window run failed"
  exit 1
fi
cat "$tmp/out.txt"
# A second start on the same data: the open puzzle, its latest result and the progress come back.
printf 'frames 3\nstate %s\nquit\n' "$tmp/restart.json" >"$tmp/restart.txt"
"$exe" --data-dir "$tmp/data" --script "$tmp/restart.txt" --window-size 1280x800 >"$tmp/out2.txt" 2>&1 ||
  { cat "$tmp/out2.txt"; exit 1; }
python3 - "$tmp" "$shots" <<'PY'
import json, sqlite3, struct, sys, re
tmp, shots = sys.argv[1], sys.argv[2]
st = json.load(open(f"{tmp}/state.json"))
assert st["verdict"] == "passed", st
assert st["progress"]["01-vector-add"]["passed"], st
assert st["progress"]["01-vector-add"]["attempts"] == 2, st
assert st["first_frame_ms"] > 0, st
db = sqlite3.connect(f"{tmp}/data/warpbook.db")
rows = db.execute("SELECT verdict FROM attempts WHERE puzzle='01-vector-add' "
                  "AND file='workspace/01-vector-add.cu' ORDER BY id").fetchall()
assert [r[0] for r in rows][0] != "passed" and rows[-1][0] == "passed" and len(rows) == 2, rows
out = open(f"{tmp}/out.txt").read()
for name in ["gui-lesson", "gui-starter", "gui-passed"]:
    png = open(f"{shots}/{name}.png", "rb").read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n", name
    w, h = struct.unpack(">II", png[16:24])
    assert (w, h) == (1280, 800), (name, w, h)
    m = re.search(rf"screenshot \S*{name}.png \d+x\d+ colours=(\d+) drawn=(\d+)%", out)
    assert m and int(m.group(1)) > 200 and int(m.group(2)) > 50, (name, m and m.groups())
re_st = json.load(open(f"{tmp}/restart.json"))
assert re_st["puzzle"] == "01-vector-add" and re_st["verdict"] == "passed", re_st
assert re_st["progress"]["01-vector-add"]["passed"], re_st
print("ok: verdicts", [r[0] for r in rows], "first frame", round(st["first_frame_ms"]), "ms")
PY
