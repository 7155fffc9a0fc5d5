// fault: paged decode attention that reads a page as [Hkv][16][D] (head-major, as vLLM's older kernels laid it out) instead of [16][Hkv][D]
// puzzle: 25-paged-decode-attention
// sim: wrong_answer | elements of out are wrong | Hq = Hkv
// gpu: same
// Right wherever Hkv = 1 (the first two cases): the two layouts only differ with several KV heads.
#include <cuda_bf16.h>

extern "C" __global__ void decode_split(const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                                        const __nv_bfloat16* v_cache, const int* block_table,
                                        const int* lens, float* part, __nv_bfloat16* out, int B,
                                        int Hq, int Hkv, int D, int max_blocks) {
  if (blockIdx.x != 0) return;
  const int h = blockIdx.y, b = blockIdx.z, G = Hq / Hkv, n = lens[b];
  const float scale = 1.0f / sqrtf((float)D);
  for (int t = threadIdx.x; t < G * D; t += blockDim.x) {
    const int hq = h * G + t / D, d = t % D;
    const __nv_bfloat16* qr = q + ((long long)b * Hq + hq) * D;
    float m = -INFINITY, l = 0, acc = 0;
    for (int j = 0; j < n; ++j) {
      const long long page = block_table[(long long)b * max_blocks + j / 16];
      const long long row = ((page * Hkv + h) * 16 + j % 16) * D; // the bug: head-major
      float s = 0;
      for (int e = 0; e < D; ++e) s += __bfloat162float(qr[e]) * __bfloat162float(k_cache[row + e]);
      s *= scale;
      const float mn = fmaxf(m, s), c = expf(m - mn), p = expf(s - mn);
      l = l * c + p;
      acc = acc * c + p * __bfloat162float(v_cache[row + d]);
      m = mn;
    }
    out[((long long)b * Hq + hq) * D + d] = __float2bfloat16(acc / l);
  }
}

extern "C" __global__ void decode_combine(const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                                          const __nv_bfloat16* v_cache, const int* block_table,
                                          const int* lens, float* part, __nv_bfloat16* out, int B,
                                          int Hq, int Hkv, int D, int max_blocks) {}
