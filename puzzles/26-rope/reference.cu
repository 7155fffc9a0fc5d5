// Reference: one thread per (head, pair) of each of the block's tokens, in double wherever the
// definition allows it. What is fixed by the definition (and by PyTorch, which forms the angle the
// same way) stays f32: inv_freq is theta^(-2i/dim) rounded once to f32, and the angle is the f32
// product float(pos) * inv_freq. Its cosine and sine, and the rotation, are double; y is rounded
// once to bf16.
#include <cuda_bf16.h>

// cos and sin of an f32 angle (|a| < 2^20) to about 1e-16, through sincospi (whose reduction is
// exact): a / pi as hi + lo in double-double, the whole half-turns n taken off exactly.
// (double sin/cos would do, but their slow path for huge arguments uses carry instructions the
// simulator does not implement.)
__device__ void cos_sin(float a, double* c, double* s) {
  const double inv_pi_hi = 0.31830988618379069, inv_pi_lo = -1.9678676675182486e-17;
  const double hi = (double)a * inv_pi_hi;
  const double lo = fma((double)a, inv_pi_hi, -hi) + (double)a * inv_pi_lo;
  const double n = rint(hi);
  sincospi((hi - n) + lo, s, c); // hi - n is exact
  if ((long long)n & 1) *s = -*s, *c = -*c;
}

extern "C" __global__ void rope(const __nv_bfloat16* x, const int* pos, __nv_bfloat16* y,
                                int tokens, int heads, int dim, int interleaved) {
  const int half = dim / 2;
  const int per = (tokens + gridDim.x - 1) / gridDim.x; // tokens per block, whatever TOK is
  for (int t = blockIdx.x * per; t < tokens && t < (blockIdx.x + 1) * per; ++t) {
    for (int k = threadIdx.x; k < heads * half; k += blockDim.x) {
      const int h = k / half, i = k % half;
      const float inv_freq = (float)pow(10000.0, -2.0 * i / dim);
      const float angle = (float)pos[t] * inv_freq; // one f32 multiply, rounded to nearest
      double c, s;
      cos_sin(angle, &c, &s);
      const long long row = ((long long)t * heads + h) * dim;
      const int a = interleaved ? 2 * i : i;             // the pair's first element
      const int b = interleaved ? 2 * i + 1 : i + half;  // and its partner
      const double x0 = __bfloat162float(x[row + a]), x1 = __bfloat162float(x[row + b]);
      y[row + a] = __double2bfloat16(x0 * c - x1 * s);
      y[row + b] = __double2bfloat16(x0 * s + x1 * c);
    }
  }
}
