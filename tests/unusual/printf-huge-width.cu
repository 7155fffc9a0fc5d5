// fault: a field width of a hundred million: cut to the bound, not a hundred megabytes of spaces
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) printf("[%100000000d]\n", n);
  if (i < n) c[i] = a[i] + b[i];
}
