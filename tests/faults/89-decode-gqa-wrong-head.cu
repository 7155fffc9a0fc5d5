// fault: decode attention that maps query head hq to KV head hq % Hkv (interleaved) instead of hq / (Hq / Hkv) (grouped)
// puzzle: 24-decode-attention
// sim: wrong_answer | elements of out are wrong
// gpu: same
// Correct wherever Hq = Hkv, so it passes those cases; with groups it reads the wrong KV head.
#include <cuda_bf16.h>

extern "C" __global__ void decode_split(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                        const __nv_bfloat16* v, const int* lens, float* part,
                                        __nv_bfloat16* out, int B, int Hq, int Hkv, int L, int D) {
  if (blockIdx.x != 0 || blockIdx.y != 0) return;
  const int b = blockIdx.z, n = lens[b];
  const float scale = 1.0f / sqrtf((float)D);
  for (int t = threadIdx.x; t < Hq * D; t += blockDim.x) {
    const int hq = t / D, d = t % D, h = hq % Hkv; // the bug
    const __nv_bfloat16* qr = q + ((long long)b * Hq + hq) * D;
    float m = -INFINITY, l = 0, acc = 0;
    for (int j = 0; j < n; ++j) {
      const long long row = (((long long)b * L + j) * Hkv + h) * D;
      float s = 0;
      for (int e = 0; e < D; ++e) s += __bfloat162float(qr[e]) * __bfloat162float(k[row + e]);
      s *= scale;
      const float mn = fmaxf(m, s), c = expf(m - mn), p = expf(s - mn);
      l = l * c + p;
      acc = acc * c + p * __bfloat162float(v[row + d]);
      m = mn;
    }
    out[((long long)b * Hq + hq) * D + d] = __float2bfloat16(acc / l);
  }
}

extern "C" __global__ void decode_combine(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                          const __nv_bfloat16* v, const int* lens, float* part,
                                          __nv_bfloat16* out, int B, int Hq, int Hkv, int L, int D) {}
