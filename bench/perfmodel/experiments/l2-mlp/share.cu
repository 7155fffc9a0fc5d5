// The L2 when many SMs read the same lines at once, as a GEMM's blocks read a shared panel.
//
// What: every block of 128 threads (8 per SM) walks a 512 KiB panel in 16-byte loads
// (ld.global.cg, 4 in flight per thread), `reps` times. Blocks are grouped S at a time onto one
// panel: S = 1, each block its own panel; S = all, every block the same one. The panels stay in
// the L2 (at most 16 MiB in all, the panels are repeated past that). `lag`: the S blocks of a
// panel start at different places in it (spread evenly), so they share lines but not moments.
// Run (on the GPU machine):  nvcc -O3 -arch=sm_90 -o /tmp/share share.cu && /tmp/share
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

__device__ __forceinline__ float4 ld_cg(const float4* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p));
  return v;
}

constexpr int kPanel4 = (512 << 10) / 16; // float4s per panel
constexpr int kPanels = 32;               // 16 MiB

__global__ void __launch_bounds__(128)
    share(const float4* __restrict__ x, int S, int lag, int reps, float never, float* sink) {
  const int group = blockIdx.x / S, member = blockIdx.x % S;
  const float4* p = x + size_t(group % kPanels) * kPanel4;
  int start = lag ? (int)((long long)member * kPanel4 / S) & ~511 : 0;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int r = 0; r < reps; ++r)
    for (int i = threadIdx.x; i < kPanel4; i += 512) {
      float4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = ld_cg(p + ((start + i + u * 128) & (kPanel4 - 1)));
#pragma unroll
      for (int u = 0; u < 4; ++u)
        acc.x += v[u].x, acc.y += v[u].y, acc.z += v[u].z, acc.w += v[u].w;
    }
  const float t = acc.x + acc.y + acc.z + acc.w;
  if (t == never) sink[blockIdx.x * 128 + threadIdx.x] = t;
}

int main() {
  cudaDeviceProp pr;
  cudaGetDeviceProperties(&pr, 0);
  const int sms = pr.multiProcessorCount, grid = sms * 8, reps = 8;
  printf("%s, %d SMs, %d blocks of 128, each reading a 512 KiB panel %d times\n", pr.name, sms,
         grid, reps);
  float4* x;
  float* sink;
  cudaMalloc(&x, size_t(kPanels) * kPanel4 * 16);
  cudaMalloc(&sink, size_t(grid) * 128 * 4);
  cudaMemset(x, 0, size_t(kPanels) * kPanel4 * 16);
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  for (int lag : {0, 1})
    for (int S : {1, 2, 4, 8, 16, 33, 66, 132, 1056}) {
      std::vector<float> ms;
      for (int r = 0; r < 6; ++r) {
        cudaEventRecord(a);
        share<<<grid, 128>>>(x, S, lag, reps, -1.2345f, sink);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float t;
        cudaEventElapsedTime(&t, a, b);
        if (r) ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      const double bytes = double(grid) * reps * kPanel4 * 16.0;
      printf("S=%4d blocks a panel, %s: %8.1f us  %7.0f GB/s to the SMs\n", S,
             lag ? "staggered starts" : "in step         ", ms[2] * 1e3, bytes / (ms[2] * 1e6));
    }
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
