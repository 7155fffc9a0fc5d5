// fault: writes c[i - 1]: one element before the start
// puzzle: 01-vector-add
// sim: runtime_fault | before | c
// gpu: wrong_answer | before the start of c
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i - 1] = a[i] + b[i]; /*HERE*/
}
