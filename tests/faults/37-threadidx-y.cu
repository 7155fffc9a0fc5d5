// fault: uses threadIdx.y in a 1-D launch
// puzzle: 01-vector-add
// sim: wrong_answer | never written
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.y;
  if (i < n) c[i] = a[i] + b[i];
}
