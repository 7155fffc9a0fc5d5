// fault: a template that instantiates itself without end
// sim: compile_error | learner.cu
// gpu: same
// gpu-sticky: no
template <int N> struct Deep { static constexpr int v = Deep<N + 1>::v + 1; };
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + Deep<0>::v;
}
