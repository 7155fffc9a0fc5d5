// __constant__ and initialised __device__ data: out[i] = coef[i % 8] * x[i] + bias[i % 4], where
// coef is a __constant__ table and bias an initialised __device__ array; hits counts calls.
__constant__ float coef[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__device__ float bias[4] = {0.5f, -0.5f, 0.25f, -0.25f};
__device__ int hits;
extern "C" __global__ void const_global(const float* x, float* out, int* hits_out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = coef[i % 8] * x[i] + bias[i % 4];
    atomicAdd(&hits, 1);
  }
  __syncthreads();
  if (i == 0) *hits_out = 1;
}
