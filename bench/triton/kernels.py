"""The Triton side of puzzles 01-34: one Triton implementation per puzzle, for the side-by-side
table (scripts/puzzles_vs_torch.py) and the "The same in Triton" section of each puzzle's README.
Each README's code block is a verbatim excerpt of this file (tests/cli/unit_triton_readmes.sh
checks it), so edit the kernels here and copy them there.

Each launcher takes the tensors of the puzzle's kernel signature (outputs preallocated, sizes read
from the shapes), launches Triton, and returns the output(s). The block sizes and num_warps are
chosen by reasoning (16 bytes per access, several accesses in flight per thread, a grid that fills
the SMs), not tuned on a GPU. bench/triton/test_kernels.py runs every launcher on the puzzle's
[[case]] sizes and data and checks it against a float64 reference with the puzzle's tolerance
(TRITON_INTERPRET=1 runs it on the CPU).

Differences from the puzzle's buffers: histogram's bins are int32 (the puzzle's are u32; counts
below 2^31 are the same bits). rope and nf4_dequantize also take a small table that the launcher
makes once per device (inv_freq, the NF4 codebook). The decode-attention launchers (24, 25) carve
their partial results out of the puzzle's f32 workspace `part` (split_workspace).

Under TRITON_INTERPRET=1 the float conversions (f32 -> bf16, f32 -> fp8) are the interpreter's, which
do not round like the GPU's cvt.rn; bench/triton/interpreter_rounding.py replaces them there (only
there) with torch's, so that the CPU run checks the kernels' logic to the bit."""
import math

import torch  # noqa: F401  (the launchers take torch tensors)
import triton
import triton.language as tl


