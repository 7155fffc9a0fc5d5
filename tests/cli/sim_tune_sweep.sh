#!/usr/bin/env bash
# `warpbook tune` and `warpbook sweep` as a terminal user runs them, on the simulator: the ranked
# table, --json, --write (the file gets the winner's @tune lines, and nothing else changes), usage
# errors (exit 4), and a sweep's SVG and PNG.
#   $1 = the warpbook executable, $2 = the source root.
set -euo pipefail
exe=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"
fail() { echo "FAIL: $*"; exit 1; }
data="--data-dir $tmp/data"

cp solutions/01-vector-add.cu "$tmp/mine.cu"
out=$("$exe" tune 01 "$tmp/mine.cu" --backend sim --only BLOCK=32,256 ITEMS=4,8 $data 2>"$tmp/err")
echo "$out"
grep -q "^   1 " <<<"$out" || fail "no rank 1 row"
grep -q "fastest: BLOCK=" <<<"$out" || fail "no winner line"
grep -q "(p): predicted by the performance model for the NVIDIA H200 SXM" <<<"$out" || fail "no predicted note"
grep -q "\[  4/4\]" "$tmp/err" || fail "no progress lines"
cmp -s solutions/01-vector-add.cu "$tmp/mine.cu" || fail "tune without --write changed the file"

# --json: four rows, the fastest first, BLOCK=32 last of the correct ones.
"$exe" tune 01 "$tmp/mine.cu" --backend sim --only BLOCK=32,256 ITEMS=4,8 --json $data 2>/dev/null >"$tmp/t.json"
python3 - "$tmp/t.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
rows = t["rows"]
assert len(rows) == 4 and t["winner"] == 0, t
assert all(r["verdict"] == "passed" and r["predicted"] for r in rows)
assert [r["time_us"] for r in rows] == sorted(r["time_us"] for r in rows)
assert rows[-1]["config"]["BLOCK"] == 32, rows[-1]
assert t["written"] is False
PY

# --write: the file gets the winner's lines in place of its own, and every other line is kept.
"$exe" tune 01 "$tmp/mine.cu" --backend sim --only BLOCK=32,128 ITEMS=8 --write $data >"$tmp/w.txt" 2>/dev/null
grep -q "wrote the fastest configuration" "$tmp/w.txt" || fail "no write line"
win=$(sed -n 's/^fastest: BLOCK=\([0-9]*\) ITEMS=\([0-9]*\),.*/\1 \2/p' "$tmp/w.txt")
[ -n "$win" ] || fail "no winner in $(cat "$tmp/w.txt")"
grep -q "^// @tune BLOCK=${win% *}$" "$tmp/mine.cu" || fail "BLOCK not written"
grep -q "^// @tune ITEMS=${win#* }$" "$tmp/mine.cu" || fail "ITEMS not written"
[ "$(grep -c '@tune' "$tmp/mine.cu")" = "$(grep -c '@tune' solutions/01-vector-add.cu)" ] || fail "@tune lines duplicated"
diff <(grep -v '^// @tune' solutions/01-vector-add.cu) <(grep -v '^// @tune' "$tmp/mine.cu") || fail "other lines changed"

# Ctrl+C stops the tune after the configurations under way: exit 130, the file untouched even
# with --write, and the output says how far it got.
cp "$tmp/mine.cu" "$tmp/before.cu"
"$exe" tune 01 "$tmp/mine.cu" --backend sim --jobs 1 --write $data >"$tmp/c.txt" 2>"$tmp/c.err" &
pid=$!
for _ in $(seq 100); do grep -q "\[  2/30\]" "$tmp/c.err" 2>/dev/null && break; sleep 0.1; done
kill -INT $pid
set +e; wait $pid; rc=$?; set -e
[ $rc = 130 ] || fail "Ctrl+C: exit $rc, not 130"
grep -q "cancelled after" "$tmp/c.txt" || fail "no cancelled line: $(cat "$tmp/c.txt")"
grep -q "stopping after the configurations under way" "$tmp/c.err" || fail "no stopping line"
cmp -s "$tmp/before.cu" "$tmp/mine.cu" || fail "a cancelled tune changed the file"

# Usage errors say what is wrong and exit 4.
set +e
"$exe" tune 01 "$tmp/mine.cu" --backend sim --only WARPS=4 $data >/dev/null 2>"$tmp/e1"; rc1=$?
"$exe" tune 02 "$tmp/mine.cu" --backend sim --only BLOCK=100 $data >/dev/null 2>"$tmp/e2"; rc2=$?
"$exe" sweep 01 "$tmp/mine.cu" --backend sim --size rows=2^10..2^12 $data >/dev/null 2>"$tmp/e3"; rc3=$?
set -e
[ $rc1 = 4 ] && grep -q "no tunable 'WARPS'" "$tmp/e1" || fail "unknown tunable: rc $rc1 $(cat "$tmp/e1")"
[ $rc2 = 4 ] && grep -q "BLOCK=100" "$tmp/e2" || fail "bad value: rc $rc2 $(cat "$tmp/e2")"
[ $rc3 = 4 ] && grep -q "no size 'rows'" "$tmp/e3" || fail "bad size: rc $rc3 $(cat "$tmp/e3")"

# sweep: the table, an SVG and a PNG.
out=$("$exe" sweep 01 solutions/01-vector-add.cu --backend sim --size n=2^16..2^24*4 --no-reference --svg "$tmp/s.svg" --png "$tmp/s.png" $data 2>/dev/null)
echo "$out"
grep -q "your kernel" <<<"$out" || fail "no series header"
grep -q "^    16777216 " <<<"$out" || fail "no 2^24 row"
grep -q "roof: DRAM" <<<"$out" || fail "no roof line"
grep -q "<svg" "$tmp/s.svg" || fail "no SVG"
if [ -s "$tmp/s.png" ]; then
  head -c 8 "$tmp/s.png" | od -An -c | grep -q "P   N   G" || fail "not a PNG"
fi
echo "ok"
