// fault: every thread prints four lines of fields a million wide, through `%*d` and a literal width
// puzzle: 01-vector-add
// sim: runtime_fault | timeout
// gpu: same
// gpu-sticky: yes
// note: 65537 threads print four lines each; an H100 runs past the 10 s limit, and the simulator stops at its printf call bound
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    for (int k = 0; k < 4; ++k) printf("%*d|%1000000.3f|%-1000000s|\n", 1 << 20, i, a[i], "left");
    c[i] = a[i] + b[i];
  }
}
