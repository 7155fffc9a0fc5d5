#!/usr/bin/env bash
# Builds Warpbook and runs every test that needs no GPU (labels unit, sim, gui).
# The GUI tests open a real window under Xvfb, started here when no display is set.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build --preset default
if [ -z "${DISPLAY:-}" ] && command -v Xvfb >/dev/null; then
  # -noreset: the GUI tests open and close windows one after another, side by side; a server that
  # resets when its last client leaves refuses the next connection for a moment.
  Xvfb :97 -noreset -screen 0 1600x1000x24 >/dev/null 2>&1 &
  xvfb_pid=$!
  trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
  export DISPLAY=:97
  sleep 1
fi
export LIBGL_ALWAYS_SOFTWARE=1
ctest --preset default -j2 "$@"
