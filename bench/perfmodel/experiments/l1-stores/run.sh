#!/usr/bin/env bash
# Builds l1stores.cu and l1sets.cu, shows their loads and stores in SASS, times them, then runs
# each once a launch under Nsight Compute: each launch's load hit rate in the L1 and the sectors
# it read from the L2.
#   bash run.sh [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")"
out=${1:-/tmp}
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for prog in l1stores l1sets; do
  nvcc -O3 -arch=sm_90 -o /tmp/$prog $prog.cu || exit 1
  cuobjdump -sass /tmp/$prog | grep -E "LDG|STG" | sed 's/^ *//' | head -4
  /tmp/$prog | tee "$out/$prog-time.txt"
  "$ncu" --clock-control none --csv --metrics \
    l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_op_read.sum \
    /tmp/$prog once >"$out/$prog-ncu.csv" 2>&1
  # Launch i of the Nsight run is the i-th line the program printed about a launch.
  python3 - "$out/$prog-ncu.csv" "$out/$prog-time.txt" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, rows = rows[0], rows[1:]
iid, name, val = head.index('ID'), head.index('Metric Name'), head.index('Metric Value')
labels = [l.split('  ')[0] for l in open(sys.argv[2]) if ' B=' in l or l.startswith('B=')]
by = {}
for r in rows: by.setdefault(int(r[iid]), {})[r[name]] = float(r[val].replace(',', ''))
for i, m in sorted(by.items()):
    print(f"{labels[i] if i < len(labels) else i:14s} L1 load hit "
          f"{m.get('l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct', -1):6.2f}%  "
          f"L2 sectors read {m.get('lts__t_sectors_op_read.sum', 0) / 1e6:8.2f} M  "
          f"load sectors {m.get('l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum', 0) / 1e6:8.2f} M")
PY
done
