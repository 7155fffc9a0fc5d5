// fault: RoPE with __sinf / __cosf: their range reduction (x / 2pi rounded to f32) is off by up to 0.012 rad at position 131071
// puzzle: 26-rope
// sim: wrong_answer | elements of y are a near miss | an approximate intrinsic
// gpu: wrong_answer | elements of y are
// note: Everything else is right (pos read, both layouts, inv_freq rounded once). The error grows with the angle: a few elements already miss at positions below 2048 (2e-4 where y is near 0), and at 100000-131071 most do. The simulator reduces the argument of sin.approx / cos.approx as the GPU does (docs/simulator.md); before it did, this kernel passed there. On the H200 the special function unit adds its own error (about 2^-22, not modelled), and when an element whose expected value is near 0 is among the wrong ones its relative error is large, so the GPU's message may say "are wrong" rather than "a near miss" (seen once in three runs on 2026-11-24).
#include <cuda_bf16.h>

extern "C" __global__ void rope(const __nv_bfloat16* x, const int* pos, __nv_bfloat16* y,
                                int tokens, int heads, int dim, int interleaved) {
  const int half = dim / 2;
  const int t = blockIdx.x;
  if (t >= tokens) return;
  for (int k = threadIdx.x; k < heads * half; k += blockDim.x) {
    const int h = k / half, i = k % half;
    const float angle = (float)pos[t] * (float)pow(10000.0, -2.0 * i / dim);
    float s, c;
    __sincosf(angle, &s, &c);
    const long long row = ((long long)t * heads + h) * dim;
    const int a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    const float x0 = __bfloat162float(x[row + a]), x1 = __bfloat162float(x[row + b]);
    y[row + a] = __float2bfloat16(x0 * c - x1 * s);
    y[row + b] = __float2bfloat16(x0 * s + x1 * c);
  }
}
