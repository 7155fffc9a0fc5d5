// fault: a __shared__ variable with an initializer
// sim: compile_error | learner.cu
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float s = 1.0f;
  if (i < n) c[i] = a[i] + b[i] * s;
}
