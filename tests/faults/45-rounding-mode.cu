// fault: rounds toward zero: off by one ulp where the puzzle wants exact
// puzzle: 01-vector-add
// sim: wrong_answer | in the last bits only | round-to-nearest
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = __fadd_rz(a[i], b[i]);
}
