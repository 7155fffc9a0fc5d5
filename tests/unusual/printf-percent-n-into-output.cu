// fault: `%n` aimed at the output buffer, by every thread: %n writes nothing, so the answer stands
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    c[i] = a[i] + b[i];
    if (i < 64) printf("%*d%n\n", 8, i, (int*)&c[i]);
  }
}
