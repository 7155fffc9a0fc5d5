#!/usr/bin/env bash
# The runner is killed (SIGKILL) in the middle of a check: the window restarts it and sends the
# check again, once, so the run ends with the kernel's own verdict. Killed a second time under the
# same run, the window says so and keeps the file; the next run starts a fresh runner and passes.
# Then another editor changes the file: with nothing unsaved it is reloaded; with unsaved edits the
# learner is asked, and their choice holds.
#   $1 = the warpbook executable, $2 = the source root.
set -euo pipefail
exe=$1
src=$2
source "$src/tests/common/gui_display.sh"
gui_setup 1600x1000
cd "$src"
cat > "$tmp/script.txt" <<SCRIPT
wait-hello 60
open puzzle 03-softmax
load solutions/03-softmax.cu
click run
kill-runner-busy
wait-result 300
expect verdict passed
expect runner-restarted
click run
kill-runner-busy
kill-runner-busy
wait-result 60
expect verdict runner_died
expect file-contains float4 vectors
state $tmp/killed.json
click run
wait-result 300
expect verdict passed
write-disk puzzles/03-softmax/starter.cu
wait 1.2
expect editor-contains TODO
expect conflict false
type // my edit\n
write-disk solutions/03-softmax.cu
wait 1.0
expect conflict true
click keep-mine
wait 0.5
expect conflict false
expect file-contains // my edit
quit
SCRIPT
if ! "$exe" --data-dir "$tmp/data" --script "$tmp/script.txt" --window-size 1280x800 >"$tmp/out.txt" 2>&1; then
  cat "$tmp/out.txt"
  echo "FAIL: the scripted window run failed"
  exit 1
fi
cat "$tmp/out.txt"
python3 - "$tmp" <<'PY'
import json, sys
st = json.load(open(f"{sys.argv[1]}/killed.json"))
assert st["runner_died"] and "signal 9" in st["error"], st
print("ok: the window said:", st["error"])
PY
