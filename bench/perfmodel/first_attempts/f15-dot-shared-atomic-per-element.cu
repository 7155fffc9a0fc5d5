// First attempt · f15-dot-shared-atomic-per-element · 08-dot-product
// What: each block accumulates every product a[i] * b[i] of its grid-stride share straight into
// one __shared__ float with atomicAdd; thread 0 writes the block's partial; dot_final adds the
// partials with one thread.
// Naive pattern: same-address shared atomics on every element (32 serialised updates per warp
// instruction), then a serial loop for the final sum.
// @tune BLOCK=256
// @tune GRID=1024

extern "C" __global__ void dot_partial(const float* a, const float* b, float* partial, int n) {
  __shared__ float acc;
  if (threadIdx.x == 0) acc = 0.0f;
  __syncthreads();
  const long long step = (long long)gridDim.x * BLOCK;
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += step)
    atomicAdd(&acc, a[i] * b[i]);
  __syncthreads();
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

extern "C" __global__ void dot_final(const float* partial, float* out, int parts) {
  if (threadIdx.x != 0) return;
  float s = 0.0f;
  for (int k = 0; k < parts; ++k) s += partial[k];
  out[0] = s;
}
