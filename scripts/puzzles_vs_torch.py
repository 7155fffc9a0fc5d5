#!/usr/bin/env python3
"""The solutions beside PyTorch and Triton: for each puzzle with a row (BUILDERS),
Warpbook's timing of solutions/ID.cu (from `warpbook check ID solutions/ID.cu --json`), PyTorch's
eager op doing the same work, and the puzzle's Triton version from bench/triton/kernels.py (checked, then timed alike), at the same
[perf] sizes and dtypes, timed the way Warpbook times (a warm-up of at least 20 ms; an L2 flush
before each sample, outside the events, that reads a scratch buffer so that the L2 is left clean;
CUDA events around the op alone; at least 10 samples and
100 ms; the median). Prints one markdown row per puzzle with Warpbook's performance bar and whether
it is met, and writes, into --out (default $OUT, else /tmp/vs-torch):
  checks.json    every report, slimmed (the cases keep label, verdict, steps_ms)
  vs_torch.json  the figures behind the table
  vs_torch.md    the table
scripts/puzzles_vs_torch.sh runs the checks and then this on the GPU machine.

  puzzles_vs_torch.py CHECKS            CHECKS: a folder of ID.json reports, or a checks.json
  puzzles_vs_torch.py --check-builders  each row's size names against its puzzle.toml's [perf]
                                        and [sim_perf] (no reports, no torch; the unit test)
  puzzles_vs_torch.py CHECKS --selftest parse and tabulate only, without importing torch
                                        (works on simulator reports: `check ... --backend sim --json`)
  puzzles_vs_torch.py CHECKS --only 16,17   time only these puzzles against PyTorch
  puzzles_vs_torch.py CHECKS --no-triton     leave the Triton column empty (--no-torch: time Triton only)
  TRITON_INTERPRET=1 puzzles_vs_torch.py CHECKS --cpu-dry-run   no GPU: every code path on the CPU at
                                        the [sim_perf] sizes (Triton through its interpreter; times mean nothing)

Each PyTorch op also has its output compared, once and untimed, with the formula of the puzzle's
reference.cu computed in float64, so that a wrong translation (a padding, an orientation, TF32)
shows up as "torch check FAILED" instead of as a flattering ratio. The Triton output goes through the
same check before it is timed; a Triton compile error, crash or wrong answer is written in its cell."""
import argparse
import gc
import json
import os
import re
import sys
import time
import traceback

# Warpbook's bars against the libraries. Memory-bound: at least 80% of speed of light and at least as fast as PyTorch
# (39: the W4A16 GEMM at M = 16, where the weight stream is the work).
SOL_AND_TORCH = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15, 18, 24, 25, 26, 27, 28, 29, 30, 31, 32, 35, 39, 41}
# At least this many times PyTorch's speed, and at least as fast as Triton: the fused loss and gradient.
TIMES_TORCH_AND_TRITON = {36: 2.0}
# At least as fast as PyTorch's form (42: gold in puzzle.toml is the speed-of-light bar).
AS_FAST_AS = {10: "torch.bincount", 11: "torch.cumsum", 16: "F.conv1d", 34: "the loop over experts",
              42: "eager sort-and-cumsum top-p"}
# At least this fraction of PyTorch's speed: attention against SDPA's flash backend; the FP8 GEMM
# against torch._scaled_mm (wgmma underneath); split-K on mma.sync against cuBLAS at 512 x 512 x 16384;
# attention backward against SDPA's flash backward; the TMA warp-specialised GEMM against cuBLAS.
FRACTION_OF_TORCH = {22: 0.8, 23: 0.8, 33: 0.7, 37: 0.6, 38: 1.0, 43: 0.95}
# At least this fraction of the mma.sync ceiling `warpbook probe` measured on this GPU (--probe):
# the tensor-core GEMMs, which cannot use wgmma; their ratio to cuBLAS is reported beside it.
OF_MMA_CEILING = {19: (0.5, "mma_f16_gflops"), 20: (0.7, "mma_bf16_gflops"), 21: (0.7, "mma_bf16_gflops")}
PROBED = {}  # metric -> best measured value, from probe.json
SGEMM = 17
SOL_BAR = 0.80
SGEMM_BAR = 0.70
NOISE = 0.02  # a ratio this close below 1 is within the run-to-run spread: said so, still unmet


def bar_text(num):
    if num in SOL_AND_TORCH:
        return f"SoL >= {SOL_BAR:.0%} and >= torch"
    if num in AS_FAST_AS:
        return f">= {AS_FAST_AS[num]}"
    if num in TIMES_TORCH_AND_TRITON:
        return f">= {TIMES_TORCH_AND_TRITON[num]:g}x torch's speed and >= Triton"
    if num in FRACTION_OF_TORCH:
        return f">= {FRACTION_OF_TORCH[num]}x torch's speed"
    if num == SGEMM:
        return f">= {SGEMM_BAR:.0%} of cuBLAS SGEMM"
    if num in OF_MMA_CEILING:
        frac, m = OF_MMA_CEILING[num]
        return f">= {frac:.0%} of {m.split('_')[1]} mma.sync"
    return "-"


# ---------------------------------------------------------------------------------------------
# The rows: one builder per puzzle (BUILDERS, below). A builder takes the sizes of the report's
# perf case, makes the inputs the way puzzle.toml's init does (the data matters for the
# histogram's contention), and returns an Op holding
#   - the PyTorch side: the timed call fn (outputs preallocated where torch has an out= variant)
#     and outs(), its outputs once fn has run;
#   - the Triton side: triton(tk), given bench/triton/kernels.py as tk, returns the timed call,
#     which launches the puzzle's Triton version on the same inputs and returns its outputs;
#   - check(outs): an untimed comparison of either side's outputs with the formula of the
#     puzzle's reference.cu computed in float64 (NaN never passes), so that a wrong translation
#     (a padding, an orientation, TF32) shows up as a failed check instead of a flattering ratio.
# A later puzzle adds a row with one more builder and one more line in BUILDERS.


class Op:
    """also: (label, fn) pairs timed after fn and written into the note (another backend of the same op)."""

    def __init__(self, desc, fn, outs, check, triton=None, note="", also=()):
        self.desc, self.fn, self.outs, self.check, self.triton, self.note = desc, fn, outs, check, triton, note
        self.also = list(also)


DEVICE = "cuda"  # "cpu" only for --cpu-dry-run


def dev_empty(torch, shape, dtype=None):
    return torch.empty(shape, device=DEVICE, dtype=dtype or torch.float32)


def uniform(torch, shape, lo, hi, dtype=None):
    return dev_empty(torch, shape, dtype).uniform_(lo, hi)


def close(got, ref, rtol, atol):
    """(ok, max abs error) of got against a float64 reference, elementwise |err| <= atol + rtol|ref|.
    A NaN in got fails (NaN <= anything is false)."""
    err = (got.double().reshape(ref.shape) - ref).abs()
    ok = bool((err <= atol + rtol * ref.abs()).all())
    return ok, float(err.nan_to_num(float("inf")).max()) if err.numel() else 0.0


def all_close(pairs):
    """close() over several (got, ref, rtol, atol): ok if all are, and the largest error."""
    res = [close(*p) for p in pairs]
    return all(ok for ok, _ in res), max(err for _, err in res)


def with_out(torch, out_call, alloc_call, what):
    """The out= form where this torch has it, else the allocating one (from the caching allocator:
    no cudaMalloc once warm, but the op is then timed with its allocation)."""
    try:
        out_call()
        sync(torch)
        return out_call, ""
    except (TypeError, RuntimeError) as e:
        return alloc_call, f"{what} has no out= here ({type(e).__name__}): it allocates its output"


def b01(torch, F, s):
    n = s["n"]
    a, b, c, c2 = uniform(torch, n, -1, 1), uniform(torch, n, -1, 1), dev_empty(torch, n), dev_empty(torch, n)
    return Op(f"torch.add(a, b, out=c); f32 [{n}]", lambda: torch.add(a, b, out=c), lambda: c,
              lambda got: close(got, (a.double() + b.double()).float().double(), 0, 0),  # correctly rounded: exact
              lambda tk: lambda: tk.vector_add(a, b, c2))


def b02(torch, F, s):
    r, k = s["rows"], s["cols"]
    x, y, y2 = uniform(torch, (r, k), -1, 1), dev_empty(torch, r), dev_empty(torch, r)
    return Op(f"torch.sum(x, 1, out=y); f32 [{r}, {k}]", lambda: torch.sum(x, 1, out=y), lambda: y,
              lambda got: close(got, x.double().sum(1), 1e-5, 1e-4), lambda tk: lambda: tk.row_sum(x, y2))


def softmax_op(torch, F, s, tri):
    r, k = s["rows"], s["cols"]
    x, y, y2 = uniform(torch, (r, k), -4, 4), dev_empty(torch, (r, k)), dev_empty(torch, (r, k))
    fn, note = with_out(torch, lambda: torch.softmax(x, -1, out=y), lambda: torch.softmax(x, -1), "torch.softmax")

    def check(got):
        xd = x.double()
        e = (xd - xd.amax(1, keepdim=True)).exp()
        return close(got, e / e.sum(1, keepdim=True), 1e-4, 1e-6)

    return Op(f"torch.softmax(x, -1{', out=y' if not note else ''}); f32 [{r}, {k}]", fn,
              (lambda: y) if not note else fn, check, lambda tk: lambda: getattr(tk, tri)(x, y2), note)


def b03(torch, F, s):
    return softmax_op(torch, F, s, "softmax")


def b12(torch, F, s):
    return softmax_op(torch, F, s, "online_softmax")


def b04(torch, F, s):
    r, k = s["rows"], s["cols"]
    a, b = uniform(torch, (r, k), -1, 1), uniform(torch, (r, k), -1, 1)
    c, c2 = dev_empty(torch, (r, k)), dev_empty(torch, (r, k))
    return Op(f"torch.add(a, b, out=c); f32 [{r}, {k}]", lambda: torch.add(a, b, out=c), lambda: c,
              lambda got: close(got, (a.double() + b.double()).float().double(), 0, 0),  # exact, as above
              lambda tk: lambda: tk.matrix_add(a, b, c2))


def b05(torch, F, s):
    r, k = s["rows"], s["cols"]
    x, y = uniform(torch, r, -1, 1), uniform(torch, k, -1, 1)
    out, out2 = dev_empty(torch, (r, k)), dev_empty(torch, (r, k))
    return Op(f"torch.add(x[:, None], y[None, :], out=out); f32 [{r}] + [{k}] -> [{r}, {k}]",
              lambda: torch.add(x[:, None], y[None, :], out=out), lambda: out,
              lambda got: close(got, (x.double()[:, None] + y.double()[None, :]).float().double(), 0, 0),  # exact
              lambda tk: lambda: tk.outer_add(x, y, out2))


