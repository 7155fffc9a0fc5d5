// fault: templates, constexpr and if constexpr in device code
// sim: passed
// gpu: same
// gpu-sticky: no
template <int K> struct Unroll {
  template <class F> __device__ static void run(F f) {
    if constexpr (K > 0) {
      f(K - 1);
      Unroll<K - 1>::run(f);
    }
  }
};
constexpr int kOne = 1;
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0.0f;
    Unroll<4>::run([&](int k) { s += (k == 0 ? kOne : 0) * a[i]; });
    c[i] = s + b[i];
  }
}
