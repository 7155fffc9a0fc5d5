// Reference: split-K at its plainest, in double. Slice z of K is k = z * D .. z * D + D - 1 with
// D = cdiv(K, S) (the last slice shorter, or empty). splitk_gemm: block (x, y, z) walks the
// outputs of its BM x BN tile, each a dot product of row r of A and row c of B (B is [N, K]) over
// slice z, bf16 values converted exactly and summed in double, kept as a double in the workspace
// at [z][r][c]. splitk_reduce: one thread per output adds the S slices in order z = 0 .. S - 1
// and rounds the sum once, to bf16.
#include <cuda_bf16.h>

extern "C" __global__ void splitk_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* part,
                                       unsigned* tickets, __nv_bfloat16* C, int M, int N, int K, int S) {
  double* slice = reinterpret_cast<double*>(part) + (long long)blockIdx.z * M * N;
  const long long D = (K + S - 1) / S, k0 = blockIdx.z * D, k1 = min((long long)K, k0 + D);
  const long long r0 = (long long)blockIdx.y * BM, c0 = (long long)blockIdx.x * BN;
  for (int t = threadIdx.x; t < BM * BN; t += blockDim.x) {
    const long long r = r0 + t / BN, c = c0 + t % BN;
    if (r >= M || c >= N) continue;
    double acc = 0.0;
    for (long long k = k0; k < k1; ++k)
      acc += (double)__bfloat162float(A[r * K + k]) * (double)__bfloat162float(B[c * K + k]);
    slice[r * N + c] = acc;
  }
}

extern "C" __global__ void splitk_reduce(const __nv_bfloat16* A, const __nv_bfloat16* B, float* part,
                                         unsigned* tickets, __nv_bfloat16* C, int M, int N, int K, int S) {
  const double* slices = reinterpret_cast<const double*>(part);
  const long long total = (long long)M * N;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    double sum = 0.0;
    for (int z = 0; z < S; ++z) sum += slices[z * total + i];
    C[i] = __double2bfloat16(sum);
  }
}
