#!/usr/bin/env bash
# `warpbook predict --ceilings PROBE.json`: a probe's measured figures replace the profile's, as a
# check on that GPU predicts. An H200 probe (bench/perfmodel/data) must give puzzle 01's solution the
# profile's time within a few per cent (its figures are the H200's); the same probe with the DRAM's
# figures halved must make that DRAM-bound kernel about twice as slow; a file that is not a probe
# is a usage error. Usage: sim_predict_ceilings.sh WARPBOOK SOURCE_ROOT
set -euo pipefail
wb=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
probe=$root/bench/perfmodel/data/h200-captures12-18/capture12-probe.json
sol=$root/solutions/01-vector-add.cu
us() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['us'])" "$1"; }

"$wb" --catalog "$root" predict 01 "$sol" --json >"$tmp/profile.json"
"$wb" --catalog "$root" predict 01 "$sol" --json --ceilings "$probe" >"$tmp/probe.json"
python3 - "$probe" "$tmp/slow.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for k in list(j["ceilings"]):
    if k.startswith("dram_") and not k.endswith("latency_ns"):
        j["ceilings"][k] /= 2
json.dump(j, open(sys.argv[2], "w"))
PY
"$wb" --catalog "$root" predict 01 "$sol" --json --ceilings "$tmp/slow.json" >"$tmp/slow-pred.json"
a=$(us "$tmp/profile.json") b=$(us "$tmp/probe.json") c=$(us "$tmp/slow-pred.json")
echo "profile $a us, the H200's probe $b us, its DRAM halved $c us"
python3 -c "import sys; a, b, c = map(float, sys.argv[1:]); assert abs(b / a - 1) < 0.05, (a, b); assert 1.7 < c / b < 2.3, (b, c)" "$a" "$b" "$c" ||
  fail "the probe's figures are not what the prediction used"

echo '{"not": "a probe"}' >"$tmp/bad.json"
set +e
"$wb" --catalog "$root" predict 01 "$sol" --ceilings "$tmp/bad.json" >"$tmp/bad.out" 2>&1
rc=$?
set -e
[ "$rc" = 4 ] || fail "a file without ceilings should be a usage error (exit 4), got $rc"
grep -q "ceilings" "$tmp/bad.out" || fail "the error should say what is missing"
echo ok
