// fault: decode attention that reads whole tiles of 32 keys and masks the tail by a weight of 0: 0 * NaN past lens[b] is NaN
// puzzle: 24-decode-attention
// sim: wrong_answer | NaN | one key long
// gpu: same
// Everything in the blocks of chunk 0, one thread per (query head of the group, element): the max
// over the valid keys, then sums over the keys rounded up to a tile of 32 (clamped to L), with the
// keys past lens[b] weighted 0. The padding holds NaN in two cases, and 0 * NaN = NaN.
#include <cuda_bf16.h>

extern "C" __global__ void decode_split(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                        const __nv_bfloat16* v, const int* lens, float* part,
                                        __nv_bfloat16* out, int B, int Hq, int Hkv, int L, int D) {
  if (blockIdx.x != 0) return;
  const int h = blockIdx.y, b = blockIdx.z, G = Hq / Hkv, n = lens[b];
  const int tiled = min(L, (n + 31) / 32 * 32);
  const float scale = 1.0f / sqrtf((float)D);
  for (int t = threadIdx.x; t < G * D; t += blockDim.x) {
    const int hq = h * G + t / D, d = t % D;
    const __nv_bfloat16* qr = q + ((long long)b * Hq + hq) * D;
    float m = -INFINITY;
    for (int j = 0; j < n; ++j) {
      const long long row = (((long long)b * L + j) * Hkv + h) * D;
      float s = 0;
      for (int e = 0; e < D; ++e) s += __bfloat162float(qr[e]) * __bfloat162float(k[row + e]);
      m = fmaxf(m, s * scale);
    }
    float l = 0, acc = 0;
    for (int j = 0; j < tiled; ++j) {
      const long long row = (((long long)b * L + j) * Hkv + h) * D;
      float p = 0;
      if (j < n) {
        float s = 0;
        for (int e = 0; e < D; ++e) s += __bfloat162float(qr[e]) * __bfloat162float(k[row + e]);
        p = expf(s * scale - m);
      }
      l += p;
      acc += p * __bfloat162float(v[row + d]); // the bug: v is loaded for masked keys too
    }
    out[((long long)b * Hq + hq) * D + d] = __float2bfloat16(acc / l);
  }
}

extern "C" __global__ void decode_combine(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                          const __nv_bfloat16* v, const int* lens, float* part,
                                          __nv_bfloat16* out, int B, int Hq, int Hkv, int L, int D) {}
