// 40 · FP8 GEMM with DeepSeek-V3 block scales. A (M x K) and B (N x K) in fp8 e4m3, both
// row-major (B is given transposed: row n of B is column n of the product), C (M x N) in bf16.
// K is a multiple of 128 and cut into KB = K / 128 blocks; each block kb has its own scales:
//   a_scale[kb][m]            one per row of A per K block, stored [K / 128][M] (MN-major)
//   b_scale[n / 128][kb]      one per 128 x 128 block of B, stored [cdiv(N, 128)][K / 128]
//     C[m][n] = bf16( sum over kb of a_scale[kb][m] * b_scale[n / 128][kb] * P_kb[m][n] )
//     P_kb[m][n] = sum over k in block kb of A[m][k] * B[n][k]        (in f32)
// Launch: one block per BM x BN tile of C, one warp per WM x WN tile of that: (BM / WM) x (BN / WN)
// warps in a 1-D block. By default BM = BN = WM = WN = 16: one warp, one 16 x 16 tile of C.
// BM, BN, WM, WN, BK, STAGES and SMEM (dynamic shared memory, bytes) are compile-time constants;
// change them with // @tune BM=128 (and so on).
//
// The tool: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32, a warp's 16 x 8 x 32 product
// (puzzle 33). Lane l holds, with g = l / 4 and t = l % 4, four bytes per 32-bit register:
//   A (16 x 32): a[0] = row g, k 4t..4t+3;   a[1] = row g + 8, same k;
//                a[2] = row g, k 16 + 4t..;  a[3] = row g + 8, k 16 + 4t..
//   B (32 x 8):  b[0] = column n = g, k 4t..4t+3;  b[1] = column g, k 16 + 4t..
//   C, D (16 x 8, f32): d[0], d[1] = row g, columns 2t, 2t + 1; d[2], d[3] = row g + 8, same columns
#include <cuda_bf16.h>
#include <cuda_fp8.h>

__device__ __forceinline__ unsigned pack4(const unsigned char* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | ((unsigned)p[3] << 24);
}

extern "C" __global__ void fp8_block_gemm(const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* B,
                                          const float* a_scale, const float* b_scale,
                                          __nv_bfloat16* C, int M, int N, int K) {
  // One warp walks the 16 x 8 pieces of the block's tile in turn.
  __shared__ __align__(16) unsigned char As[16 * 32]; // A[r0 .. r0+15][k0 .. k0+31]
  __shared__ __align__(16) unsigned char Bs[8 * 32];  // B[c0 .. c0+7][k0 .. k0+31]: n-major
  const unsigned char* Ab = reinterpret_cast<const unsigned char*>(A);
  const unsigned char* Bb = reinterpret_cast<const unsigned char*>(B);
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int KB = K / 128;
  if (threadIdx.x >= 32) return; // TODO (speed): one warp does all the work of the block
  for (int p = 0; p < (BM / 16) * (BN / 8); ++p) {
    const int r0 = blockIdx.y * BM + (p / (BN / 8)) * 16, c0 = blockIdx.x * BN + (p % (BN / 8)) * 8;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f}; // the scaled total
    for (int kb = 0; kb < KB; ++kb) {
      float d[4] = {0.0f, 0.0f, 0.0f, 0.0f}; // P_kb: this K block's sums, unscaled
      for (int k0 = kb * 128; k0 < kb * 128 + 128; k0 += 32) {
        // Copy the 16 x 32 piece of A and the 8 x 32 piece of B, zeros past the edges.
        for (int e = lane; e < 16 * 32; e += 32) {
          int i = e / 32, j = e % 32;
          As[e] = r0 + i < M ? Ab[(long long)(r0 + i) * K + k0 + j] : 0;
        }
        for (int e = lane; e < 8 * 32; e += 32) {
          int i = e / 32, j = e % 32;
          Bs[e] = c0 + i < N ? Bb[(long long)(c0 + i) * K + k0 + j] : 0;
        }
        __syncwarp();
        unsigned a[4], b[2];
        a[0] = pack4(As + g * 32 + 4 * t);
        a[1] = pack4(As + (g + 8) * 32 + 4 * t);
        a[2] = pack4(As + g * 32 + 16 + 4 * t);
        a[3] = pack4(As + (g + 8) * 32 + 16 + 4 * t);
        b[0] = pack4(Bs + g * 32 + 4 * t);
        b[1] = pack4(Bs + g * 32 + 16 + 4 * t);
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        __syncwarp();
      }
      // Promote the block's sums: scale them by the block's two scales and add them to the total.
      for (int e = 0; e < 4; ++e) {
        int r = min(r0 + g + 8 * (e / 2), M - 1), c = min(c0 + 2 * t + e % 2, N - 1);
        float sa = a_scale[r * KB + kb]; // the scale of row r in K block kb
        float sb = b_scale[(c / 128) * KB + kb];
        acc[e] += d[e] * (sa * sb);
      }
    }
    // Epilogue: round to bf16, keeping only the elements inside C.
    for (int e = 0; e < 4; ++e) {
      int r = r0 + g + 8 * (e / 2), c = c0 + 2 * t + e % 2;
      if (r < M && c < N) C[(long long)r * N + c] = __float2bfloat16(acc[e]);
    }
  }
  // TODO (speed): a warp does one mma per 768 bytes it copies byte by byte. Stage BM x 128 tiles of
  // A and BN x 128 of B for the whole block with 16-byte cp.async, load fragments with ldmatrix,
  // give each warp many mma per fragment, and keep several K blocks in flight.
}
