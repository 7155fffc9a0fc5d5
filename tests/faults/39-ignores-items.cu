// fault: tunes ITEMS=4 but handles one element per thread
// puzzle: 01-vector-add
// sim: wrong_answer | never written
// gpu: same
// @tune ITEMS=4
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
