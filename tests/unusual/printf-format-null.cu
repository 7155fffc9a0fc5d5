// fault: printf with a null format pointer: a fault (reading the format) on both backends
// puzzle: 01-vector-add
// sim: runtime_fault |
// gpu: same
// gpu-sticky: yes
// note: the simulator names the null pointer and the line (@HERE); the GPU reports an illegal address (or a trap where the compiler saw the null)
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const char* fmt = n < 0 ? "negative\n" : (const char*)(size_t)(n >> 31);
  if (i == 0) printf(fmt); /*HERE*/
  if (i < n) c[i] = a[i] + b[i];
}
