// Solution · 32 W4A16 GEMV (q4_0 weights, f16 x and y, f32 accumulation), mma.sync from registers
//
// What: each warp owns 16 x RG rows (RG 16-row mma tiles) and walks K a step of PAIRS pairs of
// q4_0 blocks at a time; the tensor cores do the multiply-adds. For one block of 16 rows, two
// mma.sync.m16n8k16 (f16 in, f32 accumulate) take A = the 16 x 32 exact values q - 8 and B = x
// (every column of B the same x, so every column of C is the same row sum). Lane (g, t) holds
// one 4-byte qs word of rows g and g + 8: bytes {0, 2} and {1, 3} of it are A's two registers,
// so B pairs x the same way (two PRMT per register pair, shared by all the warp's rows). A block
// scale differs per row, so each block's C starts at zero and is scaled once:
// acc = fma(d, c, acc). The four lanes of a group end with the same sums: no shuffles at the end.
// Dequantisation is exact in f16 with no conversions: LOP3 (w & 0x000F000F) | 0x64006400 is the
// f16 pair 1024 + q, HSUB2 of 1032 leaves q - 8; (w & 0x00F000F0) | 0x64006400 is 1024 + 16 q,
// and one HFMA2 (x 1/16, - 72) leaves q - 8 (the product and the sum are exact). A shift gives
// bytes 1 and 3. That is 9 instructions per 8 weights, then 2 mma per 16 rows x 32 weights.
// The products (q - 8) x are exact inside the mma, so x = 60000 cannot overflow (an f16 HFMA2
// chain would) and the sum keeps f32 accuracy. (Starting C at -(1032 sum x_lo + 72 sum x_hi)
// and skipping the HSUB2/HFMA2 saves 4 instructions per 8 weights but failed the x = 60000 case
// on some draws: sums of (1024 + q) x lose 10 bits in f32.)
// Layout: with K / 32 even every row starts 4-byte aligned and a pair of blocks is 9 aligned
// words w0..w8 (w0 = {d_e, qs_e 0..1}, w4 = {qs_e 14..15, d_o}, w5..w8 = qs_o). Lane t loads
// w_t, w_{4+t} and w8: its even-block word is w_t (lane 0: PRMT of w0 and w4), its odd-block
// word w_{4+t} (lane 0: w8); lane 0 packs {d_e, d_o} and one shuffle gives them to its group.
// The x offsets this permutation needs are fixed per lane. The next step's words are loaded
// before this step's arithmetic (software pipeline). Blocks the fast path leaves (all of them
// when K / 32 is odd: rows then start 2-byte aligned) go one block at a time through 2-byte
// loads. Knobs: PAIRS, KSPLIT (warps splitting K for the same rows, summed in shared memory),
// L2PF (ld.global.nc.L2::256B on the weights).
// Run:  warpbook check 32-w4a16-gemv solutions/32-w4a16-gemv.cu
//
// Instruction count (PTX-level, per lane, per pair of blocks and 2 rows = 32 weights): 6 loads
// (3 per row), 2 PRMT + 2 SEL-like + 2 shuffles for layout and scales, 2 x 9 x 2 = 36 for
// dequantisation, 4 mma, 4 conversions of d, 4 FFMA: ~58, 1.8 a weight, and per pair ~14 for
// x (6 loads, 8 PRMT) shared by the warp's rows; the f32 solution before it spent ~4.25.
// What limits it (predicted): not issue but the load/store unit. An mma fragment spans 8 rows,
// so every 4-byte load touches 8 rows' lines for 128 bytes (~16 bytes a line, against ~24 in
// the f32 kernel before, whose warp reads 288 contiguous bytes of one row). The model charges one
// 128-byte line a clock per SM: ~108 us of LSU time, so `warpbook predict` says 124-134 us for
// the variants, slower than the f32 kernel's 93 us prediction. Loading 16 bytes a lane (64
// contiguous bytes per row per instruction) needs lanes whose bytes straddle blocks: a per-lane
// gathered B with one C column per block part, or staging through shared memory.
//
// Napkin maths: 57344 x 8192 weights = 264 MB of q4_0 (+16 KB x, 115 KB y); at 4.8 TB/s that is
// 55 us on the H200 (gold is 80%: 69 us). The same matrix in f16 is 940 MB: 196 us.
//
// History (the f32-FMA solution this replaces, as its header had it):
// Why it is fast: W is read once (18 bytes per 32 weights), each warp reads a row as one
// contiguous stream, and x (16 KiB) lives in L1/L2. Why not 16-byte loads of W? q4_0 blocks are
// 18 bytes, so a block starts 16-byte aligned only every 8 blocks; 4-byte words are aligned in
// every other block and a 2-byte piece fixes the rest. Each lane has 2 x loads and 4 rows x 4 W
// loads in flight per step, and the next step's W loads go out before this step's arithmetic.
// What limits it: the model says instruction issue (~3 instructions a weight for exact f32
// dequantisation and the fma, ~1.5 more for loads, realignment and x, against the H200's ~3.9 a
// weight at 4.8 TB/s), but the H200 says latency. On the H200 (`warpbook check`, 2026-11-24):
// without the pipeline 147 us (the model had said 87 us); with it 106 us. Fewer, wider loads did
// not help: one lane per 18-byte block with two aligned 16-byte loads 134 us, three 8-byte loads
// 129 us, eight rows per warp 145 us; staging W through shared memory with cp.async and
// mma.sync on the dequantised f16, 175-199 us. A per-warp cp.async ring of 16- or 32-row tiles
// feeding mma.sync straight from exactly dequantised registers (lop3 magic numbers, half the
// instructions per weight) measured 166-236 us on 2026-11-25 (the model had said 75-104 us).
// @tune THREADS=128
// @tune ROWS=64
#include <cuda_fp16.h>

