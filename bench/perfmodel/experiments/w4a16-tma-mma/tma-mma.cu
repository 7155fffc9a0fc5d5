// Puzzle 32 (W4A16 GEMV, q4_0) on the tensor cores, W staged by bulk copies: an experiment that
// lost.
//
// What: each warp owns tiles of 16 rows and walks them in slots of SEG q4_0 blocks; lanes 0..15
// each start one cp.async.bulk of their row's slot (completing on the slot's mbarrier), so the
// loads cost the warp almost no instructions. The warp decodes the nibbles exactly to f16 (PRMT,
// LOP3, one f16 add or fma per pair) straight into mma.sync m16n8k16 A fragments, x (every column
// of B) comes from L1, and each q4_0 block's two mma sums are weighed by its scales in f32. The
// block's row tiles x slots are split evenly over its warps, partial sums meeting in shared
// memory. Every case passes on the simulator and the GPU; the model predicted 65-92 us.
// Run:  warpbook check 32-w4a16-gemv bench/perfmodel/experiments/w4a16-tma-mma/tma-mma.cu
//       (SEG, STAGES and UNROLL are #defines below; THREADS, ROWS and SMEM are @tune lines)
// The other shapes: README.md (114-178 us against the register solution's 98 us).
// measured: 114.18 us on NVIDIA H200
// @tune THREADS=256
// @tune ROWS=224
// @tune SMEM=77824
#include <cuda_fp16.h>

#ifndef SEG
#define SEG 16
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef UNROLL
#define UNROLL 4 // pairs of blocks in flight in the loop
#endif
#define NW (THREADS / 32)
// A slot row's pitch: 18 * SEG bytes rounded up to an odd multiple of 16, so that the 8 rows one
// load instruction reads (quads g = 0..7, 16 bytes each) fall into 8 different groups of 4 banks.
#define PITCH ((((18 * SEG + 15) / 16) | 1) * 16)
#define SLOT (16 * PITCH)
static_assert(ROWS % 16 == 0, "ROWS must be a multiple of 16 (one mma tile of rows)");
static_assert(SEG % 8 == 0, "SEG must be a multiple of 8 (slots of whole 16-byte pieces)");
static_assert(SMEM >= (THREADS / 32) * STAGES * SLOT, "SMEM must hold every warp's ring");

__device__ __forceinline__ unsigned smem(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ unsigned lds(const unsigned char* p) { // a 4-byte aligned word
  return *reinterpret_cast<const unsigned*>(p);
}
__device__ __forceinline__ unsigned prmt(unsigned a, unsigned b, unsigned s) {
  unsigned v;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(v) : "r"(a), "r"(b), "r"(s));
  return v;
}
// The two halves of a word as floats (the f16 scales of q4_0 blocks).
__device__ __forceinline__ float h2f_lo(unsigned u) {
  float f;
  asm("{.reg .f16 l, h;\n mov.b32 {l, h}, %1;\n cvt.f32.f16 %0, l;}" : "=f"(f) : "r"(u));
  return f;
}
__device__ __forceinline__ float h2f_hi(unsigned u) {
  float f;
  asm("{.reg .f16 l, h;\n mov.b32 {l, h}, %1;\n cvt.f32.f16 %0, h;}" : "=f"(f) : "r"(u));
  return f;
}
// (a & m) | 0x64006400 in one LOP3.
__device__ __forceinline__ unsigned mask_or(unsigned a, unsigned m) {
  unsigned v;
  asm("lop3.b32 %0, %1, %2, 0x64006400, 0xEA;" : "=r"(v) : "r"(a), "r"(m));
  return v;
}
__device__ __forceinline__ unsigned hadd2(unsigned a, unsigned b) {
  unsigned v;
  asm("add.rn.f16x2 %0, %1, %2;" : "=r"(v) : "r"(a), "r"(b));
  return v;
}
__device__ __forceinline__ unsigned hfma2(unsigned a, unsigned b, unsigned c) {
  unsigned v;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(v) : "r"(a), "r"(b), "r"(c));
  return v;
}

// f16 pairs the dequantisation adds: -1032 (= -(1024 + 8)), 1/16 and -72 (= -(64 + 8)), twice.
struct Magic {
  unsigned m1032, s16, m72;
};

