#!/usr/bin/env python3
"""Checks the lessons' pictures as the window shows them.

    python3 assets/lessons/check_pictures.py [ROOT]

For every picture a lesson shows (lessons/*/lesson.md, ![...](assets/lessons/NAME.png)), from its
source NAME.svg: the smallest text, at the size the PNG is drawn, is at least the window's body
text (15 px: the window never shows a picture smaller than its PNG), no line of the picture (a
line, polyline or arrow shaft) runs through a text's box, no two texts overlap, and no text runs
past the picture's edge, and the PNG is no wider than the lesson column (340 px: the window at
1280 x 800 shows it whole, without scrolling sideways). Text boxes are measured with the DejaVu
fonts the pictures name. Prints each problem and exits 1 when there is one.
"""
import glob
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET

BODY_PX = 15  # the window's body text at scale 1 (app/gui/settings.hpp's font_size)
COLUMN_PX = 340  # the lesson column's width in the window at 1280 x 800 (docs/lessons.md)
FONT_DIRS = ["/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/TTF", "/usr/share/fonts/dejavu"]


class Font:
    """Advance widths of a TrueType font: enough of cmap (format 4) and hmtx to measure a line."""

    def __init__(self, path):
        data = open(path, "rb").read()
        ntables = struct.unpack(">H", data[4:6])[0]
        tables = {}
        for i in range(ntables):
            tag, _, off, ln = struct.unpack(">4sIII", data[12 + 16 * i:28 + 16 * i])
            tables[tag.decode()] = (off, ln)
        head = tables["head"][0]
        self.em = struct.unpack(">H", data[head + 18:head + 20])[0]
        hhea = tables["hhea"][0]
        nmetrics = struct.unpack(">H", data[hhea + 34:hhea + 36])[0]
        hmtx = tables["hmtx"][0]
        self.adv = [struct.unpack(">H", data[hmtx + 4 * i:hmtx + 4 * i + 2])[0] for i in range(nmetrics)]
        self.cmap = {}
        cmap = tables["cmap"][0]
        for i in range(struct.unpack(">H", data[cmap + 2:cmap + 4])[0]):
            plat, enc, off = struct.unpack(">HHI", data[cmap + 4 + 8 * i:cmap + 12 + 8 * i])
            sub = cmap + off
            if plat == 3 and enc == 1 and struct.unpack(">H", data[sub:sub + 2])[0] == 4:
                self._format4(data, sub)
                break

    def _format4(self, data, sub):
        segx2 = struct.unpack(">H", data[sub + 6:sub + 8])[0]
        ends = sub + 14
        starts = ends + segx2 + 2
        deltas = starts + segx2
        ranges = deltas + segx2
        for s in range(segx2 // 2):
            end, start = (struct.unpack(">H", data[p + 2 * s:p + 2 * s + 2])[0] for p in (ends, starts))
            delta = struct.unpack(">h", data[deltas + 2 * s:deltas + 2 * s + 2])[0]
            roff = struct.unpack(">H", data[ranges + 2 * s:ranges + 2 * s + 2])[0]
            for c in range(start, min(end, 0xFFFE) + 1):
                if roff == 0:
                    g = (c + delta) & 0xFFFF
                else:
                    p = ranges + 2 * s + roff + 2 * (c - start)
                    g = struct.unpack(">H", data[p:p + 2])[0]
                    g = (g + delta) & 0xFFFF if g else 0
                self.cmap[c] = g

    def width(self, text, size):
        units = 0
        for ch in text:
            g = self.cmap.get(ord(ch), 0)
            units += self.adv[min(g, len(self.adv) - 1)]
        return units * size / self.em


def find_font(name):
    for d in FONT_DIRS:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    sys.exit(f"check_pictures: no {name} (Debian: fonts-dejavu-core)")


_FONTS = {}


def text_box(s, size, x, y, anchor="start", mono=False, bold=False):
    """The box (x0, y0, x1, y1) a text drawn at (x, y) covers, as DejaVu draws it."""
    if not _FONTS:
        for m in (False, True):
            for b in (False, True):
                _FONTS[(m, b)] = Font(find_font("DejaVuSans" + ("Mono" if m else "") + ("-Bold" if b else "") + ".ttf"))
    w = _FONTS[(mono, bold)].width(s, size)
    x0 = x - (w if anchor == "end" else w / 2 if anchor == "middle" else 0)
    # Capitals and digits stand about 0.73 em above the baseline in DejaVu; descenders reach 0.24
    # below.
    return (x0, y - 0.73 * size, x0 + w, y + 0.24 * size)


def _clip(seg, box):
    """The parameters [t0, t1] of the segment inside the box, or None (Liang-Barsky)."""
    x0, y0, x1, y1 = seg
    bx0, by0, bx1, by1 = box
    if bx0 >= bx1 or by0 >= by1:
        return None
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x0 - bx0), (dx, bx1 - x0), (-dy, y0 - by0), (dy, by1 - y0)):
        if p == 0:
            if q < 0:
                return None
        else:
            t = q / p
            if p < 0:
                t0 = max(t0, t)
            else:
                t1 = min(t1, t)
            if t0 > t1:
                return None
    return t0, t1


