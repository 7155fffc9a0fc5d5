// Diagnostic · puzzle 32's ring with no x'' build and no decode: what the loads alone take.
//
// What: ring-half2-build.cu with the loop that builds x'' taken out (x is never read). The answer
// is wrong; the time is the per-warp cp.async ring of row pairs and nothing else.
// Run:  warpbook run 32-w4a16-gemv \
//         bench/perfmodel/experiments/w4a16-bare-reads/ring-no-build.cu \
//         --size M=57344 --size K=8192 --time-wrong        (on a GPU)
// Measured on the H200 (one call, two runs): 62.75 and 62.43 us, beside
// ring-half2-build.cu's 70.59 and 70.98: the build cost 8 us. The bare contiguous read is 61.8.
// measured: 62.43 us on NVIDIA H200
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
