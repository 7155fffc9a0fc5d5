#!/usr/bin/env python3
"""The numbers of lesson 0012 (quantization), computed with the Python standard library alone.

    python3 assets/lessons/quant_numbers.py

Prints every table the lesson quotes: the FP8 e4m3 and e5m2 limits (from decoding all 256 codes),
the NF4 code table rebuilt from normal quantiles (and its distance from the table bitsandbytes
ships), the quantization error of int8, FP8 and 4-bit schemes on one outlier-heavy row, the bits
each scheme stores per weight, and the decode napkin maths for an 8B-parameter model on an H200.
Nothing here is measured: the errors are arithmetic on a fixed row, the speeds are bytes divided by
bandwidth. make_pictures.py imports this file for the lesson's pictures.
"""
import math
import random
import statistics
import struct

# --------------------------------------------------------------------------------------------
# Rounding helpers.


def rne(v):
    """Round half to even (Python's round, torch.round, CUDA's __float2int_rn / rintf)."""
    return round(v)


def half_away(v):
    """Round half away from zero (C's roundf, which llama.cpp's int8 quantizers use)."""
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def to_f16(v):
    """v rounded to IEEE half precision (what storing a scale as fp16 does to it)."""
    return struct.unpack("<e", struct.pack("<e", v))[0]


def to_f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


# --------------------------------------------------------------------------------------------
# FP8: decode every code, then encode by searching the table.


def e4m3_decode(code):
    """OCP FP8 E4M3 ("e4m3fn"): 1 sign, 4 exponent bits (bias 7), 3 mantissa bits; no Inf;
    S.1111.111 (0x7F, 0xFF) is NaN; everything else is a number."""
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> 3) & 0xF, code & 0x7
    if e == 15 and m == 7:
        return math.nan
    if e == 0:
        return sign * (m / 8) * 2.0**-6
    return sign * (1 + m / 8) * 2.0 ** (e - 7)


def e5m2_decode(code):
    """OCP FP8 E5M2: 1 sign, 5 exponent bits (bias 15), 2 mantissa bits; IEEE-like, with Inf
    (S.11111.00) and NaN (S.11111.xx, xx != 00)."""
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> 2) & 0x1F, code & 0x3
    if e == 31:
        return sign * math.inf if m == 0 else math.nan
    if e == 0:
        return sign * (m / 4) * 2.0**-14
    return sign * (1 + m / 4) * 2.0 ** (e - 15)


E4M3 = [e4m3_decode(c) for c in range(256)]
E5M2 = [e5m2_decode(c) for c in range(256)]
E4M3_MAX = max(v for v in E4M3 if math.isfinite(v))
E5M2_MAX = max(v for v in E5M2 if math.isfinite(v))
# The non-negative finite values in code order (codes 0x00..0x7E), which is also value order.
E4M3_POS = [E4M3[c] for c in range(0x7F)]


def e4m3_encode_satfinite(x):
    """x -> e4m3 code, round to nearest even, out-of-range values clamped to +-448 (what PTX's
    cvt.rn.satfinite.e4m3x2.f32 does). NaN stays NaN (0x7F)."""
    if math.isnan(x):
        return 0x7F
    sign = 0x80 if (x < 0 or (x == 0 and math.copysign(1, x) < 0)) else 0
    a = abs(x)
    if a >= E4M3_MAX:
        return sign | 0x7E
    # nearest of the positive codes; a tie goes to the even code (mantissa bit 0 clear)
    lo = max(c for c in range(0x7F) if E4M3_POS[c] <= a)
    hi = min(lo + 1, 0x7E)
    dl, dh = a - E4M3_POS[lo], E4M3_POS[hi] - a
    code = lo if (dl < dh or (dl == dh and lo % 2 == 0)) else hi
    return sign | code


# --------------------------------------------------------------------------------------------
# NF4: the table bitsandbytes ships (nf4_dequantization_lut), and the same built from quantiles.

NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
       -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
       0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
       0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0]


