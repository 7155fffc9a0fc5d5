// library: CUB (cub::WarpReduce)
// puzzle: 08-dot-product
// like: solutions/08-dot-product.cu
//
// A dot product with cub::WarpReduce: each thread accumulates a grid-stride slice, each warp
// reduces with WarpReduce, the warps' sums meet in shared memory, and dot_final does the same
// over the blocks' partial sums.
#include <cub/warp/warp_reduce.cuh>
// @tune BLOCK=256

__device__ float block_sum(float v) {
  using WarpReduce = cub::WarpReduce<float>;
  __shared__ typename WarpReduce::TempStorage tmp[BLOCK / 32];
  __shared__ float warp_sums[BLOCK / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  v = WarpReduce(tmp[warp]).Sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f;
  if (warp == 0) v = WarpReduce(tmp[0]).Sum(v);
  return v; // valid in thread 0
}

extern "C" __global__ void dot_partial(const float* a, const float* b, float* partial, int n) {
  float s = 0;
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n;
       i += (long long)gridDim.x * BLOCK)
    s += a[i] * b[i];
  s = block_sum(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

extern "C" __global__ void dot_final(const float* partial, float* out, int parts) {
  float s = 0;
  for (int i = threadIdx.x; i < parts; i += BLOCK) s += partial[i];
  s = block_sum(s);
  if (threadIdx.x == 0) out[0] = s;
}
