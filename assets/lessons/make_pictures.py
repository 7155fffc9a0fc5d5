#!/usr/bin/env python3
"""Draws the lessons' pictures.

    python3 assets/lessons/make_pictures.py

Writes assets/lessons/NAME.svg for every picture (Python standard library only) and, where
ImageMagick's `convert` is on the PATH, rasterises each one to assets/lessons/NAME.png (drawn at
twice the size and scaled down, so lines and text are smooth). The lessons show the PNGs; the SVGs
are the source. Every figure here is computed, not typed: change a number and run it again.
"""
import math
import os
import shutil
import subprocess
import sys

import check_pictures

HERE = os.path.dirname(os.path.abspath(__file__))

BLUE, ORANGE, RED, TEAL = "#4C78A8", "#F58518", "#E45756", "#72B7B2"
GREEN, YELLOW, PURPLE, PINK = "#54A24B", "#EECA3B", "#B279A2", "#FF9DA6"
BROWN, GREY, INK, MUTED = "#9D755D", "#BAB0AC", "#1F2430", "#5B6270"
LIGHT = "#EEF1F5"
PALETTE = [BLUE, ORANGE, GREEN, RED, PURPLE, TEAL, YELLOW, BROWN]
FONT = "DejaVu Sans"
MONO = "DejaVu Sans Mono"


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mix(color, alpha):
    """color blended over white with the given opacity, as #RRGGBB."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return "#%02X%02X%02X" % tuple(round(255 + (v - 255) * alpha) for v in (r, g, b))


class Svg:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.items = []
        self.boxes = []  # every text's box, as the window's check measures it

    def rect(self, x, y, w, h, fill="none", stroke=INK, sw=1.0, rx=0, dash=None, opacity=None):
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        if opacity is not None and fill != "none":
            fill = mix(fill, opacity)  # blended here: not every SVG rasteriser honours fill-opacity
        self.items.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{sw}"{extra}/>')

    def line(self, x1, y1, x2, y2, stroke=INK, sw=1.5, dash=None):
        self.polyline([(x1, y1), (x2, y2)], stroke, sw, dash)

    def polyline(self, pts, stroke=INK, sw=1.5, dash=None):
        # Written at save(), once every text is known: a line never runs through a label.
        self.items.append(("lines", list(pts), stroke, sw, dash))

    def polygon(self, pts, fill=INK, stroke="none", sw=1.0):
        p = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        self.items.append(f'<polygon points="{p}" fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>')

    def circle(self, x, y, r, fill=INK, stroke="none", sw=1.0):
        self.items.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>')

    def arrow(self, x1, y1, x2, y2, stroke=INK, sw=1.5, head=7, dash=None):
        ang = math.atan2(y2 - y1, x2 - x1)
        bx, by = x2 - head * math.cos(ang), y2 - head * math.sin(ang)
        self.line(x1, y1, bx, by, stroke, sw, dash)
        left = (bx + head * 0.5 * math.sin(ang), by - head * 0.5 * math.cos(ang))
        right = (bx - head * 0.5 * math.sin(ang), by + head * 0.5 * math.cos(ang))
        self.polygon([(x2, y2), left, right], fill=stroke)

    def text(self, x, y, s, size=14, fill=INK, anchor="start", bold=False, mono=False, italic=False):
        fam = MONO if mono else FONT
        wt = ' font-weight="bold"' if bold else ""
        it = ' font-style="italic"' if italic else ""
        self.items.append(
            f'<text x="{x:.1f}" y="{y:.1f}" font-family="{fam}" font-size="{size}" fill="{fill}" '
            f'stroke="none" text-anchor="{anchor}"{wt}{it}>{esc(s)}</text>')
        self.boxes.append(check_pictures.text_box(str(s), size, x, y, anchor, mono, bold))

    def _lines(self, pts, stroke, sw, dash):
        """The polyline as drawn: each segment with a gap where it would cross a text's box."""
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        runs, cur = [], []
        for a, b in zip(pts, pts[1:]):
            for p, q in check_pictures.outside_boxes((a[0], a[1], b[0], b[1]), self.boxes, pad=3):
                if cur and abs(cur[-1][0] - p[0]) < 1e-6 and abs(cur[-1][1] - p[1]) < 1e-6:
                    cur.append(q)
                else:
                    if len(cur) > 1:
                        runs.append(cur)
                    cur = [p, q]
        if len(cur) > 1:
            runs.append(cur)
        out = []
        for r in runs:
            if len(r) == 2:
                out.append(f'<line x1="{r[0][0]:.1f}" y1="{r[0][1]:.1f}" x2="{r[1][0]:.1f}" y2="{r[1][1]:.1f}" '
                           f'stroke="{stroke}" stroke-width="{sw}"{extra}/>')
            else:
                p = " ".join(f"{x:.1f},{y:.1f}" for x, y in r)
                out.append(f'<polyline points="{p}" fill="none" stroke="{stroke}" stroke-width="{sw}"{extra}/>')
        return "\n".join(out)

    def save(self, name):
        body = "\n".join(self._lines(*it[1:]) if isinstance(it, tuple) else it for it in self.items)
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.w}" height="{self.h}" '
               f'viewBox="0 0 {self.w} {self.h}">\n<rect width="{self.w}" height="{self.h}" fill="#FFFFFF"/>\n'
               f'{body}\n</svg>\n')
        path = os.path.join(HERE, name + ".svg")
        with open(path, "w", encoding="utf-8") as f:
            f.write(svg)
        return path


