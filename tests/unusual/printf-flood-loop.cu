// fault: every thread prints eight lines in a loop: the output is cut at the bound, the answer still right
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    for (int k = 0; k < 8; ++k) printf("thread %d of block %d, line %d: %f\n", threadIdx.x, blockIdx.x, k, a[i]);
    c[i] = a[i] + b[i];
  }
}
