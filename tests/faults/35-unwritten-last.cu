// fault: the bound drops the last element
// puzzle: 01-vector-add
// sim: wrong_answer | never written | c[0]
// gpu: wrong_answer | never written
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) c[i] = a[i] + b[i];
}
