// Solution · 32 W4A16 GEMV (q4_0 weights, f16 x and y, f32 accumulation)
//
// What: a block of THREADS = 256 threads (8 warps) owns ROWS = 436 rows: 132 blocks at the perf
// size, one per SM. A warp takes pairs of rows; a pair's 2 x 4608 bytes (back to back in W) come
// into the warp's own ring in shared memory (NS = 2 slots of R = 2 rows: SMEM = 147456 bytes of
// dynamic shared memory) by coalesced 16-byte cp.async, one pair in flight while one is decoded.
//   - Lane g decodes the 8 q4_0 blocks of group g (K = 8192: 32 groups, one a lane): 144 bytes,
//     9 aligned 16-byte pieces, read back with ld.shared.v4 (lanes 144 bytes apart land in 8
//     different bank groups). Inside the 144 bytes every block sits at a place known at compile
//     time, so the whole decode is unrolled over the group's 36 words.
//   - A nibble becomes a float with one AND. Masked in place, a word's bits q << s are the float
//     q * 2^(s - 149), exactly, while q << s < 2^24 (a subnormal, or the first binade above it:
//     the mapping from bits to value is linear there). Nibbles 0-5 are masked where they lie;
//     nibbles 6 and 7 after one shift down a byte (shared by the pair).
//   - So x is scaled to match, once per block: x''[k] = x[k] * 2^(100 - s) for the place s of the
//     nibble that multiplies it, laid out like the group's bytes (8 floats a word, 0 where the
//     nibbles are a scale's), and one fma adds q * x * 2^-49 to the q4_0 block's sum.
//   - The 8: sum (q - 8) x = sum q x - 8 sum x. The block's -8 * 2^-49 * sum x is computed once
//     (cb) and starts each q4_0 block's sum; d multiplies that sum once, 2^49 the row once.
//   - Per weight: one AND, one fma, an eighth of an x'' load (a 16-byte load serves 4 weights of
//     both rows) and a shift per two of the top byte's weights: about 2.3 instructions, against
//     5.1 for exact (q - 8) floats made with a byte permute and a subtract. x'' and cb (37 KB) are
//     built while the first copies are in flight, from 16-byte reads of x all issued before any is
//     used.
//   - Shapes outside the fast path (K not a multiple of 256, so rows are not 16-byte aligned;
//     K > 8192, whose x'' would not fit; a ring larger than SMEM) take a plain path: a warp a
//     row, a lane a q4_0 block. The puzzle's K = 1024 and 2048 cases (large x, subnormal scales,
//     scales of +-2) run the fast path; the others check the plain one.
// Run:  warpbook check 32-w4a16-gemv solutions/32-w4a16-gemv.cu
//       warpbook predict 32-w4a16-gemv solutions/32-w4a16-gemv.cu
//
// Why it is fast: W is read once, in long coalesced stretches (a pair of rows is 9216 contiguous
// bytes), and what the H200 had too little of here was instructions: at 4.8 TB/s it must retire
// 8.5 G weights a millisecond against ~33 G lane-instructions, under 4 a weight. Decoding to exact
// (q - 8) floats takes 3 (permute, subtract, fma) before any load; masking in place takes 1 plus
// the fma, and the 8 and d move out of the loop; at that the decode hides under the loads but
// for 3-4 us (measured below). Accuracy: the products are rounded once, as
// with exact (q - 8) floats; subtracting 8 sum x per block cancels against sum q x, which costs a
// few units in the last place of a block's f32 sum (K = 8192 rows stay within the f16 rounding of
// y). fma takes subnormal inputs at full rate; NVRTC does not flush them unless asked (no
// --use_fast_math). Two rows a warp: each x'' load serves both, and 8 warps an SM keep 8 pairs (74
// KB) in flight.
//
// Napkin maths: 57344 x 8192 weights = 264 MB of q4_0 (+16 KB x, 115 KB y); at 4.8 TB/s that is
// 55 us on the H200; against the DRAM read `warpbook probe` measures (~4.6 TB/s) 58 us, and gold
// (80% of that speed of light) ~72 us. The same matrix in f16 is 940 MB.
// Measured on the H200 (`warpbook check`): 67.62 us (67.5-68.1 in three calls), 3.9 TB/s, 81% of
// the speed of light, gold. What is left is the stream: timed with the decode taken out
// (bench/perfmodel/experiments/w4a16-bare-reads/ring-*.cu, `warpbook run --time-wrong`, two runs
// each) the ring alone takes 62.4-62.8 us (the bare contiguous read is 61.8) and with this file's
// x'' build 64.3: the whole decode costs 3-4 us.
// What loses, and by how much (`warpbook check`, side by side):
//   - Building x'' with x read one half2 a thread at a time, in a loop whose trips wait on each
//     other (stores, shuffles): 16 reads one after another, each waiting ~0.5 us for the L2 while
//     the ring's copies fill the DRAM queues. 73.8-73.9 us against 67.5-68.1
//     (bench/perfmodel/curriculum2/32-gemv-masked-nibbles-ring.cu); with the decode taken out
//     70.6-71.8 against 64.3: the build cost 8 us, not the arithmetic. The model sees it (about 83
//     against 76 us predicted). Nsight Compute on that form: issue slots 61% busy, the ALU pipe
//     57%, DRAM 72% of its peak.
//   - Beside this file: the whole ring in flight before the build 68.4 us; the copies of a pair
//     unrolled with their offsets known 67.4-68.3 (no gain).
//   - Beside the slow-build form's 73.8-74.0 us: those unrolled copies with an exact power-of-two
//     multiply for ldexpf 74.8, with an integer multiply-high for the top byte's shift 75.2; the
//     leftover pairs of each block shared out by groups between all its warps 83.6 (a lane still
//     decodes a whole group, so the last round takes as long, and the atomics and two decode paths
//     cost more); fewer warps with deeper rings: 6 warps with 3 slots 93.1, 7 with 3 slots 82.8; 10
//     warps with 2 slots 76.5. Beside its 74.4: 4 warps a block with 3 or 4 slots 92.3-93.0; two
//     blocks of 4 warps an SM with 2 slots 82.5; one row a warp (16 warps with 2 slots, or 8 with
//     4) 93.1 and 103.6; two sums a q4_0 block 75.0; 16 warps of two rows with one slot 78.0.
//   - Exact (q - 8) floats made with a byte permute and a subtract, four rows a warp, loads in 4-
//     and 2-byte pieces: 97.9 us beside 74.4
//     (bench/perfmodel/curriculum2/32-gemv-f32-fma-read-flush.cu; its header lists the designs that
//     lose to it: tensor cores fed from registers or from bulk copies, wider loads, more rows a
//     warp).
// measured: 67.62 us on NVIDIA H200
// measured: 97.38 us on NVIDIA H100 80GB HBM3
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
  // any is used: read one after another, they cost 8 us with the DRAM busy.
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
