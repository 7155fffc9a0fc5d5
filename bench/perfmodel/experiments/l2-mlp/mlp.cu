// Memory-level parallelism of the L2 and of cp.async, beside the DRAM curve `warpbook probe` has.
//
// What: a read stream in which each thread has exactly U 16-byte reads in flight, launched with B
// blocks of 128 threads per SM, so the bytes in flight per SM are known (B x 128 x 16 x U). Four
// ways: plain loads (ld.global.cg) or cp.async.cg into shared memory, each from DRAM (a 1 GiB
// stream read once) or from the L2 (a 16 MiB window read over and over). The bandwidth reached
// gives the loaded latency by Little's law: bytes in flight / bandwidth.
// Run (on the GPU machine):  nvcc -O3 -arch=sm_90 -o /tmp/mlp mlp.cu && /tmp/mlp
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

// mask: window size in float4 minus one (a power of two), or ~0 for a stream read once.
template <int U, bool CP>
__global__ void __launch_bounds__(128) mlp(const float4* __restrict__ x, unsigned long long mask,
                                           long steps, float never, float* sink) {
  extern __shared__ float4 s[];
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  const unsigned long long step = (unsigned long long)gridDim.x * 128 * U;
  unsigned long long i = (unsigned long long)blockIdx.x * 128 * U + threadIdx.x;
#pragma unroll 1
  for (long it = 0; it < steps; ++it, i += step) {
    float4 v[U];
    if (CP) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        unsigned d = (unsigned)__cvta_generic_to_shared(s + u * 128 + threadIdx.x);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d),
                     "l"(x + ((i + u * 128) & mask)));
      }
      asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = s[u * 128 + threadIdx.x];
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = ld_cg(x + ((i + u * 128) & mask));
    }
#pragma unroll
    for (int u = 0; u < U; ++u) acc.x += v[u].x, acc.y += v[u].y, acc.z += v[u].z, acc.w += v[u].w;
  }
  const float t = acc.x + acc.y + acc.z + acc.w;
  if (t == never) sink[blockIdx.x * 128 + threadIdx.x] = t;
}

template <int U, bool CP>
float run(const float4* x, unsigned long long mask, int grid, long steps, float* sink) {
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  const int smem = CP ? U * 128 * 16 : 0;
  std::vector<float> ms;
  for (int r = 0; r < 6; ++r) {
    cudaEventRecord(a);
    mlp<U, CP><<<grid, 128, smem>>>(x, mask, steps, -1.2345f, sink);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t;
    cudaEventElapsedTime(&t, a, b);
    if (r) ms.push_back(t); // the first run warms the window into the L2
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

template <int U, bool CP>
void point(const char* mode, const float4* x, bool l2, int sms, int B, float* sink) {
  const int grid = sms * B;
  const unsigned long long total4 = l2 ? (1ull << 30) / 16 * 4 : (1ull << 30) / 16; // float4s
  const long steps = long(total4 / (unsigned long long)(grid * 128 * U));
  const unsigned long long mask = l2 ? (16ull << 20) / 16 - 1 : ~0ull;
  const float ms = run<U, CP>(x, mask, grid, steps, sink);
  const double bytes = double(steps) * grid * 128 * U * 16;
  const double kib = B * 128 * 16.0 * U / 1024;
  const double gbps = bytes / (ms * 1e6);
  // Little: latency = bytes in flight on the GPU / bandwidth
  printf("%-4s %-4s B=%2d U=%d %6.0f KiB/SM  %7.0f GB/s  latency %6.0f ns\n", mode,
         l2 ? "L2" : "DRAM", B, U, kib, gbps, kib * 1024 * sms / gbps);
}

template <bool CP> void sweep(const char* mode, const float4* x, bool l2, int sms, float* sink) {
  for (int B : {1, 2, 4, 8, 16}) point<1, CP>(mode, x, l2, sms, B, sink);
  for (int B : {8, 16}) point<2, CP>(mode, x, l2, sms, B, sink);
  for (int B : {8, 16}) point<4, CP>(mode, x, l2, sms, B, sink);
  point<8, CP>(mode, x, l2, sms, 8, sink);
}

int main() {
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  const int sms = p.multiProcessorCount;
  printf("%s, %d SMs\n", p.name, sms);
  float4* x;
  float* sink;
  cudaMalloc(&x, (1ull << 30) + (16 << 20));
  cudaMalloc(&sink, 64 << 20);
  cudaMemset(x, 0, (1ull << 30) + (16 << 20));
  sweep<false>("ld", x, false, sms, sink);
  sweep<true>("cp", x, false, sms, sink);
  sweep<false>("ld", x, true, sms, sink);
  sweep<true>("cp", x, true, sms, sink);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
