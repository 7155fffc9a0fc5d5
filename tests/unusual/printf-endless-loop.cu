// fault: thread 0 prints in a loop that never ends: a timeout, not a flood that holds up the check
// puzzle: 01-vector-add
// sim: runtime_fault |
// gpu: same
// gpu-sticky: yes
// note: each backend words its timeout its own way (an endless loop on the simulator, a kernel that did not finish on the GPU)
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (unsigned k = 0; i == 0 && k != 0xffffffffu; k += (n < 0)) printf("still here %u\n", k); /*HERE*/
  if (i < n) c[i] = a[i] + b[i];
}
