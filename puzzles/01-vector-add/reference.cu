// Reference: one thread per element, the plainest correct form.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
