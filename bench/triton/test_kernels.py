#!/usr/bin/env python3
"""Checks every launcher of bench/triton/kernels.py on its puzzle's [[case]]s, the way Warpbook
checks a kernel: the sizes and input distributions of puzzles/ID/puzzle.toml, outputs poisoned
with NaN (or -1) before the call, the answer compared with a float64 reference elementwise,
|got - ref| <= atol + rtol |ref| with the puzzle's [check] tolerance (without one, each output
type's default), NaN passing only where the reference is NaN too.

  python3 bench/triton/test_kernels.py [--only 1,17] [--device cuda|cpu]
  TRITON_INTERPRET=1 python3 bench/triton/test_kernels.py --device cpu   (no GPU: Triton's interpreter)

Prints one line per case and a closing 'N passed, N failed'; exits 1 if any case failed."""
import argparse
import math
import os
import re
import sys
import tomllib
import traceback

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import kernels  # noqa: E402
import interpreter_rounding  # noqa: E402

interpreter_rounding.install()  # TRITON_INTERPRET=1 only: the GPU's round-to-nearest-even conversions

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32, "u32": torch.int32,
          "i8": torch.int8, "u8": torch.uint8, "fp8e4m3": torch.float8_e4m3fn}


def cdiv(a, b):
    return -(-a // b)


def size_of(expr, sizes):
    if isinstance(expr, int):
        return expr
    return int(eval(expr, {"__builtins__": {}}, dict(sizes, cdiv=cdiv, min=min, max=max)))


def fill(t, init, gen, sizes=None):
    """The puzzle's init distributions (puzzle.toml), on a tensor already of the right shape. Arguments
    may be size expressions (randint(0, V), const(V - 1))."""
    m = re.fullmatch(r"(\w+)(?:\((.*)\))?", init.strip())
    kind = m.group(1)
    args = [float(eval(a, {"__builtins__": {}}, dict(sizes or {}, cdiv=cdiv, min=min, max=max)))
            for a in (m.group(2) or "").split(",") if a.strip()]
    n = t.numel()
    if kind == "q4_0":  # llama.cpp block_q4_0s: an f16 scale in [lo, hi), little-endian, then 16 random bytes
        blocks = n // 18
        raw = torch.randint(0, 256, (blocks, 18), generator=gen, dtype=torch.int32).to(torch.uint8)
        d = (torch.rand(blocks, 1, generator=gen, dtype=torch.float64) * (args[1] - args[0]) + args[0]).to(torch.float16)
        raw[:, :2] = d.view(torch.uint8)  # little-endian on every machine torch runs on
        return t.copy_(raw.reshape(t.shape).to(t.device))
    if kind in ("zeros", "ones", "const"):
        return t.fill_(0 if kind == "zeros" else 1 if kind == "ones" else args[0])
    if kind == "uniform" and not t.is_floating_point():
        v = torch.randint(int(args[0]), int(args[1]) + 1, (n,), generator=gen)
    elif kind == "uniform":
        v = torch.rand(n, generator=gen, dtype=torch.float64) * (args[1] - args[0]) + args[0]
    elif kind == "normal":
        v = torch.randn(n, generator=gen, dtype=torch.float64) * args[1] + args[0]
    elif kind == "randint":
        v = torch.randint(int(args[0]), int(args[1]), (n,), generator=gen)
    elif kind == "ties":  # args[2] distinct values evenly spread over [lo, hi]
        k = int(args[2])
        v = args[0] + (args[1] - args[0]) * torch.randint(0, k, (n,), generator=gen) / max(k - 1, 1)
    elif kind == "arange":  # start + step * i: increasing
        v = args[0] + args[1] * torch.arange(n, dtype=torch.float64)
    elif kind == "randperm":  # each run of n a permutation of 0 .. n-1 (fewer than n: distinct values below n)
        k = int(args[0])
        v = torch.cat([torch.randperm(k, generator=gen) for _ in range(-(-n // k))])[:n]
    elif kind == "padded":  # uniform(lo, hi) in the first keep + r * grow of the r-th run of period, then NaN (-1)
        period, keep = int(args[2]), int(args[3]) if len(args) > 3 else 0
        grow = int(args[4]) if len(args) > 4 else 0
        i = torch.arange(n)
        live = i % period < keep + (i // period) * grow
        if t.is_floating_point():
            v = torch.rand(n, generator=gen, dtype=torch.float64) * (args[1] - args[0]) + args[0]
            v = torch.where(live, v, torch.full_like(v, float("nan")))
        else:
            v = torch.randint(int(args[0]), int(args[1]) + 1, (n,), generator=gen)
            v = torch.where(live, v, torch.full_like(v, -1))
    elif kind == "skewed":  # floor(lo + (hi - lo) u^p): heavy at lo
        u = torch.rand(n, generator=gen, dtype=torch.float64)
        v = (args[0] + (args[1] - args[0]) * u ** args[2]).floor().clamp(max=args[1] - 1)
    else:
        raise ValueError(f"unknown init {init!r}")
    if t.dtype == torch.float8_e4m3fn:  # torch converts to fp8 from f32, without saturating (448.5 -> NaN);
        v = v.float().clamp(-448, 448)  # Warpbook's generator saturates, as cvt.rn.satfinite does
    return t.copy_(v.reshape(t.shape).to(t.dtype).to(t.device))


# puzzle number -> (call, reference): call(kernels, bufs) returns the outputs as a tuple; reference(bufs)
# returns (name, float64 or int64 expected) pairs, computed from the inputs as reference.cu does.
def softmax_ref(b):
    x = b["x"].double()
    e = (x - x.amax(1, keepdim=True)).exp()
    return [("y", e / e.sum(1, keepdim=True))]


def conv_ref(b):
    x, w = b["x"].double(), b["w"].double()
    c, n, k = x.shape[0], x.shape[1], w.shape[1]
    xp = torch.cat([torch.zeros(c, k - 1, dtype=torch.float64, device=x.device), x], 1)
    return [("y", sum(w[:, j:j + 1] * xp[:, j:j + n] for j in range(k)))]


def gelu_ref(b):
    v = b["x"].double()
    g = 0.5 * v * (1 + torch.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3)))
    return [("y", g)]


def layernorm_ref(b):
    x = b["x"].double()
    mean = x.mean(1, keepdim=True)
    var = ((x - mean) ** 2).mean(1, keepdim=True)
    return [("y", (x - mean) / (var + 1e-5).sqrt() * b["w"].double() + b["b"].double())]


def rmsnorm_ref(b):
    h = b["x"].double() + b["res"].double()
    return [("h", h), ("y", h / ((h * h).mean(1, keepdim=True) + 1e-6).sqrt() * b["w"].double())]


def layernorm_bwd_ref(b):
    x, dy, g = b["x"].double(), b["dy"].double(), b["gamma"].double()
    xh = (x - b["mean"].double()[:, None]) * b["rstd"].double()[:, None]
    gd = g * dy
    c1, c2 = (xh * gd).mean(1, keepdim=True), gd.mean(1, keepdim=True)
    return [("dx", b["rstd"].double()[:, None] * (gd - c2 - xh * c1)), ("dgamma", (dy * xh).sum(0)),
            ("dbeta", dy.sum(0))]


def rope_ref(b):
    x, pos, inter = b["x"].double(), b["pos"].cpu(), b["interleaved"]
    dim = x.shape[2]
    inv_freq = (10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)).float()
    ang = (pos.float()[:, None] * inv_freq[None, :]).double().to(x.device)[:, None, :]  # one f32 multiply
    c, s = ang.cos(), ang.sin()
    if inter:
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return [("y", torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), -1).reshape(x.shape))]
    x0, x1 = x[..., :dim // 2], x[..., dim // 2:]
    return [("y", torch.cat((x0 * c - x1 * s, x0 * s + x1 * c), -1))]


def cross_entropy_ref(b):
    x, t = b["logits"].double(), b["target"].long()
    ign = t == -100
    lse = x.logsumexp(1)
    picked = x.gather(1, t.clamp(min=0)[:, None])[:, 0]
    return [("loss", torch.where(ign, torch.zeros_like(lse), lse - picked))]


def cross_entropy_fwd_bwd_ref(b):
    x, t = b["z"].double(), b["y"].long()
    valid = t != -100
    n = max(int(valid.sum()), 1)  # the loss of a batch with every row ignored is 0, not 0/0
    lse = x.logsumexp(1)
    picked = x.gather(1, t.clamp(min=0)[:, None])[:, 0]
    dz = (x - lse[:, None]).exp()
    rows = valid.nonzero()[:, 0]
    dz[rows, t[rows]] -= 1
    dz = torch.where(valid[:, None], dz / n, torch.zeros_like(dz))
    return [("z", dz), ("loss", (torch.where(valid, lse - picked, torch.zeros_like(lse)).sum() / n).reshape(1))]


def topk_ref(b):
    x, k = b["x"].cpu(), b["vals"].shape[1]
    v, i = torch.sort(x, dim=1, descending=True, stable=True)  # equal values in column order
    return [("vals", v[:, :k].double()), ("idx", i[:, :k])]


def top_p_ref(b):
    """Straight from the statement: a stable sort (larger weight first, then lower column), the
    shortest prefix reaching p * M, then the nucleus walked in column order. Sums in float64 are
    exact for the puzzle's weights; p * M and u * Mn are rounded to f32 as the puzzle says."""
    x, p, u = b["probs"].double().cpu(), b["top_p"].double().cpu(), b["u"].double().cpu()
    rows, V = x.shape
    token, mass = torch.zeros(rows, dtype=torch.int64), torch.zeros(rows, dtype=torch.float64)
    for r in range(rows):
        w = x[r]
        M = float(w.sum())
        target = float(torch.tensor(p[r] * M).float())
        _, order = torch.sort(w, descending=True, stable=True)
        csum = w[order].cumsum(0)
        n = int((csum < target).sum()) + 1  # the shortest prefix (at least one token) reaching it
        n = min(max(n, 1), V)
        member = torch.zeros(V, dtype=torch.bool)
        member[order[:n]] = True
        Mn = float(csum[n - 1])
        xs = float(torch.tensor(u[r] * Mn).float())
        run = torch.where(member, w, torch.zeros_like(w)).cumsum(0)
        hit = (member & (run > xs)).nonzero()
        token[r] = int(hit[0]) if hit.numel() else int(member.nonzero()[-1])
        mass[r] = Mn
    return [("token", token), ("mass", mass)]


def int8_absmax_ref(b):
    x = b["x"]
    # Quotients in float64, rounded once to f32: the correctly rounded f32 division the puzzle
    # specifies. (PyTorch's CUDA `tensor / 127` multiplies by the reciprocal, which is not.)
    s = (x.abs().amax(1, keepdim=True).double() / 127).float()
    t = (x.double() / torch.where(s > 0, s, torch.ones_like(s)).double()).float()
    t = t.round().clamp(-127, 127)  # round: half to even
    q = torch.where(s > 0, t, torch.zeros_like(t))
    return [("q", q.long()), ("scale", s[:, 0].double()), ("y", (q * s).double())]


def fp8_ref(b):
    x, st = b["x"], b["static_scale"][:, None]
    s = torch.where(st > 0, st, (x.abs().amax(1, keepdim=True).clamp(min=1e-10).double() / 448).float())
    w = (x.double() / s.double()).float()  # correctly rounded f32 quotients, as in int8_absmax_ref
    return [("q", w.clamp(-448, 448).double()), ("scale", s[:, 0].double())]  # rounded to e4m3 by the check


def rmsnorm_fp8_ref(b):
    """Puzzle 41: y in f32 from a float64 rstd; the block maximum ignoring NaN (fmaxf), floored at 1e-4;
    s = amax / 448 in f32; q the f32 quotient (rounded to e4m3 by the check); scales [H / 128, T]."""
    x, g = b["x"].double(), b["gamma"].double()
    t, h = x.shape
    eps = torch.tensor(1e-6, dtype=torch.float32).double()
    y = (x * (1 / ((x * x).mean(1, keepdim=True) + eps).sqrt()) * g).float()
    a = y.abs().reshape(t, h // 128, 128)
    amax = torch.where(a.isnan(), torch.zeros_like(a), a).amax(2)
    s = (amax.clamp(min=torch.tensor(1e-4, dtype=torch.float32).item()).double() / 448).float()
    w = (y.double().reshape(t, h // 128, 128) / s.double()[..., None]).float().clamp(-448, 448)
    return [("q", w.reshape(t, h).double()), ("scales", s.t().double())]


def fp8_block_gemm_ref(b):
    """Puzzle 40: per 128-deep K block, the block's dot products times a_scale[kb][m] * b_scale[n // 128][kb]."""
    a, w = b["A"].double(), b["B"].double()
    sa, sb = b["a_scale"].double(), b["b_scale"].double()
    kb_count, n = sa.shape[0], w.shape[0]
    sb_cols = sb.repeat_interleave(128, 0)[:n]  # [N, K / 128]: each row's weight-scale block
    c = torch.zeros(a.shape[0], n, dtype=torch.float64, device=a.device)
    for kb in range(kb_count):
        blk = slice(kb * 128, kb * 128 + 128)
        c += (a[:, blk] @ w[:, blk].t()) * sa[kb][:, None] * sb_cols[:, kb][None, :]
    return [("C", c)]


def nf4_ref(b):
    n = b["y"].numel()
    p = b["packed"].long().cpu()
    codes = torch.stack((p >> 4, p & 15), -1).flatten()
    lut = torch.tensor(kernels.NF4, dtype=torch.float32).double()
    return [("y", (lut[codes] * b["absmax"].double().cpu().repeat_interleave(64)[:n]).float().double())]


def w4a16_ref(b):
    M, K = b["y"].numel(), b["x"].numel()
    w = b["W"].cpu().reshape(M, K // 32, 18)
    d = w[..., :2].contiguous().view(torch.float16).double()
    q = torch.cat((w[..., 2:] & 15, w[..., 2:] >> 4), -1).double() - 8
    return [("y", (q * d).reshape(M, K) @ b["x"].double().cpu())]


def marlin_unpack(B, K, N):
    """The codes q[K][N] from Marlin's fragment-ordered words (puzzle 39's puzzle.toml): word
    [kt][128 c + 4 (4 g + t) + j], nibble 4 kodd + 2 half + hi8 is q[16 kt + 8 hi8 + 2 t + kodd][64 c
    + 16 j + 8 half + g]."""
    words = B.reshape(K // 16, N // 64, 8, 4, 4).long() & 0xFFFFFFFF  # [kt, c, g, t, j]
    nib = (words[..., None] >> (4 * torch.arange(8, device=B.device))) & 15
    nib = nib.reshape(K // 16, N // 64, 8, 4, 4, 2, 2, 2)  # [kt, c, g, t, j, kodd, half, hi8]
    return nib.permute(0, 7, 3, 5, 1, 4, 6, 2).reshape(K, N)


def marlin_ref(b):
    A, B, s = b["A"].cpu(), b["B"].cpu(), b["s"].cpu()
    (M, K), N = A.shape, s.shape[1]
    w = ((marlin_unpack(B, K, N) - 8).float() * s.float().repeat_interleave(128, 0)).half()  # exact, then one rounding
    return [("C", A.double() @ w.double())]


def attention_ref(b, causal):
    """o = softmax(q k^T / sqrt(D), causal: keys j <= i + Sk - Sq) v in float64, head by head; KV
    head h // G. The mask is aligned bottom-right: the Sq queries are the last Sq of the Sk keys."""
    q, k, v = b["q"].double().cpu(), b["k"].double().cpu(), b["v"].double().cpu()
    B, Hq, Sq, D = q.shape
    G, Sk = Hq // k.shape[1], k.shape[2]
    s = q @ k.repeat_interleave(G, 1).transpose(2, 3) / math.sqrt(D)
    if causal:
        s = s.masked_fill(torch.ones(Sq, Sk, dtype=torch.bool).triu(Sk - Sq + 1), float("-inf"))
    return [("o", torch.softmax(s, -1) @ v.repeat_interleave(G, 1))]


def fa3_ref(b):
    """Puzzle 44: o = softmax(s) v (causal: keys j <= i) and lse = logsumexp of each row of s, with
    s = q k^T / sqrt(D), in float64."""
    q, k, v = b["q"].double().cpu(), b["k"].double().cpu(), b["v"].double().cpu()
    S, D = q.shape[2], q.shape[3]
    s = q @ k.transpose(2, 3) / math.sqrt(D)
    if b["causal"]:
        s = s.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
    return [("o", torch.softmax(s, -1) @ v), ("lse", torch.logsumexp(s, -1))]


def attention_bwd_ref(b):
    """dq, dk, dv of puzzle 38 in float64, from q, k, v, o, dout and lse as given: p = exp(s - lse),
    delta = rowsum(dout o), ds = p (dp - delta); causal aligned bottom-right."""
    q, k, v = b["q"].double().cpu(), b["k"].double().cpu(), b["v"].double().cpu()
    o, do, lse = b["o"].double().cpu(), b["dout"].double().cpu(), b["lse"].double().cpu()
    Sq, D, Sk = q.shape[2], q.shape[3], k.shape[2]
    scale = 1.0 / math.sqrt(D)
    p = torch.exp(q @ k.transpose(2, 3) * scale - lse[..., None])
    if b["causal"]:
        p = p.masked_fill(torch.ones(Sq, Sk, dtype=torch.bool).triu(Sk - Sq + 1), 0.0)
    delta = (do * o).sum(-1, keepdim=True)
    ds = p * (do @ v.transpose(2, 3) - delta)
    return [("dq", ds @ k * scale), ("dk", ds.transpose(2, 3) @ q * scale), ("dv", p.transpose(2, 3) @ do)]


def decode_ref(q, k, v, lens):
    """out[b, h] = softmax(q . K^T / sqrt(D)) V over the first lens[b] keys of sequence b, KV head h // G,
    in float64 (k, v: [B, L, Hkv, D], contiguous per sequence)."""
    B, Hq, D = q.shape
    G = Hq // k.shape[2]
    out = torch.empty(B, Hq, D, dtype=torch.float64)
    for b in range(B):
        n = int(lens[b])
        kb = k[b, :n].double().cpu().repeat_interleave(G, 1)  # [n, Hq, D]
        vb = v[b, :n].double().cpu().repeat_interleave(G, 1)
        w = torch.softmax(torch.einsum("hd,nhd->hn", q[b].double().cpu(), kb) / math.sqrt(D), 1)
        out[b] = torch.einsum("hn,nhd->hd", w, vb)
    return out


def paged_ref(b):
    tab, lens = b["block_table"].long().cpu(), b["lens"].cpu()
    kc, vc = b["k_cache"].cpu(), b["v_cache"].cpu()
    ks, vs = [], []
    for s in range(tab.shape[0]):  # follow only the pages that hold tokens: the other entries may be -1
        pages = tab[s, :-(-int(lens[s]) // 16)]
        ks.append(kc[pages].flatten(0, 1))
        vs.append(vc[pages].flatten(0, 1))
    L = max(x.shape[0] for x in ks)
    pad = lambda x: torch.cat([x, x.new_zeros((L - x.shape[0],) + x.shape[1:])])  # noqa: E731
    return [("out", decode_ref(b["q"], torch.stack([pad(x) for x in ks]), torch.stack([pad(x) for x in vs]), lens))]



def gemm_bias_gelu_ref(b):
    x = b["A"].double() @ b["B"].double().t() + b["bias"].double()[None, :]
    return [("Y", 0.5 * x * (1 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))))]


def moe_ref(b):
    """Expert by expert, in float64, skipping the experts nobody chose (NaN weights in one case)."""
    x, w, ids, wt = b["X"].double(), b["W"], b["topk_ids"].long(), b["topk_weights"].double()
    y = torch.zeros(x.shape[0], w.shape[1], dtype=torch.float64, device=x.device)
    for e in ids.unique().tolist():
        t, j = torch.where(ids == e)
        y.index_add_(0, t, wt[t, j, None] * (x[t] @ w[e].double().t()))
    return [("Y", y)]


CASES = {
    1: (lambda k, b: k.vector_add(b["a"], b["b"], b["c"]), lambda b: [("c", b["a"].double() + b["b"].double())]),
    2: (lambda k, b: k.row_sum(b["x"], b["y"]), lambda b: [("y", b["x"].double().sum(1))]),
    3: (lambda k, b: k.softmax(b["x"], b["y"]), softmax_ref),
    4: (lambda k, b: k.matrix_add(b["a"], b["b"], b["c"]), lambda b: [("c", b["a"].double() + b["b"].double())]),
    5: (lambda k, b: k.outer_add(b["x"], b["y"], b["out"]),
        lambda b: [("out", b["x"].double()[:, None] + b["y"].double()[None, :])]),
    6: (lambda k, b: k.gelu(b["x"], b["y"]), gelu_ref),
    7: (lambda k, b: k.transpose(b["input"], b["output"]), lambda b: [("output", b["input"].double().t())]),
    8: (lambda k, b: k.dot_product(b["a"], b["b"], b["partial"], b["out"]),
        lambda b: [("out", (b["a"].double() * b["b"].double()).sum().reshape(1))]),
    9: (lambda k, b: k.argmax_rows(b["x"], b["idx"]), lambda b: [("idx", b["x"].double().cpu().argmax(1))]),
    10: (lambda k, b: k.histogram(b["data"], b["bins"]),
         lambda b: [("bins", torch.bincount(b["data"].long().cpu(), minlength=256))]),
    11: (lambda k, b: k.inclusive_scan(b["x"], b["y"], b["sums"]), lambda b: [("y", b["x"].double().cumsum(0))]),
    12: (lambda k, b: k.online_softmax(b["x"], b["y"]), softmax_ref),
    13: (lambda k, b: k.layernorm(b["x"], b["w"], b["b"], b["y"], 1e-5), layernorm_ref),
    14: (lambda k, b: k.rmsnorm_residual(b["x"], b["res"], b["w"], b["h"], b["y"], 1e-6), rmsnorm_ref),
    15: (lambda k, b: k.swiglu(b["gu"], b["y"]),
         lambda b: [("y", (lambda g, u: g / (1 + (-g).exp()) * u)(*b["gu"].double().split(b["y"].shape[1], 1)))]),
    16: (lambda k, b: k.conv1d(b["x"], b["w"], b["y"]), conv_ref),
    17: (lambda k, b: k.sgemm(b["A"], b["B"], b["C"]), lambda b: [("C", b["A"].double() @ b["B"].double())]),
    18: (lambda k, b: k.gemv(b["A"], b["x"], b["y"]), lambda b: [("y", b["A"].double() @ b["x"].double())]),
    19: (lambda k, b: k.wmma_gemm(b["A"], b["B"], b["C"]), lambda b: [("C", b["A"].double() @ b["B"].double())]),
    22: (lambda k, b: k.flash_attention(b["q"], b["k"], b["v"], b["o"]), lambda b: attention_ref(b, False)),
    23: (lambda k, b: k.causal_flash_attention(b["q"], b["k"], b["v"], b["o"]), lambda b: attention_ref(b, True)),
    20: (lambda k, b: k.mma_gemm(b["A"], b["B"], b["C"]), lambda b: [("C", b["A"].double() @ b["B"].double().t())]),
    21: (lambda k, b: k.gemm_bias_gelu(b["A"], b["B"], b["bias"], b["Y"]), gemm_bias_gelu_ref),
    24: (lambda k, b: k.decode_attention(b["q"], b["k"], b["v"], b["lens"], b["part"], b["out"]),
         lambda b: [("out", decode_ref(b["q"], b["k"], b["v"], b["lens"]))]),
    25: (lambda k, b: k.paged_decode_attention(b["q"], b["k_cache"], b["v_cache"], b["block_table"], b["lens"],
                                               b["part"], b["out"]), paged_ref),
    26: (lambda k, b: k.rope(b["x"], b["pos"], b["y"], b["interleaved"]), rope_ref),
    27: (lambda k, b: k.cross_entropy(b["logits"], b["target"], b["loss"]), cross_entropy_ref),
    28: (lambda k, b: k.topk_rows(b["x"], b["vals"], b["idx"]), topk_ref),
    29: (lambda k, b: k.int8_absmax(b["x"], b["q"], b["scale"], b["y"]), int8_absmax_ref),
    30: (lambda k, b: k.fp8_quantize(b["x"], b["static_scale"], b["q"], b["scale"]), fp8_ref),
    31: (lambda k, b: k.nf4_dequantize(b["packed"], b["absmax"], b["y"]), nf4_ref),
    32: (lambda k, b: k.w4a16_gemv(b["W"], b["x"], b["y"]), w4a16_ref),
    33: (lambda k, b: k.fp8_gemm(b["A"], b["B"], b["a_scale"], b["b_scale"], b["C"]),
         lambda b: [("C", (b["A"].double() @ b["B"].double().t()) * b["a_scale"].double()[:, None]
                     * b["b_scale"].double()[None, :])]),
    34: (lambda k, b: k.moe_grouped_gemm(b["X"], b["topk_ids"], b["topk_weights"], b["W"], b["meta"], b["rows"],
                                       b["part"], b["Y"]), moe_ref),
    35: (lambda k, b: k.layernorm_backward(b["x"], b["dy"], b["gamma"], b["mean"], b["rstd"], b["dx"], b["dgamma"],
                                         b["dbeta"], b["part"]), layernorm_bwd_ref),
    36: (lambda k, b: k.cross_entropy_fwd_bwd(b["z"], b["y"], b["work"], b["loss"]), cross_entropy_fwd_bwd_ref),
    37: (lambda k, b: k.splitk_gemm(b["A"], b["B"], b["part"], b["C"]),
         lambda b: [("C", b["A"].double() @ b["B"].double().t())]),
    38: (lambda k, b: k.attention_backward(b["q"], b["k"], b["v"], b["o"], b["dout"], b["lse"], b["dq"], b["dk"],
                                         b["dv"], b["dq_accum"], b["delta"], b["causal"]), attention_bwd_ref),
    39: (lambda k, b: k.w4a16_gemm(b["A"], b["B"], b["s"], b["C"]), marlin_ref),
    40: (lambda k, b: k.fp8_block_gemm(b["A"], b["B"], b["a_scale"], b["b_scale"], b["C"]), fp8_block_gemm_ref),
    41: (lambda k, b: k.rmsnorm_fp8_block_quant(b["x"], b["gamma"], b["q"], b["scales"]), rmsnorm_fp8_ref),
    42: (lambda k, b: k.top_p_sample(b["probs"], b["top_p"], b["u"], b["token"], b["mass"]), top_p_ref),
    43: (lambda k, b: k.persistent_gemm(b["A"], b["B"], b["C"]), lambda b: [("C", b["A"].double() @ b["B"].double().t())]),
    44: (lambda k, b: k.fa3_forward(b["q"], b["k"], b["v"], b["o"], b["lse"], b["causal"]), fa3_ref),
}

# Where puzzle.toml's [check] gives no tolerance, each output is held to its own type's, as Warpbook
# holds it (default_tolerance in app/core/puzzle.cpp): (rtol, atol).
DEFAULT_TOLERANCE = {torch.float64: (1e-9, 1e-12), torch.float32: (1e-5, 1e-6), torch.float16: (1e-2, 1e-3),
                     torch.bfloat16: (2e-2, 1e-2), torch.float8_e4m3fn: (1.25e-1, 1.5e-2),
                     torch.float8_e5m2: (2.5e-1, 3e-2)}


def compare(got, ref, rtol, atol):
    """(ok, max abs error, where): NaN passes only where the reference is NaN too, as in Warpbook."""
    got, ref = got.double().cpu().reshape(ref.shape), ref.double().cpu()
    err = (got - ref).abs()
    bad = ~(err <= atol + rtol * ref.abs()) & ~(got.isnan() & ref.isnan())  # NaN in got compares false
    worst = float(err.nan_to_num(float("inf")).max()) if err.numel() else 0.0
    first = int(bad.flatten().nonzero()[0]) if bool(bad.any()) else -1
    return not bool(bad.any()), worst, first


def run_case(num, spec, case, device, gen):
    sizes = {k: v for k, v in case.items() if isinstance(v, int)}
    inits = case.get("init", {})
    bufs = {}
    for buf in spec["buffer"]:
        shape = [size_of(e, sizes) for e in buf["shape"]] if "shape" in buf else [size_of(buf["count"], sizes)]
        t = torch.empty(shape, dtype=DTYPES[buf["type"]], device=device)
        init = inits.get(buf["name"], buf.get("init"))
        if init:
            fill(t, init, gen, sizes)
        elif t.is_floating_point():
            t.fill_(float("nan"))  # poisoned: an element the kernel does not write fails
        else:
            t.fill_(-1)
        bufs[buf["name"]] = t
    bufs.update({k: v for k, v in sizes.items() if k not in bufs})  # scalars such as rope's interleaved
    call, reference = CASES[num]
    expected = reference(bufs)
    call(kernels, bufs)
    chk = spec.get("check", {})
    fails = []
    for name, ref in expected:
        if bufs[name].is_floating_point():  # the reference stores its answer in the output's type
            ref = ref.to(bufs[name].dtype).double()
        rt, at = DEFAULT_TOLERANCE.get(bufs[name].dtype, (0.0, 0.0))
        rt, at = float(chk.get("rtol", rt)), float(chk.get("atol", at))
        if "rtol_of_max" in chk:  # a share of the output's largest finite value, added to atol
            finite = ref[ref.isfinite()]
            at += float(chk["rtol_of_max"]) * (float(finite.abs().max()) if finite.numel() else 0.0)
        ok, worst, first = compare(bufs[name], ref, rt, at)
        if not ok:
            fails.append(f"{name}: max err {worst:.3g}, first bad element {first}")
    return fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated puzzle numbers")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--max-elems", type=int, default=0, help="skip cases with a buffer larger than this (0: none)")
    a = ap.parse_args()
    if a.device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        print("no GPU: run with TRITON_INTERPRET=1 (Triton's CPU interpreter)", file=sys.stderr)
        return 2
    only = {int(x) for x in a.only.split(",") if x.strip()}
    gen = torch.Generator().manual_seed(12)
    passed = failed = skipped = 0
    for d in sorted(os.listdir(os.path.join(ROOT, "puzzles"))):
        m = re.match(r"(\d\d)-", d)
        num = int(m.group(1)) if m else 0
        if num not in CASES or (only and num not in only):
            continue
        with open(os.path.join(ROOT, "puzzles", d, "puzzle.toml"), "rb") as f:
            spec = tomllib.load(f)
        for i, case in enumerate(spec.get("case", [])):
            sizes = {k: v for k, v in case.items() if isinstance(v, int)}
            what = f"{d} case {i + 1} {sizes}" + (f" ({case['label']})" if case.get("label") else "")
            biggest = max(math.prod(size_of(e, sizes) for e in b["shape"]) if "shape" in b else size_of(b["count"], sizes)
                          for b in spec["buffer"])
            if a.max_elems and biggest > a.max_elems:
                skipped += 1
                print(f"SKIP {what}: {biggest} elements", flush=True)
                continue
            try:
                fails = run_case(num, spec, case, a.device, gen)
            except Exception as e:  # a compile error or a crash is a failed case, not the end of the run
                traceback.print_exc()
                fails = [f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"]
            if fails:
                failed += 1
                print(f"FAIL {what}: " + "; ".join(fails), flush=True)
            else:
                passed += 1
                print(f"ok   {what}", flush=True)
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
