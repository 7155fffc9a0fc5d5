#!/usr/bin/env bash
# The roofline's measurements on the GPU machine (../shared/device/README.md): build the headless
# configuration, run the probe suite (twice: the table, then JSON), PyTorch's copy and bf16 matmul,
# the gpu probe test, and puzzles 01-03's solutions and starters for the chart. Everything worth
# keeping goes to $OUT: roofline-h200.svg, probe.json, torch.json, warpbook.db, run.log.
# Usage, from the repository root there:  bash scripts/roofline_h200.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/roofline-out}
data=/tmp/wb-roofline-data
mkdir -p "$out"
rm -rf "$data"
export LD_LIBRARY_PATH=$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
build=$root/build-dev
step() { echo; echo "==== $*"; }

step build
t0=$(date +%s)
cmake -S "$root" -B "$build" -G Ninja -DWARPBOOK_GUI=OFF -DCMAKE_PREFIX_PATH="$root/.deps/usr" \
  -DCMAKE_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu" >"$out/build.log" 2>&1 &&
  ninja -C "$build" -j"$(nproc)" warpbook gpu_tests unit_tests >>"$out/build.log" 2>&1 ||
  { grep -E "error|Error" -A3 "$out/build.log" | head -60; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
wb="$build/warpbook --data-dir $data"

step the card as found
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
$wb devices

step warpbook probe
/usr/bin/time -f "probe: %e s wall" $wb probe --variants
/usr/bin/time -f "probe --json: %e s wall" $wb probe --json >"$out/probe.json"

step PyTorch
python3 "$root/scripts/torch_ceilings.py" >"$out/torch.json" && cat "$out/torch.json"

step gpu probe test
"$build/tests/gpu_tests" -tc="*probe*"

step puzzles 01-03: solutions and starters on the H200
$wb roofline 01 02 03 --run --svg "$out/roofline-h200.svg"
$wb devices
cp "$data/warpbook.db" "$out/" 2>/dev/null

step unit tests
"$build/tests/unit_tests" | tail -3

step probe table
python3 "$root/scripts/torch_ceilings.py" --compare "$out/probe.json" "$out/torch.json"
