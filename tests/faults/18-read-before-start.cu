// fault: reads a[i - 1]: one element before the start
// puzzle: 01-vector-add
// sim: runtime_fault | read a[-1] | line @HERE
// gpu: wrong_answer | are wrong
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i - 1] + b[i]; /*HERE*/
}
