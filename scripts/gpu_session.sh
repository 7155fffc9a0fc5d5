#!/usr/bin/env bash
# One call on the GPU machine (../shared/device/README.md): build the headless configuration once
# (incremental when the machine is still warm), then run the named stages, each logging to $OUT.
#   bash scripts/gpu_session.sh STAGE...
# Stages:
#   puzzles   every puzzle's reference, solution and starter, timed (gpu_tests, the puzzles case):
#             the table of solution figures and each solution against its `// measured:` line
#             ($PUZZLES="25 26 ..." keeps only those ids, for a call too short for all of them)
#   lessons   every kernel a lesson ships (lesson 0008's ladder), checked and timed at its puzzle's
#             perf size, each against its `// measured:` line for this GPU (gpu_tests, the lesson
#             kernels case)
#   gpu       every other gpu-labelled test (faults, backend, probe, perf model, libraries, ...)
#   torch     scripts/puzzles_vs_torch.sh: solutions beside PyTorch eager and Triton
#   probe     `warpbook probe` into the default data folder, so later stages score against this
#             GPU's measured ceilings (the puzzles stage probes on its own)
#   check     the reference, solution and starter of each puzzle named in $CHECK (ids), checked
#             and timed one by one (quicker than `puzzles` when only a few are new)
#   tune      `warpbook tune` of the solutions named in $TUNE (puzzle ids, space-separated);
#             $TUNE_ONLY_NN="NAME=V1,V2 ..." narrows puzzle NN's sweep (`tune --only`)
#   variants  every .variants/NN/*.cu (git-ignored, carried): checked and timed as puzzle NN
#   ncu       Nsight Compute's counters for the solutions named in $NCU (puzzle ids, or id=FILE),
#             one launch at the perf size: where the time goes, read off the hardware
#   ctest     every entry of the `gpu` ctest label, one after another, each within 5 minutes
#             (--timeout 300): each entry's time and verdict (docs/gpu-tests.md); $CTEST_ARGS
#             narrows it (`-R REGEX`, `-E REGEX`), $STOP_AFTER ends it that many seconds after the
#             script started
#   attempt   a GPU check of fault 84 stored in a fresh data folder, for the GUI's screenshot of a
#             GPU verdict with the simulator's explanation ($OUT/gpu-attempt.db)
# Needs .deps (carried; see ../shared/device/fetch-deps.sh).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/gpu-session}
build=$root/build-dev
mkdir -p "$out"
export LD_LIBRARY_PATH=$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
step() { echo; echo "==== $* ($(date +%T))"; }
# check_line ID FILE [summary]: `warpbook check` of FILE as puzzle ID on the GPU, as one line:
# verdict, median time, GFLOP/s, speed of light, medal (and the report's summary).
check_line() {
  "$build/warpbook" check "$1" "$2" --json >"$out/check.json" 2>"$out/check.err"
  python3 - "$out/check.json" "${3:-}" "$2" "$out/checks.jsonl" <<'PY' 2>&1 | tail -1
import json, sys
j = json.load(open(sys.argv[1])); p = j.get('perf') or {}; t = p.get('timing') or {}
# Every check kept, one line each (the form bench/perfmodel/validate.py reads: the timing at the
# top level, as bench/perfmodel/measure.py writes it), named by its file.
with open(sys.argv[4], 'a') as f: f.write(json.dumps(dict(j, file=sys.argv[3], timing=t)) + '\n')
print(j.get('verdict'), '%.2f us' % t.get('median_us', 0), '%.1f GFLOP/s' % p.get('gflops', 0),
      '%.1f%% SOL' % (100 * p.get('speed_of_light', 0)), p.get('medal', ''),
      str(j.get('summary') or '')[:150] if sys.argv[2] else '')
PY
}
cd "$root" || exit 4

