// fault: `%s` of a null pointer prints (null)
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const char* name = n < 0 ? "negative" : nullptr;
  if (i == 0) printf("name: %s\n", name);
  if (i < n) c[i] = a[i] + b[i];
}
