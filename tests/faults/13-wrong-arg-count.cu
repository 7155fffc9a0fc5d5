// fault: the kernel takes three parameters; the puzzle passes four
// puzzle: 01-vector-add
// sim: runtime_fault | vector_add takes 3 arguments, the launch passes 4
// gpu: runtime_fault | the kernel takes 3 parameters, but the puzzle passes 4
extern "C" __global__ void vector_add(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i];
}
