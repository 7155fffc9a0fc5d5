// Block sum in shared memory (tree reduction with __syncthreads): out[blockIdx.x] = the sum of the
// block's 256 inputs (zeros past n). Launch with 256 threads per block.
extern "C" __global__ void block_sum(const float* in, float* out, int n) {
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
