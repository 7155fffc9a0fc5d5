// fault: a loop that never ends
// puzzle: 01-vector-add
// sim: runtime_fault | endless loop
// gpu: runtime_fault | did not finish within
// gpu-sticky: yes
// note: The simulator stops at its instruction budget; on a GPU the check's case timeout (10 s) stops it.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // A volatile load from global memory: ptxas may delete a loop that has no side effects and
  // reads only a local variable (C++ lets it assume forward progress), but not this one.
  volatile const float* va = a;
  while (va[0] < 1e30f) { } /*HERE*/
  if (i < n) c[i] = a[i] + b[i];
}
