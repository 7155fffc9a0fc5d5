// fault: every thread prints: the output is bounded, the answer still right
// puzzle: 01-vector-add
// sim: passed |
// gpu: passed |
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (n <= 65537) printf("thread %d of block %d: %f\n", threadIdx.x, blockIdx.x, a[i]);
    c[i] = a[i] + b[i];
  }
}
