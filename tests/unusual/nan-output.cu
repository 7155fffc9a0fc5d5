// fault: a kernel that writes NaN: NaN never passes
// sim: wrong_answer | NaN
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = (a[i] + b[i]) + (i == n - 1 ? __int_as_float(0x7fc00000) : 0.0f);
}
