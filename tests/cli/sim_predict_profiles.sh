#!/usr/bin/env bash
# Which of a GPU profile's figures are measured and which come from datasheets, and how far the
# model is from measured times: `warpbook devices` lists every profile with its evidence, and
# `warpbook predict --gpu KEY` says it in its text and its JSON. The H200 and the H100 are
# validated; an A100 is not, and its tensor-core figure is the datasheet's.
# Usage: sim_predict_profiles.sh WARPBOOK SOURCE_ROOT
set -euo pipefail
wb=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
sol=$root/solutions/01-vector-add.cu

"$wb" --catalog "$root" devices >"$tmp/devices.txt" 2>&1 || fail "devices failed"
for key in h200 h100-sxm a100-80gb a100-40gb l40s rtx4090 rtx3090 l4 t4; do
  grep -qE "^  $key +.*\((validated|not validated)\)" "$tmp/devices.txt" || fail "devices does not list $key"
done
grep -qE "^  h100-sxm .*\(validated\)" "$tmp/devices.txt" || fail "the H100 should be validated"
grep -qE "^  l4 .*\(not validated\)" "$tmp/devices.txt" || fail "the L4 should not be validated"

"$wb" --catalog "$root" predict 01 "$sol" --gpu a100-80gb --json >"$tmp/a100.json"
"$wb" --catalog "$root" predict 01 "$sol" --gpu h100-sxm --json >"$tmp/h100.json"
python3 - "$tmp/a100.json" "$tmp/h100.json" <<'PY'
import json, sys
a, h = (json.load(open(f)) for f in sys.argv[1:])
for j in (a, h):
    assert j["ok"], j.get("error")
    groups = {g["name"]: g["origin"] for g in j["profile"]["parameters"]}
    assert len(groups) >= 8 and all(groups.values()), groups
    assert j["profile"]["accuracy"], j["profile"]
assert a["profile"]["validated"] is False and h["profile"]["validated"] is True
ga = {g["name"]: g["origin"] for g in a["profile"]["parameters"]}
gh = {g["name"]: g["origin"] for g in h["profile"]["parameters"]}
assert ga["tensor cores"] == "datasheet" and ga["DRAM bandwidth"] == "scaled", ga
assert gh["DRAM bandwidth"] == "measured" and gh["tensor cores"] == "measured", gh
assert "Not validated" in a["profile"]["accuracy"] and "H100" in h["profile"]["accuracy"]
PY
"$wb" --catalog "$root" predict 01 "$sol" --gpu l4 >"$tmp/l4.txt"
grep -q "the NVIDIA L4 profile: Not validated" "$tmp/l4.txt" || fail "predict's text should say the L4 profile is not validated"
grep -q "datasheet: tensor cores" "$tmp/l4.txt" || fail "predict's text should name the datasheet figures"
echo ok
