// Warp-shuffle reduction: each warp sums its 32 values with __shfl_down_sync, lane 0 adds the
// warp's sum to *out with atomicAdd; also the max with __shfl_xor_sync into maxes[warp].
extern "C" __global__ void warp_reduce(const float* in, float* out, float* maxes, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  float m = i < n ? in[i] : -1e30f;
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(out, v);
    maxes[i / 32] = m;
  }
}
