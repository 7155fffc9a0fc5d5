// fault: writes through a null pointer made at run time
// puzzle: 01-vector-add
// sim: runtime_fault | null pointer | line @HERE
// gpu: runtime_fault | illegal memory access
// gpu-explained: the simulator, same case and inputs: runtime_fault | null pointer | line @HERE
// gpu-sticky: yes
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float* p = (float*)((size_t)c & (size_t)(n >> 31)); // 0 for every n >= 0
  if (i < n) p[i] = a[i] + b[i]; /*HERE*/
}
