// Naive matmul, one thread per output: C[M x N] = A[M x K] * B[K x N], row-major, 2-D grid.
extern "C" __global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N,
                                        int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}
