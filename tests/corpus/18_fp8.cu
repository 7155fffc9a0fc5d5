// fp8 conversions: e4m3[i] and e5m2[i] = x[i] rounded to FP8 with saturation to the largest finite
// value, back[i] and back2[i] = those values converted back to float.
#include <cuda_fp8.h>
extern "C" __global__ void fp8_convert(const float* x, unsigned char* e4m3, unsigned char* e5m2,
                                       float* back, float* back2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nv_fp8_e4m3 a(x[i]);
  __nv_fp8_e5m2 b(x[i]);
  e4m3[i] = a.__x;
  e5m2[i] = b.__x;
  back[i] = float(a);
  back2[i] = float(b);
}