def nf4_from_quantiles(offset=0.9677083):
    """Normal quantiles at evenly spaced probabilities: 8 on the positive side (from `offset` down
    towards 0.5), 7 on the negative side, and an exact 0; scaled so the largest is 1."""
    nd = statistics.NormalDist()

    def spaced(a, b, n):  # n evenly spaced points from a to b inclusive
        return [a + (b - a) * i / (n - 1) for i in range(n)]

    pos = [nd.inv_cdf(p) for p in spaced(offset, 0.5, 9)[:-1]]
    neg = [-nd.inv_cdf(p) for p in spaced(offset, 0.5, 8)[:-1]]
    v = sorted(pos + [0.0] + neg)
    top = max(v)
    return [x / top for x in v]


def nf4_nearest(x):
    return min(range(16), key=lambda i: (abs(NF4[i] - x), i))


# --------------------------------------------------------------------------------------------
# The row: 1024 weights from N(0, 1) with six outliers of 20-60 standard deviations, the kind of
# "outlier feature" large language models are known for. Fixed seed: the row is the same on every
# machine and Python 3 version.

K = 1024
OUTLIERS = {37: 60.0, 301: 31.0, 302: -24.0, 640: 45.0, 777: 22.0, 901: -27.0}


def outlier_row():
    rng = random.Random(12)
    x = [rng.gauss(0.0, 1.0) for _ in range(K)]
    for i, v in OUTLIERS.items():
        x[i] = v
    return x


# The other rows of the same (notional) weight matrix: one of them holds a larger outlier still,
# so the per-tensor scale is set by a value this row does not have.
TENSOR_AMAX = 96.0


# --------------------------------------------------------------------------------------------
# The schemes. Each takes the row and returns (dequantized row, bits stored per weight).


def int8_sym(x, amax):
    s = amax / 127
    q = [max(-127, min(127, rne(v / s))) if s > 0 else 0 for v in x]
    return [qi * s for qi in q]


def int8_sym_groups(x, g):
    out = []
    for b in range(0, len(x), g):
        blk = x[b:b + g]
        out += int8_sym(blk, max(abs(v) for v in blk))
    return out


def uint8_asym(x):
    """Asymmetric: scale over [min, max] and an integer zero point, q in 0..255."""
    lo, hi = min(min(x), 0.0), max(max(x), 0.0)
    s = (hi - lo) / 255
    z = rne(-lo / s)
    q = [max(0, min(255, rne(v / s) + z)) for v in x]
    return [(qi - z) * s for qi in q]


def fp8_e4m3(x, amax):
    s = max(amax, 1e-10) / 448
    return [E4M3[e4m3_encode_satfinite(v / s)] * s for v in x]


def fp8_e4m3_groups(x, g):
    out = []
    for b in range(0, len(x), g):
        blk = x[b:b + g]
        out += fp8_e4m3(blk, max(abs(v) for v in blk))
    return out


def q4_0(x, block=32):
    """llama.cpp's q4_0 (quantize_row_q4_0_ref): per block of 32, d = m / -8 where m is the
    value of largest magnitude (sign kept), nibble = min(15, trunc(x / d + 8.5)), d stored fp16;
    w = (nibble - 8) * d."""
    out = []
    for b in range(0, len(x), block):
        blk = x[b:b + block]
        m = max(blk, key=abs)
        d = m / -8
        inv = 1 / d if d else 0.0
        nib = [min(15, int(v * inv + 8.5)) for v in blk]
        d16 = to_f16(d)
        out += [(n - 8) * d16 for n in nib]
    return out


def nf4(x, block=64):
    out = []
    for b in range(0, len(x), block):
        blk = x[b:b + block]
        a = max(abs(v) for v in blk)
        out += [NF4[nf4_nearest(v / a)] * a if a else 0.0 for v in blk]
    return out


def int4_sym_groups(x, g):
    out = []
    for b in range(0, len(x), g):
        blk = x[b:b + g]
        s = max(abs(v) for v in blk) / 7
        out += [max(-7, min(7, rne(v / s))) * s for v in blk]
    return out


