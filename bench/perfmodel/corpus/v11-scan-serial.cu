// Corpus · v11-scan-serial · designed limiter: serial
//
// What: the three-pass scan over tiles of BLOCK x ITEMS = 1024 x 8 = 8192 floats, with the
// per-tile scan done by ONE thread:
//   scan_reduce: each 1024-thread block sums its tile (8 coalesced loads per thread, shuffles, one
//     shared exchange) into sums[tile];
//   scan_sums:   one block turns the 16384 tile sums into exclusive prefixes (each thread scans a
//     contiguous chunk, the chunk totals are scanned with shuffles and shared memory);
//   scan_final:  the block copies its tile into shared memory (32 KB, coalesced), then thread 0
//     alone walks the 8192 values adding the running sum, and the block writes the tile out.
// Run:  warpbook check 11-inclusive-scan bench/perfmodel/corpus/v11-scan-serial.cu
//
// Why it is slow: in scan_final a single thread performs 8192 dependent adds (shared load, FADD
// on the running sum, shared store) while the other 1023 threads of its block wait at a barrier:
// ~8192 x ~6 cycles ~ 50 K cycles ~ 25 us per tile. Two blocks fit per SM (1024 threads, 32 KB
// each), so 264 tiles are in progress at a time: 16384 tiles / 264 ~ 62 rounds x ~25 us ~ 1.5 ms,
// against ~0.35 ms for the three passes' ~1.6 GB of DRAM traffic. The inputs are whole numbers, so
// every order of addition is exact. Expected: ~10-15% of speed of light, the time spent in one
// thread's dependency chain per block.
// @tune BLOCK=1024
// @tune ITEMS=8

#define TILE (BLOCK * ITEMS)

// Inclusive scan of v over the block; every thread gets its inclusive prefix, `total` the sum.
__device__ float block_scan(float v, float& total) {
  __shared__ float warp_tot[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float u = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o) v += u;
  }
  if (lane == 31) warp_tot[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float w = lane < BLOCK / 32 ? warp_tot[lane] : 0.0f;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const float u = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += u;
    }
    if (lane < BLOCK / 32) warp_tot[lane] = w; // inclusive prefix of the warp totals
  }
  __syncthreads();
  total = warp_tot[BLOCK / 32 - 1];
  if (warp > 0) v += warp_tot[warp - 1];
  __syncthreads(); // warp_tot may be reused by a later call
  return v;
}

extern "C" __global__ void scan_reduce(const float* __restrict__ x, float* __restrict__ sums,
                                       int n) {
  __shared__ float part[32];
  const long long base = (long long)blockIdx.x * TILE;
  float s = 0.0f;
#pragma unroll
  for (int q = 0; q < ITEMS; ++q) {
    const long long i = base + q * BLOCK + threadIdx.x;
    if (i < n) s += x[i];
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) part[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < BLOCK / 32 ? part[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) sums[blockIdx.x] = s;
  }
}

// One block: sums[0 .. tiles-1] becomes the exclusive prefix of the tile totals.
extern "C" __global__ void scan_sums(float* sums, int tiles) {
  const int per = (tiles + BLOCK - 1) / BLOCK; // a contiguous chunk per thread
  const int lo = threadIdx.x * per, hi = min(lo + per, tiles);
  float own = 0.0f;
  for (int k = lo; k < hi; ++k) own += sums[k];
  float total;
  const float incl = block_scan(own, total);
  float run = incl - own; // exclusive prefix of this chunk
  for (int k = lo; k < hi; ++k) {
    const float t = sums[k];
    sums[k] = run;
    run += t;
  }
}

extern "C" __global__ void scan_final(const float* __restrict__ x, float* __restrict__ y,
                                      float* sums, int n) {
  __shared__ float s[TILE]; // 32 KB
  const long long base = (long long)blockIdx.x * TILE;
  for (int j = threadIdx.x; j < TILE; j += BLOCK) s[j] = base + j < n ? x[base + j] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float acc = sums[blockIdx.x];
    for (int j = 0; j < TILE; ++j) { // the serial part: 8192 dependent adds
      acc += s[j];
      s[j] = acc;
    }
  }
  __syncthreads();
  for (int j = threadIdx.x; j < TILE; j += BLOCK)
    if (base + j < n) y[base + j] = s[j];
}
