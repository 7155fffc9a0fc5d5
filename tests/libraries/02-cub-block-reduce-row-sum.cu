// library: CUB (cub::BlockReduce)
// puzzle: 02-row-sum
// like: solutions/02-row-sum.cu
// same: global_load_sectors
//
// A row sum with cub::BlockReduce: the block strides over its row and CUB combines the threads'
// sums (warp shuffles, then one warp over the warps' sums in the TempStorage shared memory).
#include <cub/block/block_reduce.cuh>
// @tune BLOCK=256

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  using Reduce = cub::BlockReduce<float, BLOCK>;
  __shared__ typename Reduce::TempStorage tmp;
  const float* r = x + (long long)blockIdx.x * cols;
  float s = 0;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += r[c];
  s = Reduce(tmp).Sum(s);
  if (threadIdx.x == 0) y[blockIdx.x] = s;
}
