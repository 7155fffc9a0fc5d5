// Perf-model kernel · 32 W4A16 GEMV, masked nibbles through a per-warp ring
//
// Nibbles masked in place as floats against a pre-scaled x'', row pairs through a per-warp cp.async
// ring, x'' built one half2 a thread at a time. Solution 32 builds x'' from 16-byte reads all in
// flight at once: 67.6 against 74.4 us.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
// measured: 74.48 us on NVIDIA H200
// @tune THREADS=256
// @tune ROWS=436
// @tune SMEM=147456
#include <cuda_fp16.h>

#define NWARP (THREADS / 32)
#ifndef NS
#define NS 2 // ring slots a warp: row pairs in flight while one is decoded
#endif
#ifndef R
#define R 2 // rows a warp decodes together: each x'' load serves both
#endif
#define KMAX 8192 // the fast path's longest row (its x'' fills 36 KB of shared memory)
#define GMAX (KMAX / 256)
#define XG 292 // floats a group in xq: 288 and 4 of padding, so lanes 16 bytes apart in banks

__device__ __forceinline__ float bits(unsigned u) {
  return __uint_as_float(u);
}

// The shift a nibble sits at once masked: nibbles 0..5 in place, 6 and 7 moved down a byte (a
// float whose bits are q << s is exactly q * 2^(s - 149) only while q << s < 2^24).
__host__ __device__ constexpr int nib_shift(int n) {
  return n < 6 ? 4 * n : 4 * n - 8;
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    w4a16_gemv(const unsigned char* __restrict__ W, const __half* __restrict__ x,
               __half* __restrict__ y, int M, int K) {
  extern __shared__ __align__(16) unsigned char ring[];
  __shared__ __align__(16) float xq[GMAX * XG]; // x'' by (group, word, nibble)
  __shared__ __align__(16) float cb[KMAX / 32]; // per q4_0 block: -8 * 2^-49 * sum x
  const int nb = K >> 5, lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const long long rowbytes = (long long)nb * 18;
  const int row0 = blockIdx.x * ROWS, nrows = min(ROWS, M - row0);
  const bool fast = nb % 8 == 0 && K <= KMAX && (long long)NS * R * NWARP * rowbytes <= SMEM;
  if (!fast) { // any shape: a warp a row, a lane a q4_0 block, plain f32
    for (int r = w; r < nrows; r += NWARP) {
      const unsigned char* p = W + (long long)(row0 + r) * rowbytes;
      float acc = 0.f;
      for (int b = lane; b < nb; b += 32) {
        const unsigned char* q = p + 18 * b;
        const float d = __half2float(__ushort_as_half(*reinterpret_cast<const unsigned short*>(q)));
        float s = 0.f;
        for (int j = 0; j < 16; ++j) {
          s = fmaf((float)((q[2 + j] & 15) - 8), __half2float(x[32 * b + j]), s);
          s = fmaf((float)((q[2 + j] >> 4) - 8), __half2float(x[32 * b + 16 + j]), s);
        }
        acc = fmaf(d, s, acc);
      }
      for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
      if (lane == 0) y[row0 + r] = __float2half_rn(acc);
    }
    return;
  }
  // A warp takes row pairs w, w + NWARP, ... of the block's rows; each pair (2 x rowbytes, back
  // to back in W) comes through the warp's NS-slot ring in coalesced 16-byte cp.async.
  const int ng = nb / 8, npairs = (nrows + R - 1) / R;
  unsigned char* myring = ring + (long long)w * NS * R * rowbytes;
  const int chunks = (int)(R * rowbytes / 16);
  auto issue = [&](int it) {
    const int p = w + it * NWARP;
    if (p < npairs) {
      // a pair's second row past M is not copied (its slot is decoded, never stored)
      const long long r = row0 + (long long)R * p;
      const int n = (int)min((long long)R, M - r) * (chunks / R);
      const unsigned char* s0 = W + r * rowbytes;
      unsigned char* d0 = myring + (it % NS) * R * rowbytes;
      for (int c = lane; c < n; c += 32)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                         (unsigned)__cvta_generic_to_shared(d0 + 16 * c)),
                     "l"(s0 + 16 * c)
                     : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  const int nit = (npairs - w + NWARP - 1) / NWARP;
#pragma unroll
  for (int s = 0; s < NS - 1; ++s) issue(s);
  // x'' for every nibble of an 8-block group (144 bytes = 36 words = 288 nibbles), in the order
  // they lie: 0 for the nibbles of a scale, else x[k] * 2^(100 - s), so that the masked nibble (a
  // float q * 2^(s - 149)) times x'' is q * x * 2^-49, whatever the nibble's place. Built from
  // coalesced half2 reads of x while the ring's first copies are in flight.
  auto put = [&](int g, int byte, int hi, float v) {
    const int n = 2 * (byte & 3) + hi;
    xq[g * XG + (byte >> 2) * 8 + n] = ldexpf(v, 100 - nib_shift(n));
  };
  for (int kk = threadIdx.x; kk < K / 2; kk += THREADS) {
    const float2 f = __half22float2(reinterpret_cast<const __half2*>(x)[kk]);
    const int k = 2 * kk, b = k >> 5, hi = (k >> 4) & 1, jj = k & 15, g = b >> 3;
    const int byte = 18 * (b & 7) + 2 + jj; // where qs[jj] (and qs[jj + 1]) of block b lie
    put(g, byte, hi, f.x);
    put(g, byte + 1, hi, f.y);
    if ((k & 31) == 0) // the 4 nibbles of block b's scale
      for (int z = 0; z < 4; ++z) put(g, byte - 2 + (z >> 1), z & 1, 0.f);
    float sum = f.x + f.y; // the 16 lanes of one q4_0 block
#pragma unroll
    for (int o = 8; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if ((k & 31) == 0) cb[b] = -8.f * 0x1p-49f * sum; // sum (q - 8) x = sum q x - 8 sum x
  }
  __syncthreads();

  for (int it = 0; it < nit; ++it) {
    __syncwarp(); // every lane is done reading the slot the next copy overwrites
    issue(it + NS - 1);
    asm volatile("cp.async.wait_group %0;" ::"n"(NS - 1) : "memory");
    __syncwarp(); // every lane's copies of this pair have landed
    const unsigned char* slot = myring + (it % NS) * R * rowbytes;
    float acc[R] = {};
    for (int g = lane; g < ng; g += 32) {
      unsigned wr[R][36];
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int i = 0; i < 9; ++i) {
          const uint4 v = *reinterpret_cast<const uint4*>(slot + r * rowbytes + 144 * g + 16 * i);
          wr[r][4 * i] = v.x, wr[r][4 * i + 1] = v.y, wr[r][4 * i + 2] = v.z;
          wr[r][4 * i + 3] = v.w;
        }
      float S[R][8];
      const float4 c0 = *reinterpret_cast<const float4*>(cb + 8 * g);
      const float4 c1 = *reinterpret_cast<const float4*>(cb + 8 * g + 4);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        S[r][0] = c0.x, S[r][1] = c0.y, S[r][2] = c0.z, S[r][3] = c0.w;
        S[r][4] = c1.x, S[r][5] = c1.y, S[r][6] = c1.z, S[r][7] = c1.w;
      }
      const float4* xg = reinterpret_cast<const float4*>(xq + g * XG);
#pragma unroll
      for (int wd = 0; wd < 36; ++wd) {
        const int i = 4 * wd / 18;               // the block whose nibbles this word holds
        const bool dlo = (4 * wd) % 18 == 0;     // bytes 0, 1 are block i's scale
        const bool dhi = (4 * wd + 2) % 18 == 0; // bytes 2, 3 are block i + 1's scale
        if (!dlo) {
          const float4 xa = xg[2 * wd];
#pragma unroll
          for (int r = 0; r < R; ++r) {
            const unsigned u = wr[r][wd];
            S[r][i] = fmaf(bits(u & 0xFu), xa.x, S[r][i]);
            S[r][i] = fmaf(bits(u & 0xF0u), xa.y, S[r][i]);
            S[r][i] = fmaf(bits(u & 0xF00u), xa.z, S[r][i]);
            S[r][i] = fmaf(bits(u & 0xF000u), xa.w, S[r][i]);
          }
        }
        if (!dhi) {
          const float4 xb = xg[2 * wd + 1];
#pragma unroll
          for (int r = 0; r < R; ++r) {
            const unsigned u = wr[r][wd], t = u >> 8;
            S[r][i] = fmaf(bits(u & 0xF0000u), xb.x, S[r][i]);
            S[r][i] = fmaf(bits(u & 0xF00000u), xb.y, S[r][i]);
            S[r][i] = fmaf(bits(t & 0xF0000u), xb.z, S[r][i]);
            S[r][i] = fmaf(bits(t & 0xF00000u), xb.w, S[r][i]);
          }
        }
      }
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        // block i's scale: the low half of word 9i/2 (i even) or the high half of (18i - 2)/4
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const unsigned dw =
              (i & 1) ? (wr[r][(18 * i - 2) / 4] >> 16) : (wr[r][9 * i / 2] & 0xFFFFu);
          acc[r] = fmaf(__half2float(__ushort_as_half((unsigned short)dw)), S[r][i], acc[r]);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float v = acc[r];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
      const long long row = row0 + (long long)R * (w + it * NWARP) + r;
      if (lane == 0 && row < row0 + nrows) y[row] = __float2half_rn(v * 0x1p49f);
    }
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
}
