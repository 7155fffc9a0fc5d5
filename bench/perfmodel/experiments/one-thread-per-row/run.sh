#!/usr/bin/env bash
# One-thread-per-row references against the same kernels with their idle warps kept resident, at
# three block sizes, timed by `warpbook check` and counted by Nsight Compute (README.md here).
#   bash bench/perfmodel/experiments/one-thread-per-row/run.sh BUILD_DIR OUT_DIR
set -u
build=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
mkdir -p "$out/src"
for spec in "09-argmax-rows r09" "03-softmax r03" "14-rmsnorm-residual r14"; do
  set -- $spec
  puzzle=$1 id=$2
  ref=$(ls "$root"/puzzles/$puzzle*/reference.cu)
  for form in exit stay; do
    src=$ref
    [ $form = stay ] && src=$here/$id-stay.cu
    for block in 32 256 1024; do
      f=$out/src/$id-$form-$block.cu
      { echo "// @tune BLOCK=$block"; cat "$src"; } > "$f"
      us=$("$build/warpbook" check "$puzzle" "$f" --backend cuda --json 2>/dev/null |
        python3 -c 'import json,sys; j=json.load(sys.stdin); p=j.get("perf") or {}; t=p.get("timing") or {}; pr=j.get("prediction") or {}; print(t.get("median_us",0), pr.get("us",0))')
      occ=$(ncu --clock-control none --csv --print-units base --metrics \
        sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_elapsed.avg \
        "$build/bench/perfmodel/perf_launch" "$puzzle" "$f" 2>/dev/null |
        python3 -c '
import csv,sys
rows=[r for r in csv.reader(sys.stdin) if len(r)>5]
hdr=rows[0]; m=hdr.index("Metric Name"); v=hdr.index("Metric Value")
print(" ".join(f"{r[m]}={r[v]}" for r in rows[1:]))')
      echo "$id $form BLOCK=$block measured_us,predicted_us= $us | $occ" | tee -a "$out/results.txt"
    done
  done
  "$build/warpbook" compile "$puzzle" "$ref" --cubin "$out/$id.cubin" --arch sm_90 >/dev/null 2>&1 &&
    cuobjdump -sass "$out/$id.cubin" > "$out/$id.sass" 2>&1
done
