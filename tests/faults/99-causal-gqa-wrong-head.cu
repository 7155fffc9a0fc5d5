// fault: causal GQA attention that maps query head h to KV head h % Hkv (interleaved) instead of h / (Hq / Hkv) (grouped)
// puzzle: 23-causal-flash-attention
// sim: wrong_answer | elements of o are wrong
// gpu: same
// The same wherever Hkv = 1 or Hq = Hkv, so those cases pass; with groups and several KV heads
// it reads the wrong KV head.
#include <cuda_bf16.h>

extern "C" __global__ void causal_flash_attention(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                                  const __nv_bfloat16* v, __nv_bfloat16* o, int B, int Hq,
                                                  int Hkv, int Sq, int Sk, int D) {
  const int i = blockIdx.x * BQ + threadIdx.x;
  if (threadIdx.x >= BQ || i >= Sq) return;
  const int b = blockIdx.y / Hq, h = blockIdx.y % Hq, hkv = h % Hkv; // the bug
  const long long qhead = ((long long)b * Hq + h) * Sq * D, kvhead = ((long long)b * Hkv + hkv) * Sk * D;
  const __nv_bfloat16 *qi = q + qhead + (long long)i * D, *K = k + kvhead, *V = v + kvhead;
  const float scale = 1.0f / sqrtf((float)D);
  float acc[128];
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  for (int j = 0; j <= i + Sk - Sq; ++j) {
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
