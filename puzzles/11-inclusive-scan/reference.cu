// Reference: reduce, scan the tile totals, then scan each tile from its offset. The serial parts
// are done by one thread in double precision, from shared memory.

extern "C" __global__ void scan_reduce(const float* x, float* sums, int n) {
  if (threadIdx.x != 0) return;
  long long base = (long long)blockIdx.x * BLOCK * ITEMS;
  double t = 0.0;
  for (long long i = base; i < base + BLOCK * ITEMS && i < n; ++i) t += x[i];
  sums[blockIdx.x] = (float)t;
}

// sums[0 .. tiles-1] becomes the exclusive prefix: the total of all earlier tiles.
extern "C" __global__ void scan_sums(float* sums, int tiles) {
  if (threadIdx.x != 0) return;
  double run = 0.0;
  for (int k = 0; k < tiles; ++k) {
    double t = sums[k];
    sums[k] = (float)run;
    run += t;
  }
}

extern "C" __global__ void scan_final(const float* x, float* y, float* sums, int n) {
  __shared__ float s[BLOCK * ITEMS];
  long long base = (long long)blockIdx.x * BLOCK * ITEMS;
  for (int j = threadIdx.x; j < BLOCK * ITEMS; j += blockDim.x) s[j] = base + j < n ? x[base + j] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    double acc = sums[blockIdx.x];
    for (int j = 0; j < BLOCK * ITEMS; ++j) {
      acc += s[j];
      s[j] = (float)acc;
    }
  }
  __syncthreads();
  for (int j = threadIdx.x; j < BLOCK * ITEMS; j += blockDim.x)
    if (base + j < n) y[base + j] = s[j];
}
