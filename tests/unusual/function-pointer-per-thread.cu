// fault: each thread picks its own function through a table of device function pointers
// sim: passed
// gpu: same
// gpu-sticky: no
__device__ float add2(float x, float y) { return x + y; }
__device__ float add_swapped(float x, float y) { return y + x; }
__device__ float add_twice_half(float x, float y) { return 0.5f * (x + y) + 0.5f * (x + y); }
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  float (*const table[3])(float, float) = {add2, add_swapped, add_twice_half};
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = table[i % 3](a[i], b[i]); // the lanes of a warp diverge over three callees
}
