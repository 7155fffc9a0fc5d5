// fault: __launch_bounds__(64) but launched with 256 threads
// puzzle: 01-vector-add
// sim: runtime_fault | at most 64 threads per block
// gpu: runtime_fault | 
extern "C" __global__ void __launch_bounds__(64) vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
