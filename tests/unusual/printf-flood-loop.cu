// fault: every thread prints eight lines in a loop: half a million lines, past the time limit on a GPU
// puzzle: 01-vector-add
// sim: runtime_fault | timeout
// gpu: same
// gpu-sticky: yes
// note: an H100 does not finish the n=65537 case within the 10 s limit; the simulator stops at its printf call bound
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    for (int k = 0; k < 8; ++k) printf("thread %d of block %d, line %d: %f\n", threadIdx.x, blockIdx.x, k, a[i]);
    c[i] = a[i] + b[i];
  }
}