def schemes():
    x = outlier_row()
    amax_row = max(abs(v) for v in x)
    return x, [
        ("int8 symmetric, per tensor", int8_sym(x, TENSOR_AMAX), 8.0),
        ("int8 symmetric, per row", int8_sym(x, amax_row), 8 + 32 / K),
        ("int8 asymmetric, per row", uint8_asym(x), 8 + 64 / K),
        ("int8 symmetric, per group of 64", int8_sym_groups(x, 64), 8 + 16 / 64),
        ("fp8 e4m3, per tensor", fp8_e4m3(x, TENSOR_AMAX), 8.0),
        ("fp8 e4m3, per row", fp8_e4m3(x, amax_row), 8 + 32 / K),
        ("int4 symmetric, per group of 64", int4_sym_groups(x, 64), 4 + 16 / 64),
        ("q4_0 (blocks of 32, fp16 d)", q4_0(x), 18 * 8 / 32),
        ("nf4 (blocks of 64, fp32 absmax)", nf4(x), 4 + 32 / 64),
    ]


def errors(x, y):
    """(relative RMS error over the 1018 ordinary weights, same over all 1024,
    how many ordinary weights became exactly 0, the largest error on an outlier)."""
    ordinary = [i for i in range(len(x)) if i not in OUTLIERS]
    rms = lambda idx, v: math.sqrt(sum(v[i] ** 2 for i in idx) / len(idx))
    diff = [a - b for a, b in zip(x, y)]
    rel_ord = rms(ordinary, diff) / rms(ordinary, x)
    rel_all = rms(range(len(x)), diff) / rms(range(len(x)), x)
    zeros = sum(1 for i in ordinary if y[i] == 0.0)
    worst_outlier = max(abs(diff[i]) for i in OUTLIERS)
    return rel_ord, rel_all, zeros, worst_outlier


# --------------------------------------------------------------------------------------------
# Decode napkin maths: one token of batch-1 decode reads every weight once (a GEMV per matrix).

PARAMS = 8.0e9
H200_BW = 4.8e12  # datasheet
H200_READ = 4.4e12  # measured read-only stream on our H200 (docs/lessons.md)
H200_FMA = 67e12 / 2  # fused multiply-adds per second, one lane-instruction each
FORMATS = [("f16 / bf16", 2.0), ("int8, per-row scale", 1.0), ("q4_0 (18 bytes per 32)", 18 / 32)]
# Llama-3-8B-shaped KV cache: 32 layers x 8 KV heads x 128 dims x (K, V) x 2 bytes per token.
KV_BYTES_PER_TOKEN = 32 * 8 * 128 * 2 * 2


