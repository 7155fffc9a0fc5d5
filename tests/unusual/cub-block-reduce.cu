// fault: CUB's BlockReduce through <cub/cub.cuh> in a row sum
// puzzle: 02-row-sum
// sim: passed
// gpu: same
// gpu-sticky: no
// @tune BLOCK=256
#include <cub/cub.cuh>

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  using Reduce = cub::BlockReduce<float, 256>;
  __shared__ typename Reduce::TempStorage tmp;
  const float* row = x + (long long)blockIdx.x * cols;
  float s = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) s += row[j];
  float total = Reduce(tmp).Sum(s);
  if (threadIdx.x == 0) y[blockIdx.x] = total;
}
