#!/usr/bin/env bash
# The window's speed: first frame after start, frames per second with a
# 1000-point roofline history and a 500-line file open, and resident memory. Under Xvfb with
# Mesa's software OpenGL when there is no display, so the figures are a floor: a real GPU draws
# faster.   Usage: scripts/bench-gui.sh [build/warpbook]
set -euo pipefail
cd "$(dirname "$0")/.."
exe=${1:-build/warpbook}
if [ -z "${DISPLAY:-}" ]; then
  Xvfb :93 -noreset -screen 0 1600x1000x24 >/dev/null 2>&1 &
  xvfb=$!
  trap 'kill $xvfb 2>/dev/null || true' EXIT
  export DISPLAY=:93
  sleep 1
fi
export LIBGL_ALWAYS_SOFTWARE=${LIBGL_ALWAYS_SOFTWARE:-1}
tmp=$(mktemp -d)
cat > "$tmp/bench.txt" <<SCRIPT
wait-hello 60
open puzzle 01-vector-add
load solutions/01-vector-add.cu
run
wait-result 300
wait-idle 300
bench-load 500
bench-points 1000
frames 30
print 500-line file, 1000 roofline points, the puzzle statement and the lesson open:
bench-frames 600
state $tmp/state.json
quit
SCRIPT
"$exe" --data-dir "$tmp/data" --script "$tmp/bench.txt" --window-size 1600x1000 --no-vsync | grep -v "^script:.*wrote"
python3 - "$tmp/state.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"first frame: {s['first_frame_ms']:.0f} ms after the window code started, "
      f"{s['first_frame_since_exec_ms']:.0f} ms after exec")
print(f"frames: {s['fps']:.0f} per second ({s['frame_ms']:.2f} ms each), "
      f"{s['roofline_points']} roofline points, {s['editor_lines']} lines in the editor")
print(f"memory: {s['rss_kib']/1024:.0f} MiB resident, {s['peak_rss_kib']/1024:.0f} MiB at the peak")
PY
rm -rf "$tmp"
