// fault: an unannotated helper function and a plain lambda inside the kernel
// sim: passed
// gpu: same
// gpu-sticky: no
float twice(float x) { return 2.0f * x; }
struct Adder {
  float k;
  float operator()(float x) const { return x + k; }
};
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  auto half = [](float x) { return 0.5f * x; };
  if (i < n) c[i] = half(twice(a[i])) + Adder{0.0f}(b[i]);
}
