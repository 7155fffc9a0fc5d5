// Reference: one thread per (head, pair) of each of the block's TOK tokens, in double wherever the
// definition allows it. What is fixed by the definition (and by PyTorch, which forms the angle the
// same way) stays f32: inv_freq is theta^(-2i/dim) rounded once to f32, and the angle is the f32
// product float(pos) * inv_freq. Its cosine and sine, and the rotation, are double; y is rounded
// once to bf16.
#include <cuda_bf16.h>

extern "C" __global__ void rope(const __nv_bfloat16* x, const int* pos, __nv_bfloat16* y,
                                int tokens, int heads, int dim, int interleaved) {
  const int half = dim / 2;
  for (int t = blockIdx.x * TOK; t < tokens && t < (blockIdx.x + 1) * TOK; ++t) {
    for (int k = threadIdx.x; k < heads * half; k += blockDim.x) {
      const int h = k / half, i = k % half;
      const float inv_freq = (float)pow(10000.0, -2.0 * i / dim);
      const float angle = (float)pos[t] * inv_freq; // one f32 multiply, rounded to nearest
      const double c = cos((double)angle), s = sin((double)angle);
      const long long row = ((long long)t * heads + h) * dim;
      const int a = interleaved ? 2 * i : i;             // the pair's first element
      const int b = interleaved ? 2 * i + 1 : i + half;  // and its partner
      const double x0 = __bfloat162float(x[row + a]), x1 = __bfloat162float(x[row + b]);
      y[row + a] = __double2bfloat16(x0 * c - x1 * s);
      y[row + b] = __double2bfloat16(x0 * s + x1 * c);
    }
  }
}