def crosses(seg, box, inset=1.0):
    """True when the segment runs through the box shrunk by `inset`."""
    return _clip(seg, (box[0] + inset, box[1] + inset, box[2] - inset, box[3] - inset)) is not None


def outside_boxes(seg, boxes, pad=3.0):
    """The pieces ((x, y), (x, y)) of the segment left when each box it crosses, grown by `pad`, is
    cut out of it."""
    cuts = []
    for b in boxes:
        if crosses(seg, b):
            c = _clip(seg, (b[0] - pad, b[1] - pad, b[2] + pad, b[3] + pad))
            if c:
                cuts.append(c)
    x0, y0, x1, y1 = seg
    at = lambda t: (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t)
    pieces, t = [], 0.0
    for c0, c1 in sorted(cuts):
        if c0 > t:
            pieces.append((at(t), at(c0)))
        t = max(t, c1)
    if t < 1:
        pieces.append((at(t), at(1.0)))
    return pieces


def num(el, key, default=0.0):
    v = el.get(key)
    return float(v) if v not in (None, "") else default


def boxes_and_lines(svg_path):
    """The picture's width, its texts as (text, size, box) and its line segments."""
    root = ET.parse(svg_path).getroot()
    ns = re.match(r"\{.*\}", root.tag)
    ns = ns.group(0) if ns else ""
    width = float(root.get("width"))
    texts, segs = [], []
    for el in root.iter():
        tag = el.tag[len(ns):]
        if tag == "text":
            s = "".join(el.itertext())
            size = num(el, "font-size", 16)
            box = text_box(s, size, num(el, "x"), num(el, "y"), el.get("text-anchor") or "start",
                           "Mono" in (el.get("font-family") or ""), el.get("font-weight") == "bold")
            texts.append((s, size, box))
        elif tag == "line":
            segs.append((num(el, "x1"), num(el, "y1"), num(el, "x2"), num(el, "y2")))
        elif tag == "polyline":
            pts = [tuple(map(float, p.split(","))) for p in (el.get("points") or "").split()]
            segs += [(a[0], a[1], b[0], b[1]) for a, b in zip(pts, pts[1:])]
    return width, texts, segs


def png_width(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">I", head[16:20])[0]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    shown = set()
    for md in glob.glob(os.path.join(root, "lessons", "*", "lesson.md")):
        shown |= set(re.findall(r"\]\((assets/lessons/[^)\s]+\.png)\)", open(md, encoding="utf-8").read()))
    if not shown:
        sys.exit("check_pictures: no lesson shows a picture: wrong root?")
    problems = []
    for rel in sorted(shown):
        png = os.path.join(root, rel)
        svg = png[:-4] + ".svg"
        name = os.path.basename(svg)
        if not os.path.exists(png) or not os.path.exists(svg):
            problems.append(f"{rel}: the PNG or its SVG source is missing")
            continue
        width, texts, segs = boxes_and_lines(svg)
        k = png_width(png) / width  # PNG pixels per SVG unit
        if png_width(png) > COLUMN_PX:
            problems.append(f"{name}: {png_width(png)} px wide, wider than the lesson column's "
                            f"{COLUMN_PX} px: it must be scrolled sideways to be read")
        small = min(texts, key=lambda t: t[1]) if texts else None
        if small and small[1] * k < BODY_PX - 0.05:
            problems.append(f"{name}: text {small[1] * k:.1f} px high in the PNG, under the window's "
                            f"{BODY_PX} px: '{small[0]}'")
        for t in texts:
            if t[2][0] < -0.5 or t[2][2] > width + 0.5:
                problems.append(f"{name}: '{t[0]}' runs past the picture's edge")
        for i, t in enumerate(texts):
            for u in texts[i + 1:]:
                a, b = t[2], u[2]
                if a[0] + 1 < b[2] and b[0] + 1 < a[2] and a[1] + 1 < b[3] and b[1] + 1 < a[3]:
                    problems.append(f"{name}: '{t[0]}' and '{u[0]}' overlap")
            for sg in segs:
                if crosses(sg, t[2]):
                    problems.append(f"{name}: a line from ({sg[0]:.0f}, {sg[1]:.0f}) to ({sg[2]:.0f}, "
                                    f"{sg[3]:.0f}) runs through '{t[0]}'")
                    break
    for p in problems:
        print(p)
    print(f"check_pictures: {len(shown)} pictures, {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
