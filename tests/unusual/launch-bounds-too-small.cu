// fault: __launch_bounds__(64) on a kernel the puzzle launches with 256 threads
// sim: runtime_fault | __launch_bounds__
// gpu: same
// gpu-sticky: no
extern "C" __global__ void __launch_bounds__(64) vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
