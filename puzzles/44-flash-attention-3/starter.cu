// 44 · FlashAttention-3-style forward. For every sequence b and head h, with q, k, v, o
// [B][H][S][D] bf16 (D = 128) and lse [B][H][S] f32:
//   s_ij = dot(q[b][h][i], k[b][h][j]) / sqrt(D)       over the keys j row i sees
//   lse[b][h][i] = log(sum_j exp(s_ij)),   o[b][h][i] = sum_j exp(s_ij - lse[b][h][i]) v[b][h][j]
// Row i sees every key when causal = 0, keys 0 .. i when causal = 1. Block (x, y) owns query rows
// x*BM .. x*BM + BM - 1 of head y = b*H + h, with 384 threads (three warpgroups). tmQ, tmK and tmV
// are tensor maps of q, k and v as [B H][S][D] (boxes of 64 x BM or 64 x BN x 1, 128B-swizzled,
// zeros past S); q, k and v are there as plain pointers too. Dynamic shared memory: a Q tile,
// STAGES slots of K and V tiles, 128 bytes for mbarriers, 1 KB of slack (see puzzle.toml).
//
// This starter gives one thread to each query row and walks the keys one at a time with an
// online softmax in f32, reading q, k and v from global memory: the maths in outline, wrong in
// two places, and hundreds of times too slow. Puzzle 22's solution (tensor cores, online softmax
// in registers) and puzzle 43's (TMA, mbarriers, producer and consumer warpgroups, wgmma) hold
// every piece the fast kernel needs but one: wgmma reading V as it lies ([key][d]) for P V.
#include <cuda.h> // CUtensorMap
#include <cuda_bf16.h>

extern "C" __global__ void fa3_forward(const __grid_constant__ CUtensorMap tmQ,
                                       const __grid_constant__ CUtensorMap tmK,
                                       const __grid_constant__ CUtensorMap tmV,
                                       const __nv_bfloat16* q, const __nv_bfloat16* k,
                                       const __nv_bfloat16* v, __nv_bfloat16* o, float* lse, int B,
                                       int H, int S, int D, int causal) {
  const int i = blockIdx.x * BM + threadIdx.x;
  if (threadIdx.x >= BM || i >= S) return;
  const long long head = (long long)blockIdx.y * S * D;
  const __nv_bfloat16 *qi = q + head + (long long)i * D, *K = k + head, *V = v + head;
  const float scale = rsqrtf((float)D);
  float acc[128]; // D = 128
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  // TODO: under the causal mask, which keys does row i see?
  const int keys = causal ? i : S;
  for (int j = 0; j < keys; ++j) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s += __bfloat162float(qi[d]) * __bfloat162float(K[(long long)j * D + d]);
    s *= scale;
    const float m_new = fmaxf(m, s);
    const float c = expf(m - m_new), p = expf(s - m_new);
    l = l * c + p;
    for (int d = 0; d < D; ++d) acc[d] = acc[d] * c + p * __bfloat162float(V[(long long)j * D + d]);
    m = m_new;
  }
  for (int d = 0; d < D; ++d) o[head + (long long)i * D + d] = __float2bfloat16(acc[d] / l);
  // TODO: lse is the log of the sum of exp(s) over the row, not of exp(s - m)
  lse[(long long)blockIdx.y * S + i] = logf(l);
}