// The 8 weights of the 4 qs bytes in q, exactly, as f16 pairs: a[0] = (lo nibbles of bytes 0, 1),
// a[1] = (lo of bytes 2, 3), a[2] = (hi of 0, 1), a[3] = (hi of 2, 3). PRMT spreads the bytes to
// the low byte of each half; a nibble or'ed into the mantissa of 1024 (0x6400) is 1024 + q (or
// 1024 + 16 q for a high nibble), and one f16 add (or fma by 1/16) makes it q - 8, exactly.
__device__ __forceinline__ void dequant(unsigned q, const Magic& k, unsigned* a) {
  const unsigned r01 = prmt(q, 0u, 0x4140u), r23 = prmt(q, 0u, 0x4342u);
  a[0] = hadd2(mask_or(r01, 0x000F000Fu), k.m1032);
  a[1] = hadd2(mask_or(r23, 0x000F000Fu), k.m1032);
  a[2] = hfma2(mask_or(r01, 0x00F000F0u), k.s16, k.m72);
  a[3] = hfma2(mask_or(r23, 0x00F000F0u), k.s16, k.m72);
}

// d = A(16 x 16, f16) * B(16 x 8, f16) + c, f32 accumulators.
__device__ __forceinline__ void mma(float* d, unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                    unsigned b0, unsigned b1, const float* c) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]));
}

// One q4_0 block of rows g and g + 8: qg, qh hold this lane's 4 qs bytes of each, whose low
// nibbles are the weights e0, e0 + 1, e1, e1 + 1 of the block (high: 16 more); x0 .. x3 are the
// matching x pairs. Two mma (k = 16 each: the low nibbles, then the high) sum the 32 products of
// every row; the block's scales then weigh the sums into the f32 accumulators.
__device__ __forceinline__ void block_mma(unsigned qg, unsigned qh, float dg, float dh, unsigned x0,
                                          unsigned x1, unsigned x2, unsigned x3, const Magic& k,
                                          const float* zero, float& ag, float& ah) {
  unsigned g[4], h[4];
  dequant(qg, k, g);
  dequant(qh, k, h);
  float d[4], e[4];
  mma(d, g[0], h[0], g[1], h[1], x0, x1, zero);
  mma(e, g[2], h[2], g[3], h[3], x2, x3, d);
  ag = fmaf(dg, e[0], ag);
  ah = fmaf(dh, e[2], ah);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    w4a16_gemv(const unsigned char* __restrict__ W, const __half* __restrict__ x,
               __half* __restrict__ y, int M, int K) {
  extern __shared__ __align__(128) unsigned char ring[]; // [NW][STAGES][16 rows][PITCH]
  __shared__ __align__(8) unsigned long long bar[NW][STAGES];
  __shared__ float ysum[ROWS];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int nb = K >> 5;
  const long long row_bytes = 18ll * nb;
  const int row0 = blockIdx.x * ROWS, rows = min(ROWS, M - row0), tiles = (rows + 15) / 16;
  const int spt = (nb + SEG - 1) / SEG; // slots per tile of 16 rows
  // The block's tiles x segments, split evenly over its warps in row-major order.
  const int total = tiles * spt;
  const int s0 = int((long long)total * warp / NW), s1 = int((long long)total * (warp + 1) / NW);
  const bool bulk = nb % 8 == 0 && (reinterpret_cast<unsigned long long>(W) & 15) == 0;
  unsigned char* my = ring + warp * STAGES * SLOT;
  for (int i = threadIdx.x; i < ROWS; i += THREADS) ysum[i] = 0.f;
  if (lane == 0 && bulk) {
    for (int i = 0; i < STAGES; ++i)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar[warp][i])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  // Slot of step s: 16 rows x (up to) SEG blocks, each row at a multiple of PITCH.
  auto fill = [&](int s) {
    const int tile = s / spt, j0 = (s % spt) * SEG, cnt = min(SEG, nb - j0);
    unsigned char* dst = my + ((s - s0) % STAGES) * SLOT;
    const unsigned bytes = 18u * cnt;
    if (bulk) { // lanes 0..15: one bulk copy each, all completing on the slot's barrier
      const unsigned b = smem(&bar[warp][(s - s0) % STAGES]);
      if (lane == 0)
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b),
                     "r"(16 * bytes)
                     : "memory");
      if (lane < 16) {
        const long long row = min(row0 + tile * 16 + lane, M - 1);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
            "[%3];" ::"r"(smem(dst + lane * PITCH)),
            "l"(W + row * row_bytes + 18ll * j0), "r"(bytes), "r"(b)
            : "memory");
      }
    } else { // rows only 2-byte aligned: the warp copies 2-byte pieces
      const int h = int(bytes / 2);
      for (int i = lane; i < 16 * h; i += 32) {
        const int r = i / h, k = i - r * h;
        const long long row = min(row0 + tile * 16 + r, M - 1);
        reinterpret_cast<unsigned short*>(dst + r * PITCH)[k] =
            reinterpret_cast<const unsigned short*>(W + row * row_bytes + 18ll * j0)[k];
      }
    }
  };
  if (bulk)
    for (int s = s0; s < s1 && s < s0 + STAGES; ++s) fill(s);

  // Lane (g, t) reads 4 qs bytes of rows g and g + 8 of every block. In an odd block they start
  // 4-byte aligned: bytes 4t .. 4t + 3 (weights 4t .. 4t + 3). In an even block they start 2
  // bytes into a word: lanes t < 3 take the aligned word of bytes 4t + 2 .. 4t + 5, lane 3 the
  // two halves left over (bytes 14, 15 and 0, 1), from the word that also holds the next block's
  // scale. So lane 3 has every scale: it alone adds the sums into ysum.
  const unsigned sel = t == 3 ? 0x7610u : 0x3210u;
  // x as words (pairs of halves): the pairs this lane multiplies in an even block start at words
  // ev0, ev1 (and 8 more for the high nibbles), in an odd block at od0, od0 + 1 (and 8 more).
  const unsigned* xw = reinterpret_cast<const unsigned*>(x);
  const int ev0 = 2 * t + 1, ev1 = (2 * t + 2) & 7, od0 = 2 * t;
  const Magic mk{0xE408E408u, 0x2C002C00u, 0xD480D480u};
  const float zero[4] = {0.f, 0.f, 0.f, 0.f};
  float ag = 0.f, ah = 0.f;
  for (int s = s0; s < s1; ++s) {
    const int slot = (s - s0) % STAGES, tile = s / spt, j0 = (s % spt) * SEG;
    const int cnt = min(SEG, nb - j0);
    if (bulk) {
      const unsigned b = smem(&bar[warp][slot]), parity = ((s - s0) / STAGES) & 1;
      unsigned ok = 0;
      while (!ok)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
                     "selp.u32 %0, 1, 0, p; }"
                     : "=r"(ok)
                     : "r"(b), "r"(parity)
                     : "memory");
    } else {
      fill(s);
      __syncwarp();
    }
    const unsigned char *rg = my + slot * SLOT + g * PITCH, *rh = rg + 8 * PITCH;
    // This lane's x words for the slot's first pair of blocks (x is read through L1 and the L2).
    const unsigned *xa = xw + 16ll * j0 + ev0, *xb = xw + 16ll * j0 + ev1;
    const uint2* xc = reinterpret_cast<const uint2*>(xw + 16ll * j0 + 16 + od0);
    int j = 0;
