// fault: the kernel has another name
// puzzle: 01-vector-add
// sim: compile_error | no kernel named 'vector_add' (the file defines 'vectorAdd')
// gpu: same
extern "C" __global__ void vectorAdd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
