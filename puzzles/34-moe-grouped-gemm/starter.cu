// 34 · MoE: permute tokens by expert and run the grouped GEMM.
//   Y[t][n] = sum_{j < k} topk_weights[t][j] * dot(X[t], W[topk_ids[t][j]][n])     (bf16 out)
// X is [T][H], W is [E][N][H] (each expert's N rows of H, as nn.Linear stores its weight), both
// bf16; topk_ids and topk_weights are [T][k]. Four kernels run in order, each with every buffer:
//   moe_count    grid 1, 1024 threads          moe_scatter  grid cdiv(T * k, 256), 256 threads
//   moe_gemm     grid [cdiv(N, BN), cdiv(T * k, BM) + min(E, T * k)], WARPS * 32 threads
//   moe_combine  grid [cdiv(N, CCOLS), T], 256 threads
// meta (4 E + 4 ints), rows (T k ints) and part (T k N floats) are workspaces for you.
// This starter does all the work in moe_combine, one thread per output, on the FP32 units: right
// in outline, very slow (every expert row is re-read by every token that chose it, and no tensor
// core is used), and wrong in one place.
#include <cuda_bf16.h>

#define MOE_ARGS                                                                                  \
  const __nv_bfloat16 *X, const int *topk_ids, const float *topk_weights, const __nv_bfloat16 *W, \
      int *meta, int *rows, float *part, __nv_bfloat16 *Y, int T, int k, int E, int H, int N

// TODO: count the rows of each expert and turn the counts into offsets (an exclusive scan).
extern "C" __global__ void moe_count(MOE_ARGS) {}

// TODO: write each assignment f = t * k + j into its expert's region of `rows`.
extern "C" __global__ void moe_scatter(MOE_ARGS) {}

// TODO: one block per tile of an expert's rows: the grouped GEMM, on the tensor cores.
extern "C" __global__ void moe_gemm(MOE_ARGS) {}

extern "C" __global__ void moe_combine(MOE_ARGS) {
  const int t = blockIdx.y;
  const int n = blockIdx.x * blockDim.x + threadIdx.x; // one column per thread: CCOLS = 256
  if (n >= N) return;
  float y = 0.0f;
  for (int j = 0; j < k; ++j) {
    const int e = topk_ids[t * k + j];
    float dot = 0.0f;
    for (int h = 0; h < H; ++h)
      dot += __bfloat162float(X[(long long)t * H + h]) *
             __bfloat162float(W[((long long)e * N + n) * H + h]);
    y += dot; // TODO: the router's weight for this choice
  }
  Y[(long long)t * N + n] = __float2bfloat16(y);
}
