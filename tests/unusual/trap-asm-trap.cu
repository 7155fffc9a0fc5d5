// fault: asm("trap;") once the last element is written
// puzzle: 01-vector-add
// sim: runtime_fault | trap
// gpu: same
// gpu-sticky: yes
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  if (i == n - 1) asm volatile("trap;"); /*HERE*/
}
