// fault: reads through a null pointer made at run time
// puzzle: 01-vector-add
// sim: runtime_fault | null pointer | line @HERE
// gpu: runtime_fault | illegal memory access
// gpu-sticky: yes
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float* p = (const float*)((size_t)a & (size_t)(n >> 31));
  if (i < n) c[i] = p[i] + b[i]; /*HERE*/
}
