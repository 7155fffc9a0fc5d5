// fault: masks with n - 1: right only when n is a power of two
// puzzle: 01-vector-add
// sim: wrong_answer | case n=7
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = i & (n - 1);
  if (i < n) c[j] = a[j] + b[j];
}
