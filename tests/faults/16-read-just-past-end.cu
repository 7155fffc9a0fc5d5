// fault: reads b one element past the end
// puzzle: 01-vector-add
// sim: runtime_fault | read b[ | past its end
// gpu: wrong_answer | are wrong
// note: On a GPU the read returns guard-band bytes (0xcdcdcdcd), so the last element is wrong.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i + 1]; /*HERE*/
}
