// fault: free() of the output buffer, which malloc never returned
// puzzle: 01-vector-add
// sim: passed
// gpu: same
// gpu-sticky: no
// note: the GPU's allocator ignores a pointer it did not hand out (measured on an H100); the simulator goes on too, with a warning naming the line
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  if (i == 0) free(c); /*HERE*/
}
