// First attempt · f14-hist-shared-atomic-1024 · 10-histogram
// What: one shared 256-bin histogram per block of 1024 threads; every byte is added with a shared
// atomicAdd in a grid-stride loop, and the block's non-zero bins go to `bins` with global atomics.
// Naive pattern: few-address shared-memory atomics: about half the lanes of each warp hit bin 0 in
// the same instruction, and 32 warps of the block share the one histogram.
// @tune BLOCK=1024
// @tune GRID=264

extern "C" __global__ void histogram(const unsigned char* data, unsigned int* bins, int n) {
  __shared__ unsigned int h[256];
  for (int k = threadIdx.x; k < 256; k += BLOCK) h[k] = 0u;
  __syncthreads();
  const long long step = (long long)gridDim.x * BLOCK;
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += step)
    atomicAdd(&h[data[i]], 1u);
  __syncthreads();
  for (int k = threadIdx.x; k < 256; k += BLOCK)
    if (h[k]) atomicAdd(&bins[k], h[k]);
}
