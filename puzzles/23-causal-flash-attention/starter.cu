// 23 · Causal FlashAttention with GQA. For sequence b, query head h (KV head h / (Hq / Hkv)):
//   o[b][h][i] = sum_{j <= i + Sk - Sq} softmax_j(dot(q[b][h][i], k[b][h / G][j]) / sqrt(D)) * v[b][h / G][j]
// q and o are [B][Hq][Sq][D], k and v [B][Hkv][Sk][D], all bf16; D is 64 or 128; G = Hq / Hkv.
// The Sq queries are the last Sq of the Sk positions (Sq <= Sk: new tokens over a cache).
// Block (x, y) is head y % Hq of sequence y / Hq; this starter gives it query tile x (rows
// x*BQ .. x*BQ + BQ - 1; any one-to-one choice of tile is allowed), with 2*BQ threads. BQ and SMEM (dynamic shared memory, bytes) are compile-time constants:
// // @tune BQ=128, // @tune SMEM=87040.
// This starter gives one thread to each query row, walks the keys one at a time with an online
// softmax in f32 (no tensor cores, K and V read once per row): slow, and wrong in one place.
#include <cuda_bf16.h>

extern "C" __global__ void causal_flash_attention(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                                  const __nv_bfloat16* v, __nv_bfloat16* o, int B, int Hq,
                                                  int Hkv, int Sq, int Sk, int D) {
  const int i = blockIdx.x * BQ + threadIdx.x;
  if (threadIdx.x >= BQ || i >= Sq) return;
  const int b = blockIdx.y / Hq, h = blockIdx.y % Hq, hkv = h / (Hq / Hkv);
  const long long qhead = ((long long)b * Hq + h) * Sq * D, kvhead = ((long long)b * Hkv + hkv) * Sk * D;
  const __nv_bfloat16 *qi = q + qhead + (long long)i * D, *K = k + kvhead, *V = v + kvhead;
  const float scale = 1.0f / sqrtf((float)D);
  float acc[128]; // D <= 128
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  for (int j = 0; j < Sk; ++j) { // TODO: causal: query i, at position i + Sk - Sq, sees keys up to there
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s += __bfloat162float(qi[d]) * __bfloat162float(K[(long long)j * D + d]);
    s *= scale;
    const float m_new = fmaxf(m, s), c = expf(m - m_new), p = expf(s - m_new);
    l = l * c + p;
    for (int d = 0; d < D; ++d) acc[d] = acc[d] * c + p * __bfloat162float(V[(long long)j * D + d]);
    m = m_new;
  }
  for (int d = 0; d < D; ++d) o[qhead + (long long)i * D + d] = __float2bfloat16(acc[d] / l);
}
