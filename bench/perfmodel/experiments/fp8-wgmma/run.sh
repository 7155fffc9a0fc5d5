#!/usr/bin/env bash
# Puzzle 33 on Hopper's FP8 wgmma: how often each version passes the puzzle's tolerance, and how
# fast the ones that pass are. Needs an sm_90 GPU and a built warpbook:
#   bash bench/perfmodel/experiments/fp8-wgmma/run.sh BUILD_DIR [RUNS]
set -u
exe=${1:?BUILD_DIR}/warpbook
runs=${2:-24}
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/wgmma-*.cu; do
  pass=0 fail=0
  for _ in $(seq "$runs"); do
    if "$exe" check 33-fp8-gemm "$f" --no-time >/dev/null 2>&1; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  done
  printf '%-28s passed %2d of %d fresh-seed runs; ' "$(basename "$f")" "$pass" "$runs"
  "$exe" check 33-fp8-gemm "$f" 2>&1 | tail -1
done
