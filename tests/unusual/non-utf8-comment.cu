// fault: bytes that are not UTF-8 in a comment and a string
// sim: passed
// gpu: same
// gpu-sticky: no
// café: Latin-1 bytes in a comment
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const char* s = "é";
  if (i < n) c[i] = a[i] + b[i] + 0.0f * s[0];
}
