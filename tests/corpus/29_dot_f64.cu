// Double-precision dot product: each block reduces a[i] * b[i] over a grid-stride loop in shared
// memory (fma in f64), then thread 0 adds the block's sum into *out with the native double
// atomicAdd.
extern "C" __global__ void dot_f64(const double* a, const double* b, double* out, int n) {
  __shared__ double s[128];
  double acc = 0.0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    acc = fma(a[i], b[i], acc);
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int st = 64; st > 0; st >>= 1) {
    if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}
