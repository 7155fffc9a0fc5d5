// Math functions: out[5*i + 0..4] = expf, __expf, rsqrtf, tanhf, sinf of x[i] (libdevice versions
// and the fast intrinsics), and d[i] = exp of the double x[i].
extern "C" __global__ void math_funcs(const float* x, float* out, double* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  out[5 * i + 0] = expf(v);
  out[5 * i + 1] = __expf(v);
  out[5 * i + 2] = rsqrtf(fabsf(v) + 1.0f);
  out[5 * i + 3] = tanhf(v);
  out[5 * i + 4] = sinf(v);
  d[i] = exp((double)v);
}
