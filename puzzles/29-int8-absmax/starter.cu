// 29 · Int8 absmax quantization, one block per row (BLOCK threads):
//     s = max|x| / 127              (scale[row]; a row whose s is 0 gets q = 0)
//     q = rint(x / s), clamped to [-127, 127]     (int8; rint rounds half to even)
//     y = q * s                     (the dequantized row)

extern "C" __global__ void int8_absmax(const float* x, signed char* q, float* scale, float* y,
                                       int rows, int cols) {
  const long long base = (long long)blockIdx.x * cols;

  float amax = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) amax = fmaxf(amax, fabsf(x[base + c]));
  // TODO: amax is this thread's part of the row; every thread needs the whole row's maximum
  // (warp shuffles and a shared exchange, as in puzzle 02, with fmaxf instead of +).

  const float s = amax / 127.0f;
  if (threadIdx.x == 0) scale[blockIdx.x] = s;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    int v = (int)roundf(x[base + c] / s);  // TODO: roundf rounds half away from zero; a row of
                                           // zeros divides 0 by 0; and clamp to +-127
    q[base + c] = (signed char)v;
    y[base + c] = v * s;
  }
}
