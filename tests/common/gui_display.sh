# Sourced by tests/cli/gui_*.sh. `gui_setup WIDTHxHEIGHT` gives the real window a display (the one
# set, else an Xvfb of that size on a display number it picks itself, so tests run side by side),
# Mesa's software OpenGL, and $tmp, a temporary folder removed with the Xvfb when the script exits.
gui_setup() {
  tmp=$(mktemp -d)
  xvfb=
  trap 'rm -rf "$tmp"; [ -n "$xvfb" ] && kill "$xvfb" 2>/dev/null || true' EXIT
  if [ -z "${DISPLAY:-}" ]; then
    if ! command -v Xvfb >/dev/null; then echo "skipped: no DISPLAY and no Xvfb"; exit 0; fi
    # -noreset: a server that resets when its last client leaves refuses connections for a
    # moment, and a script that opens a second window right after the first would meet that.
    Xvfb -displayfd 3 -noreset -screen 0 "${1}x24" 3>"$tmp/display" >/dev/null 2>&1 &
    xvfb=$!
    for _ in $(seq 100); do [ -s "$tmp/display" ] && break; sleep 0.1; done
    [ -s "$tmp/display" ] || { echo "Xvfb did not start"; exit 1; }
    export DISPLAY=":$(cat "$tmp/display")"
  fi
  export LIBGL_ALWAYS_SOFTWARE=1
}
