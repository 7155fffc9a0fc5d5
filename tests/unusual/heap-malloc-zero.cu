// fault: malloc(0) and free of what it returned, in every thread: nothing to read or write, nothing wrong
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  void* p = malloc(0);
  free(p);
  if (i < n) c[i] = a[i] + b[i];
}
