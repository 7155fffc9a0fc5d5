// Reference: the definition, one warp per query row, in double. For row i of head (b, h), pass 1
// computes every score s_j = dot(q_i, k_j) / sqrt(D) of the keys the row sees (all of them, or
// 0 .. i under the causal mask; lane L takes keys L, L + 32, ...) and their true max m; pass 2
// computes them again, each lane its key's weight exp(s_j - m), and every lane adds weight * v_j to
// the output elements it owns (d = L, L + 32, ...; D <= 128), the weights handed round the warp
// with shuffles. o = sum / l rounded once to bf16, lse = m + log(l) with l the weights' sum.
// Warp w of block (x, y) takes rows x*BM + w, x*BM + w + (warps), ... below x*BM + BM. The tensor
// maps are not read.
#include <cuda.h> // CUtensorMap
#include <cuda_bf16.h>

__device__ double score(const __nv_bfloat16* qi, const __nv_bfloat16* kj, int D) {
  double dot = 0;
  for (int d = 0; d < D; ++d) dot += (double)__bfloat162float(qi[d]) * (double)__bfloat162float(kj[d]);
  return dot / sqrt((double)D);
}

extern "C" __global__ void fa3_forward(const __grid_constant__ CUtensorMap tmQ,
                                       const __grid_constant__ CUtensorMap tmK,
                                       const __grid_constant__ CUtensorMap tmV,
                                       const __nv_bfloat16* q, const __nv_bfloat16* k,
                                       const __nv_bfloat16* v, __nv_bfloat16* o, float* lse, int B,
                                       int H, int S, int D, int causal) {
  const unsigned full = 0xffffffffu;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const long long head = (long long)blockIdx.y * S * D;
  const __nv_bfloat16 *Q = q + head, *K = k + head, *V = v + head;
  for (int r = warp; r < BM; r += warps) {
    const int i = blockIdx.x * BM + r;
    if (i >= S) break;
    const int keys = causal ? i + 1 : S; // the keys row i sees
    const __nv_bfloat16* qi = Q + (long long)i * D;
    double m = -INFINITY;
    for (int j = lane; j < keys; j += 32) m = fmax(m, score(qi, K + (long long)j * D, D));
    for (int off = 16; off > 0; off /= 2) m = fmax(m, __shfl_xor_sync(full, m, off));
    double l = 0, acc[4] = {0, 0, 0, 0}; // acc[c]: output element lane + 32 c
    for (int j0 = 0; j0 < keys; j0 += 32) {
      const double p = j0 + lane < keys ? exp(score(qi, K + (long long)(j0 + lane) * D, D) - m) : 0.0;
      l += p;
      for (int jj = 0; jj < 32 && j0 + jj < keys; ++jj) {
        const double pj = __shfl_sync(full, p, jj);
        for (int d = lane; d < D; d += 32)
          acc[d / 32] += pj * (double)__bfloat162float(V[(long long)(j0 + jj) * D + d]);
      }
    }
    for (int off = 16; off > 0; off /= 2) l += __shfl_xor_sync(full, l, off);
    for (int d = lane; d < D; d += 32) o[head + (long long)i * D + d] = __double2bfloat16(acc[d / 32] / l);
    if (lane == 0) lse[(long long)blockIdx.y * S + i] = (float)(m + log(l));
  }
}
