// fault: one thread loops for ever
// sim: runtime_fault | timeout
// gpu: same
// gpu-sticky: maybe
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  // a is in [-1, 1]: the loop never ends, and the compiler cannot know it
  if (i == 0)
    while (((volatile const float*)a)[0] < 1e30f) {
    }
}