def b06(torch, F, s):
    n = s["n"]
    x, y, y2 = uniform(torch, n, -6, 6, torch.float16), dev_empty(torch, n, torch.float16), dev_empty(torch, n, torch.float16)
    # F.gelu has no out=; its out variant lives in torch._C._nn.
    fn, note = with_out(torch, lambda: torch._C._nn.gelu(x, approximate="tanh", out=y),
                        lambda: F.gelu(x, approximate="tanh"), "gelu")

    def check(got):
        v = x.double()
        ref = 0.5 * v * (1 + torch.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
        return close(got, ref, 1e-2, 1e-3)

    return Op(f"F.gelu(x, approximate='tanh'{', out=y' if not note else ''}); f16 [{n}]", fn,
              (lambda: y) if not note else fn, check, lambda tk: lambda: tk.gelu(x, y2), note)


def b07(torch, F, s):
    r, k = s["rows"], s["cols"]
    x, out, out2 = uniform(torch, (r, k), -1, 1), dev_empty(torch, (k, r)), dev_empty(torch, (k, r))
    # x.t().contiguous() allocates; copy_ into a preallocated output is the same kernel.
    return Op(f"out.copy_(x.t()); f32 [{r}, {k}] -> [{k}, {r}]", lambda: out.copy_(x.t()), lambda: out,
              lambda got: (bool(torch.equal(got, x.t())), 0.0), lambda tk: lambda: tk.transpose(x, out2))


def b08(torch, F, s):
    n = s["n"]
    a, b, out = uniform(torch, n, -1, 1), uniform(torch, n, -1, 1), dev_empty(torch, ())
    partial, out2 = dev_empty(torch, 2 * min(65535, -(-n // 32))), dev_empty(torch, 1)
    return Op(f"torch.dot(a, b, out=out); f32 [{n}]", lambda: torch.dot(a, b, out=out), lambda: out,
              lambda got: close(got.reshape(()), (a.double() * b.double()).sum(), 1e-4, 1e-1),
              lambda tk: lambda: tk.dot_product(a, b, partial, out2))


def b09(torch, F, s):
    r, k = s["rows"], s["cols"]
    x, idx, idx2 = uniform(torch, (r, k), -1, 1), dev_empty(torch, r, torch.int64), dev_empty(torch, r, torch.int32)

    def check(got):  # the value at the index is the row's maximum, and the first one (torch.argmax's rule)
        got = got.long()
        ok = bool(((got >= 0) & (got < k)).all())
        ok = ok and bool(torch.equal(x.gather(1, got[:, None])[:, 0], x.amax(1)))
        return ok and bool(torch.equal(got, x.argmax(1))), 0.0

    # argmax writes int64 indices (the puzzle writes int32): 4 bytes more per row, negligible.
    return Op(f"torch.argmax(x, 1, out=idx); f32 [{r}, {k}] -> i64 [{r}]",
              lambda: torch.argmax(x, 1, out=idx), lambda: idx, check, lambda tk: lambda: tk.argmax_rows(x, idx2))


def b10(torch, F, s):
    n = s["n"]
    # skewed(0, 256, 8): floor(256 u^8), about half of all bytes 0. uint8 is what bincount takes
    # directly, so there is no conversion at all.
    u = torch.rand(n, device=DEVICE)
    data = u.pow_(8).mul_(256).floor_().clamp_(max=255).to(torch.uint8)
    del u
    res, bins2 = {}, dev_empty(torch, 256, torch.int32)  # int32: the puzzle's u32 counts, same bits below 2^31

    def fn():
        res["bins"] = torch.bincount(data, minlength=256)

    def check(got):
        got = got.long()
        ok = got.numel() == 256 and int(got.sum()) == n
        for v in (0, 1, 17, 255):
            ok = ok and int(got[v]) == int((data == v).sum())
        return ok and bool(torch.equal(got, torch.bincount(data, minlength=256))), 0.0

    def tri(tk):
        def run():
            bins2.zero_()  # the puzzle's bins start at zero and the kernel adds to them
            return tk.histogram(data, bins2)
        return run

    return Op(f"torch.bincount(data, minlength=256); u8 [{n}] -> i64 [256]", fn, lambda: res["bins"], check, tri,
              "bincount allocates its output and reads max() back to the host to size it (part of its time); "
              "Triton's time includes zeroing its 256 bins")


def b11(torch, F, s):
    n = s["n"]
    x = torch.randint(-8, 9, (n,), device=DEVICE).float()  # randint(-8, 9): whole numbers -8..8
    y, y2, sums = dev_empty(torch, n), dev_empty(torch, n), dev_empty(torch, 2 * -(-n // 32) + 64)
    return Op(f"torch.cumsum(x, 0, out=y); f32 [{n}]", lambda: torch.cumsum(x, 0, out=y), lambda: y,
              lambda got: close(got, x.double().cumsum(0), 0, 0), lambda tk: lambda: tk.inclusive_scan(x, y2, sums))


def b13(torch, F, s):
    r, k = s["rows"], s["cols"]
    x = uniform(torch, (r, k), -1, 1)
    w, b = uniform(torch, k, 0.5, 1.5), uniform(torch, k, -0.5, 0.5)
    res, y2 = {}, dev_empty(torch, (r, k))

    def fn():  # no out= for layer_norm
        res["y"] = F.layer_norm(x, (k,), w, b, 1e-5)

    def check(got):
        xd = x.double()
        mean = xd.mean(1, keepdim=True)
        var = ((xd - mean) ** 2).mean(1, keepdim=True)
        return close(got, (xd - mean) / (var + 1e-5).sqrt() * w.double() + b.double(), 1e-3, 1e-3)

    return Op(f"F.layer_norm(x, ({k},), w, b, eps=1e-5); f32 [{r}, {k}]", fn, lambda: res["y"], check,
              lambda tk: lambda: tk.layernorm(x, w, b, y2, 1e-5), "layer_norm allocates y (and its per-row mean and rstd)")


def b14(torch, F, s):
    r, k = s["rows"], s["cols"]
    x, res_in = uniform(torch, (r, k), -1, 1), dev_empty(torch, (r, k)).normal_(0, 2)
    w, h = uniform(torch, k, 0.5, 1.5), dev_empty(torch, (r, k))
    h2, y2 = dev_empty(torch, (r, k)), dev_empty(torch, (r, k))
    eps = 1e-6
    out = {}
    if hasattr(F, "rms_norm"):  # torch >= 2.4
        norm = lambda: F.rms_norm(h, (k,), w, eps)
        desc = f"torch.add(x, res, out=h); F.rms_norm(h, ({k},), w, eps=1e-6); f32 [{r}, {k}]"
    else:
        norm = lambda: h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * w
        desc = f"torch.add(x, res, out=h); h * rsqrt(mean(h^2) + 1e-6) * w; f32 [{r}, {k}]"

    def fn():
        torch.add(x, res_in, out=h)
        out["y"] = norm()

    def check(got):
        hd = x.double() + res_in.double()
        ref = hd * torch.rsqrt((hd * hd).mean(1, keepdim=True) + eps) * w.double()
        return all_close([(got[0], hd, 1e-6, 1e-6), (got[1], ref, 1e-4, 1e-5)])

    return Op(desc, fn, lambda: (h, out["y"]), check, lambda tk: lambda: tk.rmsnorm_residual(x, res_in, w, h2, y2, eps),
              "rms_norm allocates y")


def b15(torch, F, s):
    r, k = s["rows"], s["cols"]
    gu, y, y2 = dev_empty(torch, (r, 2 * k)).normal_(0, 2), dev_empty(torch, (r, k)), dev_empty(torch, (r, k))
    g, u = gu[:, :k], gu[:, k:]  # row r is [gate | up]: two strided views, no copy

    def check(got):
        gd = g.double()
        return close(got, gd / (1 + (-gd).exp()) * u.double(), 1e-4, 1e-5)

    return Op(f"torch.mul(F.silu(g), u, out=y); g, u = gu[:, :{k}], gu[:, {k}:]; f32 [{r}, {2 * k}]",
              lambda: torch.mul(F.silu(g), u, out=y), lambda: y, check, lambda tk: lambda: tk.swiglu(gu, y2),
              "two kernels: F.silu writes a temporary that the mul reads back")


def b16(torch, F, s):
    c, n, k = s["channels"], s["length"], s["ksize"]
    x, w, y2 = uniform(torch, (c, n), -1, 1), uniform(torch, (c, k), -1, 1), dev_empty(torch, (c, n))
    xv, wv = x.view(1, c, n), w.view(c, 1, k)
    res = {}

    # Causal: y[c, t] = sum_j w[c, j] x[c, t + j - (k - 1)]. Padding k - 1 on both sides and keeping
    # the first n outputs (Mamba's way) does it without a padded copy of x.
    def fn():
        res["y"] = F.conv1d(xv, wv, padding=k - 1, groups=c)[..., :n]

    def check(got):
        xp = F.pad(x.double(), (k - 1, 0))
        ref = sum(w.double()[:, j:j + 1] * xp[:, j:j + n] for j in range(k))
        return close(got, ref, 1e-5, 1e-5)

    return Op(f"F.conv1d(x[None], w[:, None], padding={k - 1}, groups={c})[..., :{n}]; "
              f"f32 x [{c}, {n}], w [{c}, {k}]", fn, lambda: res["y"][0], check, lambda tk: lambda: tk.conv1d(x, w, y2),
              "conv1d allocates its output (n + ksize - 1 columns, the first n kept); cudnn.benchmark on")


def b17(torch, F, s):
    m, n, k = s["M"], s["N"], s["K"]
    a, b = uniform(torch, (m, k), -1, 1), uniform(torch, (k, n), -1, 1)
    c, c2 = dev_empty(torch, (m, n)), dev_empty(torch, (m, n))
    # atol 1e-3 at K = 4096 passes true fp32 and fails TF32 (~1e-2): it checks that TF32 is off, in
    # cuBLAS and in Triton's tl.dot (input_precision="ieee").
    return Op(f"torch.matmul(A, B, out=C); f32 [{m}, {k}] x [{k}, {n}], TF32 off",
              lambda: torch.matmul(a, b, out=c), lambda: c, lambda got: close(got, a.double() @ b.double(), 1e-4, 1e-3),
              lambda tk: lambda: tk.sgemm(a, b, c2))


def b18(torch, F, s):
    m, k = s["M"], s["K"]
    a, x, y, y2 = uniform(torch, (m, k), -1, 1), uniform(torch, k, -1, 1), dev_empty(torch, m), dev_empty(torch, m)
    return Op(f"torch.mv(A, x, out=y); f32 [{m}, {k}] x [{k}]", lambda: torch.mv(a, x, out=y), lambda: y,
              lambda got: close(got, a.double() @ x.double(), 1e-4, 1e-3), lambda tk: lambda: tk.gemv(a, x, y2))


def b19(torch, F, s):
    m, n, k = s["M"], s["N"], s["K"]
    a, b = uniform(torch, (m, k), -1, 1, torch.float16), uniform(torch, (k, n), -1, 1, torch.float16)
    c16, c32 = dev_empty(torch, (m, n), torch.float16), dev_empty(torch, (m, n))
    ref = {}

    def check(got):  # the puzzle's tolerance on an f32 answer; torch's f16 answer is checked as .float()
        if "C" not in ref:
            ref["C"] = a.double() @ b.double()
        return close(got.float(), ref["C"], 1e-4, 4e-3)

    return Op(f"torch.matmul(A, B, out=C16); f16 [{m}, {k}] x [{k}, {n}] -> f16", lambda: torch.matmul(a, b, out=c16),
              lambda: c16, check, lambda tk: lambda: tk.wmma_gemm(a, b, c32),
              "torch.matmul on f16 returns f16 (cuBLAS accumulates in f32 and rounds C to f16; reduced-precision "
              "reductions allowed, PyTorch's default): half an f16 ulp of |C| ~ 20 is 8e-3, past the puzzle's atol 4e-3 "
              "at K = 4096, so its check is expected to fail; it writes 2 bytes per element of C where the puzzle "
              "writes 4. No bar: WMMA (mma.sync) cannot reach cuBLAS's wgmma")


def b33(torch, F, s):
    m, n, k = s["M"], s["N"], s["K"]
    e4 = torch.float8_e4m3fn  # the puzzle's init: normal(0, 100) codes, saturated to +-448 as Warpbook's generator does
    a = dev_empty(torch, (m, k)).normal_(0, 100).clamp(-448, 448).to(e4)
    b = dev_empty(torch, (n, k)).normal_(0, 100).clamp(-448, 448).to(e4)  # [N, K]: b.t() is column-major
    sa, sb = uniform(torch, (m, 1), 0.001, 0.01), uniform(torch, (1, n), 0.0005, 0.002)
    c2 = dev_empty(torch, (m, n), torch.bfloat16)
    ref, res = {}, {}

    def fn():  # _scaled_mm has no out= form: it allocates C (from the caching allocator once warm)
        res["C"] = torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

    def check(got):  # the puzzle's tolerance on the bf16 answer: rtol 8e-3, atol 2e-3 + 2e-4 max|C|
        if "C" not in ref:
            ref["C"] = (a.double() @ b.double().t()) * sa.double() * sb.double()
        return close(got.float(), ref["C"], 8e-3, 2e-3 + 2e-4 * float(ref["C"].abs().max()))

    return Op(f"torch._scaled_mm(A, B.t(), scale_a, scale_b, out_dtype=bf16); e4m3 [{m}, {k}] x [{k}, {n}] -> bf16",
              fn, lambda: res["C"], check, lambda tk: lambda: tk.fp8_gemm(a, b, sa[:, 0], sb[0], c2),
              "row-wise scales ([M, 1] and [1, N], f32) are the dequantization factors (the reciprocal of "
              "the quantizer's multiplier); cuBLASLt on wgmma underneath; bar 0.7x of it")


def attention_check(torch, q, k, v, causal, got):
    """Puzzles 22-23: softmax(q k^T / sqrt(D), causal: keys j <= i) v in float64, head by head, for
    the first, a middle and the last (sequence, query head) only (each S x S float64 score matrix is
    134 MB at S = 4096, and all 128 heads would take minutes on the float64 units); KV head h / G;
    the puzzle's tolerance on the bf16 output."""
    bsz, hq, S, d = q.shape
    g = hq // k.shape[1]
    ok, worst = True, 0.0
    for bh in sorted({0, (bsz * hq) // 2, bsz * hq - 1}):
        b, h = divmod(bh, hq)
        s = q[b, h].double() @ k[b, h // g].double().t() / d ** 0.5
        if causal:
            s.masked_fill_(torch.ones(S, S, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
        o, e = close(got[b, h], torch.softmax(s, 1) @ v[b, h // g].double(), 1e-2, 2e-3)
        ok, worst = ok and o, max(worst, e)
        del s
    return ok, worst


def sdpa_backends(torch, call):
    """call() under SDPA's flash backend (the bar for 22 and 23), and, to be reported beside it,
    call() as SDPA chooses by itself and under each other backend that runs it."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def under(backend):
        def fn():
            with sdpa_kernel(backend):
                call()
        return fn

    also = [("SDPA's own choice", call)] + [(f"{b}", under(getattr(SDPBackend, b)))
                                            for b in ("CUDNN_ATTENTION", "EFFICIENT_ATTENTION")]
    return under(SDPBackend.FLASH_ATTENTION), also


def b22(torch, F, s):
    bsz, h, S, d = s["B"], s["H"], s["S"], s["D"]
    q, k = (uniform(torch, (bsz, h, S, d), -2, 2, torch.bfloat16) for _ in range(2))
    v = uniform(torch, (bsz, h, S, d), -1, 1, torch.bfloat16)
    o2 = dev_empty(torch, (bsz, h, S, d), torch.bfloat16)
    res = {}

    def call():
        res["o"] = F.scaled_dot_product_attention(q, k, v)

    fn, also = sdpa_backends(torch, call)
    return Op(f"F.scaled_dot_product_attention(q, k, v) under sdpa_kernel(FLASH_ATTENTION); bf16 [{bsz}, {h}, {S}, {d}]",
              fn, lambda: res["o"], lambda got: attention_check(torch, q, k, v, False, got),
              lambda tk: lambda: tk.flash_attention(q, k, v, o2),
              "the bar is SDPA's flash backend (FlashAttention-2), forced; SDPA allocates o", also)


def b23(torch, F, s):
    bsz, hq, hkv, S, d = s["B"], s["Hq"], s["Hkv"], s["Sq"], s["D"]
    assert s["Sk"] == S, "the perf size has Sq = Sk: is_causal's top-left mask is then the puzzle's"
    q = uniform(torch, (bsz, hq, S, d), -2, 2, torch.bfloat16)
    k = uniform(torch, (bsz, hkv, S, d), -2, 2, torch.bfloat16)
    v = uniform(torch, (bsz, hkv, S, d), -1, 1, torch.bfloat16)
    o2 = dev_empty(torch, (bsz, hq, S, d), torch.bfloat16)
    gqa, note = has_enable_gqa(torch, F)
    res = {}

    def call():
        if gqa:
            res["o"] = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:
            g = hq // hkv
            res["o"] = F.scaled_dot_product_attention(q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1),
                                                      is_causal=True)

    fn, also = sdpa_backends(torch, call)
    return Op(f"F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True) under "
              f"sdpa_kernel(FLASH_ATTENTION); bf16 q [{bsz}, {hq}, {S}, {d}], k and v [{bsz}, {hkv}, {S}, {d}]",
              fn, lambda: res["o"], lambda got: attention_check(torch, q, k, v, True, got),
              lambda tk: lambda: tk.causal_flash_attention(q, k, v, o2),
              (note + "; " if note else "") + "the bar is SDPA's flash backend, forced; Sq = Sk, so "
              "is_causal's top-left mask is the puzzle's; SDPA allocates o", also)


def bf16_abt(torch, s, rtol, atol):
    """The bf16 GEMMs' set-up, C = A x B^T with B [N, K] (an nn.Linear weight): A and B as
    puzzle.toml makes them, torch.matmul writing a bf16 C, that op's label, and the check of an
    answer against the float64 product at the puzzle's tolerance."""
    m, n, k = s["M"], s["N"], s["K"]
    a, b = uniform(torch, (m, k), -1, 1, torch.bfloat16), uniform(torch, (n, k), -1, 1, torch.bfloat16)
    c16 = dev_empty(torch, (m, n), torch.bfloat16)
    ref = {}

    def check(got):  # torch's bf16 answer is checked as .float()
        if "C" not in ref:
            ref["C"] = a.double() @ b.double().t()
        return close(got.float(), ref["C"], rtol, atol)

    label = f"torch.matmul(A, B.T, out=C); bf16 [{m}, {k}] x [{n}, {k}]^T -> bf16"
    return a, b, lambda: torch.matmul(a, b.t(), out=c16), lambda: c16, check, label


def b20(torch, F, s):
    a, b, fn, outs, check, label = bf16_abt(torch, s, 1e-4, 4e-3)  # the puzzle's tolerance on an f32 answer
    c32 = dev_empty(torch, (s["M"], s["N"]))
    return Op(label.replace("out=C", "out=C16"), fn, outs, check, lambda tk: lambda: tk.mma_gemm(a, b, c32),
              "cuBLAS (wgmma on the H200) against mma.sync: the ratio is the bar's 'ratio to cuBLAS'. torch.matmul on "
              "bf16 returns bf16 (f32 sums, C rounded to bf16: half a bf16 ulp of |C| ~ 20 is 0.06), so its check is "
              "expected to fail the puzzle's atol 4e-3; it writes 2 bytes per element of C where the puzzle writes 4")


def b21(torch, F, s):
    m, n, k = s["M"], s["N"], s["K"]
    a = uniform(torch, (m, k), -1, 1, torch.bfloat16)
    b = uniform(torch, (n, k), -0.03125, 0.03125, torch.bfloat16)  # [N, K], an nn.Linear weight
    bias = uniform(torch, n, -1, 1, torch.bfloat16)
    y2 = dev_empty(torch, (m, n), torch.bfloat16)
    fn = lambda: F.gelu(F.linear(a, b, bias), approximate="tanh")  # noqa: E731
    ref = {}

    def check(got):
        if "Y" not in ref:
            x = a.double() @ b.double().t() + bias.double()[None, :]
            ref["Y"] = 0.5 * x * (1 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
        return close(got, ref["Y"], 8e-3, 2e-4)

    return Op(f"F.gelu(F.linear(A, B, bias), approximate='tanh'); bf16 [{m}, {k}] x [{n}, {k}]^T + [{n}] -> bf16",
              fn, fn, check, lambda tk: lambda: tk.gemm_bias_gelu(a, b, bias, y2),
              "eager: F.linear is addmm (the bias usually folded into cuBLAS's epilogue) and writes the bf16 pre-activations; F.gelu "
              "reads them back and writes Y: 2 x 2MN bytes more than the fused kernel, and a second launch")

def decode_check(torch, q, kv_of, lens, got):
    """Puzzles 24-25: softmax(q . K^T / sqrt(D)) V over the first lens[b] keys of each sequence, in float64,
    one sequence at a time (kv_of(b, n) gives its [n, Hkv, D] keys and values: 67 MB of float64 each at
    the perf sizes, where the whole cache would be 17 GB); the puzzle's tolerance on the bf16 output."""
    bsz, hq, d = q.shape
    ok, worst = True, 0.0
    for b in range(bsz):
        n = int(lens[b])
        kb, vb = kv_of(b, n)
        g = hq // kb.shape[1]
        kd, vd = kb.double().repeat_interleave(g, 1), vb.double().repeat_interleave(g, 1)  # [n, Hq, D]
        w = torch.softmax(torch.einsum("hd,nhd->hn", q[b].double(), kd) / d ** 0.5, 1)
        o, e = close(got[b], torch.einsum("hn,nhd->hd", w, vd), 1e-2, 1e-3)
        ok, worst = ok and o, max(worst, e)
        del kd, vd, w
    return ok, worst


def sdpa_decode(F, q, k, v, mask, gqa):
    """Eager decode attention on [B, Hq, D] q and [B, L, Hkv, D] caches, mask [B, L]: SDPA with enable_gqa
    (PyTorch 2.5 and later), or with K and V expanded to Hq heads first (gqa False)."""
    kt, vt = k.transpose(1, 2), v.transpose(1, 2)
    if gqa:
        return F.scaled_dot_product_attention(q[:, :, None], kt, vt, attn_mask=mask[:, None, None], enable_gqa=True)[:, :, 0]
    g = q.shape[1] // k.shape[2]
    return F.scaled_dot_product_attention(q[:, :, None], kt.repeat_interleave(g, 1), vt.repeat_interleave(g, 1),
                                          attn_mask=mask[:, None, None])[:, :, 0]


def has_enable_gqa(torch, F):
    """(True, "") where SDPA takes enable_gqa, else (False, a note): tried once on a tiny input."""
    try:
        x = dev_empty(torch, (1, 2, 8), torch.bfloat16).zero_()
        kv = dev_empty(torch, (1, 4, 1, 8), torch.bfloat16).zero_()
        sdpa_decode(F, x, kv, kv, torch.ones(1, 4, dtype=torch.bool, device=DEVICE), True)
        sync(torch)
        return True, ""
    except (TypeError, RuntimeError) as e:
        return False, (f"no enable_gqa here ({type(e).__name__}): K and V are repeat_interleave'd to Hq heads "
                       "inside the timing (a copy of the cache, Hq / Hkv times its size)")


def b24(torch, F, s):
    bsz, hq, hkv, L, d = s["B"], s["Hq"], s["Hkv"], s["L"], s["D"]
    q = dev_empty(torch, (bsz, hq, d), torch.bfloat16).normal_(0, 1)
    k = dev_empty(torch, (bsz, L, hkv, d), torch.bfloat16).normal_(0, 1)
    v = uniform(torch, (bsz, L, hkv, d), -2, 2, torch.bfloat16)
    lens = torch.full((bsz,), L, device=DEVICE, dtype=torch.int32)  # the puzzle's [perf]: every sequence full
    nb = -(-L // 64)
    part = dev_empty(torch, bsz * hq * max(2 * L, (d + 2) * nb))
    out2 = dev_empty(torch, (bsz, hq, d), torch.bfloat16)
    gqa, note = has_enable_gqa(torch, F)
    res = {}

    def fn():
        res["out"] = sdpa_decode(F, q, k, v, torch.arange(L, device=DEVICE) < lens[:, None], gqa)

    return Op(f"F.scaled_dot_product_attention(q[:, :, None], k.transpose(1, 2), v.transpose(1, 2), attn_mask=arange(L) "
              f"< lens, enable_gqa=True); bf16 q [{bsz}, {hq}, {d}], K and V [{bsz}, {L}, {hkv}, {d}]", fn,
              lambda: res["out"], lambda got: decode_check(torch, q, lambda b, n: (k[b, :n], v[b, :n]), lens, got),
              lambda tk: lambda: tk.decode_attention(q, k, v, lens, part, out2),
              (note + "; " if note else "") + "the mask (lens; all L here, as in the puzzle's [perf]) is built "
              "inside the timing, as the one-line form does; SDPA with a mask materialises the [B, Hq, 1, L] scores")


def b25(torch, F, s):
    bsz, hq, hkv, d, mb, npool = s["B"], s["Hq"], s["Hkv"], s["D"], s["max_blocks"], s["num_blocks"]
    q = dev_empty(torch, (bsz, hq, d), torch.bfloat16).normal_(0, 1)
    k_cache = dev_empty(torch, (npool, 16, hkv, d), torch.bfloat16).normal_(0, 1)  # 4.56 GB each at [perf]
    v_cache = uniform(torch, (npool, 16, hkv, d), -2, 2, torch.bfloat16)
    table = torch.randperm(npool, device=DEVICE)[:bsz * mb].reshape(bsz, mb).to(torch.int32)  # distinct pages
    table64 = table.long()  # the index for eager's gather, converted outside the timing
    lens = torch.full((bsz,), 16 * mb, device=DEVICE, dtype=torch.int32)  # the puzzle's [perf]: every page full
    L = 16 * mb
    part = dev_empty(torch, bsz * hq * max(32 * mb, (d + 2) * -(-L // 64)))
    out2 = dev_empty(torch, (bsz, hq, d), torch.bfloat16)
    gqa, note = has_enable_gqa(torch, F)
    res = {}

    def fn():  # gather the pages into contiguous [B, L, Hkv, D] caches, then puzzle 24's eager attention
        k = k_cache[table64].flatten(1, 2)
        v = v_cache[table64].flatten(1, 2)
        res["out"] = sdpa_decode(F, q, k, v, torch.arange(L, device=DEVICE) < lens[:, None], gqa)

    def kv_of(b, n):
        pages = table64[b, :-(-n // 16)]
        return k_cache[pages].flatten(0, 1)[:n], v_cache[pages].flatten(0, 1)[:n]

    return Op(f"k = k_cache[block_table].flatten(1, 2); v = v_cache[block_table].flatten(1, 2); then 24's SDPA "
              f"(enable_gqa); bf16 pools [{npool}, 16, {hkv}, {d}], table [{bsz}, {mb}]", fn, lambda: res["out"],
              lambda got: decode_check(torch, q, kv_of, lens, got),
              lambda tk: lambda: tk.paged_decode_attention(q, k_cache, v_cache, table, lens, part, out2),
              (note + "; " if note else "") + "eager's time includes the gather: it writes a contiguous 2.15 GB copy of the pages and reads it back "
              "before the attention (the table is int64, converted outside the timing; the perf table has no -1 "
              "entries); SDPA with a mask materialises the [B, Hq, 1, L] scores")


def b26(torch, F, s):
    t, h, d, inter = s["tokens"], s["heads"], s["dim"], s["interleaved"]
    x = uniform(torch, (t, h, d), -4, 4, torch.bfloat16)
    pos = torch.randint(0, 2048, (t,), device=DEVICE, dtype=torch.int32)  # uniform(0, 2047), integers
    y2 = dev_empty(torch, (t, h, d), torch.bfloat16)
    # inv_freq made once, outside the timing (as Hugging Face's rotary module caches it): theta^(-2i/d) in
    # float64, rounded to f32 once
    inv_freq = (10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)).float().to(DEVICE)
    res = {}

    def fn():  # Hugging Face's formula, in f32 (cos and sin rounded to bf16 would miss the tolerance)
        f = pos[:, None].float() * inv_freq  # [tokens, dim / 2]: one f32 multiply per angle
        c, sn = f.cos()[:, None], f.sin()[:, None]
        xf = x.float()
        if inter:  # GPT-J pairs (2i, 2i + 1)
            x0, x1 = xf[..., 0::2], xf[..., 1::2]
            res["y"] = torch.stack((x0 * c - x1 * sn, x0 * sn + x1 * c), -1).flatten(-2).bfloat16()
        else:  # NeoX: rotate_half
            rot = torch.cat((-xf[..., d // 2:], xf[..., :d // 2]), -1)
            res["y"] = (xf * torch.cat((c, c), -1) + rot * torch.cat((sn, sn), -1)).bfloat16()

    def check(got):
        ang = (pos.float()[:, None] * inv_freq).double()[:, None, :]  # the f32 angle, cos and sin in float64
        c, sn = ang.cos(), ang.sin()
        xd = x.double()
        if inter:
            x0, x1 = xd[..., 0::2], xd[..., 1::2]
            ref = torch.stack((x0 * c - x1 * sn, x0 * sn + x1 * c), -1).flatten(-2)
        else:
            x0, x1 = xd[..., :d // 2], xd[..., d // 2:]
            ref = torch.cat((x0 * c - x1 * sn, x0 * sn + x1 * c), -1)
        return close(got, ref, 1e-2, 1e-5)

    layout = "GPT-J" if inter else "NeoX"
    return Op(f"x.float() * cos + rotate_half(x).float() * sin, .bfloat16() ({layout}); bf16 [{t}, {h}, {d}]", fn,
              lambda: res["y"], check, lambda tk: lambda: tk.rope(x, pos, y2, inter),
              "eager RoPE is a chain of kernels (angles, cos, sin, cats, casts, multiplies, adds); inv_freq is "
              "made once outside the timing, for both")


def b27(torch, F, s):
    r, v = s["rows"], s["V"]
    logits = uniform(torch, (r, v), -10, 10)
    target = torch.randint(0, v, (r,), device=DEVICE, dtype=torch.int32)
    target[::1024] = -100  # a few ignored rows (4 of 4096 at the perf size), so that both sides' ignore path is checked
    target64 = target.long()  # F.cross_entropy takes int64 class indices; converted outside the timing
    loss2, res, ref = dev_empty(torch, r), {}, {}

    def fn():
        res["loss"] = F.cross_entropy(logits, target64, reduction="none")  # ignore_index=-100

    def check(got):
        if "loss" not in ref:
            x = logits.double()
            lse = x.logsumexp(1)
            picked = x.gather(1, target64.clamp(min=0)[:, None])[:, 0]
            ref["loss"] = torch.where(target64 == -100, torch.zeros_like(lse), lse - picked)
            del x
        return close(got, ref["loss"], 1e-5, 1e-5)

    return Op(f"F.cross_entropy(logits, target, reduction='none'); f32 [{r}, {v}], target i64", fn, lambda: res["loss"],
              check, lambda tk: lambda: tk.cross_entropy(logits, target, loss2),
              "cross_entropy allocates (log_softmax writes a [rows, V] tensor that nll_loss reads); every 1024th "
              "target is -100 (the puzzle's [perf] has none): 0.1% fewer rows read than the solution's timing")


def b28(torch, F, s):
    r, v, k = s["rows"], s["V"], s["k"]
    x = dev_empty(torch, (r, v)).normal_(0, 3)
    vals, idx = dev_empty(torch, (r, k)), dev_empty(torch, (r, k), torch.int64)
    vals2, idx2 = dev_empty(torch, (r, k)), dev_empty(torch, (r, k), torch.int32)
    fn, note = with_out(torch, lambda: torch.topk(x, k, dim=1, out=(vals, idx)), lambda: torch.topk(x, k, dim=1),
                        "torch.topk")
    ref = {}

    def check(got):
        """Values exactly (the k largest, in descending order); each index points at its value, the k indices
        of a row are distinct, and where a value occurs once in its row the index is the puzzle's. Where a
        value is tied, torch.topk may pick another copy: only the puzzle's rule (lowest column first)
        decides there, and torch does not promise it."""
        if "v" not in ref:
            sv, si = torch.sort(x, dim=1, descending=True, stable=True)
            ref["v"], ref["i"] = sv[:, :k].contiguous(), si[:, :k].contiguous()
            del sv, si
            ref["unique"] = torch.stack([(x == ref["v"][:, j:j + 1]).sum(1) == 1 for j in range(k)], 1)
        gv, gi = got[0], got[1].long()
        ok = bool(torch.equal(gv, ref["v"]))
        ok = ok and bool(((gi >= 0) & (gi < v)).all()) and bool(torch.equal(x.gather(1, gi), gv))
        ok = ok and bool((gi.sort(1).values.diff(dim=1) != 0).all())
        ok = ok and bool((gi == ref["i"])[ref["unique"]].all())
        return ok, 0.0

    return Op(f"torch.topk(x, {k}, dim=1{', out=(vals, idx)' if not note else ''}); f32 [{r}, {v}] -> idx i64",
              fn, (lambda: (vals, idx)) if not note else fn, check,
              lambda tk: lambda: tk.topk_rows(x, vals2, idx2),
              (note + "; " if note else "") + "checked: values exactly, indices where the value is unique in its row "
              "(torch.topk does not promise which copy of a tied value it returns); idx is int64 (the puzzle's i32)")


def b29(torch, F, s):
    r, k = s["rows"], s["cols"]
    x = uniform(torch, (r, k), -4, 4)
    q2, sc2, y2 = dev_empty(torch, (r, k), torch.int8), dev_empty(torch, r), dev_empty(torch, (r, k))
    res = {}

    def fn():
        sc = x.abs().amax(dim=1, keepdim=True) / 127
        q = torch.where(sc > 0, x / sc, 0).round().clamp(-127, 127).to(torch.int8)  # round: half to even
        res["out"] = (q, sc[:, 0], q * sc)

    def check(got):  # exact: each step is one correctly rounded f32 operation, done in float64 and rounded once
        xd = x.double()
        sd = (xd.abs().amax(1, keepdim=True) / 127).float().double()
        t = (xd / torch.where(sd > 0, sd, torch.ones_like(sd))).float().double()
        qd = torch.where(sd > 0, t.round().clamp(-127, 127), torch.zeros_like(t))
        return all_close([(got[0], qd, 0, 0), (got[1], sd[:, 0], 0, 0), (got[2], (qd * sd).float().double(), 0, 0)])

    return Op(f"s = x.abs().amax(1) / 127; q = where(s > 0, x / s, 0).round().clamp(-127, 127).to(int8); y = q * s; "
              f"f32 [{r}, {k}]", fn, lambda: res["out"], check, lambda tk: lambda: tk.int8_absmax(x, q2, sc2, y2),
              "a chain of eager kernels, each allocating its output")


def b30(torch, F, s):
    r, k = s["rows"], s["cols"]
    x = dev_empty(torch, (r, k)).normal_(0, 2)
    st = torch.zeros(r, device=DEVICE)  # the puzzle's [perf]: every row dynamic
    q2, sc2 = dev_empty(torch, (r, k), torch.float8_e4m3fn), dev_empty(torch, r)
    res = {}

    def fn():
        sc = torch.where(st[:, None] > 0, st[:, None], x.abs().amax(dim=1, keepdim=True).clamp(min=1e-10) / 448)
        res["out"] = ((x / sc).clamp(-448, 448).to(torch.float8_e4m3fn), sc[:, 0])  # the cast does not saturate

    def check(got):  # exact: the f32 quotient (a float64 one rounded once), then round to nearest even in e4m3
        xd = x.double()
        floor = torch.tensor(1e-10, dtype=torch.float32).double()
        dyn = (torch.maximum(xd.abs().amax(1, keepdim=True), floor) / 448).float().double()
        sd = torch.where(st[:, None] > 0, st[:, None].double(), dyn)
        qd = (xd / sd).float().clamp(-448, 448).to(torch.float8_e4m3fn).double()
        return all_close([(got[0].double(), qd, 0, 0), (got[1], sd[:, 0], 0, 0)])

    return Op(f"s = x.abs().amax(1).clamp(min=1e-10) / 448; (x / s).clamp(-448, 448).to(float8_e4m3fn); f32 [{r}, {k}]",
              fn, lambda: res["out"], check, lambda tk: lambda: tk.fp8_quantize(x, st, q2, sc2),
              "a chain of eager kernels, each allocating its output; static_scale is all 0 (every row dynamic), "
              "as in the puzzle's [perf]")


NF4_LUT = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
           -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
           0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
           0.7229568362236023, 1.0]


def b31(torch, F, s):
    n = s["n"]
    packed = torch.randint(0, 256, (n // 2,), device=DEVICE, dtype=torch.int32).to(torch.uint8)
    absmax = uniform(torch, -(-n // 64), 0.01, 4)
    lut = torch.tensor(NF4_LUT, dtype=torch.float32, device=DEVICE)
    y2, res = dev_empty(torch, n, torch.bfloat16), {}

    def fn():
        res["y"] = (lut[torch.stack((packed >> 4, packed & 15), -1).flatten().long()]
                    * absmax.repeat_interleave(64)[:n]).bfloat16()

    def check(got):  # exact: LUT[code] * absmax rounded to f32 once (float64 product, exact), then to bf16
        lut64, am64, ok, step = lut.double(), absmax.double(), True, 1 << 24  # slices: 2^30 float64s are 8.6 GB
        for i0 in range(0, n, step):
            p = packed[i0 // 2:(i0 + step) // 2].long()
            codes = torch.stack((p >> 4, p & 15), -1).flatten()
            i = torch.arange(i0, i0 + codes.numel(), device=DEVICE)
            ref = (lut64[codes] * am64[i // 64]).float().bfloat16().double()
            ok = ok and close(got[i0:i0 + codes.numel()], ref, 0, 0)[0]
        return ok, 0.0

    return Op(f"(lut[stack((packed >> 4, packed & 15), -1).flatten().long()] * absmax.repeat_interleave(64)).bfloat16(); "
              f"u8 [{n // 2}] -> bf16 [{n}]", fn, lambda: res["y"], check,
              lambda tk: lambda: tk.nf4_dequantize(packed, absmax, y2),
              "a chain of eager kernels: int64 codes, a gathered f32 tensor, the repeated absmax and the product "
              "all go through DRAM before the bf16 result")


def b32(torch, F, s):
    m, k = s["M"], s["K"]
    nb = k // 32
    wb = torch.randint(0, 256, (m, nb, 18), device=DEVICE, dtype=torch.int32).to(torch.uint8)
    d = uniform(torch, (m, nb, 1), -0.01, 0.01).half()  # q4_0(-0.01, 0.01): an f16 scale first, little-endian
    wb[..., :2] = d.view(torch.uint8)
    del d
    w = wb.reshape(-1)
    x = uniform(torch, k, -1, 1, torch.float16)
    y, y2 = dev_empty(torch, m, torch.float16), dev_empty(torch, m, torch.float16)

    def fn():  # dequantize W to f16 (each weight (q - 8) * d rounded to f16), then one cuBLAS f16 GEMV
        w3 = w.view(m, nb, 18)
        q = torch.cat((w3[..., 2:] & 15, w3[..., 2:] >> 4), -1).half() - 8
        torch.mv((q * w3[..., :2].contiguous().view(torch.float16)).reshape(m, k), x, out=y)

    def check(got):  # float64 weights and sums, in slices of rows
        w3, ok, worst, xd = w.view(m, nb, 18), True, 0.0, x.double()
        for r0 in range(0, m, 8192):
            blk = w3[r0:r0 + 8192]
            q = torch.cat((blk[..., 2:] & 15, blk[..., 2:] >> 4), -1).double() - 8
            ref = (q * blk[..., :2].contiguous().view(torch.float16).double()).reshape(-1, k) @ xd
            o, e = close(got[r0:r0 + 8192], ref, 1e-3, 1e-3)
            ok, worst = ok and o, max(worst, e)
        return ok, worst

    return Op(f"torch.mv(((cat(qs & 15, qs >> 4).half() - 8) * d).reshape({m}, {k}), x, out=y); q4_0 [{m}, {k}], "
              f"f16 x", fn, lambda: y, check, lambda tk: lambda: tk.w4a16_gemv(w, x, y2),
              "eager dequantizes the whole matrix to f16 in memory (several passes) before the GEMV")


def b34(torch, F, s):
    t, k, e, h, n = s["T"], s["k"], s["E"], s["H"], s["N"]
    x = uniform(torch, (t, h), -1, 1, torch.bfloat16)
    ids = torch.randint(0, e, (t, k), device=DEVICE, dtype=torch.int32)  # randint(0, E), as the puzzle
    wts = uniform(torch, (t, k), 0, 1)
    w = uniform(torch, (e, n, h), -1 / 64, 1 / 64, torch.bfloat16)  # the perf case's uniform(-1/64, 1/64)
    meta, rows = dev_empty(torch, 4 * e + 4, torch.int32), dev_empty(torch, t * k, torch.int32)
    part = dev_empty(torch, t * k * n)  # 537 MB of f32 at the perf size
    y32, y2 = dev_empty(torch, (t, n)), dev_empty(torch, (t, n), torch.bfloat16)
    res = {}

    def fn():  # the loop over experts, with an f32 accumulator; Y rounded to bf16 once at the end
        y32.zero_()
        for ex in range(e):
            tok, j = torch.where(ids == ex)
            y32.index_add_(0, tok, (x[tok] @ w[ex].T) * wts[tok, j, None])
        res["Y"] = y32.bfloat16()

    def check(got):  # float64, expert by expert (a 1024 x 4096 slice of X at a time)
        ref, xd, wd = torch.zeros(t, n, dtype=torch.float64, device=DEVICE), x.double(), wts.double()
        for ex in range(e):
            tok, j = torch.where(ids == ex)
            ref.index_add_(0, tok, wd[tok, j, None] * (xd[tok] @ w[ex].double().T))
        return close(got.float(), ref, 1e-2, 1e-2)

    return Op(f"for e in range(E): t, j = torch.where(topk_ids == e); y.index_add_(0, t, (X[t] @ W[e].T) * "
              f"topk_weights[t, j, None]); bf16 X [{t}, {h}], W [{e}, {n}, {h}], k = {k}", fn, lambda: res["Y"], check,
              lambda tk: lambda: tk.moe_grouped_gemm(x, ids, wts, w, meta, rows, part, y2),
              "eager: per expert a comparison, a torch.where that waits for the GPU, a gathered copy of the rows, a "
              "cuBLAS GEMM (wgmma; its bf16 result rounded before the weighting), a scale and an index_add_ into an "
              "f32 accumulator, then one conversion to bf16")


def b35(torch, F, s):
    m, n = s["M"], s["N"]
    x = dev_empty(torch, (m, n), torch.bfloat16).normal_(0, 1)
    dy = dev_empty(torch, (m, n), torch.bfloat16).normal_(0, 1)
    gamma = uniform(torch, n, 0.5, 1.5, torch.bfloat16)
    beta = torch.zeros(n, device=DEVICE, dtype=torch.bfloat16)
    # The forward's saved statistics, made once outside the timing: f32, [M, 1] as PyTorch keeps them.
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [n], gamma, beta, 1e-5)
    dx2, dgamma2, dbeta2 = dev_empty(torch, (m, n), torch.bfloat16), dev_empty(torch, n), dev_empty(torch, n)
    part = dev_empty(torch, 2 * min(264, m) * n)
    res, ref = {}, {}

    def fn():
        res["g"] = torch.ops.aten.native_layer_norm_backward(dy, x, [n], mean, rstd, gamma, beta, [True, True, True])

    def check(got):
        if not ref:
            xh = (x.double() - mean.double()) * rstd.double()
            d = dy.double()
            gd = gamma.double() * d
            c1, c2 = (xh * gd).mean(1, keepdim=True), gd.mean(1, keepdim=True)
            ref["dx"] = rstd.double() * (gd - c2 - xh * c1)
            ref["dgamma"], ref["dbeta"] = (d * xh).sum(0), d.sum(0)
            del xh, d, gd
        return all_close([(got[0], ref["dx"], 1e-2, 1e-3), (got[1], ref["dgamma"], 1e-2, 1e-3),
                          (got[2], ref["dbeta"], 1e-2, 1e-3)])

    return Op(f"torch.ops.aten.native_layer_norm_backward(dy, x, [{n}], mean, rstd, gamma, beta, [True] * 3); "
              f"bf16 [{m}, {n}], mean and rstd f32", fn, lambda: res["g"], check,
              lambda tk: lambda: tk.layernorm_backward(x, dy, gamma, mean, rstd, dx2, dgamma2, dbeta2, part),
              "PyTorch returns dgamma and dbeta in bf16 (summed in f32 inside), the solution and Triton in f32; "
              "PyTorch allocates its three outputs")
def b36(torch, F, s):
    t, v = s["T"], s["V"]
    z = dev_empty(torch, (t, v), torch.bfloat16).normal_(0, 3)  # the puzzle's normal(0, 3)
    y = torch.randint(0, v, (t,), device=DEVICE, dtype=torch.int32)
    y[::1024] = -100  # a few ignored rows (4 of 4096 at the perf size), so that both sides' ignore path is checked
    y64 = y.long()  # nll_loss takes int64 class indices; converted outside the timing
    zr = z.detach().requires_grad_()
    z2 = z.clone()  # Triton's own copy: it writes the gradient over it
    work2, loss2, res = dev_empty(torch, 2 * t + 16), dev_empty(torch, 1), {}

    def fn():  # the eager training step: f32 log-softmax, the mean NLL over the rows not ignored, backward
        loss = F.nll_loss(F.log_softmax(zr.float(), dim=-1), y64)  # ignore_index=-100
        (dz,) = torch.autograd.grad(loss, zr)
        res["out"] = (dz, loss)

    def check(got):  # float64, 256 rows at a time (the whole [T, V] in float64 is 4.2 GB)
        dz, loss = got
        valid = y64 != -100
        n = max(int(valid.sum()), 1)
        ok, worst, total = True, 0.0, 0.0
        for r0 in range(0, t, 256):
            x, tt, vv = z[r0:r0 + 256].double(), y64[r0:r0 + 256], valid[r0:r0 + 256]
            lse = x.logsumexp(1)
            total += float(torch.where(vv, lse - x.gather(1, tt.clamp(min=0)[:, None])[:, 0], 0.0).sum())
            ref = (x - lse[:, None]).exp_()
            rows = vv.nonzero()[:, 0]
            ref[rows, tt[rows]] -= 1
            ref = torch.where(vv[:, None], ref / n, 0.0)
            good, err = close(dz[r0:r0 + 256].float(), ref, 8e-3, 1e-7)  # the puzzle's tolerance
            ok, worst = ok and good, max(worst, err)
            del x, ref
        good, err = close(loss.reshape(1).float(), torch.tensor([total / n], dtype=torch.float64, device=DEVICE),
                          1e-5, 1e-6)
        return ok and good, max(worst, err)

    return Op(f"F.nll_loss(F.log_softmax(z.float(), -1), y); autograd.grad(loss, z); bf16 [{t}, {v}], y i64", fn,
              lambda: res["out"], check, lambda tk: lambda: tk.cross_entropy_fwd_bwd(z2, y, work2, loss2),
              "eager: a cast to f32, log_softmax, nll_loss, then their backward (a zero-filled f32 gradient, "
              "log_softmax's backward, a cast to bf16): six passes over [T, V] and 2.1 GB f32 temporaries; every "
              "1024th target is -100 (the puzzle's [perf] has none); Triton overwrites its own copy of z in place, "
              "checked on its first call")


def b37(torch, F, s):
    a, b, fn, outs, check, label = bf16_abt(torch, s, 1e-2, 1e-2)
    m, n, k = s["M"], s["N"], s["K"]
    part = dev_empty(torch, 2 * m * n * -(-k // 256))  # the puzzle's workspace
    c2 = dev_empty(torch, (m, n), torch.bfloat16)
    return Op(label, fn, outs, check, lambda tk: lambda: tk.splitk_gemm(a, b, part, c2),
              "cuBLAS (wgmma, its own choice of split or stream-K) against the solution's wgmma split-K with a workspace and a "
              "second, ordered reduction launch; the Triton form is the same two passes on tl.dot")


def b38(torch, F, s):
    bsz, h, sq, sk, d, causal = s["B"], s["H"], s["Sq"], s["Sk"], s["D"], bool(s["causal"])
    assert sq == sk or not causal, "SDPA's is_causal aligns top-left: the same as the puzzle's only where Sq = Sk"
    q, k, v = (uniform(torch, (bsz, h, n, d), -1, 1, torch.bfloat16) for n in (sq, sk, sk))
    do = uniform(torch, (bsz, h, sq, d), -1, 1, torch.bfloat16)
    qr, kr, vr = (t.detach().requires_grad_() for t in (q, k, v))
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # the forward picks the backward: FlashAttention-2's
        o = F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)
    scale = 1.0 / d ** 0.5
    lse = dev_empty(torch, (bsz, h, sq))  # what the forward saves, in f32, a head group at a time
    mask = torch.ones(sq, sk, dtype=torch.bool, device=DEVICE).triu(sk - sq + 1) if causal else None
    for b in range(bsz):
        for h0 in range(0, h, 4):
            sc = q[b, h0:h0 + 4].float() @ k[b, h0:h0 + 4].float().transpose(1, 2) * scale
            if causal:
                sc.masked_fill_(mask, float("-inf"))
            lse[b, h0:h0 + 4] = sc.logsumexp(-1)
            del sc
    o_in = o.detach()
    dq2, dk2, dv2 = dev_empty(torch, q.shape, torch.bfloat16), dev_empty(torch, k.shape, torch.bfloat16), \
        dev_empty(torch, v.shape, torch.bfloat16)
    dqa, delta = dev_empty(torch, q.shape), dev_empty(torch, (bsz, h, sq))
    res = {}

    def fn():  # the backward alone: the graph of the one forward above, kept
        res["g"] = torch.autograd.grad(o, (qr, kr, vr), do, retain_graph=True)

    def check(got):  # the float64 formulas on a first, a middle and a last head, from the same o and lse
        ok, worst = True, 0.0
        for bh in sorted({0, (bsz * h) // 2, bsz * h - 1}):
            b, hh = divmod(bh, h)
            qd, kd, vd, od, dod = (t[b, hh].double() for t in (q, k, v, o_in, do))
            p = torch.exp(qd @ kd.t() * scale - lse[b, hh].double()[:, None])
            if causal:
                p.masked_fill_(mask, 0.0)
            ds = p * (dod @ vd.t() - (dod * od).sum(-1, keepdim=True))
            for g, want in zip(got, (ds @ kd * scale, ds.t() @ qd * scale, p.t() @ dod)):
                good, err = close(g[b, hh].float(), want, 1e-2, 1e-3)  # the puzzle's tolerance
                ok, worst = ok and good, max(worst, err)
            del p, ds
        return ok, worst

    return Op(f"torch.autograd.grad(o, (q, k, v), dout) of F.scaled_dot_product_attention(q, k, v, is_causal={causal}) "
              f"under sdpa_kernel(FLASH_ATTENTION); bf16 q, dout [{bsz}, {h}, {sq}, {d}], k, v [{bsz}, {h}, {sk}, {d}]",
              fn, lambda: res["g"], check,
              lambda tk: lambda: tk.attention_backward(q, k, v, o_in, do, lse, dq2, dk2, dv2, dqa, delta, causal),
              "the bar is SDPA's flash backward (FlashAttention-2: its preprocess, the dq_accum atomics, the dq "
              "conversion), timed as one autograd call that also allocates dq, dk, dv; o and lse from one forward")
def marlin_codes(torch, B, k, n):
    """Puzzle 39: the codes q[K][N] from Marlin's fragment-ordered words (puzzle.toml): word [kt][128 c +
    4 (4 g + t) + j], nibble 4 kodd + 2 half + hi8 is q[16 kt + 8 hi8 + 2 t + kodd][64 c + 16 j + 8 half + g]."""
    nib = (B.view(k // 16, n // 64, 8, 4, 4, 1) >> (4 * torch.arange(8, device=B.device, dtype=torch.int32))) & 15
    return nib.view(k // 16, n // 64, 8, 4, 4, 2, 2, 2).permute(0, 7, 3, 5, 1, 4, 6, 2).reshape(k, n)


def b39(torch, F, s):
    m, n, k = s["M"], s["N"], s["K"]
    a = uniform(torch, (m, k), -1, 1, torch.float16)
    b = torch.randint(-2 ** 31, 2 ** 31, (k // 16, 2 * n), device=DEVICE, dtype=torch.int32)  # any bits: 8 codes
    sc = uniform(torch, (k // 128, n), 0.002, 0.02, torch.float16)
    c16, c2 = dev_empty(torch, (m, n), torch.float16), dev_empty(torch, (m, n), torch.float16)
    w16 = ((marlin_codes(torch, b, k, n) - 8).half() * sc.repeat_interleave(128, 0))  # for the f16 GEMM alone
    ref = {}

    def fn():  # eager: unpack and unshuffle the codes, scale them to f16 weights, one cuBLAS f16 GEMM
        w = (marlin_codes(torch, b, k, n) - 8).half() * sc.repeat_interleave(128, 0)  # f16 product: one rounding
        torch.matmul(a, w, out=c16)

    def check(got):  # float64 sums over the f16 weights, the puzzle's tolerance
        if "C" not in ref:
            ref["C"] = a.double() @ w16.double()
        return close(got.float(), ref["C"], 1e-3, 1e-3)

    return Op(f"torch.matmul(A, ((unshuffle(B) - 8).half() * s.repeat_interleave(128, 0)), out=C); f16 [{m}, {k}] "
              f"x int4 [{k}, {n}] in Marlin's order, group 128", fn, lambda: c16, check,
              lambda tk: lambda: tk.w4a16_gemm(a, b, sc, c2),
              "eager dequantizes all of B to f16 in memory (several passes over K N elements) before cuBLAS; "
              "'f16 GEMM alone' is cuBLAS on the weights already in f16 (4x the bytes), the bar the int4 stream "
              "should beat by up to ~3.9x; puzzle 32's GEMV has no Marlin-order form: its bound, M times the "
              "weights' read, is M times this puzzle's speed of light",
              also=[("f16 GEMM alone", lambda: torch.matmul(a, w16, out=c16))])
def b40(torch, F, s):
    m, n, k = s["M"], s["N"], s["K"]
    e4, kb, nb = torch.float8_e4m3fn, k // 128, -(-n // 128)

    def codes(rows, cols):  # the puzzle's init: normal(0, 100) codes, saturated to +-448
        return dev_empty(torch, (rows, cols)).normal_(0, 100).clamp(-448, 448).to(e4)

    def dequant(a, b, sa, sb):  # float64 A and B with their block scales applied (exact: 4 x 24 bits)
        ad = a.double() * sa.double().t().repeat_interleave(128, 1)
        bd = b.double() * sb.double().repeat_interleave(128, 0)[:b.shape[0]].repeat_interleave(128, 1)
        return ad, bd

    def blockwise(a, b, sa, sb):
        """torch._scaled_mm with DeepSeek-V3 scales (CUDA 12.9 cuBLASLt; PyTorch 2.9 on): scale_a [M, K/128]
        outer-dim-major, which is the transpose of the puzzle's MN-major [K/128, M]; scale_b [K/128, N/128] for
        B.t(), the transpose of the puzzle's [N/128, K/128]. Layouts it may want instead are tried in turn."""
        tries = [(sa.t(), sb.t()), (sa.t(), sb.t().contiguous()), (sa.t().contiguous(), sb.t().contiguous())]
        last = None
        for xa, xb in tries:
            call = (lambda xa, xb: lambda: torch._scaled_mm(a, b.t(), scale_a=xa, scale_b=xb,
                                                              out_dtype=torch.bfloat16))(xa, xb)
            try:
                call()  # a build without the recipe, or a layout it refuses, raises here
                return call
            except Exception as e:  # noqa: BLE001
                last = e
        raise last

    # Probe on a small problem whether this PyTorch runs the block-scaled recipe and gets it right.
    mode = "per-tensor"
    pa, pb = codes(256, 512), codes(384, 512)
    psa, psb = uniform(torch, (4, 256), 0.001, 0.01), uniform(torch, (3, 4), 0.0005, 0.002)
    try:
        got = blockwise(pa, pb, psa, psb)()
        ad, bd = dequant(pa, pb, psa, psb)
        want = ad @ bd.t()
        if float((got.double() - want).norm() / want.norm()) < 1e-2:
            mode = "block"
        else:
            print("b40: torch._scaled_mm took the block scales but its answer is off: per-tensor scales instead")
    except Exception as e:  # noqa: BLE001
        print(f"b40: torch._scaled_mm has no 1x128 / 128x128 block scales here ({type(e).__name__}): per-tensor")
    del pa, pb, psa, psb
    print(f"b40: PyTorch baseline uses {mode} scales")

    a, b = codes(m, k), codes(n, k)  # b [N, K]: b.t() is column-major
    sa, sb = uniform(torch, (kb, m), 0.001, 0.01), uniform(torch, (nb, kb), 0.0005, 0.002)  # the puzzle's layouts
    one = torch.ones((), device=DEVICE)
    c2 = dev_empty(torch, (m, n), torch.bfloat16)
    ref, res = {}, {}
    per_tensor = lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    call = blockwise(a, b, sa, sb) if mode == "block" else per_tensor

    def fn():  # _scaled_mm has no out= form: it allocates C (from the caching allocator once warm)
        res["C"] = call()

    def check(got):  # the puzzle's tolerance; the per-tensor fallback is held to its own formula
        if "C" not in ref:
            ad, bd = dequant(a, b, sa, sb)
            ref["C"] = ad @ bd.t()
            ref["T"] = a.double() @ b.double().t()
        if got is res.get("C") and mode != "block":
            return close(got.float(), ref["T"], 8e-3, 2e-3)
        return close(got.float(), ref["C"], 8e-3, 2e-3)

    what = ("scale_a [M, K/128] (1x128), scale_b [K/128, N/128] (128x128)" if mode == "block"
            else "scale_a = scale_b = 1.0 (per-tensor: this PyTorch has no block scales; same GEMM, not the same answer)")
    return Op(f"torch._scaled_mm(A, B.t(), {what}, out_dtype=bf16); e4m3 [{m}, {k}] x [{k}, {n}] -> bf16",
              fn, lambda: res["C"], check, lambda tk: lambda: tk.fp8_block_gemm(a, b, sa, sb, c2),
              "cuBLASLt on wgmma, promoting every 128 of K; its FP8 sums may miss the f32 tolerance as in puzzle 33 "
              "(so may Triton's tl.dot on fp8). Compare with puzzle 33's row: the same GEMM without block scales",
              also=[("per-tensor scales", per_tensor)] if mode == "block" else [])
def b41(torch, F, s):
    t, h = s["T"], s["H"]
    x = dev_empty(torch, (t, h)).normal_(0, 2).to(torch.bfloat16)
    g = uniform(torch, h, 0.1, 2).to(torch.bfloat16)
    q2, sc2 = dev_empty(torch, (t, h), torch.float8_e4m3fn), dev_empty(torch, (h // 128, t))
    eps = 1e-6
    res = {}

    def quant(x, g):  # RMSNorm in f32, then per 1 x 128 block: amax, a division, the e4m3 cast
        xf = x.float()
        y = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * g.float()).view(t, h // 128, 128)
        sc = y.abs().amax(-1, keepdim=True).clamp(min=1e-4) / 448
        q = (y / sc).clamp(-448, 448).to(torch.float8_e4m3fn)  # the cast does not saturate
        return q.view(t, h), sc[..., 0].t()  # scales [H / 128, T]; a view (.contiguous() would copy)

    def fn():
        res["out"] = quant(x, g)

    also = []
    if DEVICE == "cuda" and hasattr(torch, "compile"):
        compiled = torch.compile(quant)
        also.append(("torch.compile", lambda: compiled(x, g)))

    def check(got):  # the puzzle's tolerances: one e4m3 step for q, f32's for the scales
        xd = x.double()
        y = (xd * torch.rsqrt((xd * xd).mean(1, keepdim=True) + eps) * g.double()).float()
        sd = (y.abs().view(t, h // 128, 128).amax(-1).clamp(min=1e-4).double() / 448).float().double()
        qd = (y.double().view(t, h // 128, 128) / sd[..., None]).float().clamp(-448, 448)
        qd = qd.to(torch.float8_e4m3fn).double().view(t, h)
        return all_close([(got[0].double(), qd, 0.125, 0.015), (got[1], sd.t(), 1e-5, 1e-6)])

    return Op(f"RMSNorm in f32, then amax per 1 x 128 block, (y / s).to(float8_e4m3fn); bf16 [{t}, {h}] -> e4m3, "
              f"scales [{h // 128}, {t}]", fn, lambda: res["out"], check,
              lambda tk: lambda: tk.rmsnorm_fp8_block_quant(x, g, q2, sc2, eps),
              "eager: a chain of kernels with f32 temporaries of [T, H]; torch.compile fuses what it can", also=also)
def b42(torch, F, s):
    r, v = s["rows"], s["V"]
    x = (128 * dev_empty(torch, (r, v)).uniform_(0, 1) ** 4).floor()  # skewed(0, 128, 4): exact f32 sums
    p, u = uniform(torch, (r,), 0, 1), uniform(torch, (r,), 0, 1)
    tok2, mass2 = dev_empty(torch, (r,), torch.int32), dev_empty(torch, (r,))
    cols = torch.arange(v, device=DEVICE)

    def top_p(w, pp, uu):
        """The puzzle's rule, eagerly: a stable sort, cumsum, the mask of the shortest prefix reaching
        p * M, scattered back to columns, then the inverse CDF with the given u in column order."""
        sv, si = torch.sort(w, dim=1, descending=True, stable=True)
        cs = sv.cumsum(1)
        target = (pp.double() * cs[:, -1].double()).float().to(w.dtype)  # p * M, rounded to f32 once
        keep = (cs - sv) < target[:, None]  # the mass before it had not reached p * M
        keep[:, 0] = True
        mn = torch.where(keep, sv, 0).sum(1)
        member = torch.zeros_like(keep).scatter_(1, si, keep)
        run = torch.where(member, w, 0).cumsum(1)
        hit = member & (run > (uu.double() * mn.double()).float().to(w.dtype)[:, None])
        last = torch.where(member, cols, -1).amax(1)
        return torch.where(hit.any(1), hit.int().argmax(1), last), mn

    res = {}

    def fn():
        res["out"] = top_p(x, p, u)

    ref = {}

    def check(got):  # exact: the weights make every sum exact, in f32 as in float64
        if "t" not in ref:
            ref["t"], ref["m"] = top_p(x.double(), p.float(), u.float())
        ok = bool(torch.equal(got[0].long(), ref["t"].long())) and bool(torch.equal(got[1].double(), ref["m"]))
        return ok, 0.0

    also = []
    try:  # FlashInfer's sorting-free sampler, if installed: its own RNG, normalised probabilities; timed only
        import flashinfer
        pn = x / x.sum(1, keepdim=True)
        also.append(("flashinfer.sampling.top_p_sampling_from_probs",
                     lambda: flashinfer.sampling.top_p_sampling_from_probs(pn, p)))
    except Exception:
        pass
    return Op(f"torch.sort + cumsum + mask + scatter + cumsum (top-p with the given u); f32 [{r}, {v}]",
              fn, lambda: res["out"], check,
              lambda tk: lambda: tk.top_p_sample(x, p, u, tok2, mass2),
              "eager: a stable sort of every row (keys and indices), two cumsums, a scatter and the masks: a dozen "
              "passes over [rows, V]; the Triton form bisects on the weight's bits (34 reads of each row)",
              also)


def b43(torch, F, s):
    a, b, fn, outs, check, label = bf16_abt(torch, s, 1e-2, 1e-2)
    c2 = dev_empty(torch, (s["M"], s["N"]), torch.bfloat16)
    # The skinny shape of the puzzle's bar (the same 137 GFLOP as 4096^3, C four 256-wide tiles across),
    # cuBLAS and Triton timed there too; the solution's time there comes from
    # `warpbook run 43-tma-warp-specialized-gemm solutions/43-tma-warp-specialized-gemm.cu --size M=16384 --size N=1024
    # --size K=4096 --size SMS=132`.
    sm, sn, sk = (16384, 1024, 4096) if DEVICE == "cuda" else (256, 128, 64)
    a2, b2 = uniform(torch, (sm, sk), -1, 1, torch.bfloat16), uniform(torch, (sn, sk), -1, 1, torch.bfloat16)
    c3, c4 = dev_empty(torch, (sm, sn), torch.bfloat16), dev_empty(torch, (sm, sn), torch.bfloat16)
    skinny = f"M={sm} N={sn} K={sk}"
    also = [(f"torch.matmul at {skinny}", lambda: torch.matmul(a2, b2.t(), out=c3))]
    tk = sys.modules.get("kernels")  # bench/triton/kernels.py, when load_triton found it
    if tk is not None:
        also.append((f"Triton at {skinny}", lambda: tk.persistent_gemm(a2, b2, c4)))
    return Op(label, fn, outs, check, lambda tk: lambda: tk.persistent_gemm(a, b, c2),
              "cuBLAS (TMA, wgmma and warp specialisation of its own) against the TMA-fed, warp-specialised "
              "persistent kernel; the Triton form is a persistent loop over TMA descriptor loads", also)


def b44(torch, F, s):
    bsz, h, S, d = s["B"], s["H"], s["S"], s["D"]
    assert not s["causal"], "the perf size is not causal; the causal rows below are timed beside it"
    q, k = (uniform(torch, (bsz, h, S, d), -2, 2, torch.bfloat16) for _ in range(2))
    v = uniform(torch, (bsz, h, S, d), -1, 1, torch.bfloat16)
    o2 = dev_empty(torch, (bsz, h, S, d), torch.bfloat16)
    lse2 = dev_empty(torch, (bsz, h, S), torch.float32)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    res = {}

    def under(backend, causal, key=None):
        def fn():
            with sdpa_kernel(backend):
                out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            if key:
                res[key] = out
        return fn

    # The bar: SDPA's best choice on Hopper, cuDNN's attention (wgmma, TMA, warp specialisation of
    # its own); FlashAttention-2 beside it, and both again under the causal mask (the solution's
    # causal time comes from `warpbook run 44-flash-attention-3 solutions/44-flash-attention-3.cu
    # --size causal=1`).
    also = [("FLASH_ATTENTION (FlashAttention-2)", under(SDPBackend.FLASH_ATTENTION, False)),
            ("CUDNN_ATTENTION, causal", under(SDPBackend.CUDNN_ATTENTION, True)),
            ("FLASH_ATTENTION, causal", under(SDPBackend.FLASH_ATTENTION, True))]
    return Op(f"F.scaled_dot_product_attention(q, k, v) under sdpa_kernel(CUDNN_ATTENTION); bf16 [{bsz}, {h}, {S}, {d}]",
              under(SDPBackend.CUDNN_ATTENTION, False, "o"), lambda: res["o"],
              lambda got: attention_check(torch, q, k, v, False, got),
              lambda tk: lambda: tk.fa3_forward(q, k, v, o2, lse2),
              "the bar is cuDNN's attention, SDPA's own choice on Hopper; SDPA allocates o and writes no lse "
              "(the Triton form writes both)", also)


# puzzle number -> (builder, the size names it takes)
BUILDERS = {
    1: (b01, {"n"}), 2: (b02, {"rows", "cols"}), 3: (b03, {"rows", "cols"}),
    4: (b04, {"rows", "cols"}), 5: (b05, {"rows", "cols"}), 6: (b06, {"n"}),
    7: (b07, {"rows", "cols"}), 8: (b08, {"n"}), 9: (b09, {"rows", "cols"}), 10: (b10, {"n"}),
    11: (b11, {"n"}), 12: (b12, {"rows", "cols"}), 13: (b13, {"rows", "cols"}),
    14: (b14, {"rows", "cols"}), 15: (b15, {"rows", "cols"}), 16: (b16, {"channels", "length", "ksize"}),
    17: (b17, {"M", "N", "K"}), 18: (b18, {"M", "K"}),
    19: (b19, {"M", "N", "K"}), 20: (b20, {"M", "N", "K"}), 21: (b21, {"M", "N", "K"}),
    22: (b22, {"B", "H", "S", "D"}), 23: (b23, {"B", "Hq", "Hkv", "Sq", "Sk", "D"}),
    24: (b24, {"B", "Hq", "Hkv", "L", "D"}),
    25: (b25, {"B", "Hq", "Hkv", "D", "max_blocks", "num_blocks"}), 26: (b26, {"tokens", "heads", "dim", "interleaved"}), 27: (b27, {"rows", "V"}),
    28: (b28, {"rows", "V", "k"}), 29: (b29, {"rows", "cols"}), 30: (b30, {"rows", "cols"}), 31: (b31, {"n"}),
    32: (b32, {"M", "K"}), 33: (b33, {"M", "N", "K"}),
    34: (b34, {"T", "k", "E", "H", "N"}), 35: (b35, {"M", "N"}),
    34: (b34, {"T", "k", "E", "H", "N"}), 36: (b36, {"T", "V"}),
    34: (b34, {"T", "k", "E", "H", "N"}), 37: (b37, {"M", "N", "K"}),
    38: (b38, {"B", "H", "Sq", "Sk", "D", "causal"}),
    39: (b39, {"M", "N", "K"}),
    40: (b40, {"M", "N", "K"}),
    41: (b41, {"T", "H"}),
    42: (b42, {"rows", "V"}),
    43: (b43, {"M", "N", "K", "SMS"}), 44: (b44, {"B", "H", "S", "D", "causal"}),
}


def sync(torch):
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def flush_l2(flush):
    """Evicts the op's data from the L2 by reading a zeroed scratch buffer larger than it, as Warpbook's
    runner does. Reading, not writing: a fill leaves the L2 full of dirty lines, and the timed op then
    pays for writing them back (9-19 us for 264-805 MiB read streams on an H200; bench/perfmodel/experiments/l2-flush)."""
    flush.sum()


def bench(torch, fn, flush, min_warm_ms=20.0, min_reps=10, min_ms=100.0):
    """Median, p10 and p90 in microseconds, and the sample count, timed as Warpbook times."""
    if DEVICE != "cuda":  # --cpu-dry-run: the code paths only; the figure means nothing
        t0 = time.perf_counter()
        fn()
        us = (time.perf_counter() - t0) * 1e6
        return {"median_us": us, "p10_us": us, "p90_us": us, "samples": 1}
    fn()  # first call: lazy initialisation (cuBLAS handles, cuDNN autotuning) outside the warm-up
    torch.cuda.synchronize()
    w0, warm = time.perf_counter(), 0
    while warm < 3 or (time.perf_counter() - w0) * 1e3 < min_warm_ms:
        flush_l2(flush)
        fn()
        torch.cuda.synchronize()
        warm += 1
    batch = 16
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(batch)]
    samples, s0 = [], time.perf_counter()
    while len(samples) < min_reps or (time.perf_counter() - s0) * 1e3 < min_ms:
        for k, (start, end) in enumerate(events):
            flush_l2(flush)  # untimed
            start.record()
            fn()
            end.record()
        end.synchronize()
        samples += [start.elapsed_time(end) * 1e3 for start, end in events]
        if len(samples) >= 20000:
            break
    samples.sort()
    pick = lambda q: samples[min(len(samples) - 1, int(q * (len(samples) - 1) + 0.5))]
    med = samples[len(samples) // 2] if len(samples) % 2 else 0.5 * (
        samples[len(samples) // 2 - 1] + samples[len(samples) // 2])
    return {"median_us": med, "p10_us": pick(0.1), "p90_us": pick(0.9), "samples": len(samples)}


# ---------------------------------------------------------------------------------------------
# The reports.


def slim(rep):
    """A report small enough to bring back: no heat maps, counters or timing samples."""
    out = {k: v for k, v in rep.items() if k not in ("cases", "sim_perf", "perf")}
    def keep(c):
        kept = {k: c.get(k) for k in ("label", "verdict", "steps_ms")}
        if c.get("message") and c.get("verdict") != "passed":
            kept["message"] = c["message"]
        return kept

    out["cases"] = [keep(c) for c in rep.get("cases", [])]
    if rep.get("sim_perf"):
        out["sim_perf"] = keep(rep["sim_perf"])
    if rep.get("perf"):
        perf = dict(rep["perf"])
        timing = dict(perf.get("timing", {}))
        timing["samples"] = len(timing.pop("samples_us", []) or [])
        perf["timing"] = timing
        out["perf"] = perf
    return out


def load_reports(path):
    """id -> report, from a folder of ID.json files or one combined JSON object. A report that is
    missing or unreadable becomes {"verdict": "no report", "error": ...}."""
    reps = {}
    if os.path.isdir(path):
        for name in sorted(os.listdir(path)):
            if not re.match(r"\d\d-.*\.json$", name):
                continue
            pid = name[:-5]
            try:
                with open(os.path.join(path, name)) as f:
                    reps[pid] = json.load(f)
            except (OSError, ValueError) as e:
                err = os.path.join(path, pid + ".err")
                tail = open(err).read().strip()[-300:] if os.path.exists(err) else ""
                reps[pid] = {"puzzle": pid, "verdict": "no report", "error": f"{e}; {tail}".strip("; ")}
    else:
        with open(path) as f:
            reps = json.load(f)
    return reps


def toml_perf_sizes(root, pid, section="[perf]"):
    """[perf] from puzzles/ID/puzzle.toml (integers only), for a report that has no perf section."""
    sizes, inside = {}, False
    try:
        lines = open(os.path.join(root, "puzzles", pid, "puzzle.toml")).read().splitlines()
    except OSError:
        return sizes
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line.startswith("["):
            inside = line == section
        elif inside and "=" in line:
            key, val = (t.strip() for t in line.split("=", 1))
            if re.fullmatch(r"\d+", val):
                sizes[key] = int(val)
    return sizes


def puzzle_num(pid):
    m = re.match(r"(\d+)-", pid)
    return int(m.group(1)) if m else -1


# ---------------------------------------------------------------------------------------------
# The table.


def fmt(v, spec, unit=""):
    return "-" if v is None else f"{v:{spec}}{unit}"


def judge(row):
    """Whether the bar is met: 'yes', 'no (...)', or '-' when a figure is missing."""
    num = row["num"]
    if row["verdict"] != "passed":
        return f"no ({row['verdict']})"
    ours, ratio = row["ours"], row["ratio"]
    if num in OF_MMA_CEILING:  # against the probed ceiling, not against torch
        frac, m = OF_MMA_CEILING[num]
        if not ours.get("timed") or not ours.get("gflops") or not PROBED.get(m):
            return "- (no probe.json)" if not PROBED.get(m) else "-"
        got = ours["gflops"] / PROBED[m]
        return "yes" if got >= frac else f"no ({got:.0%} of {PROBED[m] / 1e3:.0f} TFLOP/s)"
    if not ours.get("timed") or ratio is None:
        return "-"
    if row["torch"].get("check") is False:
        return "- (torch check failed)"
    near = " (within noise)" if 1 - NOISE <= ratio < 1 else ""
    if num in SOL_AND_TORCH:
        sol = ours["speed_of_light"]
        miss = [f"SoL {sol:.0%}"] if sol < SOL_BAR else []
        miss += [f"slower than torch{near}"] if ratio < 1 else []
        return "yes" if not miss else "no (" + ", ".join(miss) + ")"
    if num in AS_FAST_AS:
        return "yes" if ratio >= 1 else f"no (slower{near})"
    if num in TIMES_TORCH_AND_TRITON:
        tr = row.get("triton_ratio")
        miss = [f"{ratio:.2f}x torch's speed"] if ratio < TIMES_TORCH_AND_TRITON[num] else []
        miss += ["Triton not timed"] if tr is None else [
            f"slower than Triton{' (within noise)' if 1 - NOISE <= tr < 1 else ''}"] if tr < 1 else []
        return "yes" if not miss else "no (" + ", ".join(miss) + ")"
    if num in FRACTION_OF_TORCH:
        return "yes" if ratio >= FRACTION_OF_TORCH[num] else f"no ({ratio:.2f}x torch's speed)"
    if num == SGEMM:
        return "yes" if ratio >= SGEMM_BAR else f"no ({ratio:.0%} of cuBLAS)"
    return "-"


HEAD = ["puzzle", "solution µs", "GB/s or GFLOP/s", "speed of light", "medal", "PyTorch op",
        "PyTorch µs", "torch/ours", "Triton µs", "triton/ours", "bar", "met?"]


def triton_cell(row, compute):
    """The Triton time and rate, or why there is none: a failure is said in the table, never dropped."""
    tr = row.get("triton") or {}
    if tr.get("error"):
        return f"ERROR: {tr['error']}"
    if tr.get("check") is False:
        return f"WRONG ANSWER (max err {tr.get('check_err', 0):.3g}): not timed"
    if tr.get("check_error"):
        return f"check did not run: {tr['check_error']}: not timed"
    if not tr.get("median_us"):
        return "-"
    rate = tr.get("gflops") if compute else tr.get("gbps")
    return f"{tr['median_us']:.1f}" + (f" ({rate:.0f} {'GFLOP/s' if compute else 'GB/s'})" if rate else "")


def md_row(row):
    o, t = row["ours"], row["torch"]
    compute = o.get("bound") == "compute" or row["num"] == SGEMM
    rate = fmt(o.get("gflops"), ".0f", " GFLOP/s") if compute else fmt(o.get("gbps"), ".0f", " GB/s")
    us = fmt(o.get("median_us"), ".1f") if o.get("timed") else ("modelled" if o.get("modelled") else "-")
    if not o.get("timed") and not o.get("modelled"):
        rate = "-"
    torch_us = fmt(t.get("median_us"), ".1f")
    torch_rate = t.get("gflops") if compute else t.get("gbps")
    if torch_rate and t.get("median_us"):
        torch_us += f" ({torch_rate:.0f} {'GFLOP/s' if compute else 'GB/s'})"
    op = t.get("op") or "-"
    if t.get("error"):
        op += f" — ERROR: {t['error']}"
    elif t.get("check") is False:
        op += f" — torch check FAILED (max err {t.get('check_err', 0):.3g})"
    elif t.get("check_error"):
        op += f" — torch check did not run: {t['check_error']}"
    cells = [row["puzzle"], us, rate, fmt(o.get("speed_of_light") and 100 * o["speed_of_light"], ".0f", "%"),
             o.get("medal") or "-", op.replace("|", "\\|"), torch_us,
             fmt(row["ratio"], ".2f"), triton_cell(row, compute).replace("|", "\\|"),
             fmt(row.get("triton_ratio"), ".2f"), bar_text(row["num"]), row["met"]]
    return "| " + " | ".join(cells) + " |"


def header_lines(meta):
    lines = [f"Solutions: {meta.get('device', '?')} (driver {meta.get('driver', '?')}), "
             f"backend {meta.get('backend', '?')}, ceilings: {meta.get('ceilings', '?')}"]
    if meta.get("torch"):
        lines.append(f"PyTorch {meta['torch']} on {meta.get('torch_device', '?')}, CUDA {meta.get('cuda', '?')}, "
                     f"cuDNN {meta.get('cudnn', '?')}; TF32 off; timed like Warpbook (>= 20 ms warm-up, "
                     f"L2 flush (a read of {meta.get('flush_mib', 256)} MiB) before each sample, events around the op, "
                     f">= 10 samples and 100 ms, median)")
    else:
        lines.append("PyTorch: not run (--selftest)")
    return lines


def table(meta, rows):
    lines = header_lines(meta) + [triton_header(meta), "", "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += [md_row(r) for r in rows]
    notes = [f"- {r['puzzle']}: {r['torch']['note']}" for r in rows if r["torch"].get("note")]
    if notes:
        lines += ["", "PyTorch notes:"] + notes
    return "\n".join(lines) + "\n"


def triton_header(meta):
    if meta.get("triton"):
        return (f"Triton {meta['triton']}: bench/triton/kernels.py, each output checked untimed against the float64 "
                f"formula (the same check as PyTorch's; NaN fails), then timed the same way; triton/ours is Triton's "
                f"time over the solution's (above 1: the CUDA solution is faster); sgemm with input_precision=\"ieee\" (no TF32)")
    return f"Triton: not run ({meta.get('triton_error') or '--selftest'})"


def write_outputs(out_dir, meta, rows):
    with open(os.path.join(out_dir, "vs_torch.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    with open(os.path.join(out_dir, "vs_torch.md"), "w") as f:
        f.write(table(meta, rows))


def ours_figures(rep):
    perf = rep.get("perf") or {}
    timing = perf.get("timing") or {}
    timed = bool(timing.get("ok"))
    return {
        "timed": timed, "modelled": bool(perf.get("modelled")),
        "median_us": timing.get("median_us") if timed else None,
        "p10_us": timing.get("p10_us") if timed else None, "p90_us": timing.get("p90_us") if timed else None,
        "method": timing.get("method"),
        "gbps": perf.get("gbps") if timed or perf.get("modelled") else None,
        "gflops": perf.get("gflops") if timed or perf.get("modelled") else None,
        "speed_of_light": perf.get("speed_of_light") if timed or perf.get("modelled") else None,
        "medal": perf.get("medal", ""), "bound": perf.get("bound"),
        "bytes": perf.get("bytes"), "flops": perf.get("flops"),
        "dram_ceiling_gbps": perf.get("dram_ceiling_gbps"),
        "compute_ceiling_gflops": perf.get("compute_ceiling_gflops"),
        "tunables": rep.get("tunables"),
    }


def short_error(e):
    return f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:200]


def rates(ours, us):
    """GB/s, GFLOP/s and fraction of speed of light of a time, from the solution's cost and ceilings."""
    out = {}
    if ours.get("bytes"):
        out["gbps"] = ours["bytes"] / (us * 1e3)
    if ours.get("flops"):
        out["gflops"] = ours["flops"] / (us * 1e3)
    dram, comp = ours.get("dram_ceiling_gbps"), ours.get("compute_ceiling_gflops")
    if dram and comp and ours.get("bytes") is not None:
        floor_us = max(ours["bytes"] / (dram * 1e3), (ours.get("flops") or 0) / (comp * 1e3))
        out["speed_of_light"] = floor_us / us
    return out


def load_triton(root, meta):
    """bench/triton/kernels.py, or None with meta["triton_error"] saying why (the column then says so)."""
    try:
        import triton

        sys.path.insert(0, os.path.join(root, "bench", "triton"))
        import interpreter_rounding
        import kernels

        if interpreter_rounding.install():  # TRITON_INTERPRET=1: conversions that round like the GPU's
            meta["triton_interpreter"] = True

        meta["triton"] = triton.__version__
        return kernels
    except Exception as e:
        meta["triton_error"] = short_error(e)
        traceback.print_exc(file=sys.stderr)
        return None


def triton_side(torch, tk, op, ours, flush):
    """Runs the Triton version once (compiling it) and checks its output; times it only if the check
    passed. Returns (figures, Triton time / solution time). Never raises: a compile error, a crash or
    a wrong answer is written into the figures, and so into the table."""
    res, ratio = {}, None
    try:
        fn = op.triton(tk)
        got = fn()
        sync(torch)
        ok, err = op.check(got)
        res.update(check=ok, check_err=err)
        if ok:
            t = bench(torch, fn, flush)
            res.update(t)
            res.update(rates(ours, t["median_us"]))
            if ours.get("timed") and ours["median_us"]:
                ratio = t["median_us"] / ours["median_us"]
    except Exception as e:
        res["error"] = short_error(e)
        traceback.print_exc(file=sys.stderr)
        try:
            sync(torch)  # an illegal address poisons the context: say so, go on
        except Exception as e2:
            res["error"] += f" (and then {short_error(e2)})"
    return res, ratio


def check_builders(root):
    """Each builder's size names against its puzzle's [perf] and [sim_perf] (--cpu-dry-run builds
    at the latter): a puzzle whose sizes were renamed would otherwise lose its row on the GPU."""
    bad, seen = [], set()
    for d in sorted(os.listdir(os.path.join(root, "puzzles"))):
        m = re.match(r"(\d\d)-", d)
        if not m or int(m.group(1)) not in BUILDERS:
            continue
        num = int(m.group(1))
        seen.add(num)
        builder, keys = BUILDERS[num]
        for section in ("[perf]", "[sim_perf]"):
            sizes = set(toml_perf_sizes(root, d, section))
            if sizes != keys:
                bad.append(f"{d} {section}: {sorted(sizes)}, {builder.__name__} takes {sorted(keys)}")
    bad += [f"BUILDERS has {n}, which no puzzle folder has" for n in sorted(set(BUILDERS) - seen)]
    for line in bad:
        print(line)
    print(f"{len(seen)} rows, {len(bad)} mismatches")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checks", nargs="?", help="a folder of ID.json check reports, or a combined checks.json")
    ap.add_argument("--out", default=os.environ.get("OUT") or "/tmp/vs-torch")
    ap.add_argument("--selftest", action="store_true", help="parse and tabulate only; no torch")
    ap.add_argument("--check-builders", action="store_true",
                    help="each row's size names against puzzle.toml; no reports, no torch")
    ap.add_argument("--only", default="", help="comma-separated puzzle numbers to time against torch")
    ap.add_argument("--flush-mib", type=int, default=256)
    ap.add_argument("--probe", default="", help="`warpbook probe --json` output: the mma.sync ceilings")
    ap.add_argument("--no-triton", action="store_true", help="leave the Triton column empty")
    ap.add_argument("--no-torch", action="store_true", help="time Triton only (PyTorch's op still gives the inputs)")
    ap.add_argument("--cpu-dry-run", action="store_true",
                    help="no GPU: every code path on the CPU at the [sim_perf] sizes, Triton through its "
                         "interpreter (set TRITON_INTERPRET=1); checks mean something, times do not")
    a = ap.parse_args()
    global DEVICE
    if a.cpu_dry_run:
        DEVICE = "cpu"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if a.check_builders:
        return check_builders(root)
    if not a.checks:
        ap.error("CHECKS is needed (a folder of reports or a checks.json)")
    os.makedirs(a.out, exist_ok=True)

    if a.probe and os.path.exists(a.probe):
        with open(a.probe) as f:
            PROBED.update({r["metric"]: r["best"] for r in json.load(f).get("results", []) if r.get("best")})
    reps = load_reports(a.checks)
    reps = {pid: r for pid, r in reps.items() if puzzle_num(pid) in BUILDERS}
    if os.path.isdir(a.checks):  # before torch, so that it comes back even if torch dies
        with open(os.path.join(a.out, "checks.json"), "w") as f:
            json.dump({pid: slim(r) for pid, r in reps.items()}, f, indent=1)
    only = {int(x) for x in a.only.split(",") if x.strip()}

    any_rep = next((r for r in reps.values() if r.get("device")), {})
    dev = any_rep.get("device", {})
    meta = {"device": dev.get("name"), "driver": dev.get("driver"), "backend": dev.get("backend"),
            "ceilings": (any_rep.get("perf") or {}).get("ceiling_source"), "flush_mib": a.flush_mib}
    torch = F = flush = None
    if not a.selftest:
        import torch
        import torch.nn.functional as F

        torch.backends.cuda.matmul.allow_tf32 = False  # puzzle 17 is against cuBLAS SGEMM, not TF32
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True  # let cuDNN pick its best conv1d algorithm
        torch.set_float32_matmul_precision("highest")
        meta.update(torch=torch.__version__, cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                    torch_device=torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu (dry run)")
        flush = torch.zeros(a.flush_mib << 18, dtype=torch.int32, device="cuda") if DEVICE == "cuda" else None
    tk = None
    if a.selftest or a.no_triton:
        meta["triton_error"] = "--selftest" if a.selftest else "--no-triton"
    else:
        tk = load_triton(root, meta)
    for line in header_lines(meta) + [triton_header(meta)]:
        print(line)
    print()
    print("| " + " | ".join(HEAD) + " |", flush=True)
    print("|" + "---|" * len(HEAD), flush=True)

    rows, problems = [], 0
    for pid in sorted(reps, key=puzzle_num):
        rep, num = reps[pid], puzzle_num(pid)
        ours = ours_figures(rep)
        sizes = (rep.get("perf") or {}).get("sizes") or toml_perf_sizes(root, pid)
        if a.cpu_dry_run:
            sizes = toml_perf_sizes(root, pid, "[sim_perf]")
        row = {"puzzle": pid, "num": num, "verdict": rep.get("verdict", "no report"),
               "summary": rep.get("summary") or rep.get("error"), "sizes": sizes,
               "ours": ours, "torch": {}, "ratio": None, "triton": {}, "triton_ratio": None}
        builder, keys = BUILDERS.get(num, (None, set()))
        if builder is None or set(sizes) != keys:
            row["torch"]["error"] = f"sizes {sorted(sizes)} are not the builder's {sorted(keys)}"
            problems += 1
        elif not a.selftest and (not only or num in only):
            op = None
            try:
                op = builder(torch, F, sizes)
                row["torch"].update(op=op.desc, note=op.note)
                if not a.no_torch:
                    t = bench(torch, op.fn, flush)
                    row["torch"].update(t)
                    try:
                        ok, err = op.check(op.outs())
                        row["torch"].update(check=ok, check_err=err)
                    except Exception as e:  # the timing stands; the check could not run
                        row["torch"]["check_error"] = short_error(e)
                    row["torch"].update(rates(ours, t["median_us"]))
                    if ours.get("timed") and ours["median_us"]:
                        row["ratio"] = t["median_us"] / ours["median_us"]
                    also = []
                    for label, fn in op.also:  # the same op by another backend: reported, not the bar
                        try:
                            also.append(f"{label} {bench(torch, fn, flush)['median_us']:.1f} us")
                        except Exception as e:
                            also.append(f"{label}: {short_error(e)}")
                    if also:
                        row["torch"]["note"] = "; ".join(filter(None, [op.note, "also timed: " + ", ".join(also)]))
            except Exception as e:  # one op failing must not lose the rest of the table
                row["torch"]["error"] = short_error(e)
                traceback.print_exc(file=sys.stderr)
            if op is not None and tk is not None and op.triton is not None:
                row["triton"], row["triton_ratio"] = triton_side(torch, tk, op, ours, flush)
            op = None
            gc.collect()
            if DEVICE == "cuda":
                torch.cuda.empty_cache()
        elif a.selftest:
            row["torch"]["op"] = f"({builder.__name__})"
        row["met"] = judge(row)
        rows.append(row)
        print(md_row(row), flush=True)
        write_outputs(a.out, meta, rows)  # after every row: a crash keeps what was measured

    notes = [f"- {r['puzzle']}: {r['torch']['note']}" for r in rows if r["torch"].get("note")]
    if notes:
        print("\nPyTorch notes:\n" + "\n".join(notes))
    write_outputs(a.out, meta, rows)
    print(f"\nwrote {a.out}/vs_torch.md, vs_torch.json" + (", checks.json" if os.path.isdir(a.checks) else ""))
    if a.selftest and (problems or len(rows) != len(BUILDERS)):
        print(f"selftest: {problems} size mismatches, {len(rows)} of {len(BUILDERS)} puzzles", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
