// __half and half2 arithmetic: out[i] = a[i] * b[i] + a[i] in half2 pairs (hfma2), plus a scalar
// half path for the odd tail, and a float conversion of the pair's sum into f[i/2].
#include <cuda_fp16.h>
extern "C" __global__ void half_ops(const __half* a, const __half* b, __half* out, float* f,
                                    int n) {
  int p = blockIdx.x * blockDim.x + threadIdx.x; // pair index
  if (2 * p + 1 < n) {
    __half2 x = reinterpret_cast<const __half2*>(a)[p];
    __half2 y = reinterpret_cast<const __half2*>(b)[p];
    __half2 r = __hfma2(x, y, x);
    reinterpret_cast<__half2*>(out)[p] = r;
    f[p] = __low2float(r) + __high2float(r);
  } else if (2 * p < n) {
    __half x = a[2 * p], y = b[2 * p];
    __half r = __hadd(__hmul(x, y), x);
    out[2 * p] = r;
    f[p] = __half2float(r);
  }
}
