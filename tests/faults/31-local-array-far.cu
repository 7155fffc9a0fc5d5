// fault: a stack array indexed far out of range
// puzzle: 01-vector-add
// sim: runtime_fault | local memory (its stack) | line @HERE
// gpu: passed,runtime_fault |
// gpu-sticky: maybe
// note: The H200 does not see this one: a thread's local window is large and the stray read
//   returned 0 there, so the answer came out right. Only the simulator names it.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  volatile float t[8];
  for (int k = 0; k < 8; ++k) t[k] = 0.0f;
  int j = (i == n - 1) ? (1 << 26) : i % 8;
  if (i < n) c[i] = a[i] + b[i] + t[j]; /*HERE*/
}
