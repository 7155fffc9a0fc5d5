// fault: a 16 KB array per thread in local memory: slow, but allowed
// sim: passed
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float buf[4096];
  volatile float* v = buf;
  if (i < n) {
    v[(i * 7) % 4096] = a[i];
    c[i] = v[(i * 7) % 4096] + b[i];
  }
}
