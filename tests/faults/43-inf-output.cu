// fault: a division by zero gives Inf
// puzzle: 01-vector-add
// sim: wrong_answer | Inf
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = (a[i] + b[i]) / (i == n / 2 ? 0.0f : 1.0f);
}
