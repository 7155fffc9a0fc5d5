// fault: long double in device code (NVRTC treats it as double)
// sim: passed
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    long double x = (long double)a[i] + (long double)b[i];
    c[i] = (float)x;
  }
}
