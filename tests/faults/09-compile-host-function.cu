// fault: calling a host-only function from the kernel
// puzzle: 01-vector-add
// sim: compile_error | learner.cu:@HERE: | __host__ function is not allowed
// gpu: same
__host__ float add(float x, float y) { return x + y; } /*HERE*/
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = add(a[i], b[i]);
}
