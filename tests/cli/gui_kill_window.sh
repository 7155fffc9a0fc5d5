#!/usr/bin/env bash
# kill -9 of the window while the learner types: the file on disk is whole (the starter with some
# complete prefix of the typed lines before it), never torn, and at most about a second behind.
#   $1 = the warpbook executable, $2 = the source root.
set -euo pipefail
exe=$1
src=$2
source "$src/tests/common/gui_display.sh"
gui_setup 1600x1000
cd "$src"
{
  echo "wait-hello 60"
  echo "open puzzle 01-vector-add"
  echo "frames 3"
  echo "print typing"
  for i in $(seq 1 200); do
    echo "type // typed line $i\\n"
    echo "print typed $i"
    echo "wait 0.05"
  done
  echo "quit"
} >"$tmp/script.txt"
"$exe" --data-dir "$tmp/data" --script "$tmp/script.txt" --window-size 1024x700 >"$tmp/out.txt" 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q typing "$tmp/out.txt" 2>/dev/null && break; sleep 0.1; done
sleep 3
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
typed=$(grep -o "typed [0-9]*" "$tmp/out.txt" | tail -1 | cut -d' ' -f2)
python3 - "$tmp/data/workspace/01-vector-add.cu" "$src/puzzles/01-vector-add/starter.cu" "${typed:-0}" <<'PY'
import sys, re
got = open(sys.argv[1]).read()
starter = open(sys.argv[2]).read()
assert got.endswith(starter), "the starter after the typed lines is not intact"
typed = got[: len(got) - len(starter)]
# Whole lines 1..n, then perhaps line n+1's characters before its Enter: states the editor was
# really in. Anything else (a line cut short, lines out of order) would be a torn write.
lines = typed.split("\n")
partial = lines.pop()
for k, l in enumerate(lines, 1):
    assert l == f"// typed line {k}", (k, l)
assert partial in ("", f"// typed line {len(lines) + 1}"), ("torn", partial)
assert len(lines) >= 5, f"only {len(lines)} lines reached the disk in 3 s of typing"
print(f"ok: after kill -9 the file holds the starter and {len(lines)} whole typed lines "
      f"of the {sys.argv[3]} typed (the window saves at least every 2 s while typing)")
PY
