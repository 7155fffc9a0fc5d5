// fault: free() of the output buffer, which malloc never returned
// puzzle: 01-vector-add
// sim: runtime_fault |
// gpu: same
// gpu-sticky: maybe
// note: the simulator says "a pointer malloc did not return" at line @HERE; what the GPU's allocator does with it is its own (needs a GPU run to confirm the class)
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  if (i == 0) free(c); /*HERE*/
}
