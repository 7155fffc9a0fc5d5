// 26 · RoPE: rotate each pair (x0, x1) of every head of token t by the angle
//   angle = float(pos[t]) * inv_freq[i] (an f32 multiply),   inv_freq[i] = 10000^(-2i/dim) rounded
//   once to f32,
//   y0 = x0 cos(angle) - x1 sin(angle),   y1 = x0 sin(angle) + x1 cos(angle).
// interleaved = 0 (NeoX / Llama): pair i is elements (i, i + dim/2) of the head.
// interleaved = 1 (GPT-J):        pair i is elements (2i, 2i + 1).
// x and y are [tokens][heads][dim] bf16; pos is one i32 per token. Block b owns tokens
// b*TOK .. b*TOK + TOK - 1 (TOK is a tunable, 1 by default).
#include <cuda_bf16.h>

extern "C" __global__ void rope(const __nv_bfloat16* x, const int* pos, __nv_bfloat16* y,
                                int tokens, int heads, int dim, int interleaved) {
  const int half = dim / 2;
  const int t = blockIdx.x; // TODO: TOK tokens per block, not one
  if (t >= tokens) return;
  for (int k = threadIdx.x; k < heads * half; k += blockDim.x) {
    const int h = k / half, i = k % half;
    // TODO: inv_freq must be the f32 nearest to 10000^(-2i/dim); f32 powf can be an ulp off
    const float inv_freq = powf(10000.0f, -2.0f * i / dim);
    const float angle = (float)t * inv_freq; // TODO: the token's position is pos[t], not t
    // TODO: __sinf / __cosf are fast but lose accuracy as the angle grows (positions reach 131071)
    const float c = __cosf(angle), s = __sinf(angle);
    const long long row = ((long long)t * heads + h) * dim;
    // TODO: this is the NeoX layout only; honour `interleaved`
    const float x0 = __bfloat162float(x[row + i]), x1 = __bfloat162float(x[row + i + half]);
    y[row + i] = __float2bfloat16(x0 * c - x1 * s);
    y[row + i + half] = __float2bfloat16(x0 * s + x1 * c);
  }
}
