// fault: asm("exit;") in the middle of the kernel for odd threads: they leave before writing, no fault
// puzzle: 01-vector-add
// sim: wrong_answer |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i & 1) asm volatile("exit;"); /*HERE*/
  if (i < n) c[i] = a[i] + b[i];
}
