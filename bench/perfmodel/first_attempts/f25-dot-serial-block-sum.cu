// First attempt · f25-dot-serial-block-sum · 08-dot-product
// What: as many 1024-thread blocks as the puzzle allows, each thread adding the products of its
// grid-stride share; thread 0 of each block then adds the block's 1024 values from shared memory in
// a serial loop, and dot_final adds the 65535 partials with one thread.
// Naive pattern: serial dependent loops: 1023 FADDs in one chain per block while 31 warps wait,
// and a 65535-long chain in the final kernel.
// @tune BLOCK=1024
// @tune GRID=65535

extern "C" __global__ void dot_partial(const float* a, const float* b, float* partial, int n) {
  __shared__ float part[BLOCK];
  const long long step = (long long)gridDim.x * BLOCK;
  float s = 0.0f;
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += step)
    s += a[i] * b[i];
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int k = 0; k < BLOCK; ++k) t += part[k];
    partial[blockIdx.x] = t;
  }
}

extern "C" __global__ void dot_final(const float* partial, float* out, int parts) {
  if (threadIdx.x != 0) return;
  float s = 0.0f;
  for (int k = 0; k < parts; ++k) s += partial[k];
  out[0] = s;
}
