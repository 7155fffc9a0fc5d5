// Reference: every thread sums its grid-stride share in double; thread 0 adds the block's values
// in order and stores one double per block in the workspace; dot_final adds those in order.
extern "C" __global__ void dot_partial(const float* a, const float* b, float* partial, int n) {
  __shared__ double s[1024];
  double acc = 0.0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    acc += (double)a[i] * (double)b[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0.0;
    for (int k = 0; k < blockDim.x; ++k) t += s[k];
    reinterpret_cast<double*>(partial)[blockIdx.x] = t;
  }
}

extern "C" __global__ void dot_final(const float* partial, float* out, int parts) {
  if (threadIdx.x != 0) return;
  double t = 0.0;
  for (int k = 0; k < parts; ++k) t += reinterpret_cast<const double*>(partial)[k];
  out[0] = (float)t;
}
