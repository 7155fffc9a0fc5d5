// Reference: the tanh form of GELU, element by element, in double precision.
#include <cuda_fp16.h>

extern "C" __global__ void gelu(const __half* x, __half* y, int n) {
  long long i0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  for (long long i = i0; i < i0 + VEC && i < n; ++i) {
    double v = (double)__half2float(x[i]);
    double u = 0.7978845608028654 * (v + 0.044715 * v * v * v); // sqrt(2 / pi) = 0.79788...
    double g = 0.5 * v * (1.0 + tanh(u));
    y[i] = __float2half((float)g);
  }
}
