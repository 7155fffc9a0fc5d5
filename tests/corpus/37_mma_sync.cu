// Warp-level mma.sync m16n8k16 (f16 inputs, f32 accumulate) through inline PTX, with the fragments
// loaded by ldmatrix from shared memory: one warp computes D (16x8) = A (16x16, row-major) *
// B (16x8, stored as 8 rows of 16 = col-major).
#include <cuda_fp16.h>
extern "C" __global__ void mma_m16n8k16(const __half* A, const __half* B, float* D) {
  __shared__ __half As[16 * 16];
  __shared__ __half Bs[8 * 16];
  int lane = threadIdx.x;
  for (int k = lane; k < 256; k += 32) As[k] = A[k];
  for (int k = lane; k < 128; k += 32) Bs[k] = B[k];
  __syncwarp();
  unsigned a[4], b[2];
  unsigned sa = (unsigned)__cvta_generic_to_shared(&As[(lane % 16) * 16 + (lane / 16) * 8]);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
               : "r"(sa));
  unsigned sb = (unsigned)__cvta_generic_to_shared(&Bs[(lane % 8) * 16 + ((lane / 8) % 2) * 8]);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
               : "=r"(b[0]), "=r"(b[1])
               : "r"(sb));
  float d[4] = {0, 0, 0, 0};
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  int g = lane / 4, t = lane % 4;
  D[g * 8 + 2 * t] = d[0];
  D[g * 8 + 2 * t + 1] = d[1];
  D[(g + 8) * 8 + 2 * t] = d[2];
  D[(g + 8) * 8 + 2 * t + 1] = d[3];
}
