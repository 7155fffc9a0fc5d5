#!/usr/bin/env bash
# Reads the hardware counters of the Nsight Compute comparison set on a GPU and prints them beside
# the simulator's (bench/ncu/ncu_counters.cpp says which kernels and sizes).
#   bench/ncu/run.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
out="${2:-$build/bench/ncu}"
mkdir -p "$out"
cmake --build "$build" --target ncu_counters >/dev/null
exe="$build/bench/ncu/ncu_counters"
m=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
m=$m,smsp__inst_executed.sum
"$exe" --gpu | tee "$out/sim_counters.txt"
ncu --clock-control none --csv --print-units base --metrics "$m" "$exe" --gpu >"$out/ncu.csv" 2>"$out/ncu.err" || { cat "$out/ncu.err"; exit 1; }
# One line per launch: kernel, metric, value.
python3 - "$out/ncu.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
h = rows[hdr]
ki, mi, vi, ii = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("ID")
for r in rows[hdr + 1:]:
    if len(r) > vi:
        print(f"{r[ii]:>3} {r[ki][:20]:20} {r[mi]:58} {r[vi]}")
PY
