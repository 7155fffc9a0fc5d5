// Corpus · v17-sgemm-naive · designed limiter: lsu
//
// What: the naive SGEMM, one thread per element of C, 16 x 16 thread blocks (BM = BN = 16,
// TM = TN = 1): thread (tx, ty) walks k = 0 .. K-1 reading A[r][k] and B[k][c] straight from
// global memory and accumulates one fmaf per k.
// Run:  warpbook check 17-tiled-sgemm bench/perfmodel/corpus/v17-sgemm-naive.cu
//
// Why it is slow: every FMA needs two global load instructions. A warp covers 2 rows x 16
// columns of C: its A load is 2 addresses (broadcast), its B load 64 contiguous bytes; both hit
// L1/L2 almost always (A's rows and B's columns are reused by the whole grid), so DRAM is not the
// problem. The problem is the load/store unit: 2 load instructions per warp-FMA, each an L1 tag
// lookup and data return, against 4 FMA warp-instructions per clock per SM; the L1 serves about
// one load instruction per clock, so FMAs run at ~1/8 of the FP32 rate at best. 2 x 4096^3 =
// 137 GFLOP; expected ~5-10% of the 67 TFLOP/s FP32 speed of light.
// @tune BM=16
// @tune BN=16
// @tune TM=1
// @tune TN=1

extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
  const long long r = (long long)blockIdx.y * BM + threadIdx.y;
  const long long c = (long long)blockIdx.x * BN + threadIdx.x;
  if (r >= M || c >= N) return;
  const float* a = A + r * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc = fmaf(a[k], B[(long long)k * N + c], acc);
  C[r * N + c] = acc;
}
