#!/usr/bin/env bash
# `warpbook grade DIR` as an instructor runs it, on the simulator: the table, the summary, the
# progress lines, --csv and --json files, the cache and --force, a FIFO as the CSV's target, and
# exit code 4 for usage errors (0 whatever the students' verdicts).
# Usage: sim_grade.sh WARPBOOK SOURCE_ROOT
set -euo pipefail
wb=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$tmp"/out "$tmp"/err; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done
  exit 1
}
grade() { "$wb" --catalog "$root" grade "$@" >"$tmp/out" 2>"$tmp/err"; }

cls=$tmp/class
mkdir -p "$cls/alice" "$cls/ivan" "$cls/zed"
cp "$root/solutions/01-vector-add.cu" "$cls/alice/01.cu"
printf '// na\xefve\n' >"$cls/erin.01-vector-add.cu"
cp "$root/solutions/01-vector-add.cu" "$cls/ivan/99.cu"
cat >"$cls/zed/vector-add.cu" <<'EOF'
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] * b[i];
}
EOF

grade "$cls" --backend sim --jobs 2 --timeout 60 --csv "$tmp/out.csv" --json "$tmp/out.json" ||
  fail "grade should exit 0 whatever the verdicts"
grep -Eq "^alice +01-vector-add +passed +6/6 +[0-9.]+ [nµm]?s\* +[0-9]+% +(gold|silver|bronze)?" "$tmp/out" ||
  fail "alice's passing row"
grep -Eq "^erin +01-vector-add +invalid_utf8 +not valid UTF-8: byte 0xEF at offset 5 \(line 1, column 6\)" "$tmp/out" ||
  fail "erin's non-UTF-8 row"
grep -Eq "^ivan +99 +unknown_puzzle +'99' names no puzzle" "$tmp/out" || fail "ivan's row"
grep -Eq "^zed +01-vector-add +wrong_answer +0/6 +case n=1: " "$tmp/out" || fail "zed's row"
grep -Eq "^01-vector-add +1 of 3 +alice [0-9.]+ [nµm]?s\* +(invalid_utf8|wrong_answer) \(1 of 3\)" "$tmp/out" ||
  fail "the summary of 01"
grep -q "^\* predicted by the simulator's performance model" "$tmp/out" || fail "the legend"
grep -q "^4 submissions: 2 checked now, 0 unchanged since the last run$" "$tmp/out" || fail "counts"
grep -q "^grade: \[4/4\] " "$tmp/err" || fail "progress lines on stderr"
grep -q "^grade: checking alice/01.cu (01-vector-add by alice)$" "$tmp/err" || fail "progress"
[ -f "$cls/.warpbook-grade.json" ] || fail "the cache is kept in DIR"

python3 - "$tmp/out.csv" "$tmp/out.json" <<'EOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [r["student"] for r in rows] == ["alice", "erin", "ivan", "zed"], rows
assert rows[0]["verdict"] == "passed" and rows[0]["predicted"] == "true"
assert float(rows[0]["time_us"]) > 0 and 0 < float(rows[0]["speed_of_light"])
assert rows[1]["verdict"] == "invalid_utf8" and "0xEF" in rows[1]["diagnostic"]
assert rows[3]["verdict"] == "wrong_answer" and rows[3]["cases_total"] == "6"
j = json.load(open(sys.argv[2]))
assert j["backend"] == "sim" and j["checked"] == 2 and j["unchanged"] == 0
assert [r["verdict"] for r in j["rows"]] == ["passed", "invalid_utf8", "unknown_puzzle", "wrong_answer"]
s = j["summary"]
assert len(s) == 1 and s[0]["puzzle"] == "01-vector-add", s
assert s[0]["passed"] == 1 and s[0]["total"] == 3 and s[0]["fastest"]["student"] == "alice"
assert s[0]["usual_failure"]["count"] == 1
EOF

# Unchanged files are not checked again; --force checks them.
grade "$cls" --backend sim --timeout 60 || fail "second run"
grep -q "^4 submissions: 0 checked now, 2 unchanged since the last run (--force checks them again)$" "$tmp/out" ||
  fail "the second run should skip alice and zed"
grep -q "alice 01-vector-add: unchanged since the last run (passed)" "$tmp/err" || fail "skip line"
grade "$cls" --backend sim --timeout 60 --force || fail "--force run"
grep -q "^4 submissions: 2 checked now, 0 unchanged since the last run$" "$tmp/out" ||
  fail "--force should check alice and zed again"

# A FIFO (like /dev/stdout) is written in place, never renamed over.
mkfifo "$tmp/pipe"
timeout 60 cat "$tmp/pipe" >"$tmp/piped.csv" &
reader=$!
grade "$cls" --backend sim --timeout 60 --csv "$tmp/pipe" || fail "grade into a FIFO"
wait "$reader" || fail "the FIFO's reader got nothing"
[ -p "$tmp/pipe" ] || fail "the FIFO was replaced"
grep -q "^alice,01-vector-add,alice/01.cu,passed," "$tmp/piped.csv" || fail "CSV through the FIFO"

# Usage errors exit 4; nothing is written into an empty folder.
expect4() {
  set +e
  grade "$@"
  rc=$?
  set -e
  [ "$rc" = 4 ] || fail "grade $* should exit 4, not $rc"
}
expect4 "$tmp/no-such-folder"
grep -q "is not a folder" "$tmp/err" || fail "say the folder is missing"
mkdir "$tmp/empty"
expect4 "$tmp/empty"
grep -q "no submissions in" "$tmp/err" || fail "say the folder holds no submissions"
[ ! -e "$tmp/empty/.warpbook-grade.json" ] || fail "no cache in an empty folder"
expect4 "$cls" --jobs 0
echo "ok"
