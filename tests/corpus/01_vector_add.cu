// Vector add with a grid-stride loop: c[i] = a[i] + b[i] for every i < n, whatever the grid size.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    c[i] = a[i] + b[i];
  }
}
