// fault: FP8 GEMM that applies the scales the wrong way round: a_scale[col] * b_scale[row]
// puzzle: 33-fp8-gemm
// sim: runtime_fault | read b_scale[8] | past its end
// gpu: wrong_answer | are wrong
// note: Right where M = N = 1. In the 16 x 8 case, row r indexes b_scale (8 elements): the simulator names the read past its end; on a GPU it returns guard-band bytes and the scales of the other cases are wrong anyway.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

__device__ __forceinline__ unsigned pack4(const unsigned char* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | ((unsigned)p[3] << 24);
}

extern "C" __global__ void fp8_gemm(const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* B,
                                    const float* a_scale, const float* b_scale, __nv_bfloat16* C,
                                    int M, int N, int K) {
  // One warp walks the 16 x 8 pieces of the block's tile in turn.
  __shared__ __align__(16) unsigned char As[16 * 32]; // A[r0 .. r0+15][k0 .. k0+31]
  __shared__ __align__(16) unsigned char Bs[8 * 32];  // B[c0 .. c0+7][k0 .. k0+31]: n-major
  const unsigned char* Ab = reinterpret_cast<const unsigned char*>(A);
  const unsigned char* Bb = reinterpret_cast<const unsigned char*>(B);
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  if (threadIdx.x >= 32) return;
  for (int p = 0; p < (BM / 16) * (BN / 8); ++p) {
    const int r0 = blockIdx.y * BM + (p / (BN / 8)) * 16, c0 = blockIdx.x * BN + (p % (BN / 8)) * 8;
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < K; k0 += 32) {
      // Copy the 16 x 32 piece of A and the 8 x 32 piece of B, zeros past the edges.
      for (int e = lane; e < 16 * 32; e += 32) {
        int i = e / 32, j = e % 32;
        As[e] = (r0 + i < M && k0 + j < K) ? Ab[(long long)(r0 + i) * K + k0 + j] : 0;
      }
      for (int e = lane; e < 8 * 32; e += 32) {
        int i = e / 32, j = e % 32;
        Bs[e] = (c0 + i < N && k0 + j < K) ? Bb[(long long)(c0 + i) * K + k0 + j] : 0;
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
    // Epilogue: scale and round to bf16, keeping only the elements inside C.
    for (int e = 0; e < 4; ++e) {
      int r = r0 + g + 8 * (e / 2), c = c0 + 2 * t + e % 2;
      if (r < M && c < N) C[(long long)r * N + c] = __float2bfloat16(d[e] * a_scale[c] * b_scale[r]); // swapped
    }
  }
}
