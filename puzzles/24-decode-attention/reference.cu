// Reference: the definition, step by step, in double. decode_split computes every score
// s[b][hq][j] = scale * dot(q[b][hq], k[b][j][hq / G]) for j < lens[b] (one thread per score,
// grid-stride over all of them) and keeps it, as a double, in the workspace. decode_combine, one
// block per (query head, sequence): the max of the scores; the weights exp(s - max), one key per
// thread, in place; then thread d sums l = sum of the weights and acc = sum of weight * v[..][d],
// and writes acc / l, rounded once to bf16. Slots at or past lens[b] are never read.
#include <cuda_bf16.h>

extern "C" __global__ void decode_split(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                        const __nv_bfloat16* v, const int* lens, float* part,
                                        __nv_bfloat16* out, int B, int Hq, int Hkv, int L, int D) {
  double* score = reinterpret_cast<double*>(part); // [B][Hq][L]
  const double scale = 1.0 / sqrt((double)D);
  const int G = Hq / Hkv;
  const long long block = blockIdx.x + (long long)gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const long long stride = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x;
  const long long total = (long long)B * Hq * L;
  for (long long i = block * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int j = (int)(i % L), hq = (int)(i / L % Hq), b = (int)(i / L / Hq);
    if (j >= lens[b]) continue;
    const __nv_bfloat16* qr = q + ((long long)b * Hq + hq) * D;
    const __nv_bfloat16* kr = k + (((long long)b * L + j) * Hkv + hq / G) * D;
    double dot = 0;
    for (int d = 0; d < D; ++d) dot += (double)__bfloat162float(qr[d]) * (double)__bfloat162float(kr[d]);
    score[i] = dot * scale;
  }
}

extern "C" __global__ void decode_combine(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                          const __nv_bfloat16* v, const int* lens, float* part,
                                          __nv_bfloat16* out, int B, int Hq, int Hkv, int L, int D) {
  const int hq = blockIdx.x, b = blockIdx.y, G = Hq / Hkv, n = lens[b];
  double* s = reinterpret_cast<double*>(part) + ((long long)b * Hq + hq) * L;
  double m = -INFINITY;
  for (int j = 0; j < n; ++j) m = fmax(m, s[j]);
  __syncthreads(); // every thread has read the scores before any is replaced by its weight
  for (int j = threadIdx.x; j < n; j += blockDim.x) s[j] = exp(s[j] - m);
  __syncthreads();
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    double l = 0, acc = 0;
    for (int j = 0; j < n; ++j) {
      l += s[j];
      acc += s[j] * (double)__bfloat162float(v[(((long long)b * L + j) * Hkv + hq / G) * D + d]);
    }
    out[((long long)b * Hq + hq) * D + d] = __double2bfloat16(acc / l);
  }
}
