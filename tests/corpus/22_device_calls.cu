// Device-function calls that are not inlined (noinline, a struct argument, recursion): out[i] =
// fib(i % 12) + dot3(v[i], w) computed through calls.
struct V3 {
  float x, y, z;
};
__device__ __noinline__ float dot3(V3 a, V3 b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}
__device__ __noinline__ int fib(int k) {
  return k < 2 ? k : fib(k - 1) + fib(k - 2);
}
extern "C" __global__ void device_calls(const float* v, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  V3 a{v[3 * i], v[3 * i + 1], v[3 * i + 2]};
  V3 w{1.0f, 2.0f, 3.0f};
  out[i] = (float)fib(i % 12) + dot3(a, w);
}
