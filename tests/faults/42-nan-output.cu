// fault: a NaN in the output
// puzzle: 01-vector-add
// sim: wrong_answer | NaN
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = (a[i] + b[i]) * (i == n / 2 ? __int_as_float(0x7fc00000) : 1.0f);
}
