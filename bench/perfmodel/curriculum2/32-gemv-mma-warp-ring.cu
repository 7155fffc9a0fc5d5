// Perf-model kernel · 32 W4A16 GEMV on mma.sync, a per-warp ring
//
// A per-warp cp.async ring (STG stages) and mma.sync on exact f16 nibbles; THREADS and ROWS set the
// warps and rows a block, MINB the blocks asked of __launch_bounds__.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
// @tune THREADS=64
// @tune ROWS=64
#include <cuda_fp16.h>

constexpr int NW = THREADS / 32;
constexpr int RT = ROWS / (16 * NW); // 16-row tiles per warp: x is loaded once for all of them
static_assert(RT >= 1 && ROWS == 16 * NW * RT, "ROWS must be a multiple of 16 * THREADS / 32");
constexpr int STEP = 8;          // q4_0 blocks per step: 144 bytes of a row, nine 16-byte chunks
constexpr int SB = STEP * 18;    // bytes of one row per step
#ifndef STG
#define STG 4
#endif
#ifndef MINB
#define MINB 1
#endif
constexpr int STAGES = STG;      // steps in flight per warp

__device__ __forceinline__ unsigned int smem_u32(const void* p) {
  return (unsigned int)__cvta_generic_to_shared(p);
}

// Nibbles of bytes 0 and 2 of w (bytes 1 and 3 after w >> 8) as f16 q - 8, two per register.
// Low nibbles: (w & 0x000F000F) | 0x6400 makes 1024 + q, minus 1032. High nibbles: the same mask
// moved up makes 1024 + 16q; times 1/16 minus 72 is q - 8. Both exact.
__device__ __forceinline__ unsigned int lo2(unsigned int w) {
  unsigned int h;
  asm("lop3.b32 %0, %1, 0x000F000F, 0x64006400, 0xEA;" : "=r"(h) : "r"(w));
  asm("sub.f16x2 %0, %1, %2;" : "=r"(h) : "r"(h), "r"(0x64086408u)); // 0x6408: 1032
  return h;
}
__device__ __forceinline__ unsigned int hi2(unsigned int w) {
  unsigned int h;
  asm("lop3.b32 %0, %1, 0x00F000F0, 0x64006400, 0xEA;" : "=r"(h) : "r"(w));
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(h) : "r"(h), "r"(0x2C002C00u), "r"(0xD480D480u));
  return h; // 0x2C00: 1/16, 0xD480: -72
}

__device__ __forceinline__ void mma16816(float* d, const unsigned int* a, unsigned int b0,
                                         unsigned int b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    w4a16_gemv(const unsigned char* __restrict__ W, const __half* __restrict__ x,
               __half* __restrict__ y, int M, int K) {
  constexpr int WR = 16 * RT;                // rows per warp
  constexpr int CH = (WR * 9 + 31) / 32;     // 16-byte chunks per lane per step (9 per row)
  __shared__ __align__(16) unsigned char ring[NW][STAGES][WR * SB];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, c = lane & 3;
  const long long row0 = (long long)blockIdx.x * ROWS + warp * WR;
  const int nb = K >> 5;
  const long long rowbytes = 18ll * nb;
  const int nsteps = (nb + STEP - 1) / STEP;
  // 16-byte copies need every row and step to start 16-byte aligned: nb a multiple of 8.
  const bool fast = (nb % STEP) == 0;
  // This lane's chunks: consecutive lanes take consecutive 16 bytes of a row (coalesced).
  const unsigned char* src0 = W + row0 * rowbytes;
  unsigned int soff[CH], goff[CH], valid = 0, mine = 0; // mine: chunk exists; valid: row < M
#pragma unroll
  for (int i = 0; i < CH; ++i) {
    const int q = lane + 32 * i, r = q / 9, part = q % 9;
    soff[i] = r * SB + 16 * part;
    goff[i] = (unsigned int)(r * rowbytes) + 16 * part;
    if (q < WR * 9) mine |= 1u << i;
    if (q < WR * 9 && row0 + r < M) valid |= 1u << i;
  }

  auto load_step = [&](int s, int st) {
    unsigned char* dst = ring[warp][st];
    if (fast) {
      const unsigned char* src = src0 + (long long)s * SB;
#pragma unroll
      for (int i = 0; i < CH; ++i) {
        const bool ok = (valid >> i) & 1;
        if (!((mine >> i) & 1)) continue;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_u32(dst + soff[i])),
                     "l"(ok ? src + goff[i] : W), "r"(ok ? 16 : 0));
      }
    } else { // odd shapes: rows only 2-byte aligned; plain 2-byte copies, zeros past the row
      for (int u = lane; u < WR * (SB / 2); u += 32) {
        const int r = u / (SB / 2), o = 2 * (u % (SB / 2));
        const long long off = (long long)s * SB + o;
        unsigned short v = 0;
        if (row0 + r < M && off < rowbytes)
          v = *reinterpret_cast<const unsigned short*>(W + (row0 + r) * rowbytes + off);
        *reinterpret_cast<unsigned short*>(dst + r * SB + o) = v;
      }
    }
    asm volatile("cp.async.commit_group;");
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < nsteps) load_step(s, s);
    else asm volatile("cp.async.commit_group;");
  }
  float acc[RT][2] = {}; // rows 16t + g and 16t + g + 8
  const __half* xp = x + 4 * c;
  for (int s = 0; s < nsteps; ++s) {
    const int nxt = s + STAGES - 1;
    if (nxt < nsteps) load_step(nxt, nxt % STAGES);
    else asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 1));
    __syncwarp();
    const unsigned char* base = ring[warp][s % STAGES] + g * SB;
