// Histogram of bytes into 256 bins: per-block counts with shared-memory atomics, merged into the
// global histogram with global atomicAdd.
extern "C" __global__ void histogram(const unsigned char* data, unsigned int* hist, int n) {
  __shared__ unsigned int local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x)
    if (local[b]) atomicAdd(&hist[b], local[b]);
}
