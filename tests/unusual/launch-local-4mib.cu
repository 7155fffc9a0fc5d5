// fault: a 4 MiB array per thread: more local memory than a GPU thread may have
// sim: runtime_fault | local memory | 512 KiB
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float big[1 << 20];
  volatile float* v = big;
  if (i < n) {
    v[i % 1000] = a[i];
    c[i] = v[i % 1000] + b[i];
  }
}
