// library: libcu++ (cuda::barrier, cuda::memcpy_async with a barrier: mbarrier and cp.async)
// puzzle: 01-vector-add
// like: solutions/01-vector-add.cu
// same: global_load_sectors global_store_sectors
//
// Producer and consumers in one block: warp 0 copies each tile of a and b into shared memory with
// cuda::memcpy_async completing on a cuda::barrier (mbarrier arrive/expect-tx and cp.async under
// the hood), the other warps wait on that barrier, add, and arrive on a second barrier that tells
// the producer the buffer is free again. Two buffers, so the copy of tile k + 1 overlaps the adds
// of tile k. A block of BLOCK threads handles ITEMS tiles of BLOCK - 32 elements.
#include <cuda/barrier>
// @tune BLOCK=256
// @tune ITEMS=16

using Barrier = cuda::barrier<cuda::thread_scope_block>;
constexpr int kTile = BLOCK - 32; // elements per tile: one per consumer thread

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  __shared__ float sa[2][kTile], sb[2][kTile];
  __shared__ Barrier full[2], empty[2];
  if (threadIdx.x == 0)
    for (int s = 0; s < 2; ++s) {
      init(&full[s], 32 + kTile);  // the producer warp's copies, then every consumer's wait
      init(&empty[s], kTile + 32); // the consumers' releases and the producer warp
    }
  __syncthreads();
  // Which elements this block covers: the launch gives cdiv(n, BLOCK * ITEMS) blocks, and this
  // kernel consumes kTile per step, so each block walks enough steps to cover its share.
  const long long first = (long long)blockIdx.x * BLOCK * ITEMS;
  const long long last = min((long long)n, first + (long long)BLOCK * ITEMS);
  const int steps = (int)((last - first + kTile - 1) / kTile);
  if (threadIdx.x < 32) { // producer warp
    for (int k = 0; k < steps; ++k) {
      const int s = k & 1;
      if (k >= 2) empty[s].arrive_and_wait(); // the consumers are done with this buffer
      const long long base = first + (long long)k * kTile;
      const int len = (int)min((long long)kTile, last - base);
      for (int j = threadIdx.x; j < len; j += 32) {
        cuda::memcpy_async(&sa[s][j], a + base + j, sizeof(float), full[s]);
        cuda::memcpy_async(&sb[s][j], b + base + j, sizeof(float), full[s]);
      }
      (void)full[s].arrive();
    }
  } else { // consumers
    const int t = threadIdx.x - 32;
    for (int k = 0; k < steps; ++k) {
      const int s = k & 1;
      full[s].arrive_and_wait();
      const long long i = first + (long long)k * kTile + t;
      if (i < last) c[i] = sa[s][t] + sb[s][t];
      if (k + 2 < steps) (void)empty[s].arrive();
    }
  }
}
