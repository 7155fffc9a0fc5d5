// Fast-math and integer intrinsics a learner reaches for: out[8*i + ...] = __fdividef, __sinf,
// __cosf, __logf, __saturatef, __fmul_rz, __frcp_rn, __fsqrt_rn of x[i]; h[i] = h2exp of a half2;
// u[i] = __umul24 + __vadd4 + __usad; l[i] = 64-bit __brevll + __popcll + __clzll + division.
#include <cuda_fp16.h>
extern "C" __global__ void intrinsics(const float* x, float* out, __half2* h, unsigned* u,
                                      long long* l, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  out[8 * i + 0] = __fdividef(v, 3.0f);
  out[8 * i + 1] = __sinf(v);
  out[8 * i + 2] = __cosf(v);
  out[8 * i + 3] = __logf(v + 4.0f);
  out[8 * i + 4] = __saturatef(v);
  out[8 * i + 5] = __fmul_rz(v, 1.1f);
  out[8 * i + 6] = __frcp_rn(v + 5.0f);
  out[8 * i + 7] = __fsqrt_rn(fabsf(v));
  h[i] = h2exp(h[i]);
  unsigned w = u[i];
  u[i] = __umul24(w, 7u) + __vadd4(w, 0x01010101u) + __usad(w, 5u, 1u);
  long long q = l[i];
  l[i] = (long long)__brevll(q) + __popcll(q) + __clzll(q) + q / (i + 1) + q % 7;
}
