// fault: overwrites an input
// puzzle: 01-vector-add
// sim: wrong_answer | changed its input a
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { c[i] = a[i] + b[i]; ((float*)a)[i] = 0.0f; }
}
