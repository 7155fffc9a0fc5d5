#!/usr/bin/env bash
# A GPU's wrong answer, explained by the simulator, as the window shows it. The attempt in
# tests/gui/data/h200-fault84.db was recorded on an NVIDIA H200 by `scripts/gpu_session.sh attempt`
# (fault 84: a shared array overflowing into its neighbour): the GPU's verdict is a wrong answer,
# and the simulator, re-running the same case, says which write landed where. Opening the puzzle
# shows its latest attempt; the window must show the H200's verdict with that explanation.
# With SHOT=FILE.png the screenshot is kept (docs/screenshot-gpu-explained.png is made so).
#   $1 = the warpbook executable, $2 = the source root.
set -euo pipefail
exe=$1
src=$2
source "$src/tests/common/gui_display.sh"
gui_setup 1600x1000
mkdir -p "$tmp/data/workspace"
cp "$src/tests/gui/data/h200-fault84.db" "$tmp/data/warpbook.db"
cp "$src/tests/faults/84-shared-into-neighbour.cu" "$tmp/data/workspace/01-vector-add.cu"
cat > "$tmp/script.txt" <<SCRIPT
wait-hello 60
open puzzle 01-vector-add
frames 20
state $tmp/state.json
screenshot ${SHOT:-$tmp/shot.png}
frames 2
quit
SCRIPT
if ! "$exe" --catalog "$src" --data-dir "$tmp/data" --script "$tmp/script.txt" --window-size 1600x1000 >"$tmp/out.txt" 2>&1; then
  cat "$tmp/out.txt"
  echo "FAIL: the scripted window run failed"
  exit 1
fi
python3 - "$tmp/state.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
assert st["puzzle"] == "01-vector-add", st
assert st["verdict"] == "wrong_answer", st["verdict"]
assert st["device"] == "NVIDIA H200", st["device"]
e = st["sim_explanation"]
for words in ("the simulator, same case and inputs", "wrote s[128]", "It landed in t[0]"):
    assert words in e, (words, e)
print("ok: the H200's wrong answer is shown with:", e)
PY
