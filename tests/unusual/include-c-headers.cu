// fault: the C headers learners reach for: stdio, math, stdint, limits, float, stddef, stdlib
// sim: passed
// gpu: same
// gpu-sticky: no
#include <stdio.h>
#include <math.h>
#include <stdint.h>
#include <limits.h>
#include <float.h>
#include <stddef.h>
#include <stdlib.h>
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int32_t j = i;
  size_t k = (size_t)j;
  if (j < n && j < INT_MAX) c[k] = fminf(a[k] + b[k], FLT_MAX) + 0.0f * fabsf(a[k]);
}
