// fault: __nanosleep and __threadfence_system in an ordinary kernel
// sim: passed
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __nanosleep(100);
  if (i < n) c[i] = a[i] + b[i];
  __threadfence_system();
}