step build
t0=$(date +%s)
cmake -S "$root" -B "$build" -G Ninja -DWARPBOOK_GUI=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$root/.deps/usr" -DCMAKE_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu" \
  >"$out/build.log" 2>&1 && ninja -C "$build" -j"$(nproc)" warpbook gpu_tests >>"$out/build.log" 2>&1 ||
  { grep -E "error|Error" -A3 "$out/build.log" | head -60; exit 1; }
echo "built in $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
export WARPBOOK_EXE=$build/warpbook

for stage in "$@"; do
  case $stage in
  puzzles)
    step "puzzles on the GPU"
    WARPBOOK_PUZZLES=${PUZZLES:-} "$build/tests/gpu_tests" -tc="every puzzle on the GPU*" >"$out/puzzles.log" 2>&1
    echo "rc $?"
    grep -E "^[0-9][0-9]-.* (reference|solution|starter) " "$out/puzzles.log" | grep -E "solution|FAIL" | cut -c1-130
    grep -E "its header says|off by more|ERROR|short of gold" "$out/puzzles.log" | cut -c1-200 | head -60
    ;;
  lessons)
    step "lesson kernels on the GPU"
    "$build/tests/gpu_tests" -tc="every kernel a lesson ships on the GPU*" >"$out/lessons.log" 2>&1
    echo "rc $?"
    grep -E "lessons/|off by more|ERROR|no lesson kernel" "$out/lessons.log" | cut -c1-200 | head -40
    ;;
  gpu)
    step "the other gpu tests"
    "$build/tests/gpu_tests" -tce="every puzzle on the GPU*" --duration=true >"$out/gpu.log" 2>&1
    echo "rc $?"
    grep -E "ERROR|FAILED|test cases:|assertions:" "$out/gpu.log" | head -40
    echo "longest test cases:"
    grep -E "^[0-9.]+ s: " "$out/gpu.log" | sort -rn | head -8 | cut -c1-110
    for t in "$build"/../tests/cli/gpu_*.sh; do
      [ -e "$t" ] || continue
      bash "$t" "$build/warpbook" "$root" >>"$out/gpu-cli.log" 2>&1 && echo "ok $(basename "$t")" || echo "FAIL $(basename "$t")"
    done
    ;;
  torch)
    step "solutions beside PyTorch and Triton"
    OUT=$out bash scripts/puzzles_vs_torch.sh "$build" >"$out/torch-run.log" 2>&1
    echo "rc $?"
    [ -f "$out/vs_torch.md" ] && cat "$out/vs_torch.md"
    ;;
  probe)
    step "probe"
    "$build/warpbook" probe >"$out/probe.txt" 2>&1
    echo "rc $?"
    grep -E "mma|wgmma|DRAM|FP32" "$out/probe.txt" | head -20
    ;;
  check)
    for id in ${CHECK:-}; do
      for f in puzzles/$id/reference.cu solutions/$id.cu puzzles/$id/starter.cu; do
        printf '%-28s %-14s ' "$id" "$(basename "$f")"
        check_line "$id" "$f" summary
      done
    done | tee "$out/check.txt"
    ;;
  tune)
    for id in ${TUNE:-}; do
      step "tune $id"
      # $TUNE_ONLY_NN (NN: the puzzle's number) narrows the sweep: "BK=32,64 STAGES=2,3".
      only_var="TUNE_ONLY_${id%%-*}"
      # shellcheck disable=SC2086
      "$build/warpbook" tune "$id" "solutions/$id.cu" ${!only_var:+--only ${!only_var}} 2>/dev/null |
        tee "$out/tune-$id.txt" | head -30
    done
    ;;
  variants)
    for f in $(for d in ${VARIANTS:-$(ls .variants)}; do ls .variants/$d/*.cu 2>/dev/null; done); do
      [ -e "$f" ] || continue
      nn=$(basename "$(dirname "$f")")
      id=$(basename puzzles/"$nn"-*)
      printf '%-28s %-40s ' "$id" "$(basename "$f")"
      check_line "$id" "$f"
    done | tee "$out/variants.txt"
    ;;
  ncu)
    ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
    for spec in ${NCU:-}; do
      id=$(basename puzzles/"${spec%%=*}"*); file=solutions/$id.cu; [ "$spec" != "${spec%%=*}" ] && file=${spec#*=}
      step "ncu $id $file"
      # The kernel's name, then the perf sizes as --size arguments (`run` takes the perf inputs).
      read -r kname sizes < <(python3 -c "import tomllib; t=tomllib.load(open('puzzles/$id/puzzle.toml','rb'))
print(t['kernel']['name'], ' '.join('--size %s=%s' % (k, v) for k, v in t['perf'].items() if not isinstance(v, dict)))")
      log=$out/ncu-$id-$(basename "$file" .cu).txt
      # The reference runs first under `run`; the last launch of the kernel's name is the file's.
      "$ncu" --clock-control none --target-processes all -k "regex:^$kname\$" \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
        --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
        --section InstructionStats --section ComputeWorkloadAnalysis \
        --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio" \
        "$build/warpbook" run "$id" "$file" $sizes --no-time >"$log" 2>&1
      rc=$?
      launches=$(grep -c '^  [a-z_0-9]* (' "$log")
      echo "rc $rc ($launches launches profiled) -> $(basename "$log")"
      # Stall reasons of the file's launch (warps stalled per issued instruction), largest first.
      awk '/^  [a-z_0-9]+ \(/{n++} n && /issue_stalled/ {print n, $1, $NF}' "$log" |
        awk -v last="$launches" '$1 == last && $3 + 0 > 0.05 {print $3, $2}' |
        sort -rn | head -8 | sed 's/smsp__average_warps_issue_stalled_/  stall /; s/_per_issue_active.ratio//'
      grep -E "Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Issue Slots Busy|No Eligible|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Stall|Executed Ipc A" "$log" | tail -16
    done
    ;;
  ctest)
    step "the gpu label, entry by entry"
    # -V keeps every entry's output, passed or not: the `// measured:` lines to paste are in it.
    # $CTEST_ARGS narrows it (e.g. `-R gpu_puzzles` or `-E gpu_puzzles`) for a call too short for
    # the whole label; $STOP_AFTER (seconds since this script started, the build counted) ends it
    # in time for this summary to come back.
    stop=()
    [ -n "${STOP_AFTER:-}" ] && stop=(--stop-time "$(date -d "+$((STOP_AFTER - SECONDS)) sec" +%H:%M:%S)")
    # shellcheck disable=SC2086
    ctest --test-dir "$build" -L gpu --timeout 300 -j1 -V "${stop[@]}" ${CTEST_ARGS:-} >"$out/ctest.log" 2>&1
    echo "rc $?"
    # ctest's own line per entry: "1/17 Test #5: gpu_puzzles_01_09 ....   Passed  123.45 sec".
    grep -E "^ *[0-9]+/[0-9]+ Test +#[0-9]+:" "$out/ctest.log" | sed -E 's/ +\.+ */ /' | cut -c1-110
    grep -E "tests passed|Total Test time" "$out/ctest.log"
    grep -E "^[0-9]+: +[0-9][0-9]-.*: // measured:" "$out/ctest.log" | sed -E 's/^[0-9]+: +//' | sort -u | head -40
    ;;
  attempt)
    step "a GPU verdict explained by the simulator, stored for the GUI"
    data=/tmp/wb-attempt
    rm -rf "$data" && mkdir -p "$data"
    # Checked as the window would check it: workspace/01-vector-add.cu in the data folder.
    mkdir -p "$data/workspace"
    cp tests/faults/84-shared-into-neighbour.cu "$data/workspace/01-vector-add.cu"
    (cd "$data" && "$build/warpbook" --catalog "$root" --data-dir "$data" check 01-vector-add \
      workspace/01-vector-add.cu | tee "$out/attempt.txt" | head -20)
    cp "$data/warpbook.db" "$out/gpu-attempt.db"
    ;;
  *) echo "unknown stage $stage" ;;
  esac
done
