// fault: `%.*f` with a precision of a hundred million, and `%.*d` with a billion
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) printf("%.*f | %.*d\n", 100000000, a[0], 1000000000, n);
  if (i < n) c[i] = a[i] + b[i];
}
