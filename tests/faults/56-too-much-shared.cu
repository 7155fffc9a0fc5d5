// fault: 256 KiB of static shared memory
// puzzle: 01-vector-add
// sim: compile_error,runtime_fault | shared
// gpu: compile_error,runtime_fault | shared
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float big[64 * 1024];
  big[threadIdx.x] = a[i < n ? i : 0];
  __syncthreads();
  if (i < n) c[i] = big[threadIdx.x] + b[i];
}
