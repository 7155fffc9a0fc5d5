// Lesson 0006 · a block-level scan, used three times to scan across blocks (reduce-then-scan).
// Run:  warpbook check 11-inclusive-scan lessons/0006-shared-memory-and-tiling/scan/block-scan.cu
//       warpbook predict 11-inclusive-scan lessons/0006-shared-memory-and-tiling/scan/block-scan.cu
//
// block_scan() is the part to read: every thread brings one value and gets back the sum of the
// values of all threads up to and including itself, in four steps:
//   1. each warp scans its 32 values with five __shfl_up_sync steps (no shared memory);
//   2. lane 31 of each warp, which now holds its warp's total, writes it to shared memory;
//   3. warp 0 scans those (up to 32) totals the same way;
//   4. every thread adds the total of the warps before its own.
// Two barriers, 32 words of shared memory, no bank conflicts.
//
// Around it, the three kernels puzzle 11 launches, each tile of TILE = BLOCK * ITEMS elements
// taken as ITEMS rounds of BLOCK consecutive elements (coalesced), with a carry between rounds:
//   scan_reduce: sums[b] = the total of tile b;
//   scan_sums:   one block turns sums[0 .. tiles-1] into exclusive prefixes (the total of the
//                tiles before each), BLOCK at a time, with a carry;
//   scan_final:  scans its tile again and adds sums[b].
// x is read twice (12 bytes an element with y's write): the plan puzzle 11's README calls
// reduce-then-scan. Its solution reads x once, with a decoupled look-back (lesson 0006 explains).
// @tune BLOCK=512
// @tune ITEMS=8

#define TILE (BLOCK * ITEMS)

// Inclusive scan of v across the block (blockDim.x a multiple of 32). *total: the block's sum.
__device__ float block_scan(float v, float* total) {
  __shared__ float warp_sums[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
  for (int d = 1; d < 32; d *= 2) { // 1. lane l adds lane l - d: after d = 16, lanes 0 .. l
    const float left = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += left;
  }
  if (lane == 31) warp_sums[warp] = v; // 2. the warp's total
  __syncthreads();
  if (warp == 0) { // 3. scan the warp totals
    float w = lane < nwarps ? warp_sums[lane] : 0.0f;
    for (int d = 1; d < 32; d *= 2) {
      const float left = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w += left;
    }
    warp_sums[lane] = w; // warps 0 .. lane
  }
  __syncthreads();
  if (warp > 0) v += warp_sums[warp - 1]; // 4. the warps before this one
  *total = warp_sums[nwarps - 1];
  __syncthreads(); // everyone has read warp_sums before a next call writes it
  return v;
}

extern "C" __global__ void scan_reduce(const float* x, float* sums, int n) {
  const long long base = (long long)blockIdx.x * TILE;
  float s = 0.0f;
  for (int r = 0; r < ITEMS; ++r) {
    const long long i = base + r * BLOCK + threadIdx.x;
    if (i < n) s += x[i];
  }
  float total;
  block_scan(s, &total); // only the total is needed here
  if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

extern "C" __global__ void scan_sums(float* sums, int tiles) {
  float carry = 0.0f; // the total of the tiles before this round
  for (int r = 0; r < tiles; r += BLOCK) {
    const int i = r + threadIdx.x;
    const float v = i < tiles ? sums[i] : 0.0f;
    float total;
    const float inc = block_scan(v, &total);
    if (i < tiles) sums[i] = carry + inc - v; // exclusive: the tiles before tile i
    carry += total;
  }
}

extern "C" __global__ void scan_final(const float* x, float* y, float* sums, int n) {
  const long long base = (long long)blockIdx.x * TILE;
  float v[ITEMS]; // every load first, so that all ITEMS are in flight together
  for (int r = 0; r < ITEMS; ++r) {
    const long long i = base + r * BLOCK + threadIdx.x;
    v[r] = i < n ? x[i] : 0.0f;
  }
  float carry = sums[blockIdx.x]; // every tile before this one
  for (int r = 0; r < ITEMS; ++r) {
    const long long i = base + r * BLOCK + threadIdx.x;
    float total;
    const float inc = block_scan(v[r], &total);
    if (i < n) y[i] = carry + inc;
    carry += total;
  }
}
