// fault: a failed assert
// puzzle: 01-vector-add
// sim: runtime_fault | assert
// gpu: runtime_fault | assert
// gpu-sticky: yes
#include <assert.h>
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    assert(a[i] > 2.0f); /*HERE*/
    c[i] = a[i] + b[i];
  }
}
