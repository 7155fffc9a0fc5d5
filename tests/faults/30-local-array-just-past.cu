// fault: a stack array indexed one past its end
// puzzle: 01-vector-add
// sim: runtime_fault | local memory (its stack) | line @HERE
// gpu: passed,wrong_answer |
// note: On a GPU the read returns another stack slot: not visible.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  volatile float t[8];
  for (int k = 0; k < 8; ++k) t[k] = 0.0f;
  int j = 8 * (i == n - 1);
  if (i < n) c[i] = a[i] + b[i] + t[j % 9]; /*HERE*/
}
