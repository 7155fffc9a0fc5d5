// fault: __int128 arithmetic in device code
// sim: passed
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __int128 x = (__int128)i * (__int128)0x100000000LL + 7;
    c[i] = a[i] + b[i] + 0.0f * float((long long)(x >> 32));
  }
}
