// fault: n declared 64-bit; the puzzle passes a 32-bit int
// puzzle: 01-vector-add
// sim: passed |
// gpu: runtime_fault | is 8 bytes in the kernel, but the puzzle
// note: The simulator zero-extends a scalar smaller than its parameter (so n is right and it passes); the GPU backend refuses the size mismatch (cuFuncGetParamInfo). A parity difference, reported to the simulator's owners.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, long long n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
