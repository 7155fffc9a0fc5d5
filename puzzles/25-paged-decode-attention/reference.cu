// Reference: puzzle 24's, step by step in double, with each key found through the block table:
// token j of sequence b is slot j % 16 of page block_table[b][j / 16], at element
// ((page * 16 + j % 16) * Hkv + h) * D of the pool, computed in 64 bits. decode_split keeps every
// score, as a double, in the workspace; decode_combine takes the max, turns the scores into
// weights in place, and thread d writes sum(w v[d]) / sum(w), rounded once to bf16. Table entries
// and slots past lens[b] are never read.
#include <cuda_bf16.h>

__device__ long long key_row(const int* block_table, int max_blocks, int b, int j, int Hkv, int h, int D) {
  const long long page = block_table[(long long)b * max_blocks + j / 16];
  return ((page * 16 + j % 16) * Hkv + h) * D;
}

extern "C" __global__ void decode_split(const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                                        const __nv_bfloat16* v_cache, const int* block_table,
                                        const int* lens, float* part, __nv_bfloat16* out, int B,
                                        int Hq, int Hkv, int D, int max_blocks) {
  double* score = reinterpret_cast<double*>(part); // [B][Hq][16 * max_blocks]
  const int L = 16 * max_blocks;
  const double scale = 1.0 / sqrt((double)D);
  const int G = Hq / Hkv;
  const long long block = blockIdx.x + (long long)gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const long long stride = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x;
  const long long total = (long long)B * Hq * L;
  for (long long i = block * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int j = (int)(i % L), hq = (int)(i / L % Hq), b = (int)(i / L / Hq);
    if (j >= lens[b]) continue;
    const __nv_bfloat16* qr = q + ((long long)b * Hq + hq) * D;
    const __nv_bfloat16* kr = k_cache + key_row(block_table, max_blocks, b, j, Hkv, hq / G, D);
    double dot = 0;
    for (int d = 0; d < D; ++d) dot += (double)__bfloat162float(qr[d]) * (double)__bfloat162float(kr[d]);
    score[i] = dot * scale;
  }
}

extern "C" __global__ void decode_combine(const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                                          const __nv_bfloat16* v_cache, const int* block_table,
                                          const int* lens, float* part, __nv_bfloat16* out, int B,
                                          int Hq, int Hkv, int D, int max_blocks) {
  const int hq = blockIdx.x, b = blockIdx.y, G = Hq / Hkv, n = lens[b], L = 16 * max_blocks;
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
      acc += s[j] * (double)__bfloat162float(v_cache[key_row(block_table, max_blocks, b, j, Hkv, hq / G, D) + d]);
    }
    out[((long long)b * Hq + hq) * D + d] = __double2bfloat16(acc / l);
  }
}
