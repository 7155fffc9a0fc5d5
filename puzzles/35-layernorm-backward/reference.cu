// Reference: every sum in double, nothing clever. Block b of ln_bwd_dx takes rows
// b*M/parts .. (b+1)*M/parts - 1. For each row it forms x-hat = (x - mean) * rstd and g = gamma * dy,
// the two row means c1 = mean(x-hat * g) and c2 = mean(g) (each thread's share in shared memory,
// added in order by thread 0), then
//   dx = rstd * (g - c2 - x-hat * c1),
// and adds dy * x-hat and dy into its own column sums, kept as doubles in `part`. ln_bwd_dgamma
// adds the parts' sums for each column in order.
#include <cuda_bf16.h>

extern "C" __global__ void ln_bwd_dx(const __nv_bfloat16* x, const __nv_bfloat16* dy,
                                     const __nv_bfloat16* gamma, const float* mean,
                                     const float* rstd, __nv_bfloat16* dx, float* dgamma,
                                     float* dbeta, float* part, int M, int N, int parts) {
  __shared__ double s1[1024], s2[1024];
  double* pg = reinterpret_cast<double*>(part) + (long long)blockIdx.x * 2 * N; // dgamma's sums
  double* pb = pg + N;                                                           // dbeta's sums
  for (int c = threadIdx.x; c < N; c += blockDim.x) pg[c] = pb[c] = 0.0;
  const int r0 = (int)((long long)blockIdx.x * M / parts);
  const int r1 = (int)((long long)(blockIdx.x + 1) * M / parts);
  for (int r = r0; r < r1; ++r) {
    const long long base = (long long)r * N;
    const double mu = mean[r], rs = rstd[r];
    double a = 0.0, b = 0.0;
    for (int c = threadIdx.x; c < N; c += blockDim.x) {
      double xh = ((double)__bfloat162float(x[base + c]) - mu) * rs;
      double g = (double)__bfloat162float(gamma[c]) * (double)__bfloat162float(dy[base + c]);
      a += xh * g;
      b += g;
    }
    s1[threadIdx.x] = a;
    s2[threadIdx.x] = b;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int k = 1; k < blockDim.x; ++k) {
        a += s1[k];
        b += s2[k];
      }
      s1[0] = a / N;
      s2[0] = b / N;
    }
    __syncthreads();
    const double c1 = s1[0], c2 = s2[0];
    for (int c = threadIdx.x; c < N; c += blockDim.x) {
      double xh = ((double)__bfloat162float(x[base + c]) - mu) * rs;
      double d = (double)__bfloat162float(dy[base + c]);
      double g = (double)__bfloat162float(gamma[c]) * d;
      dx[base + c] = __float2bfloat16_rn((float)(rs * (g - c2 - xh * c1)));
      pg[c] += d * xh;
      pb[c] += d;
    }
    __syncthreads(); // s1[0] and s2[0] are read before the next row overwrites them
  }
}

extern "C" __global__ void ln_bwd_dgamma(const __nv_bfloat16* x, const __nv_bfloat16* dy,
                                         const __nv_bfloat16* gamma, const float* mean,
                                         const float* rstd, __nv_bfloat16* dx, float* dgamma,
                                         float* dbeta, float* part, int M, int N, int parts) {
  const int c = blockIdx.x * 32 + threadIdx.x;
  if (threadIdx.x >= 32 || c >= N) return;
  const double* p = reinterpret_cast<const double*>(part);
  double g = 0.0, b = 0.0;
  for (int k = 0; k < parts; ++k) {
    g += p[(long long)k * 2 * N + c];
    b += p[(long long)k * 2 * N + N + c];
  }
  dgamma[c] = (float)g;
  dbeta[c] = (float)b;
}
