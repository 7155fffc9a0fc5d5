// Reference: each thread walks its share of the block's tile; every output is a K-long dot
// product accumulated in double precision.
extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
  long long r_end = min((long long)M, (long long)(blockIdx.y + 1) * BM);
  long long c_end = min((long long)N, (long long)(blockIdx.x + 1) * BN);
  for (long long r = (long long)blockIdx.y * BM + threadIdx.y; r < r_end; r += blockDim.y)
    for (long long c = (long long)blockIdx.x * BN + threadIdx.x; c < c_end; c += blockDim.x) {
      double acc = 0.0;
      for (int k = 0; k < K; ++k) acc += (double)A[r * K + k] * (double)B[(long long)k * N + c];
      C[r * N + c] = (float)acc;
    }
}
