// fault: <type_traits>, <utility> and <limits> in a templated kernel helper
// sim: passed
// gpu: same
// gpu-sticky: no
#include <type_traits>
#include <utility>
#include <limits>
template <class T> __device__ T add(T x, T y) {
  static_assert(std::is_floating_point<T>::value, "floats only");
  return x + y;
}
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float lo = std::numeric_limits<float>::lowest();
  auto p = std::make_pair(i, lo);
  if (p.first < n) c[i] = add(a[i], b[i]) + 0.0f * (p.second < 0);
}