def main():
    print("FP8 e4m3: max %g, min normal %g, min subnormal %g, NaN codes %s, finite codes %d"
          % (E4M3_MAX, E4M3[0x08], E4M3[0x01], [hex(c) for c in range(256) if math.isnan(E4M3[c])],
             sum(1 for v in E4M3 if math.isfinite(v))))
    print("FP8 e5m2: max %g, min normal %g, min subnormal %g, Inf codes %s, NaN codes %d"
          % (E5M2_MAX, E5M2[0x04], E5M2[0x01], [hex(c) for c in range(256) if math.isinf(E5M2[c])],
             sum(1 for v in E5M2 if math.isnan(v))))
    for v in [0.3, 1.0, 3.14159, 17.0, 300.0, 448.0, 460.0, 500.0, 1e6, 0.001, 0.0009]:
        c = e4m3_encode_satfinite(v)
        print("  e4m3 satfinite(%g) = 0x%02X = %g" % (v, c, E4M3[c]))
    print()

    built = nf4_from_quantiles()
    print("NF4 from normal quantiles (offset 0.9677083) against bitsandbytes' table:")
    for i, (a, b) in enumerate(zip(built, NF4)):
        print("  %2d  0b%s  %+.7f  %+.7f" % (i, format(i, "04b"), a, b))
    print("  largest difference %.1e" % max(abs(a - b) for a, b in zip(built, NF4)))
    print()

    x, rows = schemes()
    ordinary = [x[i] for i in range(K) if i not in OUTLIERS]
    print("the row: K = %d, %d outliers %s, ordinary weights: rms %.3f, largest |x| %.2f"
          % (K, len(OUTLIERS), sorted(OUTLIERS.values()),
             math.sqrt(sum(v * v for v in ordinary) / len(ordinary)), max(abs(v) for v in ordinary)))
    print("per-tensor scales come from the tensor's amax %g; per-row from the row's %g"
          % (TENSOR_AMAX, max(abs(v) for v in x)))
    print("%-34s %6s  %12s %10s %10s %12s" % ("scheme", "bits", "err ordinary", "err all",
                                              "zeroed", "worst outl."))
    for name, y, bits in rows:
        ro, ra, z, wo = errors(x, y)
        print("%-34s %6.3f  %11.2f%% %9.2f%% %10d %12.3f" % (name, bits, 100 * ro, 100 * ra, z, wo))
    print()

    # The same row with its outliers replaced by ordinary draws: what the outliers cost.
    rng = random.Random(34)
    clean = [rng.gauss(0.0, 1.0) if i in OUTLIERS else v for i, v in enumerate(x)]
    camax = max(abs(v) for v in clean)
    print("the same row without outliers (largest |x| %.2f): relative RMS error" % camax)
    for name, y in [("int8 symmetric, per row", int8_sym(clean, camax)),
                    ("int8 symmetric, per group of 64", int8_sym_groups(clean, 64)),
                    ("fp8 e4m3, per row", fp8_e4m3(clean, camax)),
                    ("int4 symmetric, per group of 64", int4_sym_groups(clean, 64)),
                    ("q4_0 (blocks of 32, fp16 d)", q4_0(clean)),
                    ("q4_0's rule on blocks of 64", q4_0(clean, 64)),
                    ("nf4 (blocks of 64, fp32 absmax)", nf4(clean))]:
        d = math.sqrt(sum((a - b) ** 2 for a, b in zip(clean, y)) / sum(a * a for a in clean))
        print("  %-34s %6.2f%%" % (name, 100 * d))
    print()

    print("decode napkin maths, %.0fB parameters, batch 1, every weight read once per token:" % (PARAMS / 1e9))
    for name, b in FORMATS:
        gb = PARAMS * b / 1e9
        print("  %-24s %.4f B/weight  %5.2f GB/token  %6.3f ms  <= %4.0f tok/s (4.8 TB/s)  <= %4.0f tok/s (4.4 TB/s)"
              % (name, b, gb, gb * 1e9 / H200_BW * 1e3, H200_BW / (gb * 1e9), H200_READ / (gb * 1e9)))
    for name, b in FORMATS:
        w_per_s = H200_BW / b
        print("  %-24s %.2e weights/s at 4.8 TB/s: %.1f FMA-rate instructions per weight"
              % (name, w_per_s, H200_FMA / w_per_s))
    print("  KV cache: %d bytes per token of context (%.0f KiB)" % (KV_BYTES_PER_TOKEN, KV_BYTES_PER_TOKEN / 1024))
    for ctx in [1024, 8192, 32768]:
        kv = KV_BYTES_PER_TOKEN * ctx
        w = PARAMS * 18 / 32
        print("  context %5d: KV %.2f GB; q4_0 weights + KV %.2f GB -> <= %4.0f tok/s at 4.8 TB/s"
              % (ctx, kv / 1e9, (w + kv) / 1e9, H200_BW / (w + kv)))
    for m, n in [(4096, 4096), (4096, 1024), (4096, 14336)]:
        mat = m * n * 18 / 32
        print("  one %d x %d q4_0 matrix: %.2f MB, %.2f us at 4.8 TB/s" % (m, n, mat / 1e6, mat / H200_BW * 1e6))
    m, k = 57344, 8192  # puzzle 32's [perf] size
    for name, b in [FORMATS[0], FORMATS[2]]:
        by = m * k * b
        print("  puzzle 32, %d x %d in %s: %.0f MB, %.1f us at 4.8 TB/s" % (m, k, name, by / 1e6, by / H200_BW * 1e6))
    print("  70B in q4_0: %.1f GB per token, <= %.0f tok/s at 4.8 TB/s" % (70e9 * 18 / 32 / 1e9, H200_BW / (70e9 * 18 / 32)))


if __name__ == "__main__":
    main()