# ---- 01-vector-add
@triton.jit
def vector_add_kernel(a, b, c, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n  # the guard, as a mask on every access
    tl.store(c + offs, tl.load(a + offs, mask=mask) + tl.load(b + offs, mask=mask), mask=mask)


def vector_add(a, b, c):
    n = a.numel()
    # 2048 floats per program of 256 threads: 8 per thread, two 16-byte loads of each input
    vector_add_kernel[(triton.cdiv(n, 2048),)](a, b, c, n, BLOCK=2048, num_warps=8)
    return c


# ---- 02-row-sum
@triton.jit
def row_sum_kernel(x, y, cols, BLOCK: tl.constexpr):
    row = x + tl.program_id(0) * cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(row + offs, mask=offs < cols, other=0.0)
    tl.store(y + tl.program_id(0), tl.sum(acc, axis=0))


def row_sum(x, y):
    rows, cols = x.shape
    block = min(triton.next_power_of_2(cols), 8192)  # 8192 columns: one pass, 16 floats per thread
    row_sum_kernel[(rows,)](x, y, cols, BLOCK=block, num_warps=4 if block <= 1024 else (8 if block <= 4096 else 16))
    return y


# ---- 03-softmax
@triton.jit
def softmax_kernel(x, y, cols, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    base = tl.program_id(0) * cols
    v = tl.load(x + base + offs, mask=mask, other=-float("inf"))  # the whole row, in registers
    e = tl.exp(v - tl.max(v, axis=0))  # padding: exp(-inf) = 0
    tl.store(y + base + offs, e * (1.0 / tl.sum(e, axis=0)), mask=mask)


def softmax(x, y):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    assert block <= 32768, "this kernel keeps a whole row in registers"
    softmax_kernel[(rows,)](x, y, cols, BLOCK=block, num_warps=4 if block <= 1024 else (8 if block <= 4096 else 16))
    return y


# ---- 04-matrix-add-2d
@triton.jit
def matrix_add_kernel(a, b, c, rows, cols, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(1) * BR + tl.arange(0, BR)[:, None]  # a BR x BC tile
    k = tl.program_id(0) * BC + tl.arange(0, BC)[None, :]
    mask = (r < rows) & (k < cols)
    offs = r * cols + k
    tl.store(c + offs, tl.load(a + offs, mask=mask) + tl.load(b + offs, mask=mask), mask=mask)


def matrix_add(a, b, c):
    rows, cols = a.shape
    grid = (triton.cdiv(cols, 256), triton.cdiv(rows, 8))
    matrix_add_kernel[grid](a, b, c, rows, cols, BR=8, BC=256, num_warps=4)  # 16 floats per thread
    return c


# ---- 05-outer-add
@triton.jit
def outer_add_kernel(x, y, out, rows, cols, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(1) * BR + tl.arange(0, BR)
    k = tl.program_id(0) * BC + tl.arange(0, BC)
    xr = tl.load(x + r, mask=r < rows)
    yk = tl.load(y + k, mask=k < cols)
    mask = (r[:, None] < rows) & (k[None, :] < cols)
    tl.store(out + r[:, None] * cols + k[None, :], xr[:, None] + yk[None, :], mask=mask)  # broadcast


def outer_add(x, y, out):
    rows, cols = out.shape
    grid = (triton.cdiv(cols, 512), triton.cdiv(rows, 8))
    outer_add_kernel[grid](x, y, out, rows, cols, BR=8, BC=512, num_warps=4)  # 32 stores per thread
    return out


# ---- 06-gelu-half2
@triton.jit
def gelu_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask).to(tl.float32)  # f16 storage, f32 arithmetic
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    # 0.5 * (1 + tanh(u)) = 1 / (1 + exp(-2u)): saturates to 0 or 1, never Inf / Inf
    tl.store(y + offs, (v / (1.0 + tl.exp(-2.0 * u))).to(tl.float16), mask=mask)


def gelu(x, y):
    n = x.numel()
    # 4096 halves per program of 256 threads: 16 per thread, two 16-byte loads
    gelu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096, num_warps=8)
    return y


# ---- 07-transpose
@triton.jit
def transpose_kernel(inp, out, rows, cols, T: tl.constexpr):
    r = tl.program_id(1) * T + tl.arange(0, T)
    k = tl.program_id(0) * T + tl.arange(0, T)
    tile = tl.load(inp + r[:, None] * cols + k[None, :], mask=(r[:, None] < rows) & (k[None, :] < cols))
    # out[k, r] = tile[r, k]: the compiler moves the tile through shared memory between a layout
    # that reads rows of inp and one that writes rows of out, so both sides are coalesced
    tl.store(out + k[:, None] * rows + r[None, :], tl.trans(tile), mask=(k[:, None] < cols) & (r[None, :] < rows))


def transpose(inp, out):
    rows, cols = inp.shape
    grid = (triton.cdiv(cols, 64), triton.cdiv(rows, 64))
    transpose_kernel[grid](inp, out, rows, cols, T=64, num_warps=8)
    return out


# ---- 08-dot-product
@triton.jit
def dot_partial_kernel(a, b, partial, n, BLOCK: tl.constexpr):
    pid, progs = tl.program_id(0), tl.num_programs(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(pid * BLOCK, n, progs * BLOCK):  # grid stride
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        acc += tl.load(a + offs, mask=mask, other=0.0) * tl.load(b + offs, mask=mask, other=0.0)
    tl.store(partial + pid, tl.sum(acc, axis=0))


@triton.jit
def dot_final_kernel(partial, out, parts, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out, tl.sum(tl.load(partial + offs, mask=offs < parts, other=0.0), axis=0))


def dot_product(a, b, partial, out):
    n = a.numel()
    parts = min(528, triton.cdiv(n, 4096))  # 528 = 4 programs on each of the H200's 132 SMs
    dot_partial_kernel[(parts,)](a, b, partial, n, BLOCK=4096, num_warps=8)
    dot_final_kernel[(1,)](partial, out, parts, BLOCK=triton.next_power_of_2(parts))
    return out


# ---- 09-argmax-rows
@triton.jit
def first_max(v1, i1, v2, i2):
    # larger value, then lower column: associative and commutative, so any tree gives one answer
    take2 = (v2 > v1) | ((v2 == v1) & (i2 < i1))
    return tl.where(take2, v2, v1), tl.where(take2, i2, i1)


@triton.jit
def argmax_rows_kernel(x, idx, cols, BLOCK: tl.constexpr):
    row = x + tl.program_id(0) * cols
    best = tl.full([BLOCK], -float("inf"), tl.float32)
    col = tl.zeros([BLOCK], dtype=tl.int32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(row + offs, mask=offs < cols, other=-float("inf"))
        better = v > best  # strictly: a later equal value does not win
        best = tl.where(better, v, best)
        col = tl.where(better, offs, col)
    _, c = tl.reduce((best, col), 0, first_max)  # one reduction of (value, column) pairs
    tl.store(idx + tl.program_id(0), c)


def argmax_rows(x, idx):
    rows, cols = x.shape
    block = min(triton.next_power_of_2(cols), 8192)
    argmax_rows_kernel[(rows,)](x, idx, cols, BLOCK=block, num_warps=4 if block <= 1024 else (8 if block <= 4096 else 16))
    return idx


# ---- 10-histogram
@triton.jit
def histogram_kernel(data, bins, n, BLOCK: tl.constexpr):
    pid, progs = tl.program_id(0), tl.num_programs(0)
    counts = tl.zeros([256], dtype=tl.int32)  # this program's private histogram, in registers
    for start in range(pid * BLOCK, n, progs * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        counts += tl.histogram(tl.load(data + offs, mask=mask, other=0).to(tl.int32), 256, mask=mask)
    tl.atomic_add(bins + tl.arange(0, 256), counts)  # one global atomic per bin per program


def histogram(data, bins):
    n = data.numel()
    progs = min(528, triton.cdiv(n, 4096))  # 4 programs on each of the H200's 132 SMs
    histogram_kernel[(progs,)](data, bins, n, BLOCK=4096, num_warps=8)  # 16 bytes per thread
    return bins


# ---- 11-inclusive-scan
@triton.jit
def scan_reduce_kernel(x, sums, n, TILE: tl.constexpr):
    offs = tl.program_id(0) * TILE + tl.arange(0, TILE)
    tl.store(sums + tl.program_id(0), tl.sum(tl.load(x + offs, mask=offs < n, other=0.0), axis=0))


@triton.jit
def scan_sums_kernel(sums, tiles, BLOCK: tl.constexpr):
    carry = tl.zeros([1], dtype=tl.float32)
    for start in range(0, tiles, BLOCK):  # one program walks the tile totals
        offs = start + tl.arange(0, BLOCK)
        s = tl.load(sums + offs, mask=offs < tiles, other=0.0)
        inc = tl.cumsum(s, axis=0) + carry
        tl.store(sums + offs, inc - s, mask=offs < tiles)  # exclusive: the sum of the tiles before
        carry += tl.sum(s, axis=0)


@triton.jit
def scan_final_kernel(x, y, sums, n, TILE: tl.constexpr):
    offs = tl.program_id(0) * TILE + tl.arange(0, TILE)
    v = tl.load(x + offs, mask=offs < n, other=0.0)
    tl.store(y + offs, tl.cumsum(v, axis=0) + tl.load(sums + tl.program_id(0)), mask=offs < n)


def inclusive_scan(x, y, sums):
    n = x.numel()
    tiles = triton.cdiv(n, 4096)  # reduce, then scan: x is read twice, 12 bytes per element
    scan_reduce_kernel[(tiles,)](x, sums, n, TILE=4096, num_warps=8)
    scan_sums_kernel[(1,)](sums, tiles, BLOCK=1024, num_warps=4)
    scan_final_kernel[(tiles,)](x, y, sums, n, TILE=4096, num_warps=8)
    return y


# ---- 12-online-softmax
@triton.jit
def merge(m1, s1, m2, s2):
    # (max, sum of exp(v - max)) pairs; where a max is already the common one, no rescale, so the
    # padding's (-inf, 0) never computes exp(-inf + inf)
    m = tl.maximum(m1, m2)
    return m, s1 * tl.where(m1 == m, 1.0, tl.exp(m1 - m)) + s2 * tl.where(m2 == m, 1.0, tl.exp(m2 - m))


@triton.jit
def online_softmax_kernel(x, y, cols, PER: tl.constexpr, LANES: tl.constexpr):
    # column j of this PER x LANES block holds the row's elements j, j + LANES, j + 2 LANES, ...
    c = tl.arange(0, PER)[:, None] * LANES + tl.arange(0, LANES)[None, :]
    mask = c < cols
    base = tl.program_id(0) * cols
    v = tl.load(x + base + c, mask=mask, other=-float("inf"))  # the only read of x
    m_j = tl.max(v, axis=0)  # each column's max ...
    e = tl.where(mask, tl.exp(v - m_j[None, :]), 0.0)  # ... one exponential per element ...
    m, s = tl.reduce((m_j, tl.sum(e, axis=0)), 0, merge)  # ... and one reduction of the pairs
    scale = tl.where(m_j == m, 1.0, tl.exp(m_j - m)) / s
    tl.store(y + base + c, e * scale[None, :], mask=mask)


def online_softmax(x, y):
    rows, cols = x.shape
    lanes = min(256, triton.next_power_of_2(cols))
    per = triton.next_power_of_2(triton.cdiv(cols, lanes))
    online_softmax_kernel[(rows,)](x, y, cols, PER=per, LANES=lanes, num_warps=8)  # 256 threads
    return y


# ---- 13-layernorm
@triton.jit
def layernorm_kernel(x, w, b, y, cols, eps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    base = tl.program_id(0) * cols
    v = tl.load(x + base + offs, mask=mask, other=0.0)  # the row, read once, kept in registers
    mean = tl.sum(v, axis=0) / cols
    d = tl.where(mask, v - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, axis=0) / cols + eps)  # two passes over registers, not E[x^2] - E[x]^2
    wv = tl.load(w + offs, mask=mask)
    bv = tl.load(b + offs, mask=mask)
    tl.store(y + base + offs, d * rstd * wv + bv, mask=mask)


def layernorm(x, w, b, y, eps=1e-5):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    assert block <= 32768, "this kernel keeps a whole row in registers"
    layernorm_kernel[(rows,)](x, w, b, y, cols, eps, BLOCK=block, num_warps=4 if block <= 1024 else (8 if block <= 4096 else 16))
    return y


# ---- 14-rmsnorm-residual
@triton.jit
def rmsnorm_residual_kernel(x, res, w, h, y, cols, eps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    base = tl.program_id(0) * cols
    hv = tl.load(x + base + offs, mask=mask, other=0.0) + tl.load(res + base + offs, mask=mask, other=0.0)
    tl.store(h + base + offs, hv, mask=mask)  # the first output, stored before the reduction
    rstd = tl.rsqrt(tl.sum(hv * hv, axis=0) / cols + eps)
    tl.store(y + base + offs, hv * rstd * tl.load(w + offs, mask=mask), mask=mask)


def rmsnorm_residual(x, res, w, h, y, eps=1e-6):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    assert block <= 32768, "this kernel keeps a whole row in registers"
    rmsnorm_residual_kernel[(rows,)](x, res, w, h, y, cols, eps, BLOCK=block,
                                     num_warps=4 if block <= 1024 else (8 if block <= 4096 else 16))
    return h, y


# ---- 15-swiglu
@triton.jit
def swiglu_kernel(gu, y, cols, BLOCK: tl.constexpr):
    row = tl.program_id(1)
    k = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = k < cols
    g = tl.load(gu + row * 2 * cols + k, mask=mask)  # row r of gu is [gate | up]
    u = tl.load(gu + row * 2 * cols + cols + k, mask=mask)
    tl.store(y + row * cols + k, g * u / (1.0 + tl.exp(-g)), mask=mask)  # exp(-g) = Inf gives -0


def swiglu(gu, y):
    rows, cols = y.shape
    block = min(triton.next_power_of_2(cols), 2048)  # 8 floats of each stream per thread
    swiglu_kernel[(triton.cdiv(cols, block), rows)](gu, y, cols, BLOCK=block, num_warps=8)
    return y


# ---- 16-conv1d
@triton.jit
def conv1d_kernel(x, w, y, length, K: tl.constexpr, BLOCK: tl.constexpr):
    ch = tl.program_id(1)
    t = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in tl.static_range(K):  # unrolled: K is a compile-time constant
        i = t + (k - (K - 1))  # the input this tap reads; before the start it is 0
        xv = tl.load(x + ch * length + i, mask=(i >= 0) & (i < length), other=0.0)
        acc += tl.load(w + ch * K + k) * xv
    tl.store(y + ch * length + t, acc, mask=t < length)


def conv1d(x, w, y):
    channels, length = x.shape
    grid = (triton.cdiv(length, 2048), channels)
    conv1d_kernel[grid](x, w, y, length, K=w.shape[1], BLOCK=2048, num_warps=8)
    return y


# ---- 17-tiled-sgemm
@triton.jit
def sgemm_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    # grouped order: GROUP consecutive programs share a column of B's tiles while it is in the L2
    pid, tiles_m, tiles_n = tl.program_id(0), tl.cdiv(M, BM), tl.cdiv(N, BN)
    first_m = (pid // (GROUP * tiles_n)) * GROUP
    group_m = tl.minimum(tiles_m - first_m, GROUP)
    pm = first_m + (pid % (GROUP * tiles_n)) % group_m
    pn = (pid % (GROUP * tiles_n)) // group_m
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(B + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")  # fp32 FMAs: TF32 would miss the tolerance
    tl.store(C + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def sgemm(A, B, C):
    (M, K), N = A.shape, B.shape[1]
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    sgemm_kernel[grid](A, B, C, M, N, K, BM=128, BN=128, BK=32, GROUP=8, num_warps=8, num_stages=3)
    return C


# ---- 18-gemv
@triton.jit
def gemv_kernel(A, x, y, M, K, BM: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    acc = tl.zeros([BM, BK], dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0,
                    eviction_policy="evict_first")  # A streams through once; x stays cached
        acc += a * tl.load(x + rk, mask=rk < K, other=0.0)[None, :]
    tl.store(y + rm, tl.sum(acc, axis=1), mask=rm < M)


def gemv(A, x, y):
    M, K = A.shape
    gemv_kernel[(triton.cdiv(M, 8),)](A, x, y, M, K, BM=8, BK=512, num_warps=4)  # 32 floats of A per thread
    return y


# ---- 19-wmma-gemm
@triton.jit
def f16_gemm_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    # the grouped order of 17-tiled-sgemm: GROUP programs in a row share B's tiles in the L2
    pid, tiles_m, tiles_n = tl.program_id(0), tl.cdiv(M, BM), tl.cdiv(N, BN)
    first_m = (pid // (GROUP * tiles_n)) * GROUP
    group_m = tl.minimum(tiles_m - first_m, GROUP)
    pm = first_m + (pid % (GROUP * tiles_n)) % group_m
    pn = (pid % (GROUP * tiles_n)) // group_m
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(B + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)  # f16 x f16 on the tensor cores, accumulated in f32
    tl.store(C + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def wmma_gemm(A, B, C):
    (M, K), N = A.shape, B.shape[1]
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 256),)
    # 128 x 256 tiles, 64 deep, 3 stages in flight: (128 + 256) x 64 x 2 B x 3 = 144 KiB of shared memory
    f16_gemm_kernel[grid](A, B, C, M, N, K, BM=128, BN=256, BK=64, GROUP=8, num_warps=8, num_stages=3)
    return C



# ---- 20-mma-bf16-gemm
@triton.jit
def bf16_gemm_nt_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    # C = A @ B.T, B stored [N, K] (an nn.Linear weight); the grouped program order of 17 and 19
    pid, tiles_m, tiles_n = tl.program_id(0), tl.cdiv(M, BM), tl.cdiv(N, BN)
    first_m = (pid // (GROUP * tiles_n)) * GROUP
    group_m = tl.minimum(tiles_m - first_m, GROUP)
    pm = first_m + (pid % (GROUP * tiles_n)) % group_m
    pn = (pid % (GROUP * tiles_n)) // group_m
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        # B's tile as [BK, BN]: element (k, n) is B[n][k], so each column is a K-contiguous row of B
        bt = tl.load(B + rn[None, :] * K + rk[:, None], mask=(rn[None, :] < N) & (rk[:, None] < K), other=0.0)
        acc = tl.dot(a, bt, acc)  # bf16 x bf16 on the tensor cores, accumulated in f32
    tl.store(C + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def mma_gemm(A, B, C):
    (M, K), N = A.shape, B.shape[0]
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 256),)
    # 128 x 256 tiles, 64 deep, 3 stages in flight: (128 + 256) x 64 x 2 B x 3 = 144 KiB of shared memory
    bf16_gemm_nt_kernel[grid](A, B, C, M, N, K, BM=128, BN=256, BK=64, GROUP=8, num_warps=8, num_stages=3)
    return C


# ---- 21-gemm-bias-gelu
@triton.jit
def gemm_bias_gelu_kernel(A, B, bias, Y, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                          GROUP: tl.constexpr):
    # Y = gelu_tanh(A @ B.T + bias): 20's mainloop, then the epilogue on the f32 accumulator tile
    pid, tiles_m, tiles_n = tl.program_id(0), tl.cdiv(M, BM), tl.cdiv(N, BN)
    first_m = (pid // (GROUP * tiles_n)) * GROUP
    group_m = tl.minimum(tiles_m - first_m, GROUP)
    pm = first_m + (pid % (GROUP * tiles_n)) % group_m
    pn = (pid % (GROUP * tiles_n)) // group_m
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        bt = tl.load(B + rn[None, :] * K + rk[:, None], mask=(rn[None, :] < N) & (rk[:, None] < K), other=0.0)
        acc = tl.dot(a, bt, acc)
    x = acc + tl.load(bias + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]  # one bias per column
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    y = x / (1.0 + tl.exp(-2.0 * u))  # 0.5 x (1 + tanh(u)) written as x * sigmoid(2u): no NaN, no cancellation
    tl.store(Y + rm[:, None] * N + rn[None, :], y.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def gemm_bias_gelu(A, B, bias, Y):
    (M, K), N = A.shape, B.shape[0]
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 256),)
    gemm_bias_gelu_kernel[grid](A, B, bias, Y, M, N, K, BM=128, BN=256, BK=64, GROUP=8, num_warps=8, num_stages=3)
    return Y

# ---- 22-flash-attention and 23-causal-flash-attention (one kernel: CAUSAL and the GQA heads)
@triton.jit
def flash_attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, Hq, Hkv, Sq, Sk, qk_scale, D: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    m_blk = tl.num_programs(0) - 1 - tl.program_id(0)    # the longest (causal) query tiles first
    bh = tl.program_id(1)                                # b * Hq + h
    kvh = (bh // Hq) * Hkv + (bh % Hq) // (Hq // Hkv)    # GQA: the group's KV head
    q_base = q_ptr + bh.to(tl.int64) * Sq * D
    k_base = k_ptr + kvh.to(tl.int64) * Sk * D
    v_base = v_ptr + kvh.to(tl.int64) * Sk * D
    rows = m_blk * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    d = tl.arange(0, D)
    q = tl.load(q_base + rows[:, None] * D + d[None, :], mask=rows[:, None] < Sq, other=0.0)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    end = Sk
    if CAUSAL:                                           # row i is key position i + Sk - Sq
        end = tl.minimum((m_blk + 1) * BLOCK_M + Sk - Sq, Sk)   # the tiles above the diagonal: skipped
    for j0 in range(0, end, BLOCK_N):
        j = j0 + cols
        kt = tl.load(k_base + j[None, :] * D + d[:, None], mask=j[None, :] < Sk, other=0.0)  # [D, BLOCK_N]
        s = tl.dot(q, kt) * qk_scale                     # f32 scores, base 2: log2(e) / sqrt(D)
        ok = j[None, :] < Sk
        if CAUSAL:
            ok = ok & (j[None, :] <= rows[:, None] + Sk - Sq)    # aligned bottom-right
        s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))         # finite: key 0 is in every row's first tile
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        vt = tl.load(v_base + j[:, None] * D + d[None, :], mask=j[:, None] < Sk, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), vt)   # P in bf16, as the CUDA kernel
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + bh.to(tl.int64) * Sq * D + rows[:, None] * D + d[None, :], o.to(tl.bfloat16),
             mask=rows[:, None] < Sq)


def flash_attention(q, k, v, o, BLOCK_M=128, BLOCK_N=64):
    B, H, S, D = q.shape                                 # [B, H, S, D], bf16, contiguous
    flash_attn_fwd_kernel[(triton.cdiv(S, BLOCK_M), B * H)](
        q, k, v, o, H, H, S, S, math.log2(math.e) / math.sqrt(D), D=D, BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N, CAUSAL=False, num_warps=8, num_stages=2)
    return o


def causal_flash_attention(q, k, v, o, BLOCK_M=128, BLOCK_N=64):
    B, Hq, Sq, D = q.shape                               # k, v: [B, Hkv, Sk, D], Sq <= Sk
    flash_attn_fwd_kernel[(triton.cdiv(Sq, BLOCK_M), B * Hq)](
        q, k, v, o, Hq, k.shape[1], Sq, k.shape[2], math.log2(math.e) / math.sqrt(D), D=D,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=True, num_warps=8, num_stages=2)
    return o

# ---- 24-decode-attention
@triton.jit
def decode_split_kernel(q_ptr, k_ptr, v_ptr, lens_ptr, acc_ptr, ml_ptr, L, Hq, Hkv, S, qscale,
                        G: tl.constexpr, D: tl.constexpr, CHUNK: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    s = tl.program_id(0)
    h = tl.program_id(1)
    b = tl.program_id(2).to(tl.int64)
    n = tl.load(lens_ptr + b)
    start = s * CHUNK
    if start < n:                                  # chunks past the sequence do nothing
        g = tl.arange(0, G)
        d = tl.arange(0, D)
        q = tl.load(q_ptr + (b * Hq + h * G + g[:, None]) * D + d[None, :]).to(tl.float32)
        q = q * qscale                             # log2(e) / sqrt(D): base-2 logits
        m = tl.full([G], float("-inf"), tl.float32)
        l = tl.zeros([G], tl.float32)
        acc = tl.zeros([G, D], tl.float32)
        end = tl.minimum(start + CHUNK, n)
        for j0 in range(start, end, BLOCK_N):
            j = j0 + tl.arange(0, BLOCK_N)
            ok = j < end
            rows = ((b * L + j) * Hkv + h) * D     # [BLOCK_N], 64-bit
            kt = tl.load(k_ptr + rows[:, None] + d[None, :], mask=ok[:, None], other=0.0)
            vt = tl.load(v_ptr + rows[:, None] + d[None, :], mask=ok[:, None], other=0.0)
            # [G, BLOCK_N] scores: G is 1..8, too small for tl.dot (which wants 16 rows)
            sc = tl.sum(q[:, None, :] * kt.to(tl.float32)[None, :, :], axis=2)
            sc = tl.where(ok[None, :], sc, float("-inf"))
            m_new = tl.maximum(m, tl.max(sc, axis=1))   # finite: the tile has a key
            alpha = tl.exp2(m - m_new)
            p = tl.exp2(sc - m_new[:, None])
            l = l * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * vt.to(tl.float32)[None, :, :], axis=1)
            m = m_new
        part = (b * Hq + h * G + g) * S + s        # [G]
        tl.store(acc_ptr + part[:, None] * D + d[None, :], acc)
        tl.store(ml_ptr + 2 * part, m)
        tl.store(ml_ptr + 2 * part + 1, l)


@triton.jit
def decode_combine_kernel(acc_ptr, ml_ptr, lens_ptr, out_ptr, Hq, S, D: tl.constexpr,
                          CHUNK: tl.constexpr, SMAX: tl.constexpr):
    hq = tl.program_id(0)
    b = tl.program_id(1).to(tl.int64)
    ns = tl.cdiv(tl.load(lens_ptr + b), CHUNK)
    s = tl.arange(0, SMAX)
    ok = s < ns
    part = (b * Hq + hq) * S + s
    m = tl.load(ml_ptr + 2 * part, mask=ok, other=float("-inf"))
    l = tl.load(ml_ptr + 2 * part + 1, mask=ok, other=0.0)
    w = tl.exp2(m - tl.max(m, axis=0))             # 0 for the unused slots
    d = tl.arange(0, D)
    acc = tl.load(acc_ptr + part[:, None] * D + d[None, :], mask=ok[:, None], other=0.0)
    o = tl.sum(acc * w[:, None], axis=0) / tl.sum(l * w, axis=0)
    tl.store(out_ptr + (b * Hq + hq) * D + d, o.to(tl.bfloat16))


def split_workspace(part, B, Hq, S, D):
    """The puzzle's f32 workspace `part` as the partial sums [B, Hq, S, D] and the (m, l) pairs
    [B, Hq, S, 2]: (D + 2) * S floats per (sequence, query head), which the puzzle sizes for any
    CHUNK of 64 or more."""
    n = B * Hq * S
    return part[:n * D], part[n * D:n * (D + 2)]


def decode_attention(q, k, v, lens, part, out, CHUNK=512, BLOCK_N=32):
    B, Hq, D = q.shape
    L, Hkv = k.shape[1], k.shape[2]
    S = triton.cdiv(L, CHUNK)                      # 16 chunks at L = 8192: 16 x 8 x 64 programs
    acc, ml = split_workspace(part, B, Hq, S, D)
    decode_split_kernel[(S, Hkv, B)](q, k, v, lens, acc, ml, L, Hq, Hkv, S,
                                     math.log2(math.e) / math.sqrt(D), G=Hq // Hkv, D=D,
                                     CHUNK=CHUNK, BLOCK_N=BLOCK_N, num_warps=4)
    decode_combine_kernel[(Hq, B)](acc, ml, lens, out, Hq, S, D=D, CHUNK=CHUNK,
                                   SMAX=triton.next_power_of_2(S))
    return out


# ---- 25-paged-decode-attention
@triton.jit
def paged_decode_split_kernel(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, acc_ptr, ml_ptr,
                              max_blocks, Hq, Hkv, S, qscale, G: tl.constexpr, D: tl.constexpr,
                              CHUNK: tl.constexpr, BLOCK_N: tl.constexpr):
    s = tl.program_id(0)
    h = tl.program_id(1)
    b = tl.program_id(2).to(tl.int64)
    n = tl.load(lens_ptr + b)
    start = s * CHUNK
    if start < n:
        g = tl.arange(0, G)
        d = tl.arange(0, D)
        q = tl.load(q_ptr + (b * Hq + h * G + g[:, None]) * D + d[None, :]).to(tl.float32) * qscale
        m = tl.full([G], float("-inf"), tl.float32)
        l = tl.zeros([G], tl.float32)
        acc = tl.zeros([G, D], tl.float32)
        end = tl.minimum(start + CHUNK, n)
        for j0 in range(start, end, BLOCK_N):
            j = j0 + tl.arange(0, BLOCK_N)
            ok = j < end                                          # table entries past lens: not read
            page = tl.load(table_ptr + b * max_blocks + j // 16, mask=ok, other=0).to(tl.int64)
            rows = ((page * 16 + j % 16) * Hkv + h) * D          # 64-bit: pools pass 2^31
            kt = tl.load(k_ptr + rows[:, None] + d[None, :], mask=ok[:, None], other=0.0)
            vt = tl.load(v_ptr + rows[:, None] + d[None, :], mask=ok[:, None], other=0.0)
            sc = tl.sum(q[:, None, :] * kt.to(tl.float32)[None, :, :], axis=2)
            sc = tl.where(ok[None, :], sc, float("-inf"))
            m_new = tl.maximum(m, tl.max(sc, axis=1))
            alpha = tl.exp2(m - m_new)
            p = tl.exp2(sc - m_new[:, None])
            l = l * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * vt.to(tl.float32)[None, :, :], axis=1)
            m = m_new
        part = (b * Hq + h * G + g) * S + s
        tl.store(acc_ptr + part[:, None] * D + d[None, :], acc)
        tl.store(ml_ptr + 2 * part, m)
        tl.store(ml_ptr + 2 * part + 1, l)


def paged_decode_attention(q, k_cache, v_cache, block_table, lens, part, out, CHUNK=512, BLOCK_N=32):
    B, Hq, D = q.shape
    Hkv, max_blocks = k_cache.shape[2], block_table.shape[1]
    S = triton.cdiv(16 * max_blocks, CHUNK)
    acc, ml = split_workspace(part, B, Hq, S, D)
    paged_decode_split_kernel[(S, Hkv, B)](q, k_cache, v_cache, block_table, lens, acc, ml,
                                           max_blocks, Hq, Hkv, S, math.log2(math.e) / math.sqrt(D),
                                           G=Hq // Hkv, D=D, CHUNK=CHUNK, BLOCK_N=BLOCK_N, num_warps=4)
    decode_combine_kernel[(Hq, B)](acc, ml, lens, out, Hq, S, D=D, CHUNK=CHUNK,   # puzzle 24's
                                   SMAX=triton.next_power_of_2(S))
    return out


# ---- 26-rope
@triton.jit
def rope_kernel(x, pos, inv_freq, y, heads, DIM: tl.constexpr, PAIRS: tl.constexpr, HEADS: tl.constexpr,
                INTERLEAVED: tl.constexpr):
    t = tl.program_id(0)  # one token: a [heads, pairs] tile that shares one cos and sin per pair
    i = tl.arange(0, PAIRS)
    in_pair = i < DIM // 2
    angle = tl.load(pos + t).to(tl.float32) * tl.load(inv_freq + i, mask=in_pair, other=0.0)  # one f32 multiply
    c = tl.cos(angle)[None, :]  # accurate (libdevice), once per pair, broadcast over the heads
    s = tl.sin(angle)[None, :]
    h = tl.arange(0, HEADS)[:, None]
    mask = (h < heads) & in_pair[None, :]
    if INTERLEAVED:  # GPT-J: pairs (2i, 2i + 1)
        a = 2 * i[None, :]
        b = a + 1
    else:  # NeoX / Llama: pairs (i, i + dim/2)
        a = i[None, :]
        b = a + DIM // 2
    row = (t * heads + h).to(tl.int64) * DIM
    x0 = tl.load(x + row + a, mask=mask).to(tl.float32)
    x1 = tl.load(x + row + b, mask=mask).to(tl.float32)
    tl.store(y + row + a, (x0 * c - x1 * s).to(tl.bfloat16), mask=mask)
    tl.store(y + row + b, (x0 * s + x1 * c).to(tl.bfloat16), mask=mask)


_INV_FREQ = {}  # (dim, device) -> theta^(-2i/dim): computed in float64 once, rounded to f32 once


def rope(x, pos, y, interleaved):
    tokens, heads, dim = x.shape
    key = (dim, str(x.device))
    if key not in _INV_FREQ:
        _INV_FREQ[key] = (10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)).float().to(x.device)
    rope_kernel[(tokens,)](x, pos, _INV_FREQ[key], y, heads, DIM=dim, PAIRS=triton.next_power_of_2(dim // 2),
                           HEADS=triton.next_power_of_2(heads), INTERLEAVED=bool(interleaved), num_warps=4)
    return y


# ---- 27-cross-entropy
@triton.jit
def cross_entropy_kernel(logits, target, loss, V, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    t = tl.load(target + r)
    if t == -100:  # ignored: loss 0, and the row is never read
        tl.store(loss + r, 0.0)
    else:
        row = logits + r * V
        m = tl.full([], -float("inf"), tl.float32)  # running max
        s = tl.full([], 0.0, tl.float32)  # running sum of exp(x - m)
        for start in range(0, V, BLOCK):  # the online log-sum-exp: one read of the row
            cols = start + tl.arange(0, BLOCK)
            v = tl.load(row + cols, mask=cols < V, other=-float("inf"))
            m_new = tl.maximum(m, tl.max(v, axis=0))  # finite: every chunk holds a real logit
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(v - m_new), axis=0)
            m = m_new
        tl.store(loss + r, (m - tl.load(row + t)) + tl.log(s))


def cross_entropy(logits, target, loss):
    rows, V = logits.shape
    # 4096 logits a step over 512 threads: 8 each, two 16-byte loads
    cross_entropy_kernel[(rows,)](logits, target, loss, V, BLOCK=4096, num_warps=16)
    return loss


# ---- 28-topk-rows
@triton.jit
def topk_rows_kernel(x, vals, idx, V, k, BLOCK: tl.constexpr, KP: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    lowest = tl.full([BLOCK], -2147483648, tl.int32).to(tl.int64) << 32  # below every packed value
    best = tl.topk(lowest, KP)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < V
        v = tl.load(x + row * V + cols, mask=inside, other=0.0) + 0.0  # -0.0 becomes +0.0
        bits = v.to(tl.int32, bitcast=True)
        key = bits ^ ((bits >> 31) & 0x7FFFFFFF)  # negative floats: flip the magnitude bits
        # the value in the high half, V - column (larger for a lower column) in the low half
        cand = tl.where(inside, (key.to(tl.int64) << 32) | (V - cols).to(tl.int64), lowest)
        both = tl.reshape(tl.join(best, tl.topk(cand, KP)), [2 * KP])  # this chunk's best
        best = tl.topk(both, KP)  # and the best so far
    key = (best >> 32).to(tl.int32)
    j = tl.arange(0, KP)
    tl.store(vals + row * k + j, (key ^ ((key >> 31) & 0x7FFFFFFF)).to(tl.float32, bitcast=True), mask=j < k)
    tl.store(idx + row * k + j, V - (best - ((best >> 32) << 32)).to(tl.int32), mask=j < k)


def topk_rows(x, vals, idx):
    rows, V = x.shape
    k = vals.shape[1]
    KP = max(2, triton.next_power_of_2(k))  # tl.topk wants a power of two, and 1 fails to reshape
    block = max(KP, min(4096, triton.next_power_of_2(V)))  # chunks of 4096, fewer for a short row
    topk_rows_kernel[(rows,)](x, vals, idx, V, k, BLOCK=block, KP=KP, num_warps=8 if block >= 4096 else 4)
    return vals, idx


# ---- 29-int8-absmax
@triton.jit
def int8_absmax_kernel(x, q, scale, y, cols, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    base = tl.program_id(0).to(tl.int64) * cols
    v = tl.load(x + base + offs, mask=mask, other=0.0)  # the whole row, read once, kept in registers
    s = tl.math.div_rn(tl.max(tl.abs(v), axis=0), 127.0)  # '/' is div.full.f32: not correctly rounded
    t = tl.clamp(tl.math.div_rn(v, tl.where(s > 0, s, 1.0)), -127.0, 127.0)
    t = (t + 12582912.0) - 12582912.0  # + 1.5 * 2^23 rounds |t| < 2^22 to an integer, half to even
    qf = tl.where(s > 0, t, 0.0)
    tl.store(q + base + offs, qf.to(tl.int8), mask=mask)
    tl.store(y + base + offs, qf * s, mask=mask)
    tl.store(scale + tl.program_id(0), s)


def int8_absmax(x, q, scale, y):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    assert block <= 32768, "this kernel keeps a whole row in registers"
    int8_absmax_kernel[(rows,)](x, q, scale, y, cols, BLOCK=block, num_warps=4 if block <= 1024 else (8 if block <= 4096 else 16))
    return q, scale, y


# ---- 30-fp8-e4m3-quantize
@triton.jit
def fp8_quantize_kernel(x, static_scale, q, scale, cols, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    base = tl.program_id(0).to(tl.int64) * cols
    v = tl.load(x + base + offs, mask=mask, other=0.0)  # the whole row, read once, kept in registers
    st = tl.load(static_scale + tl.program_id(0))
    s = tl.where(st > 0, st, tl.math.div_rn(tl.maximum(tl.max(tl.abs(v), axis=0), 1e-10), 448.0))
    w = tl.clamp(tl.math.div_rn(v, s), -448.0, 448.0)  # the clamp, then nearest even: satfinite
    tl.store(q + base + offs, w.to(tl.float8e4nv), mask=mask)
    tl.store(scale + tl.program_id(0), s)


def fp8_quantize(x, static_scale, q, scale):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    assert block <= 32768, "this kernel keeps a whole row in registers"
    fp8_quantize_kernel[(rows,)](x, static_scale, q, scale, cols, BLOCK=block,
                                 num_warps=4 if block <= 1024 else (8 if block <= 4096 else 16))
    return q, scale


# ---- 31-nf4-dequantize
@triton.jit
def nf4_dequantize_kernel(packed, absmax, lut, y, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    j = pid * (BLOCK // 2) + tl.arange(0, BLOCK // 2)  # byte indices
    ok = 2 * j < n
    b = tl.load(packed + j, mask=ok, other=0).to(tl.int32)
    s = tl.load(absmax + j // 32, mask=ok, other=0.0)  # elements 2j and 2j + 1 share a block of 64
    first = tl.load(lut + (b >> 4)) * s  # element 2j: the high nibble
    second = tl.load(lut + (b & 15)) * s  # element 2j + 1: the low nibble
    i = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + i, tl.interleave(first, second).to(tl.bfloat16), mask=i < n)  # 2j, 2j + 1, 2j + 2, ...


NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
       -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
       0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
       0.7229568362236023, 1.0]
_NF4_LUT = {}  # device -> the table as an f32 tensor, made once


def nf4_dequantize(packed, absmax, y):
    n = y.numel()
    if str(y.device) not in _NF4_LUT:
        _NF4_LUT[str(y.device)] = torch.tensor(NF4, dtype=torch.float32, device=y.device)
    # 4096 elements per program of 256 threads: 8 packed bytes in, 32 bytes of bf16 out per thread
    nf4_dequantize_kernel[(triton.cdiv(n, 4096),)](packed, absmax, _NF4_LUT[str(y.device)], y, n, BLOCK=4096,
                                                     num_warps=8)
    return y


# ---- 32-w4a16-gemv
@triton.jit
def w4a16_gemv_kernel(W, x, y, M, K, BM: tl.constexpr, BB: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)  # BM rows of y, BB q4_0 blocks of each per step
    rmask = rows < M
    nb = K // 32
    j = tl.arange(0, 16)
    acc = tl.zeros([BM], dtype=tl.float32)
    for b0 in range(0, nb, BB):
        blk = b0 + tl.arange(0, BB)
        m2 = rmask[:, None] & (blk[None, :] < nb)  # [BM, BB]
        base = (rows[:, None].to(tl.int64) * nb + blk[None, :]) * 18  # each block's first byte
        d_lo = tl.load(W + base, mask=m2, other=0).to(tl.uint16)
        d_hi = tl.load(W + base + 1, mask=m2, other=0).to(tl.uint16)
        d = (d_lo | (d_hi << 8)).to(tl.float16, bitcast=True).to(tl.float32)  # the little-endian f16 scale
        qs = tl.load(W + base[:, :, None] + 2 + j[None, None, :], mask=m2[:, :, None], other=0).to(tl.int32)
        xi = blk[:, None] * 32 + j[None, :]  # [BB, 16]
        xm = (blk < nb)[:, None]
        x_lo = tl.load(x + xi, mask=xm, other=0.0).to(tl.float32)  # x for weights j
        x_hi = tl.load(x + xi + 16, mask=xm, other=0.0).to(tl.float32)  # and for weights j + 16
        part = ((qs & 15) - 8).to(tl.float32) * x_lo[None] + ((qs >> 4) - 8).to(tl.float32) * x_hi[None]
        acc += tl.sum(tl.sum(part, axis=2) * d, axis=1)  # f32 sums, the scale once per block
    tl.store(y + rows, acc.to(tl.float16), mask=rmask)


def w4a16_gemv(W, x, y):
    M, K = y.numel(), x.numel()
    w4a16_gemv_kernel[(triton.cdiv(M, 16),)](W, x, y, M, K, BM=16, BB=8, num_warps=4)
    return y


# ---- 33-fp8-gemm
@triton.jit
def fp8_gemm_kernel(A, B, a_scale, b_scale, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                    GROUP: tl.constexpr):
    # A [M, K] and B [N, K], both float8_e4m3fn and row-major; programs in puzzle 17's grouped order
    pid, tiles_m, tiles_n = tl.program_id(0), tl.cdiv(M, BM), tl.cdiv(N, BN)
    first_m = (pid // (GROUP * tiles_n)) * GROUP
    group_m = tl.minimum(tiles_m - first_m, GROUP)
    pm = first_m + (pid % (GROUP * tiles_n)) % group_m
    pn = (pid % (GROUP * tiles_n)) // group_m
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        # a [BK, BN] view of B^T: k runs down, contiguous in memory (the K-major operand the tensor cores want)
        b = tl.load(B + rn[None, :] * K + rk[:, None], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        # e4m3 x e4m3 on the tensor cores; their partial sums go into f32 every BK of k (promotion)
        acc = tl.dot(a, b, acc, max_num_imprecise_acc=BK)
    sa = tl.load(a_scale + rm, mask=rm < M, other=0.0)
    sb = tl.load(b_scale + rn, mask=rn < N, other=0.0)
    c = (acc * sa[:, None] * sb[None, :]).to(tl.bfloat16)  # the scales in the epilogue, one rounding to bf16
    tl.store(C + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


def fp8_gemm(A, B, a_scale, b_scale, C):
    (M, K), N = A.shape, B.shape[0]
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    # 128 x 128 tiles, 128 bytes deep, 4 stages in flight: (128 + 128) x 128 x 1 B x 4 = 128 KiB of shared memory
    fp8_gemm_kernel[grid](A, B, a_scale, b_scale, C, M, N, K, BM=128, BN=128, BK=128, GROUP=8, num_warps=8,
                          num_stages=4)
    return C


# ---- 34-moe-grouped-gemm
@triton.jit
def moe_gemm_kernel(X, W, part, sorted_ids, tile_expert, k, E, N, H, TK,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_n, pid_m = tl.program_id(0), tl.program_id(1)
    e = tl.load(tile_expert + pid_m)                  # E for the tiles past the last expert's
    if e < E:
        f = tl.load(sorted_ids + pid_m * BM + tl.arange(0, BM))  # assignments t * k + j; TK pads
        ok = f < TK
        tok = (f // k).to(tl.int64)                   # the X row of each tile row: gathered
        rn = pid_n * BN + tl.arange(0, BN)
        w_rows = W + (e.to(tl.int64) * N + rn[None, :]) * H  # row n of W[e], as [1, BN]
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k0 in range(0, H, BK):
            rk = k0 + tl.arange(0, BK)
            a = tl.load(X + tok[:, None] * H + rk[None, :], mask=ok[:, None] & (rk[None, :] < H), other=0.0)
            b = tl.load(w_rows + rk[:, None], mask=(rk[:, None] < H) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)                   # bf16 x bf16 on the tensor cores, f32 sums
        tl.store(part + f.to(tl.int64)[:, None] * N + rn[None, :], acc, mask=ok[:, None] & (rn[None, :] < N))


@triton.jit
def moe_combine_kernel(part, weights, Y, k, N, BLOCK: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    n = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    y = tl.zeros([BLOCK], dtype=tl.float32)
    for j in range(0, k):                             # in order j = 0 .. k - 1: deterministic
        y += tl.load(weights + t * k + j) * tl.load(part + (t * k + j) * N + n, mask=n < N, other=0.0)
    tl.store(Y + t * N + n, y.to(tl.bfloat16), mask=n < N)


def moe_grouped_gemm(X, topk_ids, topk_weights, W, meta, rows, part, Y, BM=128, BN=128, BK=64):
    T, k = topk_ids.shape
    E, N, H = W.shape
    flat = topk_ids.flatten().long()
    order = torch.argsort(flat, stable=True)          # assignments grouped by expert, in token order
    counts = torch.bincount(flat, minlength=E)
    tiles = (counts + BM - 1) // BM                   # row tiles per expert
    tile_end = torch.cumsum(tiles, 0)
    start = torch.cumsum(counts, 0) - counts          # each expert's first row, unpadded
    pstart = (tile_end - tiles) * BM                  # ... and in the padded index
    e_sorted = flat[order]
    slot = pstart[e_sorted] + torch.arange(T * k, device=X.device) - start[e_sorted]
    max_tiles = triton.cdiv(T * k, BM) + min(E, T * k)  # the most any routing needs: no host sync
    sorted_ids = torch.full((max_tiles * BM,), T * k, dtype=torch.int32, device=X.device)
    sorted_ids[slot] = order.to(torch.int32)
    tile_expert = torch.searchsorted(tile_end, torch.arange(max_tiles, device=X.device), right=True).to(torch.int32)
    # 128 x 128 tiles, 64 deep, 3 stages: (128 + 128) x 64 x 2 B x 3 = 96 KiB of shared memory
    moe_gemm_kernel[(triton.cdiv(N, BN), max_tiles)](X, W, part, sorted_ids, tile_expert, k, E, N, H, T * k,
                                                     BM=BM, BN=BN, BK=BK, num_warps=8, num_stages=3)
    moe_combine_kernel[(T, triton.cdiv(N, 1024))](part, topk_weights, Y, k, N, BLOCK=1024, num_warps=4)
    return Y


# ---- 35-layernorm-backward
@triton.jit
def layernorm_bwd_dx_kernel(x, dy, gamma, mean, rstd, dx, part, M, N, BLOCK: tl.constexpr):
    # Program p takes a stripe of rows and keeps its share of dgamma and dbeta in registers.
    p, parts = tl.program_id(0), tl.num_programs(0)
    r0, r1 = p * M // parts, (p + 1) * M // parts
    c = tl.arange(0, BLOCK)
    mask = c < N
    g = tl.load(gamma + c, mask=mask, other=0.0).to(tl.float32)
    acc_g = tl.zeros([BLOCK], dtype=tl.float32)
    acc_b = tl.zeros([BLOCK], dtype=tl.float32)
    for r in range(r0, r1):
        base = r.to(tl.int64) * N
        xv = tl.load(x + base + c, mask=mask, other=0.0).to(tl.float32)
        d = tl.load(dy + base + c, mask=mask, other=0.0).to(tl.float32)
        rs = tl.load(rstd + r)
        xh = (xv - tl.load(mean + r)) * rs
        gd = g * d  # 0 past N (d is 0 there), so the padding adds nothing to either sum
        c1 = tl.sum(xh * gd, axis=0) / N
        c2 = tl.sum(gd, axis=0) / N
        tl.store(dx + base + c, (rs * (gd - c2 - xh * c1)).to(dx.dtype.element_ty), mask=mask)
        acc_g += d * xh
        acc_b += d
    tl.store(part + p * 2 * N + c, acc_g, mask=mask)  # one partial row of each, written once
    tl.store(part + p * 2 * N + N + c, acc_b, mask=mask)


@triton.jit
def layernorm_bwd_dwdb_kernel(part, dgamma, dbeta, parts, N, BP: tl.constexpr, BC: tl.constexpr):
    c = tl.program_id(0) * BC + tl.arange(0, BC)
    acc_g = tl.zeros([BP, BC], dtype=tl.float32)
    acc_b = tl.zeros([BP, BC], dtype=tl.float32)
    for p0 in range(0, parts, BP):
        p = p0 + tl.arange(0, BP)
        m = (p[:, None] < parts) & (c[None, :] < N)
        off = p[:, None] * 2 * N + c[None, :]
        acc_g += tl.load(part + off, mask=m, other=0.0)
        acc_b += tl.load(part + off + N, mask=m, other=0.0)
    tl.store(dgamma + c, tl.sum(acc_g, axis=0), mask=c < N)
    tl.store(dbeta + c, tl.sum(acc_b, axis=0), mask=c < N)


def layernorm_backward(x, dy, gamma, mean, rstd, dx, dgamma, dbeta, part, parts=264):
    M, N = x.shape
    parts = min(parts, M)  # part holds 2 * parts * N floats
    block = triton.next_power_of_2(N)
    assert block <= 16384, "this kernel keeps a whole row in registers"
    layernorm_bwd_dx_kernel[(parts,)](x, dy, gamma, mean, rstd, dx, part, M, N, BLOCK=block,
                                      num_warps=4 if block <= 1024 else (8 if block <= 4096 else 16))
    layernorm_bwd_dwdb_kernel[(triton.cdiv(N, 64),)](part, dgamma, dbeta, parts, N, BP=32, BC=64, num_warps=8)
    return dx, dgamma, dbeta


# ---- 36-cross-entropy-fwd-bwd
@triton.jit
def cross_entropy_fwd_bwd_kernel(z, y, row_loss, n_valid, V, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    row = z + r * V
    t = tl.load(y + r)
    if t == -100:  # ignored: no loss, and a gradient of 0 over the row, which is never read
        tl.store(row_loss + r, 0.0)
        for start in range(0, V, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            tl.store(row + cols, tl.zeros([BLOCK], tl.bfloat16), mask=cols < V)
    else:
        m = tl.full([], -float("inf"), tl.float32)  # running max
        s = tl.full([], 0.0, tl.float32)  # running sum of exp(x - m)
        for start in range(0, V, BLOCK):  # pass 1: the online log-sum-exp
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))  # finite: every chunk holds a real logit
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        lse = m + tl.log(s)
        tl.store(row_loss + r, lse - tl.load(row + t).to(tl.float32))
        inv_n = 1.0 / tl.load(n_valid).to(tl.float32)
        for start in range(0, V, BLOCK):  # pass 2: the gradient, over the logits it came from
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(row + cols, mask=cols < V, other=0.0).to(tl.float32)
            g = (tl.exp(x - lse) - tl.where(cols == t, 1.0, 0.0)) * inv_n
            tl.store(row + cols, g.to(tl.bfloat16), mask=cols < V)


def cross_entropy_fwd_bwd(z, y, work, loss):
    T, V = z.shape
    row_loss = work[:T]
    n = (y != -100).sum(dtype=torch.int32)  # the denominator first, on the device: no host sync
    BLOCK = min(32768, triton.next_power_of_2(V))  # Liger's chunk: 32 logits per thread of 32 warps
    cross_entropy_fwd_bwd_kernel[(T,)](z, y, row_loss, n, V, BLOCK=BLOCK, num_warps=32)
    torch.div(row_loss.sum(), n.clamp(min=1), out=loss[0])  # 0 when every row is ignored
    return z, loss
# ---- 37-split-k-gemm
@triton.jit
def splitk_gemm_kernel(A, B, P, M, N, K, S, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # program (pm, pn, z): tile (pm, pn) of C = A @ B.T (B stored [N, K]) over the k-steps of slice z,
    # its f32 partial into slice z of P
    pm, pn, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    ksteps = tl.cdiv(K, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for kt in range(z * ksteps // S, (z + 1) * ksteps // S):
        rk = kt * BK + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        bt = tl.load(B + rn[None, :] * K + rk[:, None], mask=(rn[None, :] < N) & (rk[:, None] < K), other=0.0)
        acc = tl.dot(a, bt, acc)
    tl.store(P + z * M * N + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def splitk_reduce_kernel(P, C, total, S, BLOCK: tl.constexpr):
    # the S slices added in order z = 0 .. S - 1 (the same bits every run), rounded to bf16 once
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for z in range(0, S):
        acc += tl.load(P + z * total + i, mask=i < total, other=0.0)
    tl.store(C + i, acc.to(tl.bfloat16), mask=i < total)


def splitk_gemm(A, B, part, C, BM=128, BN=128, BK=64):
    (M, K), N = A.shape, B.shape[0]
    tiles_m, tiles_n = triton.cdiv(M, BM), triton.cdiv(N, BN)
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count if A.is_cuda else 132
    # one wave of blocks, slices no shallower than 256 (the puzzle's S with WAVE = the SM count)
    S = max(1, min(triton.cdiv(K, 256), sms // (tiles_m * tiles_n)))
    # 128 x 128 tiles, 64 deep, 4 stages: (128 + 128) x 64 x 2 B x 4 = 128 KiB of shared memory
    splitk_gemm_kernel[(tiles_m, tiles_n, S)](A, B, part, M, N, K, S, BM=BM, BN=BN, BK=BK, num_warps=8, num_stages=4)
    splitk_reduce_kernel[(triton.cdiv(M * N, 1024),)](part, C, M * N, S, BLOCK=1024, num_warps=4)
    return C


# ---- 38-flash-attention-backward
@triton.jit
def attn_bwd_preprocess_kernel(O, DO, DELTA, DQA, rows, D: tl.constexpr, BR: tl.constexpr):
    # delta = rowsum(dout * o) in f32 for BR rows, and their dq_accum rows cleared
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    rd = tl.arange(0, D)
    off = r[:, None] * D + rd[None, :]
    o = tl.load(O + off, mask=r[:, None] < rows, other=0.0).to(tl.float32)
    do = tl.load(DO + off, mask=r[:, None] < rows, other=0.0).to(tl.float32)
    tl.store(DELTA + r, tl.sum(o * do, axis=1), mask=r < rows)
    tl.store(DQA + off, tl.zeros([BR, D], tl.float32), mask=r[:, None] < rows)


@triton.jit
def attn_bwd_kernel(Q, K, V, DO, LSE, DELTA, DQA, DK, DV, Sq, Sk, scale, CAUSAL: tl.constexpr,
                    D: tl.constexpr, BQ: tl.constexpr, BKV: tl.constexpr):
    # program (kb, bh): keys kb*BKV .. of head bh; dk, dv in registers over the loop on query tiles,
    # dq's share added into dq_accum with atomics (keys outside, as FlashAttention-2)
    kb, bh = tl.program_id(0), tl.program_id(1)
    rk, rd = kb * BKV + tl.arange(0, BKV), tl.arange(0, D)
    kv_off = bh * Sk * D + rk[:, None] * D + rd[None, :]
    k = tl.load(K + kv_off, mask=rk[:, None] < Sk, other=0.0)
    v = tl.load(V + kv_off, mask=rk[:, None] < Sk, other=0.0)
    dk = tl.zeros([BKV, D], tl.float32)
    dv = tl.zeros([BKV, D], tl.float32)
    q_lo = 0
    if CAUSAL:  # the first query that sees key kb*BKV is kb*BKV - (Sk - Sq)
        q_lo = tl.maximum(0, kb * BKV - (Sk - Sq)) // BQ * BQ
    for q0 in range(q_lo, Sq, BQ):
        rq = q0 + tl.arange(0, BQ)
        q_off = bh * Sq * D + rq[:, None] * D + rd[None, :]
        q = tl.load(Q + q_off, mask=rq[:, None] < Sq, other=0.0)
        do = tl.load(DO + q_off, mask=rq[:, None] < Sq, other=0.0)
        lse = tl.load(LSE + bh * Sq + rq, mask=rq < Sq, other=0.0)
        dl = tl.load(DELTA + bh * Sq + rq, mask=rq < Sq, other=0.0)
        keep = (rq[None, :] < Sq) & (rk[:, None] < Sk)
        if CAUSAL:
            keep = keep & (rk[:, None] <= rq[None, :] + Sk - Sq)
        pT = tl.where(keep, tl.exp(tl.dot(k, tl.trans(q)) * scale - lse[None, :]), 0.0)  # [BKV, BQ]
        dv += tl.dot(pT.to(tl.bfloat16), do)
        dsT = (pT * (tl.dot(v, tl.trans(do)) - dl[None, :])).to(tl.bfloat16)
        dk += tl.dot(dsT, q)
        tl.atomic_add(DQA + q_off, tl.dot(tl.trans(dsT), k), mask=rq[:, None] < Sq)  # [BQ, D]
    tl.store(DK + kv_off, (dk * scale).to(tl.bfloat16), mask=rk[:, None] < Sk)
    tl.store(DV + kv_off, dv.to(tl.bfloat16), mask=rk[:, None] < Sk)


@triton.jit
def attn_bwd_dq_kernel(DQA, DQ, total, scale, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(DQ + i, (tl.load(DQA + i, mask=i < total, other=0.0) * scale).to(tl.bfloat16), mask=i < total)


def attention_backward(q, k, v, o, do, lse, dq, dk, dv, dq_accum, delta, causal=False, BQ=64, BKV=64):
    # q, o, do, dq [B, H, Sq, D]; k, v, dk, dv [B, H, Sk, D]; bf16, contiguous; lse, delta [B, H, Sq] f32;
    # dq_accum f32 like dq. causal: bottom-right aligned (query i sees keys 0 .. i + Sk - Sq).
    B, H, Sq, D = q.shape
    Sk = k.shape[2]
    scale = 1.0 / math.sqrt(D)
    rows = B * H * Sq
    attn_bwd_preprocess_kernel[(triton.cdiv(rows, 16),)](o, do, delta, dq_accum, rows, D=D, BR=16, num_warps=4)
    attn_bwd_kernel[(triton.cdiv(Sk, BKV), B * H)](q, k, v, do, lse, delta, dq_accum, dk, dv, Sq, Sk, scale,
                                                  CAUSAL=bool(causal), D=D, BQ=BQ, BKV=BKV, num_warps=8,
                                                  num_stages=2)
    attn_bwd_dq_kernel[(triton.cdiv(rows * D, 1024),)](dq_accum, dq, rows * D, scale, BLOCK=1024, num_warps=4)
    return dq, dk, dv


# ---- 39-marlin-w4a16-gemm
@triton.jit
def w4a16_gemm_kernel(A, B, s, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # C = A @ w, w[k][n] = f16((q - 8) * s[k // 128][n]); the codes q in Marlin's fragment order
    # (puzzle.toml): found by computing each one's word and nibble, a gather Triton cannot avoid
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    kk, nn = tl.arange(0, BK) % 16, rn % 16  # places inside the 16 x 16 tiles
    lane = 4 * (nn % 8)[None, :] + ((kk % 8) // 2)[:, None]
    nib = 4 * (kk % 2)[:, None] + 2 * (nn // 8)[None, :] + (kk // 8)[:, None]
    col = (rn // 64) * 128 + (rn // 16) % 4  # the tile's word in its row of B
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):  # BK divides 128: one group of scales a step
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
        word = tl.load(B + (rk // 16)[:, None] * 2 * N + col[None, :] + 4 * lane)
        q = (word >> (4 * nib)) & 15  # int32 words: the arithmetic shift's sign bits are masked off
        w = (q - 8).to(tl.float16) * tl.load(s + (k0 // 128) * N + rn)[None, :]  # one f16 rounding
        acc = tl.dot(a, w, acc)
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=rm[:, None] < M)


def w4a16_gemm(A, B, s, C, BM=16, BN=64, BK=128):
    (M, K), N = A.shape, C.shape[1]
    w4a16_gemm_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](A, B, s, C, M, N, K, BM=BM, BN=BN, BK=BK,
                                                                   num_warps=4, num_stages=4)
    return C

# ---- 40-fp8-block-scaled-gemm
@triton.jit
def fp8_block_gemm_kernel(A, B, a_scale, b_scale, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                          GROUP: tl.constexpr):
    # A [M, K], B [N, K] float8_e4m3fn; a_scale [K / 128, M] (MN-major), b_scale [cdiv(N, 128), K / 128].
    # BN = 128: a program's columns lie in one 128-wide block of N, so one weight scale per K block.
    pid, tiles_m, tiles_n = tl.program_id(0), tl.cdiv(M, BM), tl.cdiv(N, BN)
    first_m = (pid // (GROUP * tiles_n)) * GROUP
    group_m = tl.minimum(tiles_m - first_m, GROUP)
    pm = first_m + (pid % (GROUP * tiles_n)) % group_m
    pn = (pid % (GROUP * tiles_n)) // group_m
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    KB = K // 128
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for kb in range(0, KB):
        rk = kb * 128 + tl.arange(0, 128)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
        b = tl.load(B + rn[None, :] * K + rk[:, None], mask=rn[None, :] < N, other=0.0)  # [128, BN] view of B^T
        sa = tl.load(a_scale + kb * M + rm, mask=rm < M, other=0.0)
        sb = tl.load(b_scale + pn * KB + kb)
        # the K block's sums on the tensor cores, promoted into the f32 total with its two scales
        acc += tl.dot(a, b) * (sa[:, None] * sb)
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def fp8_block_gemm(A, B, a_scale, b_scale, C):
    (M, K), N = A.shape, B.shape[0]
    assert K % 128 == 0, "a scale per 128 of K: K must be a multiple of 128"
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    # 128 x 128 tiles, one 128-deep K block per step, 4 stages: (128 + 128) x 128 x 1 B x 4 = 128 KiB
    fp8_block_gemm_kernel[grid](A, B, a_scale, b_scale, C, M, N, K, BM=128, BN=128, GROUP=8, num_warps=8,
                                num_stages=4)
    return C
# ---- 41-rmsnorm-fp8-block-quant
@triton.jit
def rmsnorm_fp8_block_quant_kernel(x, gamma, q, scales, T, H, eps, BLOCK: tl.constexpr):
    t = tl.program_id(0)
    cols = tl.arange(0, BLOCK)  # the whole row, read once, kept in registers
    mask = cols < H
    base = t.to(tl.int64) * H
    v = tl.load(x + base + cols, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(gamma + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) / H + eps)
    y = tl.reshape(v * rstd * g, (BLOCK // 128, 128))  # one row per 128-channel block
    a = tl.where(y == y, tl.abs(y), 0.0)  # the maximum ignores NaN, as fmaxf does
    s = tl.maximum(tl.max(a, axis=1), 1e-4) / 448.0
    w = tl.clamp(y / s[:, None], -448.0, 448.0, propagate_nan=tl.PropagateNan.ALL)  # satfinite; NaN stays NaN
    tl.store(q + base + tl.reshape(cols, (BLOCK // 128, 128)), w.to(tl.float8e4nv),
             mask=tl.reshape(mask, (BLOCK // 128, 128)))
    b = tl.arange(0, BLOCK // 128)
    tl.store(scales + b * T + t, s, mask=b < H // 128)  # [H / 128, T]: token t of block b


def rmsnorm_fp8_block_quant(x, gamma, q, scales, eps=1e-6):
    T, H = x.shape
    assert H % 128 == 0, "the format has no partial block"
    block = triton.next_power_of_2(H)
    rmsnorm_fp8_block_quant_kernel[(T,)](x, gamma, q, scales, T, H, eps, BLOCK=block,
                                         num_warps=4 if block <= 2048 else (8 if block <= 8192 else 16))
    return q, scales
# ---- 42-top-p-sampling
@triton.jit
def top_p_mass_at_least(base, key, V, BLOCK: tl.constexpr):
    """The mass of the row's weights whose bits (as int32) are >= key."""
    acc = 0.0
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(base + cols, mask=cols < V, other=0.0)
        acc += tl.sum(tl.where(v.to(tl.int32, bitcast=True) >= key, v, 0.0))
    return acc


@triton.jit
def top_p_sample_kernel(probs, top_p, u, token, mass, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = probs + row * V
    M = top_p_mass_at_least(base, 1, V, BLOCK)  # every positive weight (exact: see the puzzle)
    target = tl.load(top_p + row) * M
    # Bisection on the weight's bits (weights >= 0 order like their int32 bits): w is the largest
    # key K with 0 < mass(>= K) >= target. One pass a bit: 31 passes, no guess, ties included.
    lo = 1  # mass(>= lo) = M: qualifies whenever M > 0
    hi = 0x7F800000  # +inf: no finite weight reaches it
    for _ in range(31):
        mid = lo + (hi - lo) // 2
        m = top_p_mass_at_least(base, mid, V, BLOCK)
        ok = (m >= target) & (m > 0)
        lo = tl.where(ok, mid, lo)
        hi = tl.where(ok, hi, mid)
    w = lo.to(tl.float32, bitcast=True)
    above = top_p_mass_at_least(base, lo + 1, V, BLOCK)  # S: the mass above w
    q = tl.maximum(((target - above) / w).to(tl.int32).to(tl.float32), 1.0)  # a guess, made exact below
    while (q > 1) & (above + (q - 1) * w >= target):
        q -= 1
    while above + q * w < target:
        q += 1
    Mn = above + q * w
    x = tl.load(u + row) * Mn
    run = 0.0
    tied = 0.0
    pick = V
    last = -1
    for start in range(0, V, BLOCK):  # the nucleus in column order: a prefix sum per chunk
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(base + cols, mask=cols < V, other=0.0)
        bits = v.to(tl.int32, bitcast=True)
        tie = (bits == lo) & (cols < V)
        rank = tied + tl.cumsum(tie.to(tl.float32), 0) - 1
        inn = (bits > lo) | (tie & (rank < q))
        wv = tl.where(inn, v, 0.0)
        cum = run + tl.cumsum(wv, 0)
        pick = tl.minimum(pick, tl.min(tl.where(inn & (cum > x), cols, V)))
        last = tl.maximum(last, tl.max(tl.where(inn, cols, -1)))
        run += tl.sum(wv)
        tied += tl.sum(tie.to(tl.float32))
    tl.store(token + row, tl.where(M > 0, tl.where(pick < V, pick, last), 0))
    tl.store(mass + row, tl.where(M > 0, Mn, 0.0))


def top_p_sample(probs, top_p, u, token, mass):
    rows, V = probs.shape
    top_p_sample_kernel[(rows,)](probs, top_p, u, token, mass, V, BLOCK=4096)
    return token, mass


# ---- 43-tma-warp-specialized-gemm
@triton.jit
def persistent_gemm_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                           GROUP: tl.constexpr):
    # C = A @ B.T, B stored [N, K]: A and B through TMA descriptors (zeros past the edges; K % 8 == 0)
    a_desc = tl.make_tensor_descriptor(A, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(B, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    for t in tl.range(tl.program_id(0), tiles_m * tiles_n, tl.num_programs(0), flatten=True):  # persistent
        first_m = (t // (GROUP * tiles_n)) * GROUP  # the grouped raster of 17 and 20
        group_m = tl.minimum(tiles_m - first_m, GROUP)
        pm = first_m + (t % (GROUP * tiles_n)) % group_m
        pn = (t % (GROUP * tiles_n)) // group_m
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for kt in range(0, tl.cdiv(K, BK)):
            a = a_desc.load([pm * BM, kt * BK])
            b = b_desc.load([pn * BN, kt * BK])
            acc = tl.dot(a, b.T, acc)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)  # C's rows need not be 16-byte multiples: a masked store
        tl.store(C + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def persistent_gemm(A, B, C, BM=128, BN=256, BK=64, GROUP=8):
    (M, K), N = A.shape, B.shape[0]
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count if A.is_cuda else 132
    # tl.make_tensor_descriptor writes its tensor maps into scratch memory that Triton asks for here
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=A.device))
    grid = (min(sms, triton.cdiv(M, BM) * triton.cdiv(N, BN)),)  # one program per SM at most
    # 128 x 256 tiles, 64 deep, 3 stages: (128 + 256) x 64 x 2 B x 3 = 144 KiB of shared memory
    persistent_gemm_kernel[grid](A, B, C, M, N, K, BM=BM, BN=BN, BK=BK, GROUP=GROUP, num_warps=8, num_stages=3)
    return C


# ---- 44-flash-attention-3
@triton.jit
def fa3_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, S, qk_scale, D: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    BHS = tl.num_programs(1) * S       # q, k, v as [B H S, D]; rows of the next head are masked
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[BHS, D], strides=[D, 1], block_shape=[BLOCK_M, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[BHS, D], strides=[D, 1], block_shape=[BLOCK_N, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[BHS, D], strides=[D, 1], block_shape=[BLOCK_N, D])
    m_blk = tl.num_programs(0) - 1 - tl.program_id(0) if CAUSAL else tl.program_id(0)
    bh = tl.program_id(1)
    rows = m_blk * BLOCK_M + tl.arange(0, BLOCK_M)
    q = q_desc.load([bh * S + m_blk * BLOCK_M, 0])
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    end = tl.minimum((m_blk + 1) * BLOCK_M, S) if CAUSAL else S
    for j0 in tl.range(0, end, BLOCK_N, warp_specialize=True):
        j = j0 + tl.arange(0, BLOCK_N)
        s = tl.dot(q, k_desc.load([bh * S + j0, 0]).T) * qk_scale   # base 2: log2(e) / sqrt(D)
        ok = j[None, :] < S
        if CAUSAL:
            ok = ok & (j[None, :] <= rows[:, None])
        s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v_desc.load([bh * S + j0, 0]))
        m = m_new
    keep = rows < S
    tl.store(o_ptr + (bh * S + rows).to(tl.int64)[:, None] * D + tl.arange(0, D)[None, :],
             (acc / l[:, None]).to(tl.bfloat16), mask=keep[:, None])
    tl.store(lse_ptr + bh * S + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=keep)

def fa3_forward(q, k, v, o, lse, causal=False, BLOCK_M=128, BLOCK_N=128):
    B, H, S, D = q.shape                                 # [B, H, S, D], bf16, contiguous
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=q.device))
    fa3_forward_kernel[(triton.cdiv(S, BLOCK_M), B * H)](
        q, k, v, o, lse, S, math.log2(math.e) / math.sqrt(D), D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
        CAUSAL=bool(causal), num_warps=8, num_stages=2)
    return o


# ---- end of the excerpts

# puzzle number -> launcher
BY_PUZZLE = {
    1: vector_add, 2: row_sum, 3: softmax, 4: matrix_add, 5: outer_add, 6: gelu, 7: transpose,
    8: dot_product, 9: argmax_rows, 10: histogram, 11: inclusive_scan, 12: online_softmax,
    13: layernorm, 14: rmsnorm_residual, 15: swiglu, 16: conv1d, 17: sgemm, 18: gemv,
    19: wmma_gemm, 20: mma_gemm, 21: gemm_bias_gelu, 22: flash_attention, 23: causal_flash_attention, 24: decode_attention, 25: paged_decode_attention, 26: rope, 27: cross_entropy,
    28: topk_rows, 29: int8_absmax, 30: fp8_quantize, 31: nf4_dequantize, 32: w4a16_gemv, 33: fp8_gemm,
    34: moe_grouped_gemm, 35: layernorm_backward, 36: cross_entropy_fwd_bwd, 37: splitk_gemm,
    38: attention_backward,
    39: w4a16_gemm,
    40: fp8_block_gemm,
    41: rmsnorm_fp8_block_quant,
    42: top_p_sample,
    43: persistent_gemm,
    44: fa3_forward,
}