#pragma unroll
    for (int j = 0; j < STEP; ++j) {
      if (s * STEP + j >= nb) break;
      // x[32b + 4c .. + 3] and x[32b + 16 + 4c .. + 3], as pairs (0, 2) and (1, 3) to match the
      // nibble pairs lo2 and hi2 make of bytes 0, 2 and 1, 3.
      const uint2 xa = __ldg(reinterpret_cast<const uint2*>(xp + 32 * j));
      const uint2 xb = __ldg(reinterpret_cast<const uint2*>(xp + 32 * j + 16));
      const unsigned int bl0 = __byte_perm(xa.x, xa.y, 0x5410), bl1 = __byte_perm(xa.x, xa.y, 0x7632);
      const unsigned int bh0 = __byte_perm(xb.x, xb.y, 0x5410), bh1 = __byte_perm(xb.x, xb.y, 0x7632);
      const int o = 18 * j + 2 + 4 * c; // this lane's 4 qs bytes; 2 into a word when j is even
#pragma unroll
      for (int t = 0; t < RT; ++t) {
        unsigned int w[2];
        float d[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) { // rows 16t + g and 16t + g + 8
          const unsigned char* rp = base + (16 * t + 8 * h) * SB;
          if (j & 1)
            w[h] = *reinterpret_cast<const unsigned int*>(rp + o);
          else
            w[h] = __byte_perm(*reinterpret_cast<const unsigned int*>(rp + o - 2),
                               *reinterpret_cast<const unsigned int*>(rp + o + 2), 0x5432);
          d[h] = __half2float(*reinterpret_cast<const __half*>(rp + 18 * j));
        }
        // A registers: {row g, slots 2c..2c+1}, {row g+8, same}, {row g, slots 2c+8..}, {row g+8}
        const unsigned int alo[4] = {lo2(w[0]), lo2(w[1]), lo2(w[0] >> 8), lo2(w[1] >> 8)};
        const unsigned int ahi[4] = {hi2(w[0]), hi2(w[1]), hi2(w[0] >> 8), hi2(w[1] >> 8)};
        float dd[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        mma16816(dd, alo, bl0, bl1);
        mma16816(dd, ahi, bh0, bh1);
        acc[t][0] = fmaf(d[0], dd[0], acc[t][0]);
        acc[t][1] = fmaf(d[1], dd[2], acc[t][1]);
      }
    }
    xp += 32 * STEP;
    __syncwarp(); // every lane is done with this stage before it is refilled
  }
  asm volatile("cp.async.wait_group 0;");
  if (c == 0) {
#pragma unroll
    for (int t = 0; t < RT; ++t) {
      const long long r = row0 + 16 * t + g;
      if (r < M) y[r] = __float2half_rn(acc[t][0]);
      if (r + 8 < M) y[r + 8] = __float2half_rn(acc[t][1]);
    }
  }
}
