// fault: assert(false) in one thread
// sim: runtime_fault | assert
// gpu: same
// gpu-sticky: yes
#include <cassert>
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    assert(i != n / 2);
    c[i] = a[i] + b[i];
  }
}
