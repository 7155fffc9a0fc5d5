// Perf-model kernel · 32 W4A16 GEMV on mma.sync, row pieces through a ring
//
// mma.sync fed from a per-warp cp.async ring of 144-byte row pieces, SB q4_0 blocks a stage;
// REGSTAGE stages the pieces through registers, CPPF adds the L2::256B hint, PUNROLL unrolls the
// inner loop.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
// @tune THREADS=32
// @tune ROWS=32
#include <cuda_fp16.h>

#ifndef SB
#define SB 8 // q4_0 blocks per row per ring stage (a multiple of 8: 144-byte, 16-aligned pieces)
#endif
#ifndef STAGES
#define STAGES 3 // ring stages per warp (STAGES - 1 in flight while one is computed)
#endif
#ifndef REGSTAGE
#define REGSTAGE 0 // 1: 16-byte loads into registers then shared stores, instead of cp.async
#endif
#ifndef PUNROLL
#define PUNROLL 1 // unroll of the loop over a stage's pairs of blocks (code size)
#endif
#ifndef CPPF
#define CPPF 0 // 1: the copies carry the L2::256B prefetch hint
#endif
#ifndef MINB
#define MINB 12 // __launch_bounds__ minimum blocks per SM
#endif

constexpr int NWARP = THREADS / 32;
constexpr int RG = ROWS / (16 * NWARP); // 16-row mma tiles per warp
constexpr int R = 16 * RG;              // rows per warp
static_assert(RG >= 1 && RG * 16 * NWARP == ROWS,
              "ROWS must be 16 x (THREADS / 32) x a whole number");
static_assert(SB % 8 == 0, "SB must be a multiple of 8");
constexpr int SEG = SB * 18;                              // bytes of one row per stage
constexpr int RSTRIDE = SEG + ((SEG / 4) % 8 == 4 ? 0 : 16); // row stride in shared memory:
// RSTRIDE / 4 = 4 x odd, so rows g = 0..7 start in banks 4 x (0..7) (all distinct) and the
// four lanes t of a group add 0..3: a fragment read of 32 lanes is one wavefront.
static_assert((RSTRIDE / 4) % 8 == 4 && RSTRIDE % 16 == 0, "row stride");
constexpr int CH = SEG / 16;               // 16-byte pieces per row per stage
constexpr int NCH = (R * CH + 31) / 32;    // pieces per lane per stage
constexpr int SLOT = R * RSTRIDE;          // bytes of one stage
constexpr int PAIRS = SB / 2;

__device__ __forceinline__ void cp16(unsigned dst, const void* src) {
#if CPPF
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(dst), "l"(src)
               : "memory");
