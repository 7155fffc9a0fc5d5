// 22 · FlashAttention forward. For every sequence b and head h, with q, k, v, o [B][H][S][D] bf16:
//   o[b][h][i] = sum_j softmax_j(dot(q[b][h][i], k[b][h][j]) / sqrt(D)) * v[b][h][j]
// D is 64 or 128. Block (x, y) owns query rows x*BQ .. x*BQ + BQ - 1 of head y (y = b*H + h),
// with 2*BQ threads (BQ = 64 by default: 4 warps). BQ and SMEM (dynamic shared memory in bytes)
// are compile-time constants; change them with // @tune BQ=128 and // @tune SMEM=87040.
// This starter gives one thread to each query row and walks the keys one at a time with an online
// softmax in f32: correct in outline, far too slow (no tensor cores, K and V read once per row),
// and wrong in two places.
#include <cuda_bf16.h>

extern "C" __global__ void flash_attention(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                           const __nv_bfloat16* v, __nv_bfloat16* o, int B, int H,
                                           int S, int D) {
  const int i = blockIdx.x * BQ + threadIdx.x;
  if (threadIdx.x >= BQ || i >= S) return;
  const long long head = (long long)blockIdx.y * S * D;
  const __nv_bfloat16 *qi = q + head + (long long)i * D, *K = k + head, *V = v + head;
  float acc[128]; // D <= 128
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  for (int j = 0; j < S; ++j) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s += __bfloat162float(qi[d]) * __bfloat162float(K[(long long)j * D + d]);
    // TODO: the scores are scaled by 1 / sqrt(D)
    const float m_new = fmaxf(m, s);
    const float p = expf(s - m_new);
    l = l * expf(m - m_new) + p;
    // TODO: when the max grows, what acc holds was weighted against the old max
    for (int d = 0; d < D; ++d) acc[d] += p * __bfloat162float(V[(long long)j * D + d]);
    m = m_new;
  }
  for (int d = 0; d < D; ++d) o[head + (long long)i * D + d] = __float2bfloat16(acc[d] / l);
}
