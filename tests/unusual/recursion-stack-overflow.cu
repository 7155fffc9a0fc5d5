// fault: recursion thousands of calls deep: more stack than a thread has
// sim: runtime_fault
// note: the GPU reports the overflow as an illegal address; the simulator names the stack
// gpu: same
// gpu-sticky: maybe
__device__ __noinline__ float deep(float x, int k) {
  volatile float pad[16];
  pad[k & 15] = x;
  return k <= 0 ? pad[0] : deep(x + 1.0f, k - 1) + pad[k & 15];
}
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + 0.0f * deep(a[i], 100000);
}
