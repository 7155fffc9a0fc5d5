// fault: flash attention that forgets the 1/sqrt(D) scale of the scores (softmax of q . k instead of q . k / sqrt(D))
// puzzle: 22-flash-attention
// sim: wrong_answer | elements of o are wrong
// gpu: same
// With one key (S = 1) the weight is 1 whatever the scale, so the first two cases pass; from two
// keys on, the softmax is 8 to 11 times too sharp.
#include <cuda_bf16.h>

extern "C" __global__ void flash_attention(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                           const __nv_bfloat16* v, __nv_bfloat16* o, int B, int H,
                                           int S, int D) {
  const int i = blockIdx.x * BQ + threadIdx.x;
  if (threadIdx.x >= BQ || i >= S) return;
  const long long head = (long long)blockIdx.y * S * D;
  const __nv_bfloat16 *qi = q + head + (long long)i * D, *K = k + head, *V = v + head;
  float acc[128];
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  for (int j = 0; j < S; ++j) {
    float s = 0.0f; // the bug: never multiplied by 1 / sqrt(D)
    for (int d = 0; d < D; ++d) s += __bfloat162float(qi[d]) * __bfloat162float(K[(long long)j * D + d]);
    const float m_new = fmaxf(m, s), c = expf(m - m_new), p = expf(s - m_new);
    l = l * c + p;
    for (int d = 0; d < D; ++d) acc[d] = acc[d] * c + p * __bfloat162float(V[(long long)j * D + d]);
    m = m_new;
  }
  for (int d = 0; d < D; ++d) o[head + (long long)i * D + d] = __float2bfloat16(acc[d] / l);
}
