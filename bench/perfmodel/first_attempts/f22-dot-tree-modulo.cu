// First attempt · f22-dot-tree-modulo · 08-dot-product
// What: each block's threads sum their grid-stride products, then reduce them in shared memory
// with the interleaved tree (t % (2 * stride) == 0) and a barrier per step; dot_final does the
// same tree over the partials in one block.
// Naive pattern: barrier-heavy block reductions with divergent scattered threads.
// @tune BLOCK=512
// @tune GRID=1024

extern "C" __global__ void dot_partial(const float* a, const float* b, float* partial, int n) {
  __shared__ float part[BLOCK];
  const int t = threadIdx.x;
  const long long step = (long long)gridDim.x * BLOCK;
  float s = 0.0f;
  for (long long i = (long long)blockIdx.x * BLOCK + t; i < n; i += step) s += a[i] * b[i];
  part[t] = s;
  __syncthreads();
  for (int stride = 1; stride < BLOCK; stride *= 2) {
    if (t % (2 * stride) == 0) part[t] += part[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = part[0];
}

extern "C" __global__ void dot_final(const float* partial, float* out, int parts) {
  __shared__ float part[BLOCK];
  const int t = threadIdx.x;
  float s = 0.0f;
  for (int k = t; k < parts; k += BLOCK) s += partial[k];
  part[t] = s;
  __syncthreads();
  for (int stride = 1; stride < BLOCK; stride *= 2) {
    if (t % (2 * stride) == 0) part[t] += part[t + stride];
    __syncthreads();
  }
  if (t == 0) out[0] = part[0];
}
