// fault: reads floats at a 2-byte offset
// puzzle: 01-vector-add
// sim: runtime_fault | not 4-byte aligned | line @HERE
// gpu: runtime_fault | misaligned
// gpu-sticky: yes
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float* p = (const float*)((const char*)a + 2);
  if (i < n) c[i] = p[i] + b[i]; /*HERE*/
}
