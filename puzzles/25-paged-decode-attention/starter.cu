// 25 · Paged decode attention. Puzzle 24 with the cache in pages: k_cache and v_cache are a pool
// of [num_blocks][16][Hkv][D] bf16 pages, and token j of sequence b is slot j % 16 of page
// block_table[b][j / 16] (block_table is [B][max_blocks] i32). For each sequence b and query head
// hq (KV head h = hq / (Hq / Hkv)):
//   s[j] = dot(q[b][hq], k[token j][h]) / sqrt(D)        j = 0 .. lens[b] - 1
//   out[b][hq] = sum_j softmax(s)[j] * v[token j][h]
// Table entries past the sequence's last page, and slots past lens[b], are not yours to read.
// decode_split runs on the grid [cdiv(16 * max_blocks, CHUNK), Hkv, B], decode_combine on
// [Hq, B] with 128 threads; `part` is a workspace of f32.
// This starter does everything in decode_split's blocks of chunk 0, one thread per output
// element, and is wrong in three places.
#include <cuda_bf16.h>

extern "C" __global__ void decode_split(const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                                        const __nv_bfloat16* v_cache, const int* block_table,
                                        const int* lens, float* part, __nv_bfloat16* out, int B,
                                        int Hq, int Hkv, int D, int max_blocks) {
  if (blockIdx.x != 0) return; // TODO: the other chunks of keys have blocks too: split the work
  const int h = blockIdx.y, b = blockIdx.z, G = Hq / Hkv;
  const float scale = 1.0f / sqrtf((float)D);
  const int n = lens[b];
  for (int t = threadIdx.x; t < G * D; t += blockDim.x) {
    const int hq = h * G + t / D, d = t % D;
    const __nv_bfloat16* qr = q + ((long long)b * Hq + hq) * D;
    float m = -INFINITY, l = 0, acc = 0;
    for (int j = 0; j < n; ++j) {
      // TODO: the pages are not in order: the page is block_table[b][j / 16], not b * max_blocks + j / 16
      const int page = b * max_blocks + j / 16;
      // TODO: page * 16 * Hkv * D passes 2^31 in a large pool: compute offsets in 64 bits
      const int row = ((page * 16 + j % 16) * Hkv + h) * D;
      float s = 0;
      for (int e = 0; e < D; ++e) s += __bfloat162float(qr[e]) * __bfloat162float(k_cache[row + e]);
      s *= scale;
      const float mn = fmaxf(m, s), c = __expf(m - mn), p = __expf(s - mn);
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
                                          int Hq, int Hkv, int D, int max_blocks) {
  // TODO: merge the partial results of the chunks here
}
