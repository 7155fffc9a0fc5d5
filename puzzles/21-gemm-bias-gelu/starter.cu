// 21 · GEMM + bias + GELU in one kernel: Y = gelu(A x B^T + bias), with A (M x K), B (N x K),
// bias (N) and Y (M x N) all bf16, row-major, and the sums in f32.
//     x = sum over k of A[r][k] * B[c][k] + bias[c]
//     Y[r][c] = gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))    rounded to bf16
// B is [N, K] (an nn.Linear weight), as in puzzle 20. Launch: one block per BM x BN tile of Y, one
// warp per WM x WN tile of that: (BM / WM) x (BN / WN) warps in a 1-D block; BK and STAGES as in
// puzzle 20. The dynamic shared memory is the larger of STAGES * (BM + BN) * BK * 2 bytes and
// (BM / WM) * (BN / WN) * WM * (WN + 8) * 2. By default BM = BN = WM = WN = 16: one warp, one
// 16 x 16 tile of Y. Change them with // @tune BM=128 (and so on).
#include <cuda_bf16.h>

// acc (16 x 8, f32) += a (16 x 16, bf16, row-major) x b (16 x 8, bf16, "col": k runs along a register)
__device__ __forceinline__ void mma_bf16(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Two bf16 in one 32-bit register: lo in bits 0-15 (the lower k), hi in bits 16-31.
__device__ __forceinline__ unsigned pack(unsigned short lo, unsigned short hi) {
  return (unsigned)lo | ((unsigned)hi << 16);
}

__device__ __forceinline__ float gelu(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678f)); // TODO: this is the erf GELU; the puzzle's is the tanh form
}

extern "C" __global__ void gemm_bias_gelu(const __nv_bfloat16* A, const __nv_bfloat16* B,
                                          const __nv_bfloat16* bias, __nv_bfloat16* Y, int M, int N,
                                          int K) {
  const unsigned short* Ab = reinterpret_cast<const unsigned short*>(A);
  const unsigned short* Bb = reinterpret_cast<const unsigned short*>(B);
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4; // group and lane in group
  if (threadIdx.x >= 32) return; // TODO (speed): one warp does all the work of the block
  // A[r][k] and B[c][k] as bits, 0 outside the matrices (a zero times anything is zero).
  auto a_at = [&](int r, int k) -> unsigned short { return r < M && k < K ? Ab[(long long)r * K + k] : 0; };
  auto b_at = [&](int c, int k) -> unsigned short { return c < N && k < K ? Bb[(long long)c * K + k] : 0; };
  // The block's tile, one m16n8 tile of Y at a time.
  for (int tile = 0; tile < (BM / 16) * (BN / 8); ++tile) {
    const int r0 = blockIdx.y * BM + (tile / (BN / 8)) * 16, c0 = blockIdx.x * BN + (tile % (BN / 8)) * 8;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < K; k0 += 16) {
      // The fragments of mma.m16n8k16 (lesson 0009): A rows g and g + 8, k = 2t, 2t + 1 and
      // 2t + 8, 2t + 9; B column c0 + g at the same k.
      unsigned a[4], b[2];
      a[0] = pack(a_at(r0 + g, k0 + 2 * t), a_at(r0 + g, k0 + 2 * t + 1));
      a[1] = pack(a_at(r0 + g + 8, k0 + 2 * t), a_at(r0 + g + 8, k0 + 2 * t + 1));
      a[2] = pack(a_at(r0 + g, k0 + 2 * t + 8), a_at(r0 + g, k0 + 2 * t + 9));
      a[3] = pack(a_at(r0 + g + 8, k0 + 2 * t + 8), a_at(r0 + g + 8, k0 + 2 * t + 9));
      b[0] = pack(b_at(c0 + g, k0 + 2 * t), b_at(c0 + g, k0 + 2 * t + 1));
      b[1] = pack(b_at(c0 + g, k0 + 2 * t + 8), b_at(c0 + g, k0 + 2 * t + 9));
      mma_bf16(acc, a, b);
    }
    // The epilogue, in registers: lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1.
    for (int q = 0; q < 4; ++q) {
      const int r = r0 + g + (q / 2) * 8, c = c0 + 2 * t + q % 2;
      if (r < M && c < N) Y[(long long)r * N + c] = __float2bfloat16(gelu(acc[q] + __bfloat162float(bias[c])));
    }
  }
  // TODO (speed): as in puzzle 20: shared-memory tiles through a cp.async ring, ldmatrix, 64 x 64
  // warp tiles; then write Y 16 bytes at a time rather than 2 (hints.md).
}
