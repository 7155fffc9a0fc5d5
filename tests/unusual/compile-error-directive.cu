// fault: an #error directive
// sim: compile_error | not finished yet
// gpu: same
// gpu-sticky: no
#error "not finished yet"
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
