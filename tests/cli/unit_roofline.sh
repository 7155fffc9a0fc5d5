#!/usr/bin/env bash
# `warpbook roofline`: the SVG it writes parses as XML (python3's minidom) and holds the datasheet
# roofs, and, where the simulator runs, the solutions' predicted points; the PNG is a PNG; `probe`
# says plainly when there is no GPU. Usage: unit_roofline.sh WARPBOOK SOURCE_ROOT
set -euo pipefail
wb=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$wb" devices >"$tmp/devices" 2>&1 || true

# Roofs only: no attempts in a fresh store, modelled on the L4's datasheet.
"$wb" --catalog "$root" --data-dir "$tmp/data" roofline --backend sim --gpu l4 --svg "$tmp/empty.svg" >"$tmp/out1"
grep -q "no attempts" "$tmp/out1" || fail "an empty store should say there is nothing to draw"
python3 - "$tmp/empty.svg" <<'EOF'
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(sys.argv[1])
lines = [e for e in d.getElementsByTagName("line") if e.getAttribute("class").startswith("roof ")]
assert len(lines) == 5, f"expected the L4's 5 datasheet roofs, got {len(lines)}"
assert all(e.getAttribute("stroke-dasharray") for e in lines), "datasheet roofs must be dashed"
texts = " ".join(t.firstChild.data for t in d.getElementsByTagName("text") if t.firstChild)
assert "300 GB/s" in texts, "the L4's DRAM roof is labelled"
assert "ridge" in texts, "ridge points are labelled"
EOF

# The solutions of puzzles 01-03 on the simulator: predicted points, kept in the store.
if grep -q "^sim:  PTX" "$tmp/devices"; then
  "$wb" --catalog "$root" --data-dir "$tmp/data" roofline 01 02 03 --run --backend sim --no-starters \
    --svg "$tmp/sim.svg" --png "$tmp/sim.png" >"$tmp/out2"
  grep -q "01-vector-add *solution *passed" "$tmp/out2" || fail "01's solution passes on the simulator"
  python3 - "$tmp/sim.svg" <<'EOF'
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(sys.argv[1])
pts = [e for e in d.getElementsByTagName("circle") if e.getAttribute("class") == "point predicted"]
assert len(pts) == 3, f"three predicted solution points, got {len(pts)}"
for p in pts:
    assert 0 < float(p.getAttribute("cx")) < 1000 and 0 < float(p.getAttribute("cy")) < 640
EOF
  head -c 8 "$tmp/sim.png" | od -c | grep -q "P   N   G" || grep -q "no PNG support" "$tmp/out2" || fail "not a PNG"
  # Without --run the same points come back from the store.
  "$wb" --catalog "$root" --data-dir "$tmp/data" roofline 01 --backend sim --svg "$tmp/again.svg" >"$tmp/out3"
  grep -q "01-vector-add *solution" "$tmp/out3" || fail "the stored attempt is drawn again"
fi

# probe without a GPU: exit 4 and a reason (with one, the gpu tests cover it).
if ! grep -q "^cuda: NVIDIA" "$tmp/devices"; then
  set +e
  "$wb" --data-dir "$tmp/data" probe >"$tmp/out4" 2>&1
  rc=$?
  set -e
  [ "$rc" = 4 ] || fail "probe without a GPU should exit 4, not $rc"
  grep -q "no GPU" "$tmp/out4" || fail "probe should say there is no GPU"
fi
echo "ok"
