// fault: assumes 256 threads per block but tunes BLOCK=128
// puzzle: 01-vector-add
// sim: wrong_answer | never written
// gpu: same
// @tune BLOCK=128
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
