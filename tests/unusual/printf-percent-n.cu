// fault: `%n` (store the count so far through a pointer): never a store, the rest of the line printed
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int count = 0;
  if (i == 0) printf("abc%n then %d\n", &count, n);
  if (i < n) c[i] = a[i] + b[i];
}
