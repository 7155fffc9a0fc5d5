// fault: the C++ headers learners reach for: cstdio, cmath, cstdint, climits, cfloat, cstddef, cstdlib, algorithm
// sim: passed
// gpu: same
// gpu-sticky: no
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <climits>
#include <cfloat>
#include <cstddef>
#include <cstdlib>
#include <algorithm>
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  std::int64_t j = i;
  if (j < n) {
    float x = a[i], y = b[i];
    std::swap(x, y);
    c[i] = std::max(x, -FLT_MAX) + std::min(y, FLT_MAX) + 0.0f * std::sqrt(std::fabs(x)) + 0.0f * std::abs(-1);
  }
}
