// fault: one thread loops for ever
// sim: runtime_fault | timeout
// gpu: same
// gpu-sticky: maybe
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  volatile int spin = 1;
  if (i == 0) while (spin) { }
}
