#!/usr/bin/env bash
# Checks every kernel of bench/perfmodel/corpus.toml on the PTX simulator:
#   warpbook check PUZZLE FILE --backend sim   (exit 0 = every case passed)
# and prints a pass/fail table with each check's exit code and wall time.
#
# Usage: bench/perfmodel/check_corpus_sim.sh [BUILD_DIR] [MANIFEST]
#   BUILD_DIR  holds the warpbook binary (default: build)
#   MANIFEST   the corpus manifest (default: bench/perfmodel/corpus.toml)
# Paths are relative to the repository root; the script runs from there. Exit status: 0 when every
# entry passes, 1 otherwise. Set WARPBOOK to use another binary.
set -u -o pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
build="${1:-build}"
manifest="${2:-bench/perfmodel/corpus.toml}"
warpbook="${WARPBOOK:-$build/warpbook}"

if [[ ! -x "$warpbook" ]]; then
  echo "no warpbook binary at $warpbook (build the project, or pass BUILD_DIR)" >&2
  exit 2
fi

# One line per entry: id, puzzle, file, limiter (tab-separated), in manifest order.
entries="$(python3 - "$manifest" <<'EOF'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    doc = tomllib.load(f)
ids = set()
for k in doc.get("kernel", []):
    for key in ("id", "puzzle", "file", "limiter", "note"):
        if key not in k:
            sys.exit(f"entry {k.get('id', '?')}: missing key '{key}'")
    if k["id"] in ids:
        sys.exit(f"duplicate id {k['id']}")
    ids.add(k["id"])
    print("\t".join([k["id"], k["puzzle"], k["file"], k["limiter"] or "-"]))
EOF
)" || exit 2

log_dir="$(mktemp -d)"
trap 'rm -rf "$log_dir"' EXIT

printf '%-36s %-24s %-15s %-5s %3s %8s\n' "id" "puzzle" "limiter" "result" "rc" "seconds"
pass=0
fail=0
failed=()
t_all=$(date +%s.%N)
while IFS=$'\t' read -r id puzzle file limiter; do
  [[ -z "$id" ]] && continue
  t0=$(date +%s.%N)
  if [[ -f "$file" ]]; then
    "$warpbook" check "$puzzle" "$file" --backend sim >"$log_dir/$id.log" 2>&1
    rc=$?
  else
    echo "missing file $file" >"$log_dir/$id.log"
    rc=127
  fi
  t1=$(date +%s.%N)
  secs=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
  if [[ $rc -eq 0 ]]; then
    result=PASS
    pass=$((pass + 1))
  else
    result=FAIL
    fail=$((fail + 1))
    failed+=("$id")
  fi
  printf '%-36s %-24s %-15s %-5s %3d %8s\n' "$id" "$puzzle" "$limiter" "$result" "$rc" "$secs"
done <<<"$entries"
t_end=$(date +%s.%N)

echo
echo "passed $pass, failed $fail, of $((pass + fail)) entries in $(python3 -c "print(f'{$t_end - $t_all:.1f}')") s"
for id in "${failed[@]+"${failed[@]}"}"; do
  echo
  echo "---- $id: last lines of its check"
  tail -n 15 "$log_dir/$id.log"
done
[[ $fail -eq 0 ]]
