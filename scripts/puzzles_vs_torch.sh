#!/usr/bin/env bash
# The performance bars of puzzles 01-46 on the GPU machine: measure the ceilings (`probe`, so that
# medals and speed of light use this card's), check and time every solution, then time PyTorch's
# eager equivalents and the Triton versions (bench/triton/kernels.py) in the same run and tabulate
# all three (scripts/puzzles_vs_torch.py).
# Usage, from the repository root there:  bash scripts/puzzles_vs_torch.sh BUILD_DIR
# BUILD_DIR holds a built `warpbook`. $OUT (default /tmp/vs-torch) gets only what is worth bringing
# back: run.log, probe.json, checks.json (the reports, slimmed), vs_torch.md and vs_torch.json. The
# full reports stay in $WORK/checks (default /tmp/wb-vs-torch), beside a fresh data dir.
# WB_BACKEND=sim runs the checks on the simulator instead (a dry run of the script; no ceilings).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: bash scripts/puzzles_vs_torch.sh BUILD_DIR}" && pwd) || exit 4
out=${OUT:-/tmp/vs-torch}
work=${WORK:-/tmp/wb-vs-torch}
backend=${WB_BACKEND:-cuda}
data=$work/data
checks=$work/checks
rm -rf "$work"
mkdir -p "$data" "$checks" "$out"
deps=$root/.deps/usr/lib/x86_64-linux-gnu
[ -d "$deps" ] && export LD_LIBRARY_PATH=$deps:${LD_LIBRARY_PATH:-}
cd "$root" || exit 4
wb() { "$build/warpbook" --data-dir "$data" "$@"; }
step() { echo; echo "==== $*"; }
t_start=$(date +%s)
{

step the card
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
  --format=csv 2>&1

step "probe (the ceilings that medals and speed of light use)"
if [ "$backend" = cuda ]; then
  wb probe --json >"$out/probe.json" || echo "probe failed (rc $?): scores fall back to the datasheet"
  wb devices
fi

rows=${ROWS:-$(seq -s " " 1 46)} # ROWS="20 21" for a few (numbers without a solution are skipped)
step "checks: solutions $rows (--backend $backend)"
for dir in puzzles/[0-9][0-9]-*/; do
  id=$(basename "$dir")
  num=$((10#${id%%-*}))
  sol=solutions/$id.cu
  # the puzzles with a row in the table (BUILDERS in puzzles_vs_torch.py)
  case " $rows " in *" $num "*) ;; *) continue ;; esac
  [ -f "$sol" ] || continue
  t0=$(date +%s.%N)
  wb check "$id" "$sol" --backend "$backend" --json >"$checks/$id.json" 2>"$checks/$id.err"
  rc=$?
  summary=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"])' "$checks/$id.json" 2>/dev/null ||
    tail -c 300 "$checks/$id.err")
  printf '%-22s rc=%d %5.1f s  %s\n' "$id" "$rc" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')" "$summary"
done

step "Triton: bench/triton/kernels.py on every puzzle's cases, against float64 (WB_TRITON_CASES=0 skips)"
if [ "$backend" = cuda ] && [ "${WB_TRITON_CASES:-1}" = 1 ]; then
  python3 bench/triton/test_kernels.py --only "$(echo $rows | tr ' ' ,)" || echo "some Triton cases failed (rc $?): the lines above say which"
fi

step "PyTorch and Triton"
if [ "$backend" = cuda ]; then
  python3 scripts/puzzles_vs_torch.py "$checks" --out "$out" --probe "$out/probe.json" --only "$(echo $rows | tr ' ' ,)"
else
  python3 scripts/puzzles_vs_torch.py "$checks" --out "$out" --selftest
fi
echo "exit $?; $(( $(date +%s) - t_start )) s in all; in $out: $(cd "$out" && echo *)"
} 2>&1 | tee "$out/run.log"
