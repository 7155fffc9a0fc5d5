// First attempt · f24-scan-serial-block-offsets · 11-inclusive-scan
// What: each thread owns ITEMS consecutive elements; the threads' totals go to shared memory and
// thread 0 turns them into offsets with a serial loop; one thread scans the tile totals; each
// thread then writes its ITEMS outputs with a running sum.
// Naive pattern: serial loops in the middle of a parallel kernel (thread 0 walks BLOCK shared
// values while the block waits at a barrier) and per-thread walks (lanes ITEMS elements apart).
// @tune BLOCK=256
// @tune ITEMS=8

extern "C" __global__ void scan_reduce(const float* x, float* sums, int n) {
  __shared__ float part[BLOCK];
  const long long base = ((long long)blockIdx.x * BLOCK + threadIdx.x) * ITEMS;
  float t = 0.0f;
  for (int j = 0; j < ITEMS; ++j)
    if (base + j < n) t += x[base + j];
  part[threadIdx.x] = t;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int k = 0; k < BLOCK; ++k) s += part[k];
    sums[blockIdx.x] = s;
  }
}

extern "C" __global__ void scan_sums(float* sums, int tiles) {
  if (threadIdx.x != 0) return;
  float run = 0.0f;
  for (int k = 0; k < tiles; ++k) {
    const float t = sums[k];
    sums[k] = run;
    run += t;
  }
}

extern "C" __global__ void scan_final(const float* x, float* y, float* sums, int n) {
  __shared__ float part[BLOCK];
  const long long base = ((long long)blockIdx.x * BLOCK + threadIdx.x) * ITEMS;
  float t = 0.0f;
  for (int j = 0; j < ITEMS; ++j)
    if (base + j < n) t += x[base + j];
  part[threadIdx.x] = t;
  __syncthreads();
  if (threadIdx.x == 0) {
    float run = sums[blockIdx.x];
    for (int k = 0; k < BLOCK; ++k) {
      const float v = part[k];
      part[k] = run;
      run += v;
    }
  }
  __syncthreads();
  float run = part[threadIdx.x];
  for (int j = 0; j < ITEMS; ++j)
    if (base + j < n) {
      run += x[base + j];
      y[base + j] = run;
    }
}