# --------------------------------------------------------------------------------------------
# 0001: a grid of blocks of threads covering an array, with the last block sticking out.
def grid_blocks_threads():
    # Drawn for the lesson column (340 px): the blocks stacked, each over the elements it owns.
    B, nblocks, n = 8, 4, 27
    W, L, cell = 340, 8, 36
    x0 = L + (W - 2 * L - B * cell) / 2
    s = Svg(W, 10)
    y = para(s, L, 22, "grid = cdiv(27, 8) = 4 blocks of BLOCK = 8 threads", 16, W - 2 * L, bold=True)
    for line in ("i = blockIdx.x * blockDim.x", "    + threadIdx.x"):
        y = para(s, L, y, line, 15, W - 2 * L, mono=True, fill=MUTED)
    # the threads' row, then the array elements they own
    s.text(L, y + 4, "threadIdx.x", 15, fill=MUTED)
    for t in range(B):
        s.text(x0 + t * cell + cell / 2, y + 24, t, 15, fill=MUTED, anchor="middle")
    y += 34
    for b in range(nblocks):
        s.rect(x0 - 6, y, B * cell + 12, 62, fill=LIGHT, stroke=MUTED, rx=8)
        s.text(x0, y + 20, f"blockIdx.x = {b}: i = {b * B} + threadIdx.x", 15, bold=b == 2)
        for t in range(B):
            i = b * B + t
            cx = x0 + t * cell
            if i < n:
                s.rect(cx + 1, y + 28, cell - 2, 26, fill=PALETTE[b], stroke="#FFFFFF", opacity=0.9)
                s.text(cx + cell / 2, y + 47, i, 15, fill="#FFFFFF", anchor="middle")
            else:
                s.rect(cx + 1, y + 28, cell - 2, 26, fill="#FFFFFF", stroke=RED, dash="3,2")
                s.text(cx + cell / 2, y + 47, "×", 15, fill=RED, anchor="middle")
        if b == 2:  # block 2, thread 5 -> i = 21
            s.rect(x0 + 5 * cell - 1, y + 26, cell + 2, 30, stroke=INK, sw=2.5)
        y += 70
    y += 14
    y = para(s, L, y, "Block 2, thread 5: i = 2 × 8 + 5 = 21.", 15, W - 2 * L)
    y = para(s, L, y, "×: i ≥ n = 27, no element; the guard if (i < n) skips them.", 15, W - 2 * L,
             fill=RED)
    y = para(s, L, y, "Every thread runs the same code; only blockIdx and threadIdx differ.", 15,
             W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("grid-blocks-threads")


# 0002: a 2-D grid over a 10 x 13 matrix with 4 x 4 blocks; threads past the edge are guarded.
def grid_2d():
    # Drawn for the lesson column (340 px): the notes under the grid.
    rows, cols, bx_, by_ = 10, 13, 4, 4
    gx, gy = -(-cols // bx_), -(-rows // by_)
    W, L, c = 340, 8, 18
    s = Svg(W, 10)
    y = para(s, L, 22, f"rows = {rows}, cols = {cols}, block = ({bx_}, {by_})", 16, W - 2 * L, bold=True)
    y = para(s, L, y, f"grid = (cdiv({cols}, {bx_}), cdiv({rows}, {by_})) = ({gx}, {gy})", 16, W - 2 * L,
             bold=True)
    x0 = W - L - gx * bx_ * c
    s.arrow(x0, y + 2, x0 + 60, y + 2, stroke=MUTED)
    s.text(x0 + 68, y + 7, "x: col (contiguous)", 15, fill=MUTED)
    y0 = y + 40
    for i in range(gx):
        s.text(x0 + (i + 0.5) * bx_ * c, y0 - 8, f"x={i}", 15, anchor="middle")
    for j in range(gy):
        s.text(L, y0 + (j + 0.5) * by_ * c + 5, f"y={j}", 15)
    for r in range(gy * by_):
        for q in range(gx * bx_):
            inside = r < rows and q < cols
            b = (r // by_) * gx + (q // bx_)
            color = PALETTE[b % len(PALETTE)]
            s.rect(x0 + q * c + 1, y0 + r * c + 1, c - 2, c - 2, fill=color if inside else "#FFFFFF",
                   stroke=color if inside else RED, sw=1, opacity=0.55 if inside else None,
                   dash=None if inside else "3,2")
            if not inside:
                s.text(x0 + q * c + c / 2, y0 + r * c + c / 2 + 5, "×", 15, fill=RED, anchor="middle")
    for j in range(gy):
        for i in range(gx):
            s.rect(x0 + i * bx_ * c, y0 + j * by_ * c, bx_ * c, by_ * c, stroke=INK, sw=2)
    s.rect(x0, y0, cols * c, rows * c, stroke=INK, sw=3.0, dash="8,4")
    y = y0 + gy * by_ * c + 24
    y = para(s, L, y, f"dashed: the matrix ({rows} × {cols}); x=, y=: the block's blockIdx", 15, W - 2 * L)
    y = para(s, L, y, "× : a thread with no element", 15, W - 2 * L, fill=RED)
    y = para(s, L, y, f"grid covers {gy * by_} × {gx * bx_} = {gy * by_ * gx * bx_} threads for "
             f"{rows * cols} elements: {gy * by_ * gx * bx_ - rows * cols} idle", 15, W - 2 * L, fill=MUTED)
    y = para(s, L, y + 4, "if (row < rows && col < cols)", 15, W - 2 * L, mono=True)
    y = para(s, L, y, "  out[row * cols + col] = ...", 15, W - 2 * L, mono=True)
    s.h = int(y)
    return s.save("grid-2d")


# 0002: grid-stride loop: 2 blocks x 4 threads = 8 threads cover 22 elements in 3 passes.
def grid_stride():
    # Drawn for the lesson column (340 px): one row per pass, one column per thread.
    n, T = 22, 8
    W, L, c = 340, 8, 36
    x0 = L + (W - 2 * L - T * c) / 2
    s = Svg(W, 10)
    y = 22
    for line in ("for (i = tid; i < n;", "     i += gridDim.x * blockDim.x)"):
        s.text(L, y, line, 15, mono=True, bold=True)
        y += 20
    y = para(s, L, y, "2 blocks × 4 threads = 8 threads, n = 22", 15, W - 2 * L, fill=MUTED)
    y += 4
    for t in range(T):
        s.text(x0 + t * c + c / 2, y, f"t{t}", 15, fill=PALETTE[t], anchor="middle", bold=True)
    y += 10
    for p in range(3):
        s.text(L, y + 18, f"pass {p}: i = tid + {p * T}", 15, fill=MUTED)
        y += 26
        for t in range(T):
            i = p * T + t
            col = PALETTE[t]
            if i < n:
                s.rect(x0 + t * c + 1, y, c - 2, 28, fill=col, stroke=col, opacity=0.8)
                s.text(x0 + t * c + c / 2, y + 20, i, 15, fill="#FFFFFF", anchor="middle")
            else:
                s.rect(x0 + t * c + 1, y, c - 2, 28, fill="#FFFFFF", stroke=RED, dash="3,2")
                s.text(x0 + t * c + c / 2, y + 20, "×", 15, fill=RED, anchor="middle")
        y += 36
    y += 14
    y = para(s, L, y, "Colour: the thread (tid = blockIdx.x * blockDim.x + threadIdx.x) that handles "
             "the element.", 15, W - 2 * L)
    y = para(s, L, y, "Neighbouring threads touch neighbouring elements in every pass, so each pass is "
             "coalesced.", 15, W - 2 * L, fill=MUTED)
    y = para(s, L, y, "Threads 6 and 7 find i = 22, 23 ≥ n in the last pass and leave the loop.", 15,
             W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("grid-stride")


# 0003: coalesced versus strided: sectors touched by one warp's 4-byte loads.
def coalesced_vs_strided():
    # Drawn for the lesson column (340 px): the warp's 32 lanes as four rows of eight, each row over
    # the memory it reads.
    W, L, c = 340, 8, 36
    x0 = L + (W - 2 * L - 8 * c) / 2
    s = Svg(W, 10)

    def lanes(y, row, color):
        for k in range(8):
            s.rect(x0 + k * c + 1, y, c - 2, 22, fill=color, stroke="#FFFFFF", opacity=0.9)
            s.text(x0 + k * c + c / 2, y + 17, row * 8 + k, 15, fill="#FFFFFF", anchor="middle")

    y = para(s, L, 22, nb("Coalesced: lane k reads in[base + k] (4-byte floats)"), 16, W - 2 * L, bold=True)
    for row in range(4):
        lanes(y, row, BLUE)
        s.rect(x0 + 1, y + 26, 8 * c - 2, 26, fill=BLUE, stroke=INK, sw=1.5, opacity=0.25)
        s.text(x0 + 4 * c, y + 45, f"sector {row}: 32 bytes, all used", 15, anchor="middle")
        y += 62
    y = para(s, L, y + 8, "1 request → 4 sectors = 128 bytes moved for 128 bytes used: 100% efficient",
             15, W - 2 * L, bold=True, fill=BLUE)
    y = para(s, L, y + 20, nb("Strided: lane k reads in[base + 32 * k] (consecutive lanes 128 bytes apart)"),
             16, W - 2 * L, bold=True)
    for row in range(4):
        lanes(y, row, RED)
        # each lane's own 32-byte sector, drawn as 8 slivers of 4 bytes, one used
        for k in range(8):
            sx = x0 + k * c + 1
            s.rect(sx, y + 26, (c - 2) / 8, 26, fill=RED, stroke="none", opacity=0.9)
            s.rect(sx, y + 26, c - 2, 26, stroke=INK, sw=1.2)
        y += 62
    y = para(s, L, y + 8, "each box under a lane: a different 32-byte sector, of which 4 bytes are used",
             15, W - 2 * L, fill=MUTED)
    y = para(s, L, y + 4, "1 request → 32 sectors = 1024 bytes moved for 128 bytes used: 12.5% efficient",
             15, W - 2 * L, bold=True, fill=RED)
    y = para(s, L, y + 8, "The simulator reports this as global_load_sectors / global_load_requests: 4 "
             "versus 32. On a GPU the wasted 7/8 of each sector still crosses the memory bus.", 15,
             W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("coalesced-vs-strided")


# 0004: roofline of the H200 with two compute roofs.
def roofline():
    # Drawn for the lesson column (340 px): the points numbered, named in a legend under the chart.
    W, L = 340, 8
    PL, PR = 50, 12  # the plot's left and right edges from the picture's
    xmin, xmax = -2, 4      # log10 FLOP/byte
    ymin, ymax = -1, 3.3    # log10 TFLOP/s
    s = Svg(W, 10)
    y = para(s, L, 22, nb("Roofline of an H200: attainable TFLOP/s = min(peak, intensity × 4.8 TB/s)"), 16,
             W - 2 * L, bold=True)
    s.text(L, y + 4, "TFLOP/s (log)", 15)
    T = y + 18
    B = T + 300

    def X(v):
        return PL + (math.log10(v) - xmin) / (xmax - xmin) * (W - PL - PR)

    def Y(v):
        return B - (math.log10(v) - ymin) / (ymax - ymin) * (B - T)

    for e in range(xmin, xmax + 1):
        x = X(10 ** e)
        s.line(x, T, x, B, stroke="#E3E6EA", sw=1)
        if e % 2 == 0:  # every other decade named: their labels would touch
            lab = {-2: "0.01", 0: "1", 2: "100", 4: "10k"}[e]
            s.text(x, B + 18, lab, 15, fill=MUTED, anchor={xmin: "start", xmax: "end"}.get(e, "middle"))
    for e in range(ymin, 4):
        if 10 ** e > 10 ** ymax:
            continue
        yy = Y(10 ** e)
        s.line(PL, yy, W - PR, yy, stroke="#E3E6EA", sw=1)
        s.text(PL - 5, yy + 5, {-1: "0.1", 0: "1", 1: "10", 2: "100", 3: "1000"}[e], 15, fill=MUTED, anchor="end")
    s.rect(PL, T, W - PL - PR, B - T, stroke=MUTED, sw=1)
    y = para(s, L, B + 40, "arithmetic intensity (FLOP per byte of DRAM traffic, log scale)", 15, W - 2 * L)

    bw = 4.8  # TB/s
    fp32, bf16 = 67.0, 989.0
    # memory roof up to the tensor ridge
    pts = []
    for k in range(0, 101):
        v = 10 ** (xmin + k * (xmax - xmin) / 100)
        p = v * bw
        if p > bf16:
            break
        if p >= 10 ** ymin:
            pts.append((X(v), Y(p)))
    pts.append((X(bf16 / bw), Y(bf16)))
    s.polyline(pts, stroke=BLUE, sw=3)
    s.polyline([(X(fp32 / bw), Y(fp32)), (X(10 ** xmax), Y(fp32))], stroke=ORANGE, sw=3)
    s.polyline([(X(bf16 / bw), Y(bf16)), (X(10 ** xmax), Y(bf16))], stroke=PURPLE, sw=3)
    s.polyline([(X(fp32 / bw), Y(fp32)), (X(fp32 / bw), Y(10 ** ymin))], stroke=ORANGE, sw=1, dash="4,4")
    s.polyline([(X(bf16 / bw), Y(bf16)), (X(bf16 / bw), Y(10 ** ymin))], stroke=PURPLE, sw=1, dash="4,4")
    s.text(X(fp32 / bw) - 4, Y(10 ** ymin) - 8, f"ridge {fp32 / bw:.0f}", 15, fill=ORANGE, anchor="end")
    s.text(X(bf16 / bw) + 4, Y(10 ** ymin) - 8, f"{bf16 / bw:.0f}", 15, fill=PURPLE)
    s.text(W - PR - 4, Y(fp32) + 20, f"FP32: {fp32:.0f}", 15, fill=ORANGE, bold=True, anchor="end")
    s.text(W - PR - 4, Y(bf16) - 8, f"BF16: {bf16:.0f}", 15, fill=PURPLE, bold=True, anchor="end")
    s.text(PL + 6, T + 20, f"HBM3e: {bw} TB/s", 15, fill=BLUE, bold=True)

    hg = 2 * 8192 ** 3 / (3 * 8192 ** 2 * 2)
    sg = 2 * 4096 ** 3 / (3 * 4096 ** 2 * 4)
    points = [(1 / 12, bw / 12, "vector add (1/12)", GREEN),
              (5 / 8, 5 / 8 * bw, "softmax (0.6)", GREEN),
              (sg, fp32, f"SGEMM 4096³ ({sg:.0f})", RED),
              (hg, 785, f"cuBLAS BF16 8192³ ({hg:.0f}), measured\u00a0≈\u00a0785", RED)]
    for k, (v, perf, _, color) in enumerate(points):
        s.circle(X(v), Y(perf), 6, fill=color, stroke="#FFFFFF", sw=1.5)
        above = perf == fp32  # on the FP32 roof, whose label is under it
        s.text(X(v) - 10, Y(perf) - 8 if above else Y(perf) + 5, k + 1, 15, fill=color, anchor="end",
               bold=True)
    y += 4
    for k, (_, _, label, color) in enumerate(points):
        s.text(L, y, k + 1, 15, fill=color, bold=True)
        y = para(s, L + 18, y, label, 15, W - 2 * L - 18, fill=color)
    y = para(s, L, y + 6, f"Roofs: FP32 CUDA cores at {fp32:.0f} TFLOP/s, BF16 tensor cores at "
             f"{bf16:.0f} TFLOP/s; ridges at {fp32 / bw:.0f} and {bf16 / bw:.0f} FLOP/B. The memory roof has slope 1: twice the intensity, twice "
             "the FLOP/s. A kernel's point sits on or below the roof; the gap is the speed it leaves "
             "unused.", 15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("roofline")


# 0005: shared-memory tree reduction with sequential addressing, 16 values.
def reduction_tree():
    # Drawn for the lesson column (340 px): each step's label beside its row.
    n, W, L, c, dy = 16, 340, 8, 20, 74
    x0 = L + (W - 2 * L - n * c) / 2
    s = Svg(W, 10)
    y = para(s, L, 22, "Tree reduction in shared memory, 16 values:", 16, W - 2 * L, bold=True)
    s.text(L, y, "if (t < stride)", 15, mono=True)
    s.text(L, y + 20, "  s[t] += s[t + stride];", 15, mono=True)
    y = para(s, L, y + 40, "then __syncthreads() before the next stride.", 15, W - 2 * L, fill=MUTED)
    s.text(L, y + 4, "start", 15, fill=MUTED)
    y0 = y + 12
    vals = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]
    level = 0
    while True:
        y = y0 + level * dy
        live = n >> level
        if level:
            s.text(x0 + live * c + 10, y + 19, f"after stride {live}", 15, fill=MUTED)
        for i in range(live):
            s.rect(x0 + i * c, y, c, 28, fill=PALETTE[0], stroke="#FFFFFF", opacity=0.85, sw=1)
            s.text(x0 + i * c + c / 2, y + 19, vals[i], 15, fill="#FFFFFF", anchor="middle")
        if live == 1:
            y = para(s, L, y + 56, f"s[0] = {vals[0]}: the block's sum, after log2(16) = 4 steps "
                     "and 15 additions", 15, W - 2 * L)
            break
        half = live // 2
        for i in range(half):
            s.arrow(x0 + (i + half) * c + c / 2, y + 30, x0 + i * c + c / 2 + 3, y + dy - 2,
                    stroke=ORANGE, sw=1.2, head=6)
        vals = [vals[i] + vals[i + half] if i < half else vals[i] for i in range(n)]
        level += 1
    s.h = int(y)
    return s.save("reduction-tree")


# 0006: shared-memory banks: reading a column of a 32x32 tile, unpadded and padded.
def bank_conflicts():
    # Drawn for the lesson column (340 px): the two tiles stacked, each with its verdict under it.
    W, L, c, rows = 340, 8, 10, 8
    px = L + (W - 2 * L - 32 * c) / 2
    s = Svg(W, 10)
    y = para(s, L, 22, "A warp reads column 0 of a 32 × 32 float tile: lane r reads tile[r][0]", 16,
             W - 2 * L, bold=True)
    for pad in (32, 33):
        y += 12
        s.text(L, y, f"__shared__ float tile[32][{pad}];", 15, mono=True, bold=True)
        s.text(px, y + 22, "bank 0", 15, fill=MUTED)
        s.text(px + 32 * c, y + 22, "31", 15, fill=MUTED, anchor="end")
        y0 = y + 30
        hit = [0] * 32
        for r in range(rows):
            for k in range(32):
                s.rect(px + k * c, y0 + r * c, c, c, fill="#FFFFFF", stroke="#D5D9DF", sw=0.6)
        # the elements of column 0: word address r * pad, drawn at (row addr // 32, bank addr % 32)
        for r in range(32):
            addr = r * pad
            bank = addr % 32
            hit[bank] += 1
            if addr // 32 < rows:
                s.rect(px + bank * c, y0 + (addr // 32) * c, c, c, fill=RED if pad == 32 else GREEN,
                       stroke=INK, sw=0.8)
        y = y0 + rows * c + 20
        y = para(s, L, y, f"rows of 32 banks (4 bytes each); first 8 of {pad} shown", 15, W - 2 * L,
                 fill=MUTED)
        worst = max(hit)
        if pad == 32:
            y = para(s, L, y, "tile[r][0] is word 32·r → bank 0 for every r", 15, W - 2 * L)
            y = para(s, L, y, f"32 lanes in one bank: {worst}-way conflict → 32 wavefronts, one after "
                     "another", 15, W - 2 * L, fill=RED, bold=True)
        else:
            y = para(s, L, y, "tile[r][0] is word 33·r → bank r mod 32", 15, W - 2 * L)
            y = para(s, L, y, "one lane per bank: conflict-free → 1 wavefront; costs 32 floats of "
                     "padding", 15, W - 2 * L, fill=GREEN, bold=True)
    y = para(s, L, y + 12, "bank = (byte address / 4) mod 32. The same address in many lanes is a "
             "broadcast, not a conflict.", 15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("bank-conflicts")


# 0007: bytes per element, unfused against fused.
def fusion_bytes():
    # Drawn for the lesson column (340 px), as attention_io is: each bar under its label.
    bars = [
        ("softmax, x read 3 times", 16, RED),
        ("softmax, row on chip or online (3, 12)", 8, GREEN),
        ("x + r, then RMSNorm in a 2nd kernel", 20, RED),
        ("x + r and RMSNorm fused (14)", 16, GREEN),
    ]
    W, L, scale = 340, 8, 8  # pixels per byte
    s = Svg(W, 10)
    s.text(L, 22, "DRAM bytes per element (f32)", 16, bold=True)
    s.text(L, 42, "and the time for 8192 × 8192 at 4.56 TB/s", 15, fill=MUTED)
    top, step = 62, 56
    for k, (label, b, col) in enumerate(bars):
        y = top + k * step
        s.text(L, y + 15, label, 15)
        s.rect(L, y + 22, b * scale, 24, fill=col, stroke="none", opacity=0.85)
        us = b * 8192 * 8192 / 4.56e12 * 1e6  # the H200's DRAM ceiling as `warpbook probe` measures it
        s.text(L + b * scale + 6, y + 40, f"{b} B → {us:.0f} µs", 15, bold=True)
    y = top + len(bars) * step + 14
    note = ("Fusion does not make the arithmetic faster; it removes trips to DRAM. The numbers in brackets "
            "are the puzzles where you build the fused form.")
    for line in wrap(note, 15, W - 2 * L):
        s.text(L, y, line, 15, fill=MUTED)
        y += 20
    s.h = int(y)
    return s.save("fusion-bytes")


# 0008: tiled matmul: a block's C tile, the A and B strips it reads, one BK step highlighted.
def tiled_matmul():
    # Drawn for the lesson column (340 px): the three matrices, then the notes under them.
    W, L = 340, 8
    s = Svg(W, 10)
    u = 14  # pixels per 32 elements
    M, N, K = 12, 12, 8  # in units of 32
    y = para(s, L, 22, nb("C[BM × BN] += A[BM × BK] · B[BK × BN], step by step along K"), 16, W - 2 * L,
             bold=True)
    ax, by = L + 18, y + 10
    bx = ax + K * u + 20
    ay = by + K * u + 20
    cx, cy = bx, ay
    # A (M x K), B (K x N), C (M x N)
    s.rect(ax, ay, K * u, M * u, fill=LIGHT, stroke=INK, sw=1.5)
    s.text(ax + K * u / 2, ay + M * u + 20, "A (M × K)", 15, anchor="middle", bold=True)
    s.rect(bx, by, N * u, K * u, fill=LIGHT, stroke=INK, sw=1.5)
    s.text(ax + K * u / 2, by + K * u / 2 + 5, "B (K × N)", 15, anchor="middle", bold=True)
    s.rect(cx, cy, N * u, M * u, fill=LIGHT, stroke=INK, sw=1.5)
    s.text(cx + N * u / 2, cy + M * u + 20, "C (M × N)", 15, anchor="middle", bold=True)
    # the block's tile of C: rows 4..7, cols 8..11 (in 32s) -> BM = BN = 128
    tr, tc, tb = 4, 8, 4
    s.rect(cx + tc * u, cy + tr * u, tb * u, tb * u, fill=RED, stroke=INK, sw=2, opacity=0.75)
    s.text(cx + tc * u - 6, cy + tr * u + tb * u / 2 + 5, "BM × BN", 15, fill=RED, anchor="end", bold=True)
    # A strip and B strip
    s.rect(ax, ay + tr * u, K * u, tb * u, fill=BLUE, stroke=INK, sw=1.5, opacity=0.3)
    s.rect(bx + tc * u, by, tb * u, K * u, fill=ORANGE, stroke=INK, sw=1.5, opacity=0.3)
    # current k step: chunk 2 (BK = 32)
    k = 2
    s.rect(ax + k * u, ay + tr * u, u, tb * u, fill=BLUE, stroke=INK, sw=2, opacity=0.9)
    s.rect(bx + tc * u, by + k * u, tb * u, u, fill=ORANGE, stroke=INK, sw=2, opacity=0.9)
    s.text(ax + k * u + u / 2, ay + tr * u - 6, "BK", 15, anchor="middle", bold=True, fill=BLUE)
    s.text(bx + tc * u - 6, by + k * u + u / 2 + 5, "BK", 15, anchor="end", bold=True, fill=ORANGE)
    s.arrow(ax + 4, ay + tr * u + tb * u + 10, ax + K * u - 4, ay + tr * u + tb * u + 10, stroke=MUTED, sw=1.5)
    y = cy + M * u + 48
    y = para(s, L, y, "k-loop: K / BK steps (arrow).", 15, W - 2 * L, fill=MUTED)
    y = para(s, L, y + 4, nb("One block owns one BM × BN tile of C. Each step: load A's BM × BK and B's "
                "BK × BN into shared memory, __syncthreads(), then every thread does BK "
                "multiply-adds for each of its outputs, __syncthreads()."), 15, W - 2 * L)
    y = para(s, L, y + 4, nb("Each A element is read N / BN times, each B element M / BM times, not N "
                "and M."), 15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("tiled-matmul")


# 0008: register tile: one thread computes a TM x TN patch from TM values of A and TN of B.
def register_tile():
    # Drawn for the lesson column (340 px): the tile, then its loop under it.
    W, L, c = 340, 8, 26
    TM = TN = 8
    s = Svg(W, 10)
    y = para(s, L, 22, nb("Register tile: per k, a thread loads TM + TN = 16 values and does TM × TN "
                "= 64 FMAs"), 16, W - 2 * L, bold=True)
    bx = L + 2 * c
    by = y + 4
    ax, ay = L, by + c + 8
    for j in range(TN):
        s.rect(bx + j * c, by, c, c, fill=ORANGE, stroke="#FFFFFF", opacity=0.85)
    s.text(bx + TN * c + 6, by + 19, "b[0..7]", 15, fill=ORANGE, mono=True)
    for i in range(TM):
        s.rect(ax, ay + i * c, c, c, fill=BLUE, stroke="#FFFFFF", opacity=0.85)
    s.text(ax, ay + TM * c + 20, "a[0..7]", 15, fill=BLUE, mono=True)
    for i in range(TM):
        for j in range(TN):
            s.rect(bx + j * c, ay + i * c, c, c, fill=RED, stroke="#FFFFFF", opacity=0.25 + 0.05 * ((i + j) % 2))
    s.text(bx + TN * c / 2, ay + TM * c / 2 + 5, "acc[8][8]", 15, anchor="middle", mono=True, bold=True)
    y = ay + TM * c + 46
    for t in ("for each k in the shared tile:", "a[i] = As[k][ty*8 + i]", "b[j] = Bs[k][tx*8 + j]",
              "acc[i][j] += a[i] * b[j]"):
        s.text(L, y, t, 15, mono=True)
        y += 20
    y = para(s, L, y, "8 + 8 loads, 64 FMAs", 15, W - 2 * L)
    y = para(s, L, y + 6, "1 shared load per 4 FMAs, against 2 loads per FMA when each thread owns one "
             "output: 8× less shared-memory traffic for the same work.", 15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("register-tile")


# --------------------------------------------------------------------------------------------
# 0012: quantization. The numbers come from quant_numbers.py beside this file.
def _quant():
    sys.path.insert(0, HERE)
    import quant_numbers
    return quant_numbers


# 0012: FP8 bit layouts, and where the positive values of e4m3 and e5m2 lie on a log scale.
def fp8_formats():
    # Drawn for the lesson column (340 px): each format's bits over its notes, the number line under.
    qn = _quant()
    W, L = 340, 8
    s = Svg(W, 10)
    y = para(s, L, 22, "FP8: one byte, two ways to split it", 16, W - 2 * L, bold=True)
    cell = 34

    def layout(y, name, fields, notes):
        s.text(L, y + 22, name, 15, bold=True)
        x = L + 54
        for label, count, color in fields:
            for k in range(count):
                s.rect(x + k * cell, y, cell - 2, 32, fill=color, stroke="#FFFFFF", opacity=0.85)
                s.text(x + k * cell + cell / 2 - 1, y + 22, label, 15, fill="#FFFFFF", anchor="middle", bold=True)
            x += count * cell
        y += 56
        for i, t in enumerate(notes):
            y = para(s, L, y, t, 15, W - 2 * L, fill=INK if i == 0 else MUTED)
        return y + 10

    y = layout(y, "e4m3", [("S", 1, RED), ("E", 4, BLUE), ("M", 3, GREEN)],
               ["bias 7: (1 + M/8) · 2^(E−7); E = 0: (M/8) · 2^−6",
                "max 0.1111.110 = 0x7E = 1.75 · 2^8 = %g; no Inf" % qn.E4M3_MAX,
                "NaN only at S.1111.111: 0x7F and 0xFF"])
    y = layout(y, "e5m2", [("S", 1, RED), ("E", 5, BLUE), ("M", 2, GREEN)],
               ["bias 15, like IEEE half with 8 mantissa bits cut off",
                "max 0.11110.11 = 0x7B = 1.75 · 2^15 = %g" % qn.E5M2_MAX,
                "Inf at 0x7C / 0xFC; NaN at S.11111.{01,10,11}"])

    # the number line: log2 from -17 to 17
    PL, PR = 58, 14
    lo, hi = -17, 17

    def X(v):
        return PL + (math.log2(v) - lo) / (hi - lo) * (W - PL - PR)

    y = para(s, L, y + 8, "Every positive finite value, on a log scale (a tick per value; each power of "
             "two is a binade):", 15, W - 2 * L)
    top = y
    y1, y2 = top + 40, top + 100
    for e in range(lo, hi + 1):
        x = X(2.0 ** e)
        s.line(x, top + 14, x, y2 + 20, stroke="#E3E6EA", sw=1)
        if e % 8 == 0:
            s.text(x, y2 + 40, "2^%d" % e, 15, fill=MUTED, anchor="middle")
    s.text(L, y1 + 5, "e4m3", 15, bold=True, fill=BLUE)
    s.text(L, y2 + 5, "e5m2", 15, bold=True, fill=ORANGE)
    for v in qn.E4M3_POS[1:]:
        s.line(X(v), y1 - 12, X(v), y1 + 12, stroke=BLUE, sw=1)
    for c in range(1, 0x7C):
        s.line(X(qn.E5M2[c]), y2 - 12, X(qn.E5M2[c]), y2 + 12, stroke=ORANGE, sw=1)
    s.text(X(qn.E4M3_MAX) + 4, y1 - 16, "448", 15, fill=BLUE, bold=True)
    s.text(X(qn.E5M2_MAX), y2 - 16, "57344", 15, fill=ORANGE, bold=True, anchor="end")
    s.text(X(2.0 ** -9), y1 - 16, "2^−9", 15, fill=BLUE, anchor="middle")
    s.text(X(2.0 ** -16), y2 - 16, "2^−16", 15, fill=ORANGE, anchor="start")
    y = para(s, L, y2 + 66, "e4m3: 8 values per binade over 2^−9 … 448 (weights, activations). "
             "e5m2: 4 per binade over 2^−16 … 57344 (gradients).", 15, W - 2 * L, fill=MUTED)
    y = para(s, L, y + 4, "Subnormals (E = 0) thin out at the left end; a scale moves the data into the "
             "dense middle.", 15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("fp8-formats")


# 0012: the NF4 code values are quantiles of a normal distribution.
def nf4_codes():
    # Drawn for the lesson column (340 px): the codes' numbers on two staggered rows (the middle
    # ones lie 10 px apart), the notes under the chart.
    qn = _quant()
    W, L = 340, 8
    PL, PR = 48, 14
    s = Svg(W, 10)
    y = para(s, L, 22, "NF4: 16 values, each a quantile of N(0, 1), scaled so the largest is 1", 16,
             W - 2 * L, bold=True)
    T = y
    top = statistics_inv(0.9677083)
    xmin, xmax = -1.15, 1.15

    def X(v):
        return PL + (v - xmin) / (xmax - xmin) * (W - PL - PR)

    base = T + 150
    peak = 1 / math.sqrt(2 * math.pi)

    def Y(p):
        return base - p / peak * (base - T - 10)

    pts = []
    for k in range(301):
        u = xmin + (xmax - xmin) * k / 300
        z = u * top
        pts.append((X(u), Y(math.exp(-z * z / 2) / math.sqrt(2 * math.pi))))
    s.polyline(pts, stroke=MUTED, sw=2)
    s.line(PL, base, W - PR, base, stroke=INK, sw=1)
    for i, v in enumerate(qn.NF4):
        z = v * top
        col = BLUE if v < 0 else (GREEN if v == 0 else ORANGE)
        s.line(X(v), base, X(v), Y(math.exp(-z * z / 2) / math.sqrt(2 * math.pi)), stroke=col, sw=2)
        s.circle(X(v), base, 4, fill=col)
        s.text(X(v), base + 20 + 18 * (i % 2), str(i), 15, anchor="middle", bold=True, fill=col)
    s.text(L, base + 29, "code", 15, fill=MUTED)
    # uniform int4 levels for comparison
    yu = base + 70
    s.text(L, yu + 5, "int4", 15, fill=MUTED)
    s.line(PL, yu, W - PR, yu, stroke=GREY, sw=1)
    for k in range(-7, 8):
        s.circle(X(k / 7), yu, 3.5, fill=GREY)
    y = para(s, L, yu + 34, "NF4 is dense where weights are common, sparse in the tails.", 15, W - 2 * L)
    y = para(s, L, y + 4, "int4 symmetric (−7…7)/7 for comparison: evenly spaced, as many levels in the "
             "tails as near 0.", 15, W - 2 * L, fill=MUTED)
    y = para(s, L, y + 4, "7 negative codes, an exact 0 (code 7), 8 positive codes: asymmetric so that 0 "
             "is exact and ±1 both exist.", 15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("nf4-codes")


def statistics_inv(p):
    import statistics
    return statistics.NormalDist().inv_cdf(p)


# 0012: one q4_0 block, and NF4's packing for contrast.
def q4_0_block():
    # Drawn for the lesson column (340 px): the 16 code bytes as two rows of eight, and each weight at
    # the place of the byte it comes from.
    W, L = 340, 8
    s = Svg(W, 10)
    y = para(s, L, 22, "q4_0 (llama.cpp): 32 weights in 18 bytes = 4.5 bits per weight", 16, W - 2 * L,
             bold=True)
    c = 38
    x0 = L + (W - 2 * L - 8 * c) / 2
    s.rect(x0, y, 2 * c - 2, 32, fill=PURPLE, stroke="#FFFFFF", opacity=0.85)
    s.text(x0 + c - 1, y + 21, "d (fp16)", 15, fill="#FFFFFF", anchor="middle", bold=True)
    s.text(x0 + 2 * c + 6, y + 21, "bytes 0–1", 15, fill=MUTED)
    y = para(s, L, y + 56, "bytes 2–17: qs[0..15], two 4-bit codes each (hi | lo)", 15, W - 2 * L, fill=MUTED)
    qy = [y + 18, y + 18 + 62]
    for j in range(16):
        bx, by = x0 + (j % 8) * c, qy[j // 8]
        s.text(bx + c / 2, by - 4, j, 15, anchor="middle", fill=MUTED)
        s.rect(bx, by, c / 2 - 1, 32, fill=ORANGE, stroke="#FFFFFF", opacity=0.85)
        s.rect(bx + c / 2 - 1, by, c / 2 - 1, 32, fill=BLUE, stroke="#FFFFFF", opacity=0.85)
        s.text(bx + c / 4, by + 21, "hi", 15, anchor="middle", fill="#FFFFFF")
        s.text(bx + 3 * c / 4 - 1, by + 21, "lo", 15, anchor="middle", fill="#FFFFFF")
    # the weights, each at its byte's place: w[j] from qs[j]'s low nibble, w[j + 16] from its high one
    wy = qy[1] + 32 + 34
    for half, (name, col) in enumerate((("w[0..15], from the lo nibbles", BLUE),
                                        ("w[16..31], from the hi nibbles", ORANGE))):
        s.text(L, wy, name, 15, fill=col, bold=True)
        for j in range(16):
            bx, by = x0 + (j % 8) * c, wy + 8 + (j // 8) * 30
            s.rect(bx, by, c - 2, 26, fill=col, stroke="#FFFFFF", opacity=0.55)
            s.text(bx + c / 2 - 1, by + 19, str(j + 16 * half), 15, anchor="middle")
        wy += 8 + 2 * 30 + 26
    y = wy + 4
    for line in ("w[j] = ((qs[j] & 0xF) − 8) · d", "w[j + 16] = ((qs[j] >> 4) − 8) · d", "(j = 0 … 15)"):
        s.text(L, y, line, 15, mono=True)
        y += 20
    y = para(s, L, y + 4, "Low nibbles hold the first half of the block, high nibbles the second. Blocks "
             "sit 18 bytes apart: only 2-byte aligned, so a 16-byte vector load of a block needs care.", 15,
             W - 2 * L, fill=MUTED)
    # NF4 contrast
    y = para(s, L, y + 16, "NF4 (bitsandbytes) packs the other way round: byte j holds element 2j in its "
             "HIGH nibble, 2j + 1 in its low.", 15, W - 2 * L, bold=True)
    bc = 52
    for j in range(6):
        bx, by = L + (j % 3) * 2 * bc + 4 * (j % 3), y + 4 + (j // 3) * 62
        s.rect(bx, by, bc - 1, 30, fill=TEAL, stroke="#FFFFFF", opacity=0.9)
        s.rect(bx + bc, by, bc - 1, 30, fill=TEAL, stroke="#FFFFFF", opacity=0.5)
        s.text(bx + bc / 2, by + 20, "x[%d]" % (2 * j), 15, anchor="middle")
        s.text(bx + 3 * bc / 2, by + 20, "x[%d]" % (2 * j + 1), 15, anchor="middle")
        s.text(bx + bc, by + 50, "byte %d" % j, 15, anchor="middle", fill=MUTED)
    y += 4 + 2 * 62 + 10
    for line in ("out[i] = LUT[code_i]", "         · absmax[i / 64]"):
        s.text(L, y, line, 15, mono=True)
        y += 20
    s.h = int(y)
    return s.save("q4_0-block")


# 0012: relative error of each scheme on the outlier row and on the same row without outliers.
def quant_error():
    # Drawn for the lesson column (340 px), as attention_io is: each bar under its label.
    qn = _quant()
    row, rows = qn.schemes()
    W, L = 340, 8
    scale = 200  # pixels for a relative error of 1
    s = Svg(W, 10)
    s.text(L, 22, "Quantizing a row with outliers", 16, bold=True)
    y = 42
    sub = ("1024 N(0,1) weights, 6 outliers up to 60: relative RMS error on the 1018 ordinary ones, bits "
           "per weight, and how many of them round to 0 (assets/lessons/quant_numbers.py)")
    for line in wrap(sub, 15, W - 2 * L):
        s.text(L, y, line, 15, fill=MUTED)
        y += 20
    top, step = y + 4, 46
    for i, (name, yv, bits) in enumerate(rows):
        ro, _, zeros, _ = qn.errors(row, yv)
        yy = top + i * step
        col = BLUE if name.startswith("int8") else (PURPLE if name.startswith("fp8") else ORANGE)
        s.text(L, yy + 15, name, 15)
        s.rect(L, yy + 21, max(ro * scale, 2), 18, fill=col, stroke="none", opacity=0.85)
        s.text(L + max(ro * scale, 2) + 6, yy + 36, "%.1f%%, %.2f bits, %d → 0" % (100 * ro, bits, zeros), 15)
    y = top + len(rows) * step + 20
    note = ("int8 and 4-bit grids are even: one large value stretches the step for every value sharing its "
            "scale. FP8's step grows with the value.")
    for line in wrap(note, 15, W - 2 * L):
        s.text(L, y, line, 15, fill=MUTED)
        y += 20
    s.h = int(y)
    return s.save("quant-error")


# 0009: which lane holds which element of mma.sync.m16n8k16 (f16/bf16 in, f32 accumulate).
# g = lane / 4 (groupID), t = lane % 4: A[g + 8 (r % 2)][2t + h + 8 (r / 2)] is half h of register
# r; B[2t + h + 8 r][g]; C[g + 8 (i / 2)][2t + i % 2] is float i. Lane 5 is outlined.
def mma_layout():
    # Drawn for the lesson column (340 px): A across the column, B and C side by side under it, the
    # registers' legend under them.
    W, L, c = 340, 8, 20
    s = Svg(W, 10)
    y = para(s, L, 22, "mma.sync.m16n8k16: the number in each cell is the lane that holds it (lane 5 "
             "outlined)", 16, W - 2 * L, bold=True)
    y = para(s, L, y, "g = lane / 4, t = lane % 4; the colour is the 32-bit register (two halves of A or "
             "B, one float of C)", 15, W - 2 * L, fill=MUTED)
    ax = L + (W - 2 * L - 16 * c) / 2
    ay = y + 36
    bx, cx = ax, ax + 8 * c + 4
    by = ay + 16 * c + 44
    regc = [BLUE, ORANGE, GREEN, PURPLE]
    hi = 5

    def cell(x, y, lane, col):
        s.rect(x, y, c, c, fill=col, stroke="#FFFFFF", sw=1, opacity=0.9 if lane == hi else 0.4)
        s.text(x + c / 2, y + c / 2 + 5, lane, 15, anchor="middle", mono=True, bold=lane == hi,
               fill="#FFFFFF" if lane == hi else INK)

    outl = []
    for l in range(32):
        g, t = l // 4, l % 4
        for r in range(4):
            for h in range(2):
                row, col = g + 8 * (r % 2), 2 * t + h + 8 * (r // 2)
                cell(ax + col * c, ay + row * c, l, regc[r])
                if l == hi:
                    outl.append((ax + col * c, ay + row * c))
        for r in range(2):
            for h in range(2):
                k, n = 2 * t + h + 8 * r, g
                cell(bx + n * c, by + k * c, l, regc[r])
                if l == hi:
                    outl.append((bx + n * c, by + k * c))
        for i in range(4):
            row, col = g + 8 * (i // 2), 2 * t + i % 2
            cell(cx + col * c, by + row * c, l, regc[i])
            if l == hi:
                outl.append((cx + col * c, by + row * c))
    for x, y in outl:
        s.rect(x, y, c, c, stroke=RED, sw=2.5)
    for x0, y0, w, name, dims in ((ax, ay, 16, "A", "16 × 16 (m × k), row-major"), (bx, by, 8, "· B", "16 × 8 (k × n)"),
                                  (cx, by, 8, "→ C / D", "16 × 8, f32")):
        s.rect(x0, y0, w * c, 16 * c, stroke=INK, sw=1.5)
        s.text(x0, y0 - 8, f"{name}: {dims}", 15, bold=True)
    s.line(ax, ay + 8 * c, ax + 16 * c, ay + 8 * c, stroke=INK, sw=1)
    s.line(ax + 8 * c, ay, ax + 8 * c, ay + 16 * c, stroke=INK, sw=1)
    s.line(bx, by + 8 * c, bx + 8 * c, by + 8 * c, stroke=INK, sw=1)
    s.line(cx, by + 8 * c, cx + 8 * c, by + 8 * c, stroke=INK, sw=1)
    y = by + 16 * c + 28
    labels = ["A: a0 a1 (rows 0-7, k 0-7) · B: b0 b1 (k 0-7) · C: c0",
              "A: a2 a3 (rows 8-15, k 0-7) · B: b2 b3 (k 8-15) · C: c1",
              "A: a4 a5 (rows 0-7, k 8-15) · C: c2", "A: a6 a7 (rows 8-15, k 8-15) · C: c3"]
    for i, t in enumerate(labels):
        s.rect(L, y - 12, 14, 14, fill=regc[i], stroke="none", opacity=0.7)
        y = para(s, L + 22, y, f"register {i}: " + t, 15, W - 2 * L - 22) + 4
    s.h = int(y)
    return s.save("mma-m16n8k16-layout")


# 0009: ldmatrix.x4: lanes 8i .. 8i+7 give the row addresses of 8 x 8 matrix i; lane l receives
# row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of every matrix, one register per matrix.
def ldmatrix_x4():
    # Drawn for the lesson column (340 px): each row's lane written in its first cell, the notes under
    # the tile.
    W, L, c = 340, 8, 20
    s = Svg(W, 10)
    y = para(s, L, 22, "ldmatrix.sync.aligned", 16, W - 2 * L, bold=True, mono=True)
    y = para(s, L, y, ".m8n8.x4.shared.b16:", 16, W - 2 * L, bold=True, mono=True)
    y = para(s, L, y, "a 16 × 16 tile of A into the mma fragment", 16, W - 2 * L, bold=True)
    y = para(s, L, y, "Lane l points at row l % 16, column 8 (l / 16) of the tile: one 16-byte row of one "
             "8 × 8 matrix (the number in a row's first cell)", 15, W - 2 * L, fill=MUTED)
    ax = L + (W - 2 * L - 16 * c) / 2
    ay = y + 4
    cols = [BLUE, ORANGE, GREEN, PURPLE]
    # matrix i covers rows 8 (i % 2) .., cols 8 (i / 2) ..
    for i in range(4):
        r0, c0 = 8 * (i % 2), 8 * (i // 2)
        for r in range(8):
            for k in range(8):
                s.rect(ax + (c0 + k) * c, ay + (r0 + r) * c, c, c, fill=cols[i], stroke="#FFFFFF", sw=1,
                       opacity=0.55 if r == 0 and k in (2, 3) else 0.25)
            s.text(ax + c0 * c + c / 2, ay + (r0 + r) * c + c / 2 + 5, 8 * i + r, 15, anchor="middle",
                   fill=cols[i], mono=True, bold=True)
        s.text(ax + (c0 + 4.5) * c, ay + (r0 + 4) * c + 5, f"matrix {i}", 15, anchor="middle", bold=True)
    s.rect(ax, ay, 16 * c, 16 * c, stroke=INK, sw=1.5)
    s.line(ax, ay + 8 * c, ax + 16 * c, ay + 8 * c, stroke=INK, sw=1.5)
    s.line(ax + 8 * c, ay, ax + 8 * c, ay + 16 * c, stroke=INK, sw=1.5)
    # lane 1 receives (row 0, cols 2,3) of each matrix
    for i in range(4):
        r0, c0 = 8 * (i % 2), 8 * (i // 2)
        s.rect(ax + (c0 + 2) * c, ay + r0 * c, 2 * c, c, stroke=RED, sw=2.5)
    y = para(s, L, ay + 16 * c + 24, "Each phase reads 8 rows of 16 bytes (one 8 × 8 matrix of halves); "
             "x4 is 4 phases.", 15, W - 2 * L)
    y = para(s, L, y + 4, "Lane l receives, from each matrix i, row l / 4, columns 2 (l % 4) and 2 (l % 4) "
             "+ 1, packed in register i: outlined, lane 1's four registers.", 15, W - 2 * L)
    y = para(s, L, y + 4, "That is exactly the A fragment of m16n8k16: 4 registers per lane, one "
             "instruction. x1 / x2 load 1 or 2 matrices (lanes 0-7 / 0-15 give addresses); .trans hands "
             "each lane a column instead of a row: B from a row-major tile.", 15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("ldmatrix-x4")


# 0009: cp.async ring of 3 stages: copies of tiles k+1, k+2 in flight while the mma chew tile k.
def cp_async_pipeline():
    # Drawn for the lesson column (340 px): time runs down the page; two columns of copies (they
    # overlap) beside the tensor cores' column.
    W, L = 340, 8
    s = Svg(W, 10)
    y = para(s, L, 22, "cp.async with 3 stages: the copies run two tiles ahead of the tensor cores", 16,
             W - 2 * L, bold=True)
    n = 8
    # A made-up but typical ratio: a tile's copy takes 1.7 steps of mma. Tiles 0 and 1 start in the
    # prologue; tile k >= 2 starts in step k - 2, after that step's wait and barrier.
    copy_len, mma_len = 1.7, 1.0
    starts = {}
    mma_start = {}
    for k in range(n):
        if k < 2:
            cs = k * 0.15
        else:
            cs = mma_start[k - 2] + 0.1      # issued at step k - 2, after its wait and barrier
        starts[k] = cs
        ready = cs + copy_len
        prev = mma_start[k - 1] + mma_len if k > 0 else 0
        mma_start[k] = max(ready, prev) + (0.1 if k else 0)
    slot = [BLUE, ORANGE, GREEN]
    u = 44  # pixels per step of mma
    cw, mx, mw = 100, 218, 96  # a copy column's width; the mma column's left edge and width
    s.text(L, y + 4, "copies (cp.async)", 15, bold=True)
    s.text(mx, y + 4, "mma", 15, bold=True)
    t0 = y + 16
    last = n - 1
    while mma_start[last] + mma_len > 8.6:  # the tiles that fit the picture's height
        last -= 1
    for k in range(last + 1):
        xc = L + (k % 2) * (cw + 4)
        yc = t0 + starts[k] * u
        s.rect(xc, yc, cw, copy_len * u - 4, fill=slot[k % 3], stroke=INK, sw=1, opacity=0.45, rx=3)
        s.text(xc + 6, yc + 20, f"tile {k}", 15)
        s.text(xc + 6, yc + 40, f"→ slot {k % 3}", 15)
        ym = t0 + mma_start[k] * u
        s.rect(mx, ym, mw, mma_len * u - 4, fill=slot[k % 3], stroke=INK, sw=1, opacity=0.8, rx=3)
        s.text(mx + mw / 2, ym + 25, f"mma {k}", 15, anchor="middle", fill="#FFFFFF", bold=True)
        s.line(mx - 8, ym, mx + mw + 8, ym, stroke=RED, sw=1.5, dash="3,3")
    y = t0 + (mma_start[last] + mma_len) * u + 20
    s.arrow(W - L - 4, t0, W - L - 4, y - 24, stroke=MUTED)
    y = para(s, L, y, "time runs down (arrow)", 15, W - 2 * L, fill=MUTED)
    y = para(s, L, y + 6, "red: cp.async.wait_group 1 + __syncthreads(): tile k has landed, and every "
             "warp is done with tile k - 1, so the copy of tile k + 2 may overwrite its slot (k + 2) % 3 = "
             "(k - 1) % 3. One commit_group per step.", 15, W - 2 * L, fill=RED)
    y = para(s, L, y + 6, "With one buffer the tensor cores would wait out every copy; with a ring of 3 "
             "they wait only when a copy takes longer than two steps of mma (here, before the first tile).",
             15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("cp-async-pipeline")


# 0013: RoPE's two layouts of the same rotation, on one head of dim 8.
def rope_layouts():
    # Drawn for the lesson column (340 px): each layout's title above its row, a legend of the pairs.
    dim, half = 8, 4
    W, L, c = 340, 8, 38
    x0 = L + (W - 2 * L - dim * c) / 2
    s = Svg(W, 10)
    y = para(s, L, 22, "RoPE on one head of dim = 8: the same four rotations, two ways to pick the pairs",
             16, W - 2 * L, bold=True)
    cols = [BLUE, ORANGE, GREEN, PURPLE]

    def row(y, title, sub, pair_of, arcs):
        s.text(L, y + 16, title, 15, bold=True)
        s.text(L, y + 36, sub, 15, fill=MUTED, mono=True)
        y += 50
        for e in range(dim):
            p = pair_of(e)
            s.rect(x0 + e * c + 2, y, c - 4, 32, fill=cols[p], stroke="#FFFFFF", opacity=0.85)
            s.text(x0 + e * c + c / 2, y + 21, f"x{e}", 15, fill="#FFFFFF", anchor="middle", bold=True)
        depth = 0
        for (a, b, p, depth) in arcs:
            ax, bx = x0 + a * c + c / 2, x0 + b * c + c / 2
            yb = y + 34
            s.polyline([(ax, yb), (ax, yb + depth), (bx, yb + depth), (bx, yb)], stroke=cols[p], sw=2)
        return y + 34 + depth + 16

    y = row(y, "interleaved = 0", "NeoX, rotate_half", lambda e: e % half,
            [(i, i + half, i, 10 + 12 * i) for i in range(half)])
    y = row(y, "interleaved = 1", "GPT-J, complex pairs", lambda e: e // 2,
            [(2 * i, 2 * i + 1, i, 12) for i in range(half)])
    s.text(L, y + 4, "colour:", 15, fill=MUTED)
    for p in range(half):
        s.text(L + 62 + p * 66, y + 4, f"pair {p}", 15, fill=cols[p], bold=True)
    y += 30
    # the angles, shared by both rows
    ang = ", ".join(f"{10000 ** (-2 * i / dim):g}" for i in range(half))
    y = para(s, L, y, f"pair i turns by pos · inv_freq[i], inv_freq = 10000^(−2i/8) = [{ang}]", 15,
             W - 2 * L)
    y = para(s, L, y + 4, "(y0, y1) = (x0 cos θ − x1 sin θ, x0 sin θ + x1 cos θ): the colour is the pair, "
             "and so the angle.", 15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("rope-layouts")


# 0013: cross-entropy over 4096 × 128256 f32 logits: passes over the 2.1 GB tensor.
def cross_entropy_passes():
    # Drawn for the lesson column (340 px), as attention_io is: each bar under its label.
    rows, V = 4096, 128256
    gb = rows * V * 4 / 1e9
    bars = [
        ("softmax written, then read back", ["read", "write P", "read P"], RED),
        ("two reads: the max, then Σ exp(x − m)", ["read", "read"], ORANGE),
        ("online (m, s): one read", ["read"], GREEN),
    ]
    W, L, seg = 340, 8, 100
    s = Svg(W, 10)
    s.text(L, 22, "Cross-entropy: passes over logits", 16, bold=True)
    y = 42
    for line in wrap(f"{rows} rows × V = {V} in f32: each pass moves {gb:.2f} GB", 15, W - 2 * L):
        s.text(L, y, line, 15, fill=MUTED)
        y += 20
    top, step = y + 4, 78
    for k, (label, parts, col) in enumerate(bars):
        y = top + k * step
        s.text(L, y + 15, label, 15)
        for j, part in enumerate(parts):
            s.rect(L + j * seg + 1, y + 22, seg - 2, 24, fill=col, stroke="none", opacity=0.85 - 0.15 * j)
            s.text(L + j * seg + seg / 2, y + 39, part, 15, fill="#FFFFFF", anchor="middle", bold=True)
        us = len(parts) * gb * 1e9 / 4.8e12 * 1e6
        fig = f"{len(parts) * gb:.1f} GB → {us:.0f} µs"
        s.text(L, y + 66, fig, 15, bold=True)
    y = top + len(bars) * step + 18
    note = ("Times are the least at the H200's 4.8 TB/s. A row is 513 KB and hundreds of rows are in flight, "
            "far more than the 60 MB L2 keeps: every pass over the logits comes from DRAM.")
    for line in wrap(note, 15, W - 2 * L):
        s.text(L, y, line, 15, fill=MUTED)
        y += 20
    s.h = int(y)
    return s.save("cross-entropy-passes")


# 0013: MoE routing: 6 tokens, 4 experts, top-2; count, scan, scatter, then one GEMM per group.
def moe_routing():
    # Drawn for the lesson column (340 px): the three stages stacked, top to bottom.
    choice = [(2, 0), (1, 2), (2, 3), (0, 2), (2, 1), (3, 2)]  # each token's top-2 experts
    E = 4
    cols = [BLUE, ORANGE, RED, GREEN]
    counts = [sum(e in ch for ch in choice) for e in range(E)]
    offs = [sum(counts[:e]) for e in range(E)]
    order = sorted(range(2 * len(choice)), key=lambda f: (choice[f // 2][f % 2], f))  # stable by expert
    W, L = 340, 8
    s = Svg(W, 10)
    y = para(s, L, 22, "MoE routing: 6 tokens, 4 experts, top-2 per token → rows grouped by expert → "
             "one GEMM per group", 16, W - 2 * L, bold=True)
    # tokens and their choices, two tokens a line
    y = para(s, L, y + 6, "1. token: experts (top-2)", 15, W - 2 * L, fill=MUTED)
    for t, ch in enumerate(choice):
        tx, ty = L + (t % 2) * 166, y + (t // 2) * 40
        s.rect(tx, ty, 44, 32, fill=LIGHT, stroke=INK, rx=4)
        s.text(tx + 22, ty + 21, f"t{t}", 15, anchor="middle", bold=True)
        for j, e in enumerate(ch):
            s.rect(tx + 52 + j * 44, ty + 2, 38, 28, fill=cols[e], stroke="none", opacity=0.9, rx=4)
            s.text(tx + 71 + j * 44, ty + 21, f"e{e}", 15, fill="#FFFFFF", anchor="middle", bold=True)
    y += 3 * 40 + 20
    # counts and offsets
    y = para(s, L, y, "2. count (histogram), offset (exclusive scan)", 15, W - 2 * L, fill=MUTED)
    for e in range(E):
        s.rect(L, y + e * 34, counts[e] * 20, 26, fill=cols[e], stroke="none", opacity=0.9)
        s.text(L + counts[e] * 20 + 8, y + e * 34 + 19, f"e{e}: {counts[e]} rows, offset {offs[e]}", 15)
    y = para(s, L, y + E * 34 + 14, f"{sum(counts)} rows = 6 tokens × 2; e2 holds {counts[2]} of them", 15,
             W - 2 * L, fill=MUTED)
    # permuted rows
    y = para(s, L, y + 14, "3. permuted rows (stable: token order within an expert), one GEMM per expert",
             15, W - 2 * L, fill=MUTED)
    px, py, ph = L + 28, y, 26
    for r, f in enumerate(order):
        t, e = f // 2, choice[f // 2][f % 2]
        yy = py + r * ph
        s.rect(px, yy + 1, 90, ph - 2, fill=cols[e], stroke="none", opacity=0.35)
        s.text(px - 6, yy + 18, r, 15, fill=MUTED, anchor="end")
        s.text(px + 45, yy + 18, f"x[t{t}]", 15, anchor="middle", mono=True)
    for e in range(E):
        y0, y1 = py + offs[e] * ph, py + (offs[e] + counts[e]) * ph
        s.rect(px, y0, 90, y1 - y0, stroke=cols[e], sw=2.5)
        s.text(px + 104, (y0 + y1) / 2 + 5, "×", 16, anchor="middle", bold=True)
        s.rect(px + 116, y0 + 3, 44, y1 - y0 - 6, fill=cols[e], stroke="none", opacity=0.9)
        s.text(px + 138, (y0 + y1) / 2 + 5, f"W{e}", 15, fill="#FFFFFF", anchor="middle", bold=True)
        s.text(px + 168, (y0 + y1) / 2 + 5, f"{counts[e]} × H · H × N", 15, fill=MUTED)
    y = para(s, L, py + len(order) * ph + 26, "Then each token gathers its 2 output rows back and adds them, "
             "weighted by its router scores.", 15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("moe-routing")


# 0014: predicted against measured for four solutions, as multiples of the datasheet speed of light.
# Every figure is from the solution's header (measured on the H200) or from
# `warpbook predict` / `warpbook tune --backend sim` (predicted); the speed of light is the
# puzzle's least bytes over 4.8 TB/s, or its FLOPs over 989 TFLOP/s for the GEMM.
def model_vs_gpu():
    rows = [
        # name, speed of light (µs), [(label, predicted µs)], [measured µs, first to last], note
        ("26 RoPE", 268.5e6 / 4.8e12 * 1e6, [("predicted", 70.8)], [76.5, 69.8],
         "BLOCK=256 → BLOCK=128 (the model ranked 256 first)"),
        ("28 top-k rows", 525.75e6 / 4.8e12 * 1e6, [("predicted", 125.0)], [169.0, 158.0, 150.0, 145.2],
         "four versions; the model said ~125 for each"),
        ("32 W4A16 GEMV", 264.4e6 / 4.8e12 * 1e6, [("first, predicted", 87.0), ("last, predicted", 93.4)],
         [147.0, 105.7], "next step's loads in flight"),
        ("19 WMMA GEMM", 137.44e9 / 989e12 * 1e6, [("predicted", 459.0)], [584.0, 430.0, 424.2],
         "8-warp block → two 4-warp blocks → C via shared"),
    ]
    # Drawn for the lesson column (340 px): each solution's figures written under its line, not
    # beside its points (they lie a few pixels apart).
    W, L = 340, 8
    PL, PR = 14, 14
    s = Svg(W, 10)
    y = para(s, L, 22, "The model's check against the H200: time ÷ speed of light (1× = the datasheet "
             "roof)", 16, W - 2 * L, bold=True)
    y = para(s, L, y, "hollow: predicted by warpbook predict · filled: measured on the H200, first "
             "version → last", 15, W - 2 * L, fill=MUTED)
    lo, hi = 1.0, 4.5

    def X(r):
        return PL + (math.log(r) - math.log(lo)) / (math.log(hi) - math.log(lo)) * (W - PL - PR)

    top = y + 6
    for t in (1, 1.5, 2, 3, 4):
        s.text(X(t), top + 4, f"{t:g}×", 15, fill=MUTED, anchor="middle")
    y = top + 30
    ys = []
    for name, sol, preds, meas, note in rows:
        s.text(L, y, f"{name} · SoL {sol:.0f} µs", 15, bold=True)
        ly = y + 22
        ys.append(ly)
        s.line(X(1), ly, X(hi), ly, stroke="#CCD2DA", sw=1)
        for t in (1, 1.5, 2, 3, 4):  # the scale's ticks on every line
            s.line(X(t), ly - 5, X(t), ly + 5, stroke="#CCD2DA", sw=1)
        pts = [X(m / sol) for m in meas]
        for a, b in zip(pts, pts[1:]):
            s.arrow(a, ly, b + 6, ly, stroke=RED, sw=1.5, head=6)
        for m in meas:
            s.circle(X(m / sol), ly, 5, fill=RED)
        for lab, pv in preds:
            s.circle(X(pv / sol), ly, 6, fill="#FFFFFF", stroke=BLUE, sw=2)
        y = ly + 30
        s.text(L, y, "measured " + " → ".join(f"{m:g}" for m in meas) + " µs", 15, fill=RED)
        y = para(s, L, y + 20, "; ".join(f"{lab} {pv:g}\u00a0µs" for lab, pv in preds), 15, W - 2 * L, fill=BLUE)
        y = para(s, L, y, note, 15, W - 2 * L, fill=MUTED) + 16
    y = para(s, L, y, "time ÷ speed of light (log scale); left is faster", 15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("model-vs-gpu")
# 0011: split-K decode at B = 1: the sequence cut into chunks, partial states, a combine; and the
# SMs that one block per (sequence, KV head) leaves idle.
def decode_split():
    # Drawn for the lesson column (340 px): the chunks, the combine, then the two SM maps stacked.
    L, chunk, hkv, sms = 8192, 512, 8, 132
    S = L // chunk
    W, M = 340, 8
    s = Svg(W, 10)
    y = para(s, M, 22, f"Decode at B = 1, L = {L}, {hkv} KV heads: split each sequence into chunks of "
             f"{chunk} keys", 16, W - 2 * M, bold=True)
    y = para(s, M, y + 4, f"keys 0 … {L - 1} of one (sequence, KV head): {S} chunks, one block each, each "
             "leaving its (m, l, acc)", 15, W - 2 * M, fill=MUTED)
    cw = (W - 2 * M) / S
    for c in range(S):
        s.rect(M + c * cw + 1, y, cw - 2, 26, fill=PALETTE[c % 2], stroke="none", opacity=0.75, rx=2)
        s.text(M + c * cw + cw / 2, y + 18, f"{c}", 15, fill="#FFFFFF",
               anchor="middle")
        s.arrow(M + c * cw + cw / 2, y + 28, M + c * cw + cw / 2, y + 46, stroke=MUTED, sw=1, head=5)
    y += 50
    s.rect(M, y, W - 2 * M, 66, fill=GREEN, stroke="none", opacity=0.25, rx=4)
    for k, line in enumerate(("combine: M = max m_s,", "out = Σ e^(m_s−M)·acc_s", "    / Σ e^(m_s−M)·l_s")):
        s.text(M + 6, y + 18 + 20 * k, line, 15, mono=True)
    y += 66 + 28
    # two SM maps
    cols, cell = 12, 24
    rows = (sms + cols - 1) // cols
    mx = M + (W - 2 * M - cols * cell) / 2
    maps = [("one block per (sequence, KV head)", hkv, 1, f"{hkv} blocks: {sms - hkv} of {sms} SMs idle"),
            (f"split-K, chunks of {chunk}", hkv * S, S, f"{hkv * S} blocks: {hkv * S} of {sms} SMs busy")]
    for k, (title, nblk, per_head, note) in enumerate(maps):
        s.text(M, y, title, 15, bold=True)
        my = y + 10
        for i in range(sms):
            r, c = divmod(i, cols)
            busy = i < nblk
            head = i // per_head if busy else 0
            s.rect(mx + c * cell, my + r * (cell - 6), cell - 3, cell - 9,
                   fill=PALETTE[head % len(PALETTE)] if busy else LIGHT,
                   stroke="none" if busy else GREY, sw=0.8, opacity=0.85 if busy else None, rx=2)
        y = para(s, M, my + rows * (cell - 6) + 18, note, 15, W - 2 * M, fill=RED if k == 0 else GREEN,
                 bold=True) + 16
    y = para(s, M, y, "Each square is one of the H200's 132 SMs, coloured by the KV head its block works on. "
             "At B = 64 both grids are full.", 15, W - 2 * M, fill=MUTED)
    s.h = int(y)
    return s.save("decode-split")


# 0011: a paged KV cache: two sequences' block tables pointing into one pool of 16-token pages.
def paged_kv_cache():
    # Drawn for the lesson column (340 px): the block tables over the pool; each page says which
    # table entry points at it, in place of arrows across the pool.
    table, lens, pool = [[3, 0], [4, 1]], [20, 7], 5
    W, M = 340, 8
    s = Svg(W, 10)
    y = para(s, M, 22, "A paged KV cache: pages of 16 tokens in one pool, a block table per sequence", 16,
             W - 2 * M, bold=True)
    seqc = [BLUE, ORANGE]
    s.text(M, y + 6, "block_table", 15, bold=True, mono=True)
    y += 16
    owner = {}
    for b, row in enumerate(table):
        yy = y + b * 40
        s.text(M, yy + 24, f"seq {b}", 15, bold=True, fill=seqc[b])
        for j, page in enumerate(row):
            used = j * 16 < lens[b]
            s.rect(M + 60 + j * 52, yy + 6, 48, 28, fill=seqc[b] if used else LIGHT, stroke=INK, sw=1,
                   opacity=0.3 if used else None, rx=3)
            s.text(M + 84 + j * 52, yy + 25, page, 15, anchor="middle", mono=True, fill=INK if used else MUTED)
            if used:
                owner[page] = (b, j)
        s.text(M + 170, yy + 25, f"lens = {lens[b]}", 15, fill=MUTED)
    y += 2 * 40 + 24
    y = para(s, M, y, "pool of pages: k_cache[page][slot][Hkv][D] (and v_cache alike)", 15, W - 2 * M, fill=MUTED)
    slot = 20
    px = M + (W - 2 * M - 16 * slot) / 2
    for p in range(pool):
        ob = owner.get(p)
        label = f"page {p} ← seq {ob[0]}, entry {ob[1]}" if ob else f"page {p} (free)"
        s.text(M, y + 6, label, 15, fill=seqc[ob[0]] if ob else MUTED, bold=ob is not None)
        for sl in range(16):
            tok = None
            if ob is not None:
                b, j = ob
                if j * 16 + sl < lens[b]:
                    tok = j * 16 + sl
            s.rect(px + sl * slot, y + 12, slot - 1, 26, fill=seqc[ob[0]] if tok is not None else LIGHT,
                   stroke="none" if tok is not None else GREY, sw=0.8, opacity=0.75 if tok is not None else None, rx=2)
            if tok is not None:
                s.text(px + sl * slot + (slot - 1) / 2, y + 30, tok, 15, fill="#FFFFFF", anchor="middle")
        y += 62
    for line in ("token j of sequence b →", "page = block_table[b][j / 16]", "slot = j % 16",
                 "element of its K row =", "((page · 16 + slot) · Hkv + h) · D"):
        s.text(M, y, line, 15, mono=True)
        y += 20
    y = para(s, M, y, "(in 64 bits: pools pass 2³¹ elements)", 15, W - 2 * M)
    y = para(s, M, y + 6, "Grey slots past lens are garbage; table entries past the last page (seq 1's page 1) "
             "are not followed; free pages may be other sequences'.", 15, W - 2 * M, fill=MUTED)
    s.h = int(y)
    return s.save("paged-kv-cache")


# 0010: FlashAttention's forward loop: a query tile held by four warps, K/V tiles streamed through
# shared memory, and the running (m, l, acc) of every row rescaled when its maximum moves.
def flash_tiles():
    # Drawn for the lesson column (340 px): the K/V stream, the Q tile, the step, the state and the
    # output stacked from top to bottom.
    W, M = 340, 8
    s = Svg(W, 10)
    y = para(s, M, 22, "FlashAttention forward: one block owns a tile of Br = 128 query rows (one (batch, "
             "head), D = 128)", 16, W - 2 * M, bold=True)
    # the K/V stream
    nt, kw = 8, 38
    y = para(s, M, y + 6, "K and V tiles j = 0 … 7 of Bc = 64 keys (S = 512 here), read in turn", 15,
             W - 2 * M, fill=MUTED)
    kx = M + (W - 2 * M - nt * (kw + 3)) / 2
    for j in range(nt):
        cur, done = j == 3, j < 3
        col = BLUE if cur else (GREY if done else TEAL)
        s.rect(kx + j * (kw + 3), y, kw, 26, fill=col, stroke="none", opacity=0.9 if cur else 0.55, rx=3)
        s.text(kx + j * (kw + 3) + kw / 2, y + 18, j, 15, fill="#FFFFFF", anchor="middle", bold=True)
    y += 48
    for col, text in ((GREY, "done"), (BLUE, "in shared memory now"), (TEAL, "next: cp.async, double-buffered")):
        s.rect(M, y - 12, 12, 12, fill=col, stroke="none", opacity=0.8)
        s.text(M + 18, y, text, 15, fill=MUTED)
        y += 20
    # the query tile, four warps of 32 rows
    y = para(s, M, y + 12, "Q tile, loaded once", 15, W - 2 * M, bold=True)
    for w in range(4):
        s.rect(M, y - 6 + w * 30, W - 2 * M, 27, fill=PALETTE[w], stroke="none", opacity=0.8, rx=3)
        s.text(W / 2, y + 13 + w * 30, f"warp {w}: rows {32 * w}–{32 * w + 31}", 15, fill="#FFFFFF",
               anchor="middle", bold=True)
    y = para(s, M, y + 4 * 30 + 14, "a warp's rows never meet another warp's: no barrier for the softmax",
             15, W - 2 * M, fill=MUTED)
    # the step, for tile j = 3
    y0 = y + 6
    y = y0 + 24
    y = para(s, M + 8, y, "step j (here j = 3), per warp, per row r:", 15, W - 2 * M - 16, bold=True)
    lines = [
        (["S = Q · Kⱼᵀ · (1/√D)"], "mma.sync: Q fragment × Kⱼ from shared memory"),
        (["m_new = max(m,", "  max over the row of S)"], "2 shuffles within each quad of lanes"),
        (["α = exp(m − m_new)"], "the rescale: 1 when the max did not move"),
        (["P = exp(S − m_new)"], "f32, then bf16: stays in registers"),
        (["l = α · l + Σ P"], "running denominator"),
        (["acc = α · acc + P · Vⱼ"], "mma.sync: P is the A operand, Vⱼ via ldmatrix.trans"),
        (["m = m_new"], ""),
    ]
    for eqs, note in lines:
        y += 6
        for eq in eqs:
            s.text(M + 8, y, eq, 15, mono=True)
            y += 20
        if note:
            y = para(s, M + 8, y, note, 15, W - 2 * M - 16, fill=MUTED)
    s.items.insert(0, f'<rect x="{M}" y="{y0:.1f}" width="{W - 2 * M}" height="{y - y0 - 6:.1f}" rx="8" '
                      f'fill="{LIGHT}" stroke="{MUTED}" stroke-width="1.0"/>')
    # the state and the output
    y = para(s, M, y + 14, "per row, in registers", 15, W - 2 * M, bold=True)
    for name, what, col in (("m", "running max", RED), ("l", "running sum", ORANGE),
                            ("acc[D]", "unnormalised out", GREEN)):
        s.rect(M, y - 4, W - 2 * M, 30, fill=col, stroke="none", opacity=0.25, rx=4)
        s.text(M + 10, y + 16, name, 15, mono=True, bold=True)
        s.text(M + 80, y + 16, what, 15, fill=MUTED)
        y += 34
    s.rect(M, y + 4, W - 2 * M, 50, fill=PURPLE, stroke="none", opacity=0.8, rx=4)
    s.text(W / 2, y + 24, "after the last tile:", 15, fill="#FFFFFF", anchor="middle")
    s.text(W / 2, y + 44, "O = acc / l → DRAM once", 15, fill="#FFFFFF", anchor="middle", bold=True)
    y = para(s, M, y + 80, "The Br × S score matrix never exists: each Br × Bc piece of it lives in registers "
             "for one step.", 15, W - 2 * M)
    y = para(s, M, y + 4, "DRAM traffic per block: its Q tile and O tile once, and every K and V tile of its "
             "head once (the L2 shares them between the head's blocks).", 15, W - 2 * M, fill=MUTED)
    s.h = int(y)
    return s.save("flash-tiles")


# 0010: the causal tile map: tiles above the diagonal skipped, diagonal tiles masked, the rest full.
def causal_tiles():
    # Drawn for the lesson column (340 px): the work per query tile as a column of numbers beside the
    # grid, the legend and notes under it.
    T, cell = 8, 30
    W, M = 340, 8
    s = Svg(W, 10)
    y = para(s, M, 22, f"Causal attention in tiles: {T} query tiles × {T} key tiles (S = 1024, 128 × 128 "
             "tiles)", 16, W - 2 * M, bold=True)
    gx, gy = 40, y + 56
    s.text(M, gy - 50, "rows: query tile i ↓", 15, fill=MUTED)
    s.text(M, gy - 30, "columns: key tile j →", 15, fill=MUTED)
    full = masked = skipped = 0
    for i in range(T):
        s.text(gx - 8, gy + i * cell + cell / 2 + 5, i, 15, anchor="end")
        for j in range(T):
            x, yy = gx + j * cell, gy + i * cell
            if j < i:
                full += 1
                s.rect(x + 1, yy + 1, cell - 2, cell - 2, fill=BLUE, stroke="none", opacity=0.8)
            elif j == i:
                masked += 1
                s.rect(x + 1, yy + 1, cell - 2, cell - 2, fill="#FFFFFF", stroke=ORANGE, sw=1.5)
                # lower triangle (keys ≤ query) kept
                s.polygon([(x + 1, yy + 1), (x + 1, yy + cell - 1), (x + cell - 1, yy + cell - 1)], fill=mix(ORANGE, 0.8))
            else:
                skipped += 1
                s.rect(x + 1, yy + 1, cell - 2, cell - 2, fill=LIGHT, stroke=GREY, sw=0.8, dash="3,3")
    for j in range(T):
        s.text(gx + j * cell + cell / 2, gy - 6, j, 15, anchor="middle")
    # work per query tile, a number beside each row
    bx = gx + T * cell + 20
    s.text(bx, gy - 30, "work", 15, fill=MUTED, anchor="middle")
    for i in range(T):
        s.text(bx, gy + i * cell + cell / 2 + 5, i + 1, 15, anchor="middle", fill=BLUE, bold=True)
    y = para(s, M, gy + T * cell + 24, "work: the tiles a query tile computes. Launch the longest first: "
             "7, 6, … 0", 15, W - 2 * M, bold=True, fill=GREEN)
    y += 10
    items = [(BLUE, f"full: {full} tiles, no mask", None),
             (ORANGE, f"diagonal: {masked} tiles, masked (key > query → −∞)", None),
             (LIGHT, f"skipped: {skipped} tiles, never loaded", GREY)]
    for col, text, stroke in items:
        s.rect(M, y - 13, 18, 18, fill=col, stroke=stroke or "none", sw=0.8, opacity=0.8 if stroke is None else None)
        y = para(s, M + 26, y, text, 15, W - 2 * M - 26) + 4
    Tb = 32
    y = para(s, M, y + 8, f"At S = 4096 with 128 × 128 tiles: {Tb * (Tb - 1) // 2} full + {Tb} diagonal = "
             f"{Tb * (Tb + 1) // 2} of {Tb * Tb} tiles, {100 * Tb * (Tb + 1) / 2 / Tb / Tb:.1f}% of the "
             f"non-causal work; {Tb * (Tb - 1) // 2} skipped.", 15, W - 2 * M)
    y = para(s, M, y + 4, "Only the diagonal tiles pay for a mask; the full ones run the same loop as "
             "non-causal attention.", 15, W - 2 * M, fill=MUTED)
    s.h = int(y)
    return s.save("causal-tiles")


# 0010: DRAM time of naive attention against FlashAttention at B 4, H 32, S 4096, D 128, bf16.
def wrap(text, size, width, bold=False):
    """The text cut into lines no wider than `width` at font `size` (DejaVu Sans), at spaces."""
    lines, cur = [], ""
    for word in text.split(" "):
        cand = f"{cur} {word}" if cur else word
        if cur and check_pictures.text_box(cand, size, 0, 0, bold=bold)[2] > width:
            lines.append(cur)
            cur = word
        else:
            cur = cand
    return lines + [cur]


def nb(text):
    """The text with its "X × Y" products (and sums, quotients) kept on one line when it is wrapped."""
    for op in "×/+*":
        text = text.replace(f" {op} ", f"\u00a0{op}\u00a0")
    return text


def para(s, x, y, text, size, width, fill=INK, bold=False, mono=False, step=None):
    """The text wrapped to `width` and drawn from baseline y down; returns the next line's baseline.
    A monospaced text is drawn as one line (wrap measures DejaVu Sans): break it by hand."""
    step = step or round(size * 4 / 3)
    for line in wrap(text, size, width, bold) if not mono else [text]:
        s.text(x, y, line, size, fill=fill, bold=bold, mono=mono)
        y += step
    return y


def attention_io():
    # Drawn for the lesson column (340 px fits it at 1280 x 800 and up), text at 15 px and up:
    # each bar under its label, the figures after the bar.
    B, Hh, S, D = 4, 32, 4096, 128
    e = B * Hh * S * D * 2
    sc = B * Hh * S * S * 2
    flops = 4 * B * Hh * S * S * D
    bars = [
        ("naive: S and P written and read", 2 * e + 4 * sc + 2 * e, RED),
        ("flash, Br = 128, K/V re-read from DRAM", 2 * e + (S // 128) * 2 * e * 1, ORANGE),
        ("flash, K/V re-reads caught by the L2", 4 * e, GREEN),
    ]
    W, L = 340, 8
    scale = 40  # pixels per ms
    x0 = L
    s = Svg(W, 10)
    s.text(L, 22, "Attention on an H200: DRAM time", 16, bold=True)
    s.text(L, 42, f"B {B}, H {Hh}, S {S}, D {D}, bf16", 15, fill=MUTED)
    top, step = 62, 58
    yb = top + len(bars) * step
    lines = ((flops / 989e12, "tensor cores at 989 TFLOP/s", INK),
             (flops / 646e12, "mma.sync at 646 TFLOP/s", MUTED))
    for k, (label, b, col) in enumerate(bars):
        y = top + k * step
        ms = b / 4.8e12 * 1e3
        s.text(L, y + 15, label, 15)
        s.rect(x0, y + 22, max(ms * scale, 3), 24, fill=col, stroke="none", opacity=0.85)
        figure = f"{b / 1e9:.2f} GB → {ms:.2f} ms"
        fx = x0 + max(ms * scale, 3) + 6
        s.text(fx, y + 40, figure, 15, bold=True)
        # The arithmetic's time across each bar's band, where the bar's figures leave room.
        for sec, _, lc in lines:
            if fx - 4 <= x0 + sec * 1e3 * scale <= check_pictures.text_box(figure, 15, fx, 0, bold=True)[2] + 4:
                continue
            s.line(x0 + sec * 1e3 * scale, y + 19, x0 + sec * 1e3 * scale, y + 49, stroke=lc, sw=1.5, dash="4,3")
    y = yb + 14
    for sec, name, lc in lines:
        s.line(L, y - 5, L + 22, y - 5, stroke=lc, sw=1.5, dash="4,3")
        s.text(L + 28, y, f"{sec * 1e3:.2f} ms: {name}", 15, fill=lc)
        y += 20
    y += 6
    note = (f"DRAM at 4.8 TB/s. Dashed: the {flops / 1e12:.2f} TFLOP of QKᵀ and PV. Naive attention is far "
            "right of both lines: memory-bound. Flash, with each head's 2 MB of K and V in the L2, is far "
            "left: compute-bound.")
    for line in wrap(note, 15, W - 2 * L):
        s.text(L, y, line, 15, fill=MUTED)
        y += 20
    s.h = int(y)
    return s.save("attention-io")


# 0016: the column sums of a weight gradient: atomics from every row, or per-block partial rows
# added by a second kernel.
def column_sums():
    # Drawn for the lesson column (340 px): the two schemes stacked, each with its notes under it.
    M, N, parts = 16384, 4096, 264
    rows, cols, stripes = 8, 12, 4
    W, L, cw, ch = 340, 8, 16, 12
    gx = 60  # the grids' left edge: their names sit to the left of it
    s = Svg(W, 10)
    y = para(s, L, 22, "dγ[c] = Σ over rows of dy · x̂: a sum down every column, across all rows", 16,
             W - 2 * L, bold=True)

    def grid(y0):
        for r in range(rows):
            for c in range(cols):
                s.rect(gx + c * cw, y0 + r * ch, cw, ch, fill=PALETTE[r * stripes // rows],
                       stroke="#FFFFFF", sw=1.5, opacity=0.55)
        s.text(gx - 8, y0 + rows * ch / 2 + 5, "rows", 15, fill=MUTED, anchor="end")
        return y0 + rows * ch

    def out_row(y0, colour, name):
        for c in range(cols):
            s.rect(gx + c * cw, y0, cw, ch, fill=colour, stroke="#FFFFFF", sw=1.5, opacity=0.9)
        s.text(gx - 8, y0 + ch - 1, name, 15, anchor="end", bold=True)
        return y0 + ch

    # Atomics: every element adds into its column's one word.
    y += 10
    s.text(L, y, "Atomics", 16, bold=True)
    ya = y + 10
    yg = grid(ya)
    yd = yg + 40
    for c in (2, 7):
        for r in range(rows):
            s.arrow(gx + c * cw + cw / 2, ya + r * ch + ch / 2, gx + c * cw + cw / 2 + (r - 3.5) * 1.2,
                    yd - 2, stroke=RED, sw=0.9, head=5)
    y = out_row(yd, GREY, "dγ") + 22
    y = para(s, L, y, f"M · N = {M * N / 1e6:.0f} million atomicAdds (as many again for dβ) on {N} "
             "words, one at a time per word, in an order that changes every run", 15, W - 2 * L)

    # Two stages: each block sums its stripe into one partial row; a second kernel adds them.
    y += 14
    s.text(L, y, "Two stages", 16, bold=True)
    yb = y + 10
    yg = grid(yb)
    yq = yg + 34
    for k in range(stripes):  # each stripe of rows becomes one partial row
        y0, y1 = yb + (k * 2 + 1) * ch, yq + k * ch + ch / 2
        xk = gx + cols * cw + 10 + 10 * (stripes - 1 - k)
        s.polyline([(gx + cols * cw + 2, y0), (xk, y0), (xk, y1)], stroke=PALETTE[k], sw=1.4)
        s.arrow(xk, y1, gx + cols * cw + 2, y1, stroke=PALETTE[k], sw=1.4, head=6)
        for c in range(cols):
            s.rect(gx + c * cw, yq + k * ch, cw, ch, fill=PALETTE[k], stroke="#FFFFFF", sw=1.5,
                   opacity=0.9)
    s.text(gx - 8, yq + stripes * ch / 2 + 5, "part", 15, fill=MUTED, anchor="end")
    yd2 = yq + stripes * ch + 30
    for c in range(cols):
        s.arrow(gx + c * cw + cw / 2, yq + stripes * ch + 2, gx + c * cw + cw / 2, yd2 - 2, stroke=INK,
                sw=1.0, head=5)
    y = out_row(yd2, GREEN, "dγ") + 22
    y = para(s, L, y, "Stage 1: each block keeps its columns' sums in registers over its stripe of "
             "rows, then writes one partial row.", 15, W - 2 * L)
    y = para(s, L, y, "Stage 2: add the parts down each column, in a fixed order.", 15, W - 2 * L)
    mb = parts * 2 * N * 4 / 1e6
    y = para(s, L, y, nb(f"{parts} blocks × 2 partial rows × {N} floats = {mb:.1f} MB, written and "
                         "read once; the same bits every run."), 15, W - 2 * L)
    y = para(s, L, y + 10, f"Drawn with 8 rows, 12 columns and 4 blocks; the figures are for M = {M}, "
             f"N = {N}.", 15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("column-sums")


# 0017: block scales: a token's 1 x 128 pieces and where their scales are stored ([K / 128, T]),
# and a weight matrix's 128 x 128 blocks. One token is coloured block by block in both places.
def block_scales():
    W, L = 340, 8
    s = Svg(W, 10)
    s.text(L, 22, "Block scales for an FP8 GEMM", 16, bold=True)
    tokens, kblocks, t_hi = 6, 4, 2
    cols = [BLUE, ORANGE, GREEN, PURPLE]
    y = para(s, L, 46, nb("Activations A, T × K: one scale per 1 × 128 piece of a token"), 15, W - 2 * L)
    x0, cw, rh = 40, 68, 12
    top = y - 6
    for t in range(tokens):
        for kb in range(kblocks):
            hi = t == t_hi
            s.rect(x0 + kb * cw, top + t * rh, cw, rh, fill=cols[kb] if hi else LIGHT, stroke=INK, sw=0.6,
                   opacity=0.85 if hi else None)
    s.text(x0 - 6, top + t_hi * rh + 11, "t", 15, anchor="end", italic=True)
    y = top + tokens * rh + 22
    y = para(s, L, y, "Their scales, stored [K / 128, T]: the T scales of one slice of K together", 15,
             W - 2 * L)
    cw2 = 34
    top = y - 6
    for kb in range(kblocks):
        for t in range(tokens):
            hi = t == t_hi
            s.rect(x0 + t * cw2, top + kb * rh, cw2, rh, fill=cols[kb] if hi else LIGHT, stroke=INK, sw=0.6,
                   opacity=0.85 if hi else None)
    s.text(x0 + t_hi * cw2 + cw2 / 2, top + kblocks * rh + 17, "t", 15, anchor="middle", italic=True)
    y = top + kblocks * rh + 42
    y = para(s, L, y, nb("Weights B, N × K: one scale per 128 × 128 block"), 15, W - 2 * L)
    bs = 30
    top = y - 6
    for n in range(3):
        for kb in range(kblocks):
            hi = n == 1 and kb == 2
            s.rect(x0 + kb * bs * 2.2, top + n * bs, bs * 2.2, bs, fill=RED if hi else LIGHT, stroke=INK, sw=0.6,
                   opacity=0.85 if hi else None)
    y = top + 3 * bs + 24
    note = ("Every 128 of K, the GEMM scales its partial sum for row m and column n by the two scales of that "
            "slice, one from each picture, and adds it into f32.")
    for line in wrap(note, 15, W - 2 * L):
        s.text(L, y, line, 15, fill=MUTED)
        y += 20
    s.h = int(y)
    return s.save("block-scales")


# 0018: one SM of the warp-specialised persistent GEMM: a producer, a ring of slots, two consumers.
def warp_specialized_gemm():
    W, L = 340, 8
    s = Svg(W, 10)
    y = para(s, L, 22, "One SM of the persistent GEMM: a producer, a ring, two consumers", 16, W - 2 * L,
             bold=True)
    right = W - L - 30  # the boxes end here; the empty barriers' arrow runs up beside them
    # The producer warpgroup.
    top = y
    s.rect(L, top, right - L, 72, fill=ORANGE, stroke=INK, sw=1, opacity=0.3, rx=4)
    s.text(L + 8, top + 21, "producer warpgroup", 15, bold=True)
    s.text(L + 8, top + 42, "40 registers", 15)
    s.text(L + 8, top + 63, "1 thread: TMA copies of A and B", 15)
    # The ring.
    ry = top + 72 + 44
    s.arrow((L + right) / 2, top + 74, (L + right) / 2, ry - 2, stroke=INK)
    s.text((L + right) / 2 + 8, top + 100, "full[s]: bytes landed", 15)
    n = 4
    sw_ = (right - L - 3 * 6) / n
    for k in range(n):
        x = L + k * (sw_ + 6)
        s.rect(x, ry, sw_, 46, fill=PALETTE[k], stroke=INK, sw=1, opacity=0.45, rx=3)
        s.text(x + sw_ / 2, ry + 20, f"slot {k}", 15, anchor="middle", bold=True)
        s.text(x + sw_ / 2, ry + 39, "48 KB", 15, anchor="middle")
    # The consumers.
    cy = ry + 46 + 40
    cw = (right - L - 8) / 2
    for j, rows in enumerate(["rows 0-63", "rows 64-127"]):
        x = L + j * (cw + 8)
        s.arrow(x + cw / 2, ry + 48, x + cw / 2, cy - 2, stroke=INK)
        s.rect(x, cy, cw, 72, fill=BLUE, stroke=INK, sw=1, opacity=0.3, rx=4)
        s.text(x + 8, cy + 21, f"consumer {j + 1}", 15, bold=True)
        s.text(x + 8, cy + 42, rows, 15)
        s.text(x + 8, cy + 63, "232 registers", 15)
    s.text(L + cw / 2 + 8, ry + 76, "wgmma", 15)
    # empty[s]: from the consumers back up to the producer, along the right edge.
    ex = W - L - 10
    s.polyline([(right + 2, cy + 36), (ex, cy + 36), (ex, top + 26)], stroke=RED, sw=1.5)
    s.arrow(ex, top + 26, right + 4, top + 26, stroke=RED)
    y = cy + 72 + 26
    y = para(s, L, y, "red: empty[s], one arrival per consumer warp once its wgmma have read slot s; "
             "the producer refills it.", 15, W - 2 * L, fill=RED)
    y = para(s, L, y + 4, "Each block walks tiles t = b, b + 132, ... in grouped order; the producer "
             "runs up to 4 k-steps ahead, into the next tile while the consumers store this one.",
             15, W - 2 * L, fill=MUTED)
    s.h = int(y)
    return s.save("warp-specialized-gemm")


PICTURES = [grid_blocks_threads, grid_2d, grid_stride, coalesced_vs_strided, roofline, reduction_tree,
            bank_conflicts, fusion_bytes, tiled_matmul, register_tile, mma_layout, ldmatrix_x4,
            cp_async_pipeline, fp8_formats, nf4_codes, q4_0_block, quant_error, rope_layouts,
            cross_entropy_passes, moe_routing, model_vs_gpu, decode_split, paged_kv_cache,
            flash_tiles, causal_tiles, attention_io, column_sums, block_scales, warp_specialized_gemm]


def main():
    only = set(sys.argv[1:])
    convert = shutil.which("convert")
    rsvg = shutil.which("rsvg-convert")
    for fn in PICTURES:
        path = fn()
        name = os.path.splitext(os.path.basename(path))[0]
        if only and name not in only:
            continue
        if convert:
            png = os.path.splitext(path)[0] + ".png"
            # Drawn so that its smallest text is the window's body text: the window never shows a
            # picture smaller than its PNG (check_pictures.py holds both to it).
            width, texts, _ = check_pictures.boxes_and_lines(path)
            smallest = min((t[1] for t in texts), default=check_pictures.BODY_PX)
            pw = math.ceil(width * max(1.0, check_pictures.BODY_PX / smallest))
            if rsvg:
                # ImageMagick hands SVG to rsvg-convert where that is its delegate, and then ignores
                # -density: draw at twice the size with rsvg here, then scale down (smooth text).
                big = subprocess.run([rsvg, "-w", str(2 * pw), "-b", "white", path], check=True,
                                     capture_output=True).stdout
                subprocess.run([convert, "png:-", "-resize", f"{pw}x", "-strip", "-depth", "8", png], input=big,
                               check=True)
            else:
                subprocess.run([convert, "-density", str(round(192 * pw / width)), "-background", "white", path,
                                "-resize", f"{pw}x", "-strip", "-depth", "8", png], check=True)
            print("wrote", os.path.relpath(png, os.path.dirname(os.path.dirname(HERE))))
        else:
            print("wrote", os.path.relpath(path), "(no ImageMagick `convert`: PNG not made)")


if __name__ == "__main__":
    main()
