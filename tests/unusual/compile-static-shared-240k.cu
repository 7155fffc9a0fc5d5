// fault: 240 KB of static __shared__ memory: more than the 227 KiB a block may have
// sim: compile_error | ptxas | too much shared data | 240000 bytes
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float s[60000];
  s[threadIdx.x] = a[i < n ? i : 0];
  __syncthreads();
  if (i < n) c[i] = s[threadIdx.x] + b[i];
}
