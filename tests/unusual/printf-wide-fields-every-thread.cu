// fault: every thread prints fields a million wide, through `%*d` and a literal width
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    printf("%*d|%1000000.3f|%-1000000s|\n", 1 << 20, i, a[i], "left");
    c[i] = a[i] + b[i];
  }
}
