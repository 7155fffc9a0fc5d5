// fault: rounds x / s half away from zero (roundf, as llama.cpp does) where the puzzle asks for half to even
// puzzle: 29-int8-absmax
// sim: wrong_answer | elements of q are wrong
// gpu: same
// note: right everywhere except where x / s is exactly k + 0.5; the ties cases make those common
__device__ float block_max(float v) {
  __shared__ float buf[32];
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) buf[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < (blockDim.x >> 5) ? buf[threadIdx.x & 31] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

extern "C" __global__ void int8_absmax(const float* x, signed char* q, float* scale, float* y,
                                       int rows, int cols) {
  const long long base = (long long)blockIdx.x * cols;
  float amax = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) amax = fmaxf(amax, fabsf(x[base + c]));
  const float s = block_max(amax) / 127.0f;
  if (threadIdx.x == 0) scale[blockIdx.x] = s;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    int v = s != 0.0f ? (int)fminf(fmaxf(roundf(x[base + c] / s), -127.0f), 127.0f) : 0;
    q[base + c] = (signed char)v;
    y[base + c] = v * s;
  }
}
