// fault: reads shared memory nobody wrote
// puzzle: 01-vector-add
// sim: wrong_answer | NaN | a read of memory no thread wrote
// gpu: passed,wrong_answer |
// note: The simulator fills shared memory with 0xff (NaN); a GPU holds whatever was there (often 0): not reliably visible.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float s[256];
  if (i < n) c[i] = a[i] + b[i] + s[threadIdx.x];
}
