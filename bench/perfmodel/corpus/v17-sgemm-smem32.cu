// Corpus · v17-sgemm-smem32 · designed limiter: lsu
//
// What: the textbook shared-memory tiled SGEMM with 32 x 32 tiles and 1024-thread blocks (BM =
// BN = 32, TM = TN = 1): one output of C per thread, one coalesced load of A and of B per thread
// per K step, two barriers per step.
// Run:  warpbook check 17-tiled-sgemm bench/perfmodel/corpus/v17-sgemm-smem32.cu
//
// Why it is slow: the inner loop still needs a shared load of Bs[k][tx] (and a broadcast of
// As[ty][k]) for every FFMA: the shared-memory pipe (~1 warp-load per clock per SM) caps FMAs at
// 1/4 to 1/8 of the FP32 rate, as for 16 x 16 tiles; the larger tile halves global/L2 traffic
// (17 GB) and the barriers per FMA but not the shared loads per FMA. Two 1024-thread blocks per
// SM, 8 KB of shared memory each. Expected: ~10-20% of the 67 TFLOP/s speed of light, limited by
// shared-memory load instructions.
// @tune BM=32
// @tune BN=32
// @tune TM=1
// @tune TN=1

#if BM != BN || TM != 1 || TN != 1
#error "this kernel is written for square tiles and one output per thread"
#endif
#define T BM

extern "C" __global__ void sgemm(const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[T][T];
  __shared__ float Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long r = (long long)blockIdx.y * T + ty;
  const long long c = (long long)blockIdx.x * T + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += T) {
    // Zero-filled edges: a thread outside C still loads (and waits at the barriers).
    As[ty][tx] = (r < M && k0 + tx < K) ? A[r * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && c < N) ? B[(long long)(k0 + ty) * N + c] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
    __syncthreads();
  }
  if (r < M && c < N) C[r * N + c] = acc;
}
