// Corpus · v17-sgemm-smem16 · designed limiter: lsu
//
// What: the textbook shared-memory tiled SGEMM: 16 x 16 tiles of A and B staged in shared memory
// per K step (one coalesced load of each per thread), two barriers per step, and one output of C
// per thread (BM = BN = 16, TM = TN = 1: 256-thread blocks).
// Run:  warpbook check 17-tiled-sgemm bench/perfmodel/corpus/v17-sgemm-smem16.cu
//
// Why it is slow: per FMA a thread reads As[ty][k] (a broadcast) and Bs[k][tx] from shared
// memory: the inner loop is ~2 shared loads per FFMA (the compiler may fetch As[ty][k..k+3] as one
// 16-byte load, leaving ~1.25). Shared memory returns one warp-wide load per clock per SM, the
// FMA pipes take 4 warp-FFMAs per clock: FMAs run at 1/5 to 1/8 of the FP32 peak. Global traffic
// is 2 x 4096^3 x 4 B / 16 = 34 GB, mostly L2 hits: ~3-4 ms at L2 rates, a bound below this one.
// Expected: ~10-15% of the 67 TFLOP/s speed of light, the MIO/LSU pipe saturated.
// @tune BM=16
// @tune BN=16
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
