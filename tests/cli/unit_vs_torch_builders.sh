#!/usr/bin/env bash
# scripts/puzzles_vs_torch.py times each solution beside PyTorch on the GPU machine, one row per
# puzzle, each row built from the puzzle's size names. A puzzle whose sizes are renamed (Sq and Sk
# for S) loses its row only there, after the device time is spent; this catches it here, without
# torch. Usage: unit_vs_torch_builders.sh WARPBOOK SOURCE_ROOT
set -euo pipefail
root=$2
python3 "$root/scripts/puzzles_vs_torch.py" --check-builders
# And the check can fail: a copy of the script whose row for puzzle 01 takes a size it does not have.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts"
ln -s "$root/puzzles" "$tmp/puzzles"
sed 's/1: (b01, {"n"})/1: (b01, {"n", "m"})/' "$root/scripts/puzzles_vs_torch.py" >"$tmp/scripts/puzzles_vs_torch.py"
if out=$(python3 "$tmp/scripts/puzzles_vs_torch.py" --check-builders); then
  echo "a row whose sizes differ from its puzzle's passed:"; echo "$out"; exit 1
fi
grep -q "01-vector-add \[perf\]: \['n'\], b01 takes \['m', 'n'\]" <<<"$out" || { echo "$out"; exit 1; }
echo "ok: a mismatched row is named"
