// fault: __trap() deep inside a loop, on a value only one element has
// puzzle: 01-vector-add
// sim: runtime_fault | trap
// gpu: same
// gpu-sticky: yes
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = a[i];
  for (int k = 0; k < 16; ++k) {
    s += b[i] * 0.0f;
    if (k == 11 && i == n - 1) __trap(); /*HERE*/
  }
  c[i] = s + b[i];
}
