// fault: writes 1 GiB past the end
// puzzle: 01-vector-add
// sim: runtime_fault | c[ | line @HERE
// gpu: runtime_fault | illegal memory access
// gpu-sticky: yes
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i + (1 << 28)] = a[i] + b[i]; /*HERE*/
}
