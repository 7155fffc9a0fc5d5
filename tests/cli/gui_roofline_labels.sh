#!/usr/bin/env bash
# The roofline pane's text never collides, in the real window under Xvfb: at 1280x800, 1600x1000
# and 2560x1440, with puzzle 01's solution checked on the simulator (the current point and the
# reference solution's point are labelled), and once more modelling an H100, every text rectangle
# the pane drew lies inside the pane and intersects no other.
#   $1 = the warpbook executable, $2 = the source root. WARPBOOK_GUI_SHOTS=DIR keeps the shots.
set -euo pipefail
exe=$1
src=$2
source "$src/tests/common/gui_display.sh"
gui_setup 2560x1600
shots=${WARPBOOK_GUI_SHOTS:-$tmp}
mkdir -p "$shots"
cd "$src"

# Every wait below fits its window's deadline, and the deadlines together (100 + 3 x 40 s) fit
# well inside the test's TIMEOUT (tests/CMakeLists.txt, 300 s): a window that hangs anywhere, in a
# frame or in its shutdown, ends at its deadline and says which command it was stuck in. Puzzle
# 01's two checks (the learner's, the solution's for the roofline) take about a second each here.

# window SIZE DEADLINE SCRIPT-LINES...: one scripted window on the shared data folder.
window() {
  local size=$1 deadline=$2 rc=0
  shift 2
  printf '%s\n' "deadline $deadline" "$@" >"$tmp/script.txt"
  # The window's own deadline says where it hung; `timeout` is for a window that never reads its
  # script (no display, a driver that blocks before the first frame).
  timeout -k 5 $((deadline + 15)) "$exe" --data-dir "$tmp/data" --script "$tmp/script.txt" \
    --window-size "$size" >"$tmp/out-$size.txt" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    cat "$tmp/out-$size.txt"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      echo "FAIL: the scripted window at $size did not start its script within $((deadline + 15)) s"
    else
      echo "FAIL: the scripted window at $size failed (exit code $rc)"
    fi
    exit 1
  fi
}

# First the check, so that the pane has its points: the learner's kernel and the reference.
window 1600x1000 100 "wait-hello 20" "open puzzle 01-vector-add" \
  "frames 3" "load solutions/01-vector-add.cu" "key ctrl+enter" "wait-result 40" "expect verdict passed" \
  "wait-idle 40" "mouse 5 5" "frames 4" "state $tmp/state-1600x1000.json" \
  "screenshot $shots/roofline-1600x1000.png" "quit"
for size in 1280x800 2560x1440; do
  window "$size" 40 "wait-hello 20" "open puzzle 01-vector-add" "mouse 5 5" "frames 4" \
    "state $tmp/state-$size.json" "screenshot $shots/roofline-$size.png" "quit"
done
# The H100's roofs, modelled, in the smallest window.
sed -i 's/^gpu_profile = .*/gpu_profile = h100-sxm/' "$tmp/data/window.ini"
grep -q '^gpu_profile = h100-sxm$' "$tmp/data/window.ini" || { echo "FAIL: no gpu_profile to set"; exit 1; }
window 1280x800 40 "wait-hello 20" "open puzzle 01-vector-add" "mouse 5 5" "frames 4" \
  "state $tmp/state-h100-1280x800.json" "screenshot $shots/roofline-h100-1280x800.png" "quit"

python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
bad = []
for name in ["1600x1000", "1280x800", "2560x1440", "h100-1280x800"]:
    st = json.load(open(f"{tmp}/state-{name}.json"))
    r = st["roofline"]
    px0, py0, px1, py1 = r["pane"]
    texts = r["texts"]
    kinds = {t["kind"] for t in texts}
    assert {"tick", "roof"} <= kinds, (name, kinds)
    if name == "1600x1000":
        labels = [t["text"] for t in texts]
        assert any("your kernel" in l for l in labels) and any("solution" in l for l in labels), labels
    for i, t in enumerate(texts):
        x0, y0, x1, y1 = t["box"]
        if not (x0 >= px0 - 0.01 and y0 >= py0 - 0.01 and x1 <= px1 + 0.01 and y1 <= py1 + 0.01):
            bad.append(f"{name}: '{t['text']}' {t['box']} outside the pane {r['pane']}")
        for u in texts[i + 1:]:
            a0, b0, a1, b1 = u["box"]
            if min(x1, a1) - max(x0, a0) > 0.01 and min(y1, b1) - max(y0, b0) > 0.01:
                bad.append(f"{name}: '{t['text']}' {t['box']} overlaps '{u['text']}' {u['box']}")
    print(f"{name}: {len(texts)} texts, {r['legend']} in the legend, pane {r['pane']}")
if bad:
    print("\n".join(bad))
    sys.exit(1)
print("ok")
PY