#pragma unroll UNROLL
    for (; j + 1 < cnt; j += 2, rg += 36, rh += 36, xa += 32, xb += 32, xc += 16) {
      // the even block j (its qs 2 bytes into a word), then the odd block j + 1
      const unsigned wg = lds(rg), wh = lds(rh), vg = lds(rg + 4 * t + 4), vh = lds(rh + 4 * t + 4);
      block_mma(prmt(vg, wg, sel), prmt(vh, wh, sel), h2f_lo(wg), h2f_lo(wh), __ldg(xa), __ldg(xb),
                __ldg(xa + 8), __ldg(xb + 8), mk, zero, ag, ah);
      const uint2 lo = __ldg(xc), hi = __ldg(xc + 4);
      block_mma(lds(rg + 20 + 4 * t), lds(rh + 20 + 4 * t), h2f_hi(vg), h2f_hi(vh), lo.x, lo.y,
                hi.x, hi.y, mk, zero, ag, ah);
    }
    if (j < cnt) { // a last even block alone
      const unsigned wg = lds(rg), wh = lds(rh), vg = lds(rg + 4 * t + 4), vh = lds(rh + 4 * t + 4);
      block_mma(prmt(vg, wg, sel), prmt(vh, wh, sel), h2f_lo(wg), h2f_lo(wh), __ldg(xa), __ldg(xb),
                __ldg(xa + 8), __ldg(xb + 8), mk, zero, ag, ah);
    }
    __syncwarp(); // every lane is done with the slot before it is refilled
    if (bulk && s + STAGES < s1) fill(s + STAGES);
    if (s + 1 == s1 || (s + 1) % spt == 0) { // the warp's last step of this tile
      if (t == 3) {
        atomicAdd(&ysum[tile * 16 + g], ag);
        atomicAdd(&ysum[tile * 16 + g + 8], ah);
      }
      ag = ah = 0.f;
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < rows; i += THREADS) y[row0 + i] = __float2half_rn(ysum[i]);
}
