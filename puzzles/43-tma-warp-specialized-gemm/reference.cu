// Reference: C = A x B^T at its plainest, in double. It ignores the tensor maps and reads A and B
// through the plain pointers. The launch is the persistent one (a block per SM, blockDim threads),
// so the threads walk the outputs with a grid stride: output i is row i / N, column i % N, a dot
// product of row r of A and row c of B (B is [N, K]), bf16 values converted exactly, summed in
// double, rounded once to bf16.
#include <cuda.h> // CUtensorMap
#include <cuda_bf16.h>


extern "C" __global__ void ws_gemm(const __grid_constant__ CUtensorMap tmA,
                                   const __grid_constant__ CUtensorMap tmB, const __nv_bfloat16* A,
                                   const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  const long long total = (long long)M * N;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const long long r = i / N, c = i % N;
    double acc = 0.0;
    for (long long k = 0; k < K; ++k)
      acc += (double)__bfloat162float(A[r * K + k]) * (double)__bfloat162float(B[c * K + k]);
    C[i] = __double2bfloat16(acc);
  }
}
