// First attempt · f23-scan-one-thread · 11-inclusive-scan
// What: the three kernels each done by one thread per block: thread 0 sums its tile from global
// memory, thread 0 of one block turns the tile sums into offsets, and thread 0 of each block walks
// its tile again, storing the running sum after every element.
// Naive pattern: long dependent chains: x and y may alias, so every load waits for the store
// before it, and a tile of BLOCK * ITEMS elements is one chain of load, add, store.
// @tune BLOCK=256
// @tune ITEMS=4

extern "C" __global__ void scan_reduce(const float* x, float* sums, int n) {
  if (threadIdx.x != 0) return;
  const long long base = (long long)blockIdx.x * BLOCK * ITEMS;
  float t = 0.0f;
  for (long long i = base; i < base + BLOCK * ITEMS && i < n; ++i) t += x[i];
  sums[blockIdx.x] = t;
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
  if (threadIdx.x != 0) return;
  const long long base = (long long)blockIdx.x * BLOCK * ITEMS;
  float run = sums[blockIdx.x];
  for (long long i = base; i < base + BLOCK * ITEMS && i < n; ++i) {
    run += x[i];
    y[i] = run;
  }
}
