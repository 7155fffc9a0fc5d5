// fault: no 1e-10 floor under amax: a row of zeros divides 0 by 0 and stores NaN codes
// puzzle: 30-fp8-e4m3-quantize
// sim: wrong_answer | NaN | all zeros
// gpu: same
// note: every row with data passes; the all-zeros case gets NaN, and the below-the-floor case gets the wrong scale
#include <cuda_fp8.h>

__device__ float block_max(float v) {
  __shared__ float buf[32];
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) buf[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < (blockDim.x >> 5) ? buf[threadIdx.x & 31] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

extern "C" __global__ void fp8_quantize(const float* x, const float* static_scale,
                                        __nv_fp8_e4m3* q, float* scale, int rows, int cols) {
  const long long base = (long long)blockIdx.x * cols;
  float s = static_scale[blockIdx.x];
  if (!(s > 0.0f)) {
    float amax = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) amax = fmaxf(amax, fabsf(x[base + c]));
    s = block_max(amax) / 448.0f;
  }
  if (threadIdx.x == 0) scale[blockIdx.x] = s;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    q[base + c].__x = __nv_cvt_float_to_fp8(x[base + c] / s, __NV_SATFINITE, __NV_E4M3);
}
