// fault: flash attention whose online softmax raises the running max per key tile but forgets to rescale o by exp(m_old - m_new)
// puzzle: 22-flash-attention
// sim: wrong_answer | elements of o are wrong
// gpu: same
// Right while the keys fit one 64-key tile (S <= 64: cases 1-4 pass); from the second tile on, the
// sums from earlier tiles keep their old, too large weights. The row sum l is rescaled, o is not.
#include <cuda_bf16.h>

extern "C" __global__ void flash_attention(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                           const __nv_bfloat16* v, __nv_bfloat16* o, int B, int H,
                                           int S, int D) {
  const int i = blockIdx.x * BQ + threadIdx.x;
  if (threadIdx.x >= BQ || i >= S) return;
  const long long head = (long long)blockIdx.y * S * D;
  const __nv_bfloat16 *qi = q + head + (long long)i * D, *K = k + head, *V = v + head;
  const float scale = 1.0f / sqrtf((float)D);
  float acc[128], s[64];
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  for (int j0 = 0; j0 < S; j0 += 64) {
    const int n = min(64, S - j0);
    float mt = m;
    for (int j = 0; j < n; ++j) {
      float x = 0.0f;
      for (int d = 0; d < D; ++d) x += __bfloat162float(qi[d]) * __bfloat162float(K[(long long)(j0 + j) * D + d]);
      s[j] = x * scale;
      mt = fmaxf(mt, s[j]);
    }
    l *= expf(m - mt); // ... and acc[d] *= expf(m - mt) is missing: the bug
    for (int j = 0; j < n; ++j) {
      const float p = expf(s[j] - mt);
      l += p;
      for (int d = 0; d < D; ++d) acc[d] += p * __bfloat162float(V[(long long)(j0 + j) * D + d]);
    }
    m = mt;
  }
  for (int d = 0; d < D; ++d) o[head + (long long)i * D + d] = __float2bfloat16(acc[d] / l);
}
