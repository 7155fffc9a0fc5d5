// 17 · SGEMM: C = A x B, with A (M x K), B (K x N) and C (M x N), all fp32, row-major.
//     C[r][c] = sum over k of A[r][k] * B[k][c]
// Launch: one block per BM x BN tile of C (16 x 16 by default), (BN / TN) x (BM / TM) threads:
// x runs along the columns of C, y along its rows. By default TM = TN = 1: one output per thread.
// BM, BN, TM, TN are compile-time constants; change them with // @tune BM=128 (and so on).

extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
  int r = blockIdx.y * BM + threadIdx.y;
  int c = blockIdx.x * BN + threadIdx.x;
  if (r < M && c < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[(long long)r * K + k] * B[(long long)c * K + k];  // TODO: B is K x N, row-major
    C[(long long)r * N + c] = acc;
  }
  // TODO (speed): every A and B element is loaded from memory by many threads. Stage BM x BK
  // and BK x BN tiles in shared memory, then give each thread a TM x TN block of outputs.
}
