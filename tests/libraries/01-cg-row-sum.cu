// library: cooperative groups (tiled_partition, cg::reduce)
// puzzle: 02-row-sum
// like: solutions/02-row-sum.cu
// same: global_load_sectors
//
// A row sum the way the CUDA programming guide writes reductions with cooperative groups: the
// block strides over its row, each warp (a thread_block_tile<32>) reduces with cg::reduce (a
// shuffle tree; redux.sync where the type allows), and warp 0 reduces the warps' sums.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  __shared__ float part[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  const float* r = x + (long long)blockIdx.x * cols;
  float s = 0;
  for (int c = block.thread_rank(); c < cols; c += block.size()) s += r[c];
  s = cg::reduce(warp, s, cg::plus<float>());
  if (warp.thread_rank() == 0) part[warp.meta_group_rank()] = s;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    s = warp.thread_rank() < warp.meta_group_size() ? part[warp.thread_rank()] : 0.0f;
    s = cg::reduce(warp, s, cg::plus<float>());
    if (warp.thread_rank() == 0) y[blockIdx.x] = s;
  }
}
