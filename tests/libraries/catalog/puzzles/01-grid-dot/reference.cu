// Reference: each block writes its grid-stride partial sum (a tree in shared memory), the grid
// synchronises, and block 0 adds the partials in a fixed order (in double).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void dot(const float* a, const float* b, float* partial, float* out, int n) {
  __shared__ float s[BLOCK];
  float v = 0;
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n;
       i += (long long)gridDim.x * BLOCK)
    v += a[i] * b[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
  cg::this_grid().sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    double t = 0;
    for (unsigned k = 0; k < gridDim.x; ++k) t += partial[k];
    out[0] = (float)t;
  }
}
