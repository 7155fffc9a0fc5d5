// fault: @tune ITEMS=3: not one of the allowed values
// puzzle: 01-vector-add
// sim: compile_error | learner.cu:5:1: | ITEMS = 3 is not allowed here; choose one of 1, 2, 4, 8, 16
// gpu: same
// @tune ITEMS=3
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
