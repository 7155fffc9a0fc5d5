// Reference: the definition, one warp per query row, in double. Query row i of head h of sequence
// b is position i + Sk - Sq (the queries are the last Sq of the Sk positions) and sees the keys
// j = 0 .. i + Sk - Sq of KV head h / (Hq / Hkv). Pass 1 computes their scores
// s_j = dot(q_i, k_j) / sqrt(D) (lane L takes keys L, L + 32, ...) and the true max m; pass 2
// computes them again, each lane its key's weight exp(s_j - m), and every lane adds weight * v_j
// to the output elements it owns (d = L, L + 32, ...; D <= 128), the weights handed round the
// warp with shuffles. o = sum / (sum of the weights), rounded once to bf16. Block (x, y) takes
// head y % Hq of sequence y / Hq and rows x*BQ .. x*BQ + BQ - 1; warp w the rows w, w + (warps), ...
#include <cuda_bf16.h>

__device__ double score(const __nv_bfloat16* qi, const __nv_bfloat16* kj, int D) {
  double dot = 0;
  for (int d = 0; d < D; ++d) dot += (double)__bfloat162float(qi[d]) * (double)__bfloat162float(kj[d]);
  return dot / sqrt((double)D);
}

extern "C" __global__ void causal_flash_attention(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                                  const __nv_bfloat16* v, __nv_bfloat16* o, int B, int Hq,
                                                  int Hkv, int Sq, int Sk, int D) {
  const unsigned full = 0xffffffffu;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int b = blockIdx.y / Hq, h = blockIdx.y % Hq, hkv = h / (Hq / Hkv);
  const long long qhead = ((long long)b * Hq + h) * Sq * D, kvhead = ((long long)b * Hkv + hkv) * Sk * D;
  const __nv_bfloat16 *Q = q + qhead, *K = k + kvhead, *V = v + kvhead;
  for (int r = warp; r < BQ; r += warps) {
    const int i = blockIdx.x * BQ + r;
    if (i >= Sq) break;
    const int n = i + 1 + (Sk - Sq); // the causal mask, bottom-right: keys 0 .. i + Sk - Sq
    const __nv_bfloat16* qi = Q + (long long)i * D;
    double m = -INFINITY;
    for (int j = lane; j < n; j += 32) m = fmax(m, score(qi, K + (long long)j * D, D));
    for (int off = 16; off > 0; off /= 2) m = fmax(m, __shfl_xor_sync(full, m, off));
    double l = 0, acc[4] = {0, 0, 0, 0}; // acc[c]: output element lane + 32 c
    for (int j0 = 0; j0 < n; j0 += 32) {
      const double p = j0 + lane < n ? exp(score(qi, K + (long long)(j0 + lane) * D, D) - m) : 0.0;
      l += p;
      for (int jj = 0; jj < 32 && j0 + jj < n; ++jj) {
        const double pj = __shfl_sync(full, p, jj);
        for (int d = lane; d < D; d += 32)
          acc[d / 32] += pj * (double)__bfloat162float(V[(long long)(j0 + jj) * D + d]);
      }
    }
    for (int off = 16; off > 0; off /= 2) l += __shfl_xor_sync(full, l, off);
    for (int d = lane; d < D; d += 32) o[qhead + (long long)i * D + d] = __double2bfloat16(acc[d / 32] / l);
  }
}
