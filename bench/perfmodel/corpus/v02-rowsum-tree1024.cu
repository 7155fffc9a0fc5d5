// Corpus · v02-rowsum-tree1024 · designed limiter: barrier
//
// What: one 1024-thread block per row. Each thread first loads its 8 columns of an 8192-column
// stretch into registers (all 8 loads in flight: t, t + 1024, ..., coalesced), then the block
// reduces the stretch one 1024-float chunk at a time with the textbook shared-memory tree:
// buf[t] = v, then for s = 512, 256, ..., 1: if (t < s) buf[t] += buf[t + s], each level followed
// by __syncthreads(); thread 0 adds buf[0] to the row total, and a last barrier lets the next
// chunk overwrite buf. Wider rows repeat the stretch.
// Run:  warpbook check 02-row-sum bench/perfmodel/corpus/v02-rowsum-tree1024.cu
//
// Why it is slow: a 1024-float chunk costs 12 block-wide barriers (1 + 10 levels + 1) for 1024
// additions, so an 8192-column row costs 96 barriers. Each level is a dependent round of
// shared load, add, shared store and a barrier that all 32 warps must reach (the last 5 levels
// keep only warp 0 busy while 31 warps wait): ~60-80 cycles per level, ~6-8 K cycles per row.
// Two blocks fit per SM, so an SM finishes about 2 rows (64 KB) per ~3 us: ~20 GB/s per SM,
// ~2.5-3 TB/s in all, under the DRAM ceiling even though the loads themselves (8 per thread, 64
// KB in flight per SM) could stream at full rate. Expected: ~50% of speed of light, the time
// spent at barriers.
// @tune BLOCK=1024

#define PER 8 // floats per thread loaded ahead of the tree

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  __shared__ float buf[BLOCK];
  const float* row = x + (long long)blockIdx.x * cols;
  const int t = threadIdx.x;
  float total = 0.0f; // meaningful in thread 0
  for (int base = 0; base < cols; base += PER * BLOCK) {
    float v[PER];
#pragma unroll
    for (int q = 0; q < PER; ++q) {
      const int c = base + q * BLOCK + t;
      v[q] = c < cols ? row[c] : 0.0f;
    }
#pragma unroll
    for (int q = 0; q < PER; ++q) {
      if (base + q * BLOCK >= cols) break; // the same for every thread of the block
      buf[t] = v[q];
      __syncthreads();
      for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
      }
      if (t == 0) total += buf[0];
      __syncthreads(); // buf[0] is read before the next chunk overwrites it
    }
  }
  if (t == 0) y[blockIdx.x] = total;
}
