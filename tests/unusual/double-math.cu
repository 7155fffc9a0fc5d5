// fault: double-precision sin, exp and sqrt in device code
// sim: passed
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    double x = double(a[i]);
    double z = 0.0 * (sin(x) + cos(x) + sqrt(exp(x)));
    c[i] = float(double(a[i]) + double(b[i]) + z);
  }
}
