// Held-out · h10-scan-hillis-steele · designed limiter: barrier
//
// What: the three-kernel scan with the textbook Hillis-Steele scan in shared memory, 1024-element
// tiles (BLOCK = 1024, ITEMS = 1). scan_reduce: each block sums its tile (shuffles + 32 warp
// sums). scan_sums: one block walks the tile totals 1024 at a time, Hillis-Steele-scans each
// chunk and carries the running total (exclusive prefixes written back). scan_final: each block
// loads its tile into shared memory, runs Hillis-Steele in place (10 steps, each: read s[t - d],
// barrier, add into s[t], barrier) and writes y = s[t] + the tile's offset.
// Run:  warpbook check 11-inclusive-scan bench/perfmodel/heldout/h10-scan-hillis-steele.cu
//
// Why it should be barrier-bound: a scan_final block does one 4-byte load and one store per
// thread but 20 block-wide barriers and 10 x 1024 shared-memory adds (n log n work) in between;
// with 2 resident 1024-thread blocks per SM the barrier waits are covered only by the other
// block. At the timed n = 2^27 that is 131072 tiles, ~1000 per SM, ~20 K barriers per SM in
// scan_final alone; scan_sums adds 128 chunks x 20 barriers on a single SM. Traffic is 12 B per
// element (x read twice, y written): 1.6 GB, ~0.4 ms at the DRAM ceiling. Expected: ~25-35% of
// speed of light (against the 8-byte floor), the barrier and shared-memory round trips dominant.
// @tune BLOCK=1024
// @tune ITEMS=1

#define TILE (BLOCK * ITEMS)

#if ITEMS != 1
#error "one element per thread"
#endif

// In-place inclusive scan of s[0 .. BLOCK-1]; every thread returns its own prefix.
__device__ float hillis_steele(float* s) {
  const int t = threadIdx.x;
  for (int d = 1; d < BLOCK; d <<= 1) {
    const float add = t >= d ? s[t - d] : 0.0f;
    __syncthreads();
    s[t] += add;
    __syncthreads();
  }
  return s[t];
}

extern "C" __global__ void scan_reduce(const float* x, float* sums, int n) {
  __shared__ float warp_sums[BLOCK / 32];
  const long long i = (long long)blockIdx.x * TILE + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    float w = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) w += __shfl_down_sync(0xffffffffu, w, o);
    if (threadIdx.x == 0) sums[blockIdx.x] = w;
  }
}

// sums[0 .. tiles-1] becomes the exclusive prefix: the total of all earlier tiles.
extern "C" __global__ void scan_sums(float* sums, int tiles) {
  __shared__ float s[BLOCK];
  float carry = 0.0f;
  for (int base = 0; base < tiles; base += BLOCK) {
    const int k = base + threadIdx.x;
    const float own = k < tiles ? sums[k] : 0.0f;
    s[threadIdx.x] = own;
    __syncthreads();
    const float incl = hillis_steele(s);
    if (k < tiles) sums[k] = carry + incl - own;
    carry += s[BLOCK - 1];
    __syncthreads(); // everyone has read s[BLOCK - 1] before the next chunk overwrites it
  }
}

extern "C" __global__ void scan_final(const float* x, float* y, float* sums, int n) {
  __shared__ float s[BLOCK];
  const long long i = (long long)blockIdx.x * TILE + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  const float incl = hillis_steele(s);
  if (i < n) y[i] = incl + sums[blockIdx.x];
}
