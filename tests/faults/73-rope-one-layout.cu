// fault: RoPE that always pairs (i, i + dim/2): right for NeoX, wrong for GPT-J's (2i, 2i + 1)
// puzzle: 26-rope
// sim: wrong_answer | elements of y are wrong | GPT-J
// gpu: same
#include <cuda_bf16.h>

extern "C" __global__ void rope(const __nv_bfloat16* x, const int* pos, __nv_bfloat16* y,
                                int tokens, int heads, int dim, int interleaved) {
  const int half = dim / 2;
  const int t = blockIdx.x;
  if (t >= tokens) return;
  for (int k = threadIdx.x; k < heads * half; k += blockDim.x) {
    const int h = k / half, i = k % half;
    float s, c;
    sincosf((float)pos[t] * (float)pow(10000.0, -2.0 * i / dim), &s, &c);
    const long long row = ((long long)t * heads + h) * dim;
    const float x0 = __bfloat162float(x[row + i]), x1 = __bfloat162float(x[row + i + half]);
    y[row + i] = __float2bfloat16(x0 * c - x1 * s);
    y[row + i + half] = __float2bfloat16(x0 * s + x1 * c);
  }
}
