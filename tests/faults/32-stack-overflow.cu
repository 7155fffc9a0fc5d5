// fault: unbounded recursion overflows the stack
// puzzle: 01-vector-add
// sim: runtime_fault | overflowed its stack
// gpu: runtime_fault |
// gpu-sticky: yes
__device__ __noinline__ float down(int k, volatile float* sink) {
  if (k == 0) return 0.0f;
  sink[0] = (float)k;
  return down(k + 1, sink) + down(k + 2, sink);
}
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + 0.0f * down(1, c);
}
