#!/usr/bin/env bash
# Each puzzle README's "## The same in Triton" section shows code that really runs: its ```python
# block must appear verbatim in bench/triton/kernels.py (which the GPU run checks and times). The
# section is required for puzzles 01-18 and checked wherever else it appears; it holds a
# @triton.jit kernel and comes before "## What it teaches". A README edited without the file (or
# the file without the README) fails here. Usage: unit_triton_readmes.sh WARPBOOK SOURCE_ROOT
set -euo pipefail
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() {  # check PUZZLES_DIR KERNELS_FILE: exit 0 when every section is in the file
  python3 - "$1" "$2" <<'PY'
import os, re, sys
puzzles, kernels = sys.argv[1], sys.argv[2]
src = open(kernels).read()
bad, seen = [], 0
for d in sorted(os.listdir(puzzles)):
    m = re.match(r"(\d\d)-", d)
    readme = os.path.join(puzzles, d, "README.md")
    if not m or not os.path.exists(readme):
        continue
    text = open(readme).read()
    n = text.count("\n## The same in Triton\n")
    if n == 0:
        if 1 <= int(m.group(1)) <= 18:
            bad.append(f"{d}: no '## The same in Triton' section")
        continue
    if n > 1:
        bad.append(f"{d}: {n} '## The same in Triton' sections")
        continue
    seen += 1
    sec = text.split("\n## The same in Triton\n", 1)[1]
    sec = sec.split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)\n```", sec, re.S)
    if not blocks:
        bad.append(f"{d}: the section has no ```python block")
        continue
    if "@triton.jit" not in blocks[0]:
        bad.append(f"{d}: the first python block has no @triton.jit kernel")
    if blocks[0] not in src:
        lines = blocks[0].splitlines()
        first = next((l for l in lines if l not in src), lines[0] if lines else "")
        bad.append(f"{d}: the python block is not verbatim in {os.path.basename(kernels)} (first line not there: {first!r})")
    if "\n## What it teaches" in text and text.index("\n## The same in Triton\n") > text.index("\n## What it teaches"):
        bad.append(f"{d}: the section comes after '## What it teaches'")
for b in bad:
    print("FAIL:", b, file=sys.stderr)
print(f"{seen} README sections checked against {kernels}")
sys.exit(1 if bad else 0)
PY
}

check "$root/puzzles" "$root/bench/triton/kernels.py" || { echo "FAIL: README code and bench/triton/kernels.py differ" >&2; exit 1; }

# The check itself must catch a drift: change one line of the file and expect a failure.
sed 's/BLOCK=2048, num_warps=8)$/BLOCK=1024, num_warps=8)/' "$root/bench/triton/kernels.py" >"$tmp/kernels.py"
! cmp -s "$tmp/kernels.py" "$root/bench/triton/kernels.py" || { echo "FAIL: the drift test changed nothing" >&2; exit 1; }
if check "$root/puzzles" "$tmp/kernels.py" 2>/dev/null >/dev/null; then
  echo "FAIL: a kernels.py that differs from a README still passed" >&2
  exit 1
fi
