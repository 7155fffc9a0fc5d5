#!/usr/bin/env bash
# `check --json-lines`: one JSON object per line on stdout, a "case" line per case in order as each
# is judged (stamped as it arrives: the first comes before the last case has run), then the
# report, whose cases are those lines'. Usage: sim_json_lines.sh WARPBOOK SOURCE_ROOT
set -euo pipefail
wb=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
set +e
"$wb" --data-dir "$tmp/data" check 22-flash-attention puzzles/22-flash-attention/starter.cu \
  --backend sim --seed 1 --json-lines 2>"$tmp/err" | python3 -c '
import sys, time
for line in sys.stdin:
    print(f"{time.monotonic():.3f} {line}", end="", flush=True)
' >"$tmp/out"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 1 ] || { cat "$tmp/err"; echo "FAIL: exit $rc, not 1 (a wrong answer)"; exit 1; }
python3 - "$tmp/out" <<'PY'
import json, sys
stamped = [l.split(" ", 1) for l in open(sys.argv[1]) if l.strip()]
objs = [(float(t), json.loads(l)) for t, l in stamped]
cases = [(t, o) for t, o in objs if o["event"] == "case"]
assert objs[-1][1]["event"] == "report", objs[-1][1].keys()
rep = objs[-1][1]["report"]
assert rep["verdict"] == "wrong_answer", rep["summary"]
assert [o["index"] for _, o in cases] == list(range(len(rep["cases"]))), [o["index"] for _, o in cases]
assert all(o["total"] == len(rep["cases"]) for _, o in cases)
assert [o["case"]["label"] for _, o in cases] == [c["label"] for c in rep["cases"]]
first_bad = next(i for i, (_, o) in enumerate(cases) if o["case"]["verdict"] != "passed")
# The last case takes seconds on the simulator: the first failure was out well before it ended.
lead = cases[-1][0] - cases[first_bad][0]
assert lead > 0.5 * cases[-1][1]["case"]["ms"] / 1e3, (lead, cases[-1][1]["case"]["ms"])
print(f"ok: {len(cases)} case lines, the first failure (case {first_bad + 1}) "
      f"{lead:.1f} s before the last case's line, then the report")
PY
