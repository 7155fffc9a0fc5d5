// fault: #pragma unroll, __builtin_expect, __builtin_assume, __restrict__, __ldg
// sim: passed
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __builtin_assume(n >= 0);
  if (__builtin_expect(i < n, 1)) {
    float s = 0.0f;
#pragma unroll 4
    for (int k = 0; k < 4; ++k) s += (k == 0) ? __ldg(&a[i]) : 0.0f;
    c[i] = s + __ldg(&b[i]);
  }
}
