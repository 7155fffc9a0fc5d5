// fault: cooperative groups: a 32-thread tile reduce in a row sum
// puzzle: 02-row-sum
// sim: passed
// gpu: same
// gpu-sticky: no
// @tune BLOCK=256
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  __shared__ float part[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  const float* row = x + (long long)blockIdx.x * cols;
  float s = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) s += row[j];
  s = cg::reduce(tile, s, cg::plus<float>());
  if (tile.thread_rank() == 0) part[tile.meta_group_rank()] = s;
  block.sync();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int w = 0; w < int(blockDim.x / 32); ++w) t += part[w];
    y[blockIdx.x] = t;
  }
}