#else
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
#endif
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ uint4 ldg16(const void* p) {
  uint4 v;
#if CPPF
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
#else
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
#endif
  return v;
}
template <int N> __device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

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
// d = a (16 x 16 f16, row) * b (16 x 8 f16, col) + 0
__device__ __forceinline__ void mma_0(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                      unsigned a3, unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%10,%10,%10,%10};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(0.0f));
}
// d += a * b
__device__ __forceinline__ void mma_acc(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                        unsigned a3, unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// B fragments of one q4_0 block: xa = {x[i0], x[i1]}, xb = {x[i2], x[i3]} are the x of the four
// qs bytes i0..i3 of the lane's word, xha / xhb the same 16 further on (high nibbles). A's
// registers hold bytes {0, 2} and {1, 3} of the word, so B pairs x the same way.
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
// One q4_0 block of rows g and g + 8: w, v their qs words (same byte positions). c = sum (q-8) x
// for row g in c[0], row g + 8 in c[2] (every column of C is the same).
__device__ __forceinline__ void block_mma(float (&c)[4], const BFrag& f, unsigned w, unsigned v) {
  const unsigned w8 = w >> 8, v8 = v >> 8;
  mma_0(c, qlo(w), qlo(v), qlo(w8), qlo(v8), f.l0, f.l1);
  mma_acc(c, qhi(w), qhi(v), qhi(w8), qhi(v8), f.h0, f.h1);
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    w4a16_gemv(const unsigned char* __restrict__ W, const __half* __restrict__ x,
               __half* __restrict__ y, int M, int K) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const long long row0 = (long long)blockIdx.x * ROWS + warp * R;
  const int nb = K >> 5; // q4_0 blocks per row
  const long long rowbytes = (long long)nb * 18;
  float acc[2 * RG];
#pragma unroll
  for (int r = 0; r < 2 * RG; ++r) acc[r] = 0.0f;

  __shared__ __align__(16) unsigned char ring[NWARP][STAGES][SLOT];

  // ---- fast path: nb % 8 == 0, so every row starts 16-byte aligned and a stage of SB blocks of
  // a row is CH aligned 16-byte pieces. Each warp copies its R rows x SB blocks into its own ring
  // with cp.async (no block-wide barriers), then reads its mma fragments from shared memory.
  const int nsteps = (nb & 7) ? 0 : nb / SB;
  if (nsteps > 0) {
    const unsigned char* wtile = W; // row0's first byte, rows past M clamp below
    unsigned goff[NCH];              // per piece: byte offset from the tile's row 0 (k step 0)
    unsigned soff[NCH];              // per piece: byte offset in a slot
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      const int c = lane + 32 * i, rr = c / CH, col = c % CH;
      const long long row = min(row0 + rr, (long long)M - 1);
      goff[i] = (unsigned)((row - row0) * rowbytes) + 16 * col; // may wrap: added mod 2^32
      soff[i] = rr * RSTRIDE + 16 * col;
    }
    wtile = W + row0 * rowbytes;
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(&ring[warp][0][0]);

    // Per lane: word t of row g (w_t: its even-block word, lane 0's {d_e, qs_e 0..1}), and
    // lane 0's w8 / lanes 1..3's w_{4+t} (the odd-block word). w_{4+t} is lane 0's
    // {qs_e 14..15, d_o}. x: the lane's even-block pairs at ea, eb and odd-block quad at oo.
    const int ea = t == 0 ? 0 : 4 * t - 2, eb = t == 0 ? 14 : 4 * t;
    const int oo = 32 + 4 * ((t + 3) & 3);
    const unsigned sel = t == 0 ? 0x5432u : 0x3210u;
    const unsigned char* sw = &ring[warp][0][0] + g * RSTRIDE + 4 * t;
    const unsigned char* so = &ring[warp][0][0] + g * RSTRIDE + (t == 0 ? 32 : 16 + 4 * t);
    const unsigned* __restrict__ xa = reinterpret_cast<const unsigned*>(x + ea);
    const unsigned* __restrict__ xb = reinterpret_cast<const unsigned*>(x + eb);
    const uint2* __restrict__ xo = reinterpret_cast<const uint2*>(x + oo);

    // One stage: SB blocks of the warp's R rows, from the slot at byte offset `slot`.
    auto compute = [&](int slot) {
      const unsigned char* pw = sw + slot;
      const unsigned char* po = so + slot;
#pragma unroll PUNROLL
      for (int p = 0; p < PAIRS; ++p) {
        // plain loads of read-only (restrict) data: ld.global.nc with folded offsets
        const uint2 x0 = xo[16 * p], x1 = xo[16 * p + 4];
        const BFrag fe = bfrag(xa[32 * p], xb[32 * p], xa[32 * p + 8], xb[32 * p + 8]);
        const BFrag fo = bfrag(x0.x, x0.y, x1.x, x1.y);
#pragma unroll
        for (int r = 0; r < RG; ++r) {
          unsigned qe[2], qo[2];
          float de[2], dob[2];
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            const int o = (16 * r + 8 * i) * RSTRIDE + 36 * p;
            const unsigned wa = *reinterpret_cast<const unsigned*>(pw + o);
            const unsigned wb = *reinterpret_cast<const unsigned*>(pw + o + 16);
            qo[i] = *reinterpret_cast<const unsigned*>(po + o);
            qe[i] = __byte_perm(wa, wb, sel);
            de[i] = lo_f32(wa);  // lane t == 0: d_e
            dob[i] = hi_f32(wb); // lane t == 0: d_o
          }
          float ce[4], co[4];
          block_mma(ce, fe, qe[0], qe[1]);
          block_mma(co, fo, qo[0], qo[1]);
          // only lanes t == 0 hold the scales; their sums are the ones stored
          acc[2 * r] = fmaf(de[0], ce[0], acc[2 * r]);
          acc[2 * r] = fmaf(dob[0], co[0], acc[2 * r]);
          acc[2 * r + 1] = fmaf(de[1], ce[2], acc[2 * r + 1]);
          acc[2 * r + 1] = fmaf(dob[1], co[2], acc[2 * r + 1]);
        }
      }
      xa += 16 * SB;
      xb += 16 * SB;
      xo += 8 * SB;
    };

#if REGSTAGE
    // Two slots; stage st + 1 travels in registers (16-byte ld.global.nc) while stage st is
    // computed from shared memory, then is stored to the other slot.
    uint4 v[NCH];
    auto load = [&](int st) {
      const unsigned char* src = wtile + (long long)st * SEG;
#pragma unroll
      for (int i = 0; i < NCH; ++i)
        if (R * CH % 32 == 0 || lane + 32 * i < R * CH) v[i] = ldg16(src + (long long)(int)goff[i]);
    };
    auto store = [&](int slot) {
#pragma unroll
      for (int i = 0; i < NCH; ++i)
        if (R * CH % 32 == 0 || lane + 32 * i < R * CH)
          *reinterpret_cast<uint4*>(&ring[warp][0][0] + slot + soff[i]) = v[i];
    };
    static_assert(STAGES >= 2, "two slots at least");
    load(0);
    store(0);
    __syncwarp();
    for (int st = 0; st < nsteps; ++st) {
      const int cur = (st & 1) * SLOT;
      if (st + 1 < nsteps) load(st + 1);
      compute(cur);
      if (st + 1 < nsteps) store(SLOT - cur);
      __syncwarp(); // the next slot is written, this one is read: both by every lane
    }
#else
    auto issue = [&](int st) {
      if (st < nsteps) {
        const unsigned char* src = wtile + (long long)st * SEG;
        const unsigned dst = sbase + (st % STAGES) * SLOT;
#pragma unroll
        for (int i = 0; i < NCH; ++i)
          if (R * CH % 32 == 0 || lane + 32 * i < R * CH)
            cp16(dst + soff[i], src + (long long)(int)goff[i]);
      }
      cp_commit(); // an empty group past the end keeps the count uniform
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) issue(s);
    int slot = 0; // byte offset of stage st's slot
    for (int st = 0; st < nsteps; ++st) {
      cp_wait<STAGES - 2>(); // this thread's copies of stage st have landed
      __syncwarp();          // ... and every lane's; every lane is done with stage st - 1
      issue(st + STAGES - 1); // into the slot read in the previous step
      compute(slot);
      slot = slot == (STAGES - 1) * SLOT ? 0 : slot + SLOT;
    }
    cp_wait<0>();
#endif
  }

  // ---- general path, one block at a time: the blocks the fast path left (all of them when
  // nb % 8 != 0: rows then start only 2-byte aligned). Lane t's qs word t is realigned from two
  // 2-byte loads; its x are x[4t .. 4t + 3] and 16 further on.
  for (int b = nsteps * SB; b < nb; ++b) {
    const uint2 xl = __ldg(reinterpret_cast<const uint2*>(x + 32 * b + 4 * t));
    const uint2 xh = __ldg(reinterpret_cast<const uint2*>(x + 32 * b + 16 + 4 * t));
    const BFrag f = bfrag(xl.x, xl.y, xh.x, xh.y);
#pragma unroll
    for (int r = 0; r < RG; ++r) {
      unsigned q[2];
      float d[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const long long row = min(row0 + 16 * r + g + 8 * i, (long long)M - 1);
        const long long s = row * rowbytes + 18LL * b; // the block's first byte
        const unsigned short* ph = reinterpret_cast<const unsigned short*>(W + s + 2 + 4 * t);
        q[i] = __byte_perm(__ldg(ph), __ldg(ph + 1), 0x5410u);
        const unsigned short db = __ldg(reinterpret_cast<const unsigned short*>(W + s));
        d[i] = __half2float(__ushort_as_half(db));
      }
      float c[4];
      block_mma(c, f, q[0], q[1]);
      acc[2 * r] = fmaf(d[0], c[0], acc[2 * r]);
      acc[2 * r + 1] = fmaf(d[1], c[2], acc[2 * r + 1]);
    }
  }

  if (t == 0) {
#pragma unroll
    for (int r = 0; r < 2 * RG; ++r) {
      const long long row = row0 + 16 * (r >> 1) + g + 8 * (r & 1);
      if (row < M) y[row] = __float2half_rn(acc[r]);
    }
  }
}
