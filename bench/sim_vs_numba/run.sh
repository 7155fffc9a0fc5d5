#!/usr/bin/env bash
# Runs the benchmark: numba's CUDA simulator and Warpbook's PTX simulator on the same three
# kernels, then prints the table with the ratios and the one-core throughput figure.
#   bench/sim_vs_numba/run.sh [BUILD_DIR]     (default: build, a configured Warpbook build tree)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
out="$build/bench/sim_vs_numba"
cmake --build "$build" --target sim_bench >/dev/null
py=/usr/bin/python3   # Debian's python3-numba lives there
[ -x "$py" ] || py=python3
echo "numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1):"
NUMBA_ENABLE_CUDASIM=1 "$py" "$here/numba_bench.py" --reps 3 | tee "$out/numba.json"
echo
"$out/sim_bench" "$out/numba.json"
