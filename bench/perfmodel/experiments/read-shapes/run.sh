#!/usr/bin/env bash
# Times the read-shape diagnostics beside the solutions they are about, alternating, two rounds,
# on one GPU in one call (machines differ by ~2% on DRAM-bound kernels: compare within a call).
#   bash bench/perfmodel/experiments/read-shapes/run.sh BUILD_DIR
set -uo pipefail
wb=${1:?build dir}/warpbook
here=bench/perfmodel/experiments/read-shapes
tmp=$(mktemp -d)
# A copy of FILE with its @tune lines (or a #define) replaced: NAME FILE SED-EXPR
variant() { sed "$3" "$2" >"$tmp/$1.cu"; echo "$tmp/$1.cu"; }
g32="32-w4a16-gemv --size M=57344 --size K=8192"
g24="24-decode-attention --size B=64 --size Hq=32 --size Hkv=8 --size L=8192 --size D=128"
c=bench/perfmodel/experiments/w4a16-bare-reads
f=$here/decode-flat.cu
whole="s/^#define CONTIG 0/#define CONTIG 1/"
# name, file: in the order they run, each round
rows=(
  32-solution solutions/32-w4a16-gemv.cu
  32-solution-loads $c/solution-loads.cu
  32-warp-rows $c/warp-rows.cu
  32-contiguous $c/contiguous.cu
  32-empty $here/gemv-empty.cu
  24-solution solutions/24-decode-attention.cu
  24-bare-reads-ring bench/perfmodel/experiments/decode-bare-reads/bare-reads.cu
  24-flat-contiguous "$(variant whole $f "$whole")"
  24-flat-pieces $f
  24-flat-pieces-cp.async "$(variant cpa $f "s/^#define CPASYNC 0/#define CPASYNC 1/")"
  24-flat-pieces-4-blocks "$(variant cap $f "s/^#define CAP4 0/#define CAP4 1/")"
  24-flat-pieces-4-blocks-unr8 "$(variant cap8 $f "s/^#define CAP4 0/#define CAP4 1/; s/^#define UNR 4/#define UNR 8/")"
)
for round in 1 2; do
  for ((i = 0; i < ${#rows[@]}; i += 2)); do
    name=${rows[i]} file=${rows[i + 1]}
    case $name in 32-*) args=$g32 ;; *) args=$g24 ;; esac
    # shellcheck disable=SC2086
    line=$("$wb" run ${args%% *} "$file" ${args#* } --time-wrong --json 2>/dev/null |
      python3 -c "import json,sys; j=json.load(sys.stdin); p=j.get('perf') or {}; t=p.get('timing') or {}
print('%9.2f us %7.1f GB/s %5.1f%% SOL' % (t.get('median_us',0), p.get('gbps',0), 100*p.get('speed_of_light',0)))" 2>&1)
    printf 'round %d  %-32s %s\n' "$round" "$name" "$line"
  done
done
rm -rf "$tmp"
