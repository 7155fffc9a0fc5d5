// fault: a __device__ function where a kernel is needed
// puzzle: 01-vector-add
// sim: compile_error | no kernel named 'vector_add' (the file defines 'other')
// gpu: same
extern "C" __device__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void other(float* c) { vector_add(c, c, c, 1); }
