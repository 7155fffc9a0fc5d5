// fault: each thread frees its allocation twice
// puzzle: 01-vector-add
// sim: runtime_fault |
// gpu: same
// gpu-sticky: maybe
// note: the simulator says "a double free" at line @HERE; what the GPU's allocator does with a second free is its own (needs a GPU run to confirm the class)
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float* t = (float*)malloc(sizeof(float));
  if (!t) return;
  *t = i < n ? a[i] + b[i] : 0.0f;
  if (i < n) c[i] = *t;
  free(t);
  free(t); /*HERE*/
}
