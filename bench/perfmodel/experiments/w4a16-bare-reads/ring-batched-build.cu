// Diagnostic · puzzle 32's ring with its solution's x'' build and no decode.
//
// What: ring-half2-build.cu with x'' built as solution 32 builds it: each thread issues
// its 16-byte reads of x (4 at K = 8192) before it uses any. The answer is wrong; the time is the
// ring and the build.
// Run:  warpbook run 32-w4a16-gemv \
//         bench/perfmodel/experiments/w4a16-bare-reads/ring-batched-build.cu \
//         --size M=57344 --size K=8192 --time-wrong        (on a GPU)
// Measured on the H200 (one call, two runs): 64.27 and 64.29 us, beside ring-no-build.cu's 62.59
// and 62.70 and solution 32's 67.33-68.16: the build costs under 2 us and the decode 3-4.
// measured: 64.28 us on NVIDIA H200
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
  // float q * 2^(s - 149)) times x'' is q * x * 2^-49, whatever the nibble's place. Built while
  // the ring's first copies are in flight, from 16-byte reads of x that are all issued before
  // any is used: with the DRAM busy, each read waits ~0.5 us for the L2, and one after another
  // they cost 8 us.
  auto put = [&](int g, int byte, int hi, float v) {
    const int n = 2 * (byte & 3) + hi; // times 2^(100 - s), exactly: a power of two as a float
    xq[g * XG + (byte >> 2) * 8 + n] = v * __int_as_float((227 - nib_shift(n)) << 23);
  };
  constexpr int XU = KMAX / 8 / THREADS; // 16-byte pieces of x a thread (K <= KMAX)
  uint4 xv[XU];
#pragma unroll
  for (int u = 0; u < XU; ++u) {
    const int i = threadIdx.x + u * THREADS;
    xv[u] = i < K / 8 ? reinterpret_cast<const uint4*>(x)[i] : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int u = 0; u < XU; ++u) {
    const int i = threadIdx.x + u * THREADS; // x[8i .. 8i + 7]: a quarter of q4_0 block i / 4
    if (i >= K / 8) break;                   // whole warps (K / 8 is a multiple of 32)
    const int k = 8 * i, b = k >> 5, hi = (k >> 4) & 1, g = b >> 3;
    const int byte = 18 * (b & 7) + 2 + (k & 15); // where qs[k & 15 ..] of block b lie
    const unsigned h[4] = {xv[u].x, xv[u].y, xv[u].z, xv[u].w};
    float sum = 0.f;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&h[e]));
      put(g, byte + 2 * e, hi, f.x);
      put(g, byte + 2 * e + 1, hi, f.y);
      sum += f.x + f.y;
    }
    if ((k & 31) == 0) // the 4 nibbles of block b's scale
      for (int z = 0; z < 4; ++z) put(g, byte - 2 + (z >> 1), z & 1, 0.f);
    sum += __shfl_xor_sync(0xffffffffu, sum, 1); // the 4 lanes of one q4_0 block
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
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
    for (int g = lane; g < ng; g += 32) { // no decode: one 16-byte read a row keeps the copies
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const uint4 v = *reinterpret_cast<const uint4*>(slot + r * rowbytes + 144 * g);
        acc[r] += bits(v.x ^ v.y ^ v.z ^ v.w) * xq[g];
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
