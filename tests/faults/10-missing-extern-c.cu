// fault: the kernel is not extern "C"
// puzzle: 01-vector-add
// sim: compile_error | not declared extern "C"
// gpu: same
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
