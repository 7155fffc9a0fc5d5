// 20 · bf16 GEMM with mma.sync: C = A x B^T, with A (M x K) and B (N x K) in bf16, both
// row-major, and C (M x N) in f32.
//     C[r][c] = sum over k of A[r][k] * B[c][k]      (products exact, sums in f32)
// B is [N, K] ("B transposed", like an nn.Linear weight): row c of B is column c of the product.
// Launch: one block per BM x BN tile of C, one warp per WM x WN tile of that: (BM / WM) x (BN / WN)
// warps in a 1-D block; BK (the k-step) and STAGES (tiles in a shared ring) are there for you.
// The dynamic shared memory is STAGES * (BM + BN) * BK * 2 bytes. By default BM = BN = WM = WN =
// 16: one warp, one 16 x 16 tile of C. Change them with // @tune BM=128 (and so on).
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

extern "C" __global__ void mma_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N,
                                    int K) {
  const unsigned short* Ab = reinterpret_cast<const unsigned short*>(A);
  const unsigned short* Bb = reinterpret_cast<const unsigned short*>(B);
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4; // group and lane in group
  if (threadIdx.x >= 32) return; // TODO (speed): one warp does all the work of the block
  // A[r][k] and B[c][k] as bits, 0 outside the matrices (a zero times anything is zero).
  auto a_at = [&](int r, int k) -> unsigned short { return r < M && k < K ? Ab[(long long)r * K + k] : 0; };
  auto b_at = [&](int c, int k) -> unsigned short {
    return c < N && k < K ? Bb[(long long)k * N + c] : 0; // TODO: B is [N, K], not [K, N]
  };
  // The block's tile, one m16n8 tile of C at a time.
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
    // Lane (g, t) holds C rows g and g + 8, columns 2t and 2t + 1.
    for (int q = 0; q < 4; ++q) {
      const int r = r0 + g + (q / 2) * 8, c = c0 + 2 * t + q % 2;
      if (r < M && c < N) C[(long long)r * N + c] = acc[q];
    }
  }
  // TODO (speed): every value of A and B is fetched from global memory by every tile that needs it,
  // 2 bytes at a time, for one mma per 12 loads. Stage BM x BK tiles of A and BN x BK of B in
  // shared memory with cp.async (a ring of STAGES), load fragments with ldmatrix, and give each
  // warp a 64 x 64 tile of C (hints.md).
}
