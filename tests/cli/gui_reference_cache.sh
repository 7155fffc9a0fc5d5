#!/usr/bin/env bash
# The solution's figures for the roofline are computed in the background once, then kept: the
# store remembers them by the file's content hash, the seed, the backend and the GPU profile, and
# a second session on the same data does not check the solution again.
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
load solutions/01-vector-add.cu
click run
wait-result 300
expect verdict passed
wait-idle 300
quit
SCRIPT
for session in 1 2; do
  if ! "$exe" --data-dir "$tmp/data" --script "$tmp/script.txt" --window-size 1280x800 >"$tmp/out$session.txt" 2>&1; then
    cat "$tmp/out$session.txt"
    echo "FAIL: the scripted window run failed (session $session)"
    exit 1
  fi
  cat "$tmp/out$session.txt"
done
python3 - "$tmp" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"{sys.argv[1]}/data/warpbook.db")
keys = db.execute("SELECT key, value FROM notes WHERE key LIKE 'reference-run/%'").fetchall()
assert len(keys) == 1, keys
key, attempt = keys[0]
parts = key.split("/")
assert parts[1] == "01-vector-add" and len(parts[2]) == 16 and parts[3] == "1" and parts[4] == "sim", key
rows = db.execute("SELECT id, seed FROM attempts WHERE file = 'solutions/01-vector-add.cu'").fetchall()
assert len(rows) == 1 and str(rows[0][0]) == attempt and rows[0][1] == 1, rows
mine = db.execute("SELECT COUNT(*) FROM attempts WHERE file = 'workspace/01-vector-add.cu'").fetchone()[0]
assert mine == 2, mine
print("ok: one background check of the solution over two sessions:", key)
PY
