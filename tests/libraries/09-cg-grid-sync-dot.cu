// library: cooperative groups (grid_group::sync, a cooperative launch)
// catalog: tests/libraries/catalog
// puzzle: 01-grid-dot
//
// A dot product in one launch: each block reduces its grid-stride slice (cg::reduce per warp,
// then warp 0 over the warps' sums), writes its partial, and the whole grid waits at
// this_grid().sync(); then block 0 adds the partials. The barrier needs every block resident at
// once, so the launch must be cooperative (the puzzle's launch says cooperative = true); launched
// the ordinary way, grid.sync() stops on a trap.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
// @tune BLOCK=256

__device__ float block_sum(cg::thread_block block, float v) {
  __shared__ float warp_sums[32];
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
  block.sync();
  v = warp.meta_group_rank() == 0 && warp.thread_rank() < warp.meta_group_size()
          ? warp_sums[warp.thread_rank()]
          : 0.0f;
  return cg::reduce(warp, v, cg::plus<float>()); // valid in warp 0
}

extern "C" __global__ void dot(const float* a, const float* b, float* partial, float* out, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  float v = 0;
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n;
       i += (long long)gridDim.x * BLOCK)
    v += a[i] * b[i];
  v = block_sum(block, v);
  if (block.thread_rank() == 0) partial[blockIdx.x] = v;
  grid.sync();
  if (blockIdx.x == 0) {
    float t = 0;
    for (unsigned k = threadIdx.x; k < gridDim.x; k += BLOCK) t += partial[k];
    block.sync(); // warp_sums is reused
    t = block_sum(block, t);
    if (threadIdx.x == 0) out[0] = t;
  }
}
