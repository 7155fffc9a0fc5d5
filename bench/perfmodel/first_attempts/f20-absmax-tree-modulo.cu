// First attempt · f20-absmax-tree-modulo · 29-int8-absmax
// What: one 512-thread block per row; each thread's strided |x| maximum goes through a t % (2 *
// stride) shared-memory tree with a barrier per step; then every thread quantises and dequantises
// its strided share of the row with the row's scale.
// Naive pattern: a barrier-heavy block reduction with one busy warp at the end of the tree.
// @tune BLOCK=512

extern "C" __global__ void int8_absmax(const float* x, signed char* q, float* scale, float* y,
                                       int rows, int cols) {
  __shared__ float part[BLOCK];
  const long long base = (long long)blockIdx.x * cols;
  const int t = threadIdx.x;
  float m = 0.0f;
  for (int c = t; c < cols; c += BLOCK) m = fmaxf(m, fabsf(x[base + c]));
  part[t] = m;
  __syncthreads();
  for (int stride = 1; stride < BLOCK; stride *= 2) {
    if (t % (2 * stride) == 0) part[t] = fmaxf(part[t], part[t + stride]);
    __syncthreads();
  }
  const float amax = part[0];
  const float s = amax / 127.0f;
  if (t == 0) scale[blockIdx.x] = s;
  for (int c = t; c < cols; c += BLOCK) {
    const int v = s != 0.0f ? max(-127, min(127, __float2int_rn(x[base + c] / s))) : 0;
    q[base + c] = (signed char)v;
    y[base + c] = v * s; // exact product of a 7-bit and a 24-bit value, rounded once
  }
}
