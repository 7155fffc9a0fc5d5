#!/usr/bin/env bash
# Every picture a lesson shows is legible where the window shows it: its smallest text at least the
# body text's 15 px in its PNG (the window never shows a picture smaller than that), no line
# through a label, no label on another or past the edge, no wider than the lesson column
# (assets/lessons/check_pictures.py). The check is first
# shown a picture with each fault, so that it is known to catch them. Usage: gui_lesson_pictures.sh WARPBOOK SOURCE_ROOT
set -euo pipefail
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A PNG header is all the check reads: the signature, IHDR's length and name, width, height.
png() {  # png WIDTH
  printf '\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR' >"$tmp/r/assets/lessons/p.png"
  python3 -c "import struct,sys; sys.stdout.buffer.write(struct.pack('>II', $1, 100))" \
    >>"$tmp/r/assets/lessons/p.png"
}

# A lesson with one picture, made with the given SVG body and PNG width (the SVG is 340 wide, or
# SVG_WIDTH); the check must refuse it.
bad() {  # bad NAME PNG_WIDTH SVG_BODY WORDS [SVG_WIDTH]
  rm -rf "$tmp/r" && mkdir -p "$tmp/r/lessons/0001-x" "$tmp/r/assets/lessons"
  # Brackets in the alt text, as a lesson writes "acc[D]": the picture is still found.
  echo "![a picture of acc[D]](assets/lessons/p.png)" >"$tmp/r/lessons/0001-x/lesson.md"
  printf '<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="100">%s</svg>\n' "${5:-340}" "$3" \
    >"$tmp/r/assets/lessons/p.svg"
  png "$2"
  if python3 "$root/assets/lessons/check_pictures.py" "$tmp/r" >"$tmp/out" 2>&1; then
    echo "FAIL: the check passed $1:"; cat "$tmp/out"; exit 1
  fi
  grep -q "$4" "$tmp/out" || { echo "FAIL: $1 without '$4':"; cat "$tmp/out"; exit 1; }
  echo "refused $1: $(head -1 "$tmp/out")"
}
text='<text x="20" y="50" font-family="DejaVu Sans" font-size="15">0.11 ms</text>'
bad "11 px text" 340 '<text x="20" y="50" font-family="DejaVu Sans" font-size="11">0.11 ms</text>' "px high"
bad "15 px text shrunk to 300 px" 300 "$text" "px high"
bad "a dashed line through a label" 340 "$text"'<line x1="40" y1="10" x2="40" y2="90" stroke-dasharray="5,4"/>' "runs through '0.11 ms'"
bad "a polyline through a label" 340 "$text"'<polyline points="0,45 100,45"/>' "runs through"
bad "a label past the edge" 340 '<text x="320" y="50" font-family="DejaVu Sans" font-size="15">0.11 ms</text>' "past the picture"
bad "two labels on one another" 340 "$text"'<text x="30" y="55" font-family="DejaVu Sans" font-size="15">x</text>' "overlap"
bad "a picture wider than the lesson column" 400 "$text" "wider than the lesson column" 400
# The same label with the line beside it passes.
rm -f "$tmp/r/assets/lessons/p.svg"
printf '<svg xmlns="http://www.w3.org/2000/svg" width="340" height="100">%s%s</svg>\n' "$text" \
  '<line x1="90" y1="10" x2="90" y2="90"/>' >"$tmp/r/assets/lessons/p.svg"
png 340
python3 "$root/assets/lessons/check_pictures.py" "$tmp/r" || { echo "FAIL: a clean picture refused"; exit 1; }

# The lessons' own pictures.
python3 "$root/assets/lessons/check_pictures.py" "$root"
