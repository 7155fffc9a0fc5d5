// fault: __trap() in one thread
// puzzle: 01-vector-add
// sim: runtime_fault | trap
// gpu: runtime_fault | trap
// gpu-sticky: yes
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x == 0 && threadIdx.x == 3) __trap();
  if (i < n) c[i] = a[i] + b[i];
}