#ifndef PAIRS
#define PAIRS 2 // block pairs (2 x 32 weights) per row per pipeline step
#endif
#ifndef KSPLIT
#define KSPLIT 1 // warps sharing one set of rows, each taking every KSPLIT-th step of K
#endif
#ifndef L2PF
#define L2PF 1 // weight loads carry the L2::256B prefetch hint
#endif

constexpr int NWARP = THREADS / 32;
constexpr int RSETS = NWARP / KSPLIT;  // sets of rows per block
constexpr int RG = ROWS / (16 * RSETS); // 16-row mma tiles per warp
static_assert(NWARP % KSPLIT == 0 && RG >= 1 && RG * 16 * RSETS == ROWS,
              "ROWS must be 16 x (THREADS / 32 / KSPLIT) x a whole number");

__device__ __forceinline__ unsigned ldw(const unsigned* p) {
  unsigned v;
#if L2PF
  asm("ld.global.nc.L2::256B.u32 %0, [%1];" : "=r"(v) : "l"(p));
#else
  asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
#endif
  return v;
}
__device__ __forceinline__ unsigned ldx(const unsigned* p) { return __ldg(p); }

// (w & m) | 0x64006400: two nibbles under the exponent of 1024 make the f16 pair 1024 + q
// (m = 0x000F000F) or 1024 + 16 q (m = 0x00F000F0), both exact. One LOP3.
template <unsigned m> __device__ __forceinline__ unsigned nib(unsigned w) {
  unsigned r;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(w), "n"(m), "n"(0x64006400u));
  return r;
}
// Bytes 0 and 2 of w: their low nibbles as the exact f16 pair q - 8: LOP3 then HSUB2 of 1032.
__device__ __forceinline__ unsigned qlo(unsigned w) {
  unsigned r;
  asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(nib<0x000F000Fu>(w)), "r"(0x64086408u));
  return r;
}
// Their high nibbles: (1024 + 16 q) / 16 - 72 = q - 8 in one HFMA2 (product and sum exact).
__device__ __forceinline__ unsigned qhi(unsigned w) {
  unsigned r;
  asm("fma.rn.f16x2 %0, %1, %2, %3;"
      : "=r"(r)
      : "r"(nib<0x00F000F0u>(w)), "r"(0x2C002C00u), "r"(0xD480D480u));
  return r;
}
__device__ __forceinline__ float lo_f32(unsigned w) {
  float f;
  asm("{.reg .f16 l, h;\n mov.b32 {l, h}, %1;\n cvt.f32.f16 %0, l;}" : "=f"(f) : "r"(w));
  return f;
}
__device__ __forceinline__ float hi_f32(unsigned w) {
  float f;
  asm("{.reg .f16 l, h;\n mov.b32 {l, h}, %1;\n cvt.f32.f16 %0, h;}" : "=f"(f) : "r"(w));
  return f;
}
// d = a (16 x 16 f16, row) * b (16 x 8 f16, col) + c, c's four registers all `c`.
__device__ __forceinline__ void mma_c(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                      unsigned a3, unsigned b0, unsigned b1, float c) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%10,%10,%10,%10};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c));
}
// d += a * b
__device__ __forceinline__ void mma_acc(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                        unsigned a3, unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The B fragments of one q4_0 block for this lane: xa = {x[i0], x[i1]}, xb = {x[i2], x[i3]} are
// the x of the four bytes (i0..i3) of the qs word the lane holds, xha / xhb the same 16 further
// on (the high nibbles). A's registers hold bytes {0, 2} and {1, 3} of that word, so B pairs
// them the same way. Every column of B is the same x, so every column of C is the same sum.
struct BFrag {
  unsigned l0, l1, h0, h1;
};
__device__ __forceinline__ BFrag bfrag(unsigned xa, unsigned xb, unsigned xha, unsigned xhb) {
  BFrag f;
  f.l0 = __byte_perm(xa, xb, 0x5410);
  f.l1 = __byte_perm(xa, xb, 0x7632);
  f.h0 = __byte_perm(xha, xhb, 0x5410);
  f.h1 = __byte_perm(xha, xhb, 0x7632);
  return f;
}
// One q4_0 block of rows g and g + 8: w, v are the lane's qs words of the two rows (same byte
// positions), dg, d8 their scales. acc += d * sum((q - 8) x).
__device__ __forceinline__ void block_mma(const BFrag& f, unsigned w, unsigned v, float dg,
                                          float d8, float& ag, float& a8) {
  const unsigned w8 = w >> 8, v8 = v >> 8;
  float c[4];
  mma_c(c, qlo(w), qlo(v), qlo(w8), qlo(v8), f.l0, f.l1, 0.0f);
  mma_acc(c, qhi(w), qhi(v), qhi(w8), qhi(v8), f.h0, f.h1);
  ag = fmaf(dg, c[0], ag);
  a8 = fmaf(d8, c[2], a8);
}

// The raw words of one pipeline step: per pair p and row r (2 RG rows) the lane's even-block
// word, the pair's words 0 and 4 (scales), and its odd-block word; per pair the x words.
struct Stage {
  unsigned wa[PAIRS][2 * RG], wb[PAIRS][2 * RG], wc[PAIRS][2 * RG];
  unsigned xa[PAIRS], xb[PAIRS], xha[PAIRS], xhb[PAIRS];
  uint2 xo[PAIRS], xho[PAIRS];
};

extern "C" __global__ void __launch_bounds__(THREADS)
    w4a16_gemv(const unsigned char* __restrict__ W, const __half* __restrict__ x,
               __half* __restrict__ y, int M, int K) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int kslice = warp % KSPLIT, rset = warp / KSPLIT;
  const long long row0 = (long long)blockIdx.x * ROWS + rset * (16 * RG);
  const int nb = K >> 5; // q4_0 blocks per row
  long long rows[2 * RG];
  float acc[2 * RG];
#pragma unroll
  for (int r = 0; r < 2 * RG; ++r) {
    // rows g, g + 8 of tile r / 2; rows past M are recomputed from row M - 1, never stored
    rows[r] = min(row0 + 16 * (r >> 1) + g + 8 * (r & 1), (long long)M - 1);
    acc[r] = 0.0f;
  }

  // ---- fast path: nb even, so every row starts 4-byte aligned and a pair of blocks (even, odd)
  // is 9 aligned words: w0 = {d_e, qs_e[0..1]}, w1..w3 = qs_e[2..13], w4 = {qs_e[14..15], d_o},
  // w5..w8 = qs_o[0..15]. Lane t takes w_t of the even block (lane 0 stitches {qs_e[0,1],
  // qs_e[14,15]} from w0 and w4 with one PRMT) and w_{5+t} of the odd one.
  const int nsteps = (nb & 1) ? 0 : (nb >> 1) / PAIRS;
  if (kslice < nsteps) {
    const unsigned* pt[2 * RG]; // word t of the row's first pair of this warp's first step
    const unsigned* p0[2 * RG]; // word 0 of it
#pragma unroll
    for (int r = 0; r < 2 * RG; ++r) {
      p0[r] = reinterpret_cast<const unsigned*>(W + rows[r] * nb * 18) + 9 * PAIRS * kslice;
      pt[r] = p0[r] + t;
    }
    const unsigned sel = t == 0 ? 0x5432u : 0x3210u;
    // x offsets (in halves) of the lane's even-block bytes {i0, i1} and {i2, i3}
    const int ea = t == 0 ? 0 : 4 * t - 2, eb = t == 0 ? 14 : 4 * t;
    const int oo = 32 + 4 * ((t + 3) & 3); // odd block: lane t holds qs_o word (t + 3) % 4
    const __half* xs = x + 64 * PAIRS * kslice;
    constexpr int WSTEP = 9 * PAIRS * KSPLIT, XSTEP = 64 * PAIRS * KSPLIT;

    auto load = [&](Stage& s) {
#pragma unroll
      for (int p = 0; p < PAIRS; ++p) {
#pragma unroll
        for (int r = 0; r < 2 * RG; ++r) {
          s.wa[p][r] = ldw(pt[r] + 9 * p);     // w_t
          s.wb[p][r] = ldw(pt[r] + 9 * p + 4); // w_{4+t}
          s.wc[p][r] = ldw(p0[r] + 9 * p + 8); // w8 (lane 0's odd-block word)
        }
        const __half* xp = xs + 64 * p;
        s.xa[p] = ldx(reinterpret_cast<const unsigned*>(xp + ea));
        s.xb[p] = ldx(reinterpret_cast<const unsigned*>(xp + eb));
        s.xha[p] = ldx(reinterpret_cast<const unsigned*>(xp + 16 + ea));
        s.xhb[p] = ldx(reinterpret_cast<const unsigned*>(xp + 16 + eb));
        s.xo[p] = __ldg(reinterpret_cast<const uint2*>(xp + oo));
        s.xho[p] = __ldg(reinterpret_cast<const uint2*>(xp + 16 + oo));
      }
    };
    Stage cur, nxt;
    load(cur);
    for (int st = kslice; st < nsteps; st += KSPLIT) {
      // software pipeline: the next step's loads go out before this step's arithmetic (the
      // last step reloads its own words, harmless)
      if (st + KSPLIT < nsteps) {
#pragma unroll
        for (int r = 0; r < 2 * RG; ++r) {
          pt[r] += WSTEP;
          p0[r] += WSTEP;
        }
        xs += XSTEP;
      }
      load(nxt);
#pragma unroll
      for (int p = 0; p < PAIRS; ++p) {
        const BFrag fe = bfrag(cur.xa[p], cur.xb[p], cur.xha[p], cur.xhb[p]);
        const BFrag fo = bfrag(cur.xo[p].x, cur.xo[p].y, cur.xho[p].x, cur.xho[p].y);
#pragma unroll
        for (int r = 0; r < 2 * RG; r += 2) {
          unsigned qe[2], qo[2], dd[2];
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            const unsigned a = cur.wa[p][r + i], b = cur.wb[p][r + i];
            qe[i] = __byte_perm(a, b, sel);
            qo[i] = t == 0 ? cur.wc[p][r + i] : b;
            // lane 0 holds w0 and w4: {d_e, d_o} in one word, one shuffle to its group
            dd[i] = __shfl_sync(0xffffffffu, __byte_perm(a, b, 0x7610), lane & ~3);
          }
          block_mma(fe, qe[0], qe[1], lo_f32(dd[0]), lo_f32(dd[1]), acc[r], acc[r + 1]);
          block_mma(fo, qo[0], qo[1], hi_f32(dd[0]), hi_f32(dd[1]), acc[r], acc[r + 1]);
        }
      }
      cur = nxt;
    }
  }

  // ---- general path, one block at a time: the blocks the fast path left (all of them when nb
  // is odd and rows start 2-byte aligned). Lane t's qs word t is realigned from two aligned
  // words; its x are x[4t .. 4t + 3] and 16 further on.
  for (int b = nsteps * 2 * PAIRS + kslice; b < nb; b += KSPLIT) {
    const uint2 xl = __ldg(reinterpret_cast<const uint2*>(x + 32 * b + 4 * t));
    const uint2 xh = __ldg(reinterpret_cast<const uint2*>(x + 32 * b + 16 + 4 * t));
    const BFrag f = bfrag(xl.x, xl.y, xh.x, xh.y);
#pragma unroll
    for (int r = 0; r < 2 * RG; r += 2) {
      unsigned q[2];
      float d[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const long long s = (rows[r + i] * nb + b) * 18; // the block's first byte
        const long long o = s + 2 + 4 * t;              // its qs word t
        const unsigned short* ph = reinterpret_cast<const unsigned short*>(W + o);
        q[i] = __byte_perm(__ldg(ph), __ldg(ph + 1), 0x5410u); // rows may be 2-byte aligned
        d[i] = __half2float(__ushort_as_half(__ldg(reinterpret_cast<const unsigned short*>(W + s))));
      }
      block_mma(f, q[0], q[1], d[0], d[1], acc[r], acc[r + 1]);
    }
  }

  // The four lanes of a group hold the same sums (every column of C is the same).
  if constexpr (KSPLIT == 1) {
    if (t == 0) {
#pragma unroll
      for (int r = 0; r < 2 * RG; ++r) {
        const long long row = row0 + 16 * (r >> 1) + g + 8 * (r & 1);
        if (row < M) y[row] = __float2half_rn(acc[r]);
      }
    }
  } else {
    __shared__ float part[KSPLIT][ROWS];
    if (t == 0) {
#pragma unroll
      for (int r = 0; r < 2 * RG; ++r)
        part[kslice][rset * 16 * RG + 16 * (r >> 1) + g + 8 * (r & 1)] = acc[r];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < ROWS; i += THREADS) {
      float s = 0.0f;
#pragma unroll
      for (int k = 0; k < KSPLIT; ++k) s += part[k][i];
      const long long row = (long long)blockIdx.x * ROWS + i;
      if (row < M) y[row] = __float2half_rn(s);
    }
  }
}
