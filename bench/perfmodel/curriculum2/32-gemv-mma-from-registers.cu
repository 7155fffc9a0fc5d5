// Perf-model kernel · 32 W4A16 GEMV on mma.sync from registers
//
// Exact f16 (q - 8) by LOP3 + HSUB2/HFMA2 in registers, mma.sync for the products, PAIRS block
// pairs a step, L2PF for the L2::256B hint.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
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
