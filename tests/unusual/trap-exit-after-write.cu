// fault: asm("exit;") right after each thread's write, before the usual return: nothing is wrong
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    c[i] = a[i] + b[i];
    asm volatile("exit;");
  }
  if (i < n) c[i] = -1.0f; // never reached
}
