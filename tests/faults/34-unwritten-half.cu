// fault: only even elements are written
// puzzle: 01-vector-add
// sim: wrong_answer | never written
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i % 2 == 0) c[i] = a[i] + b[i];
}
