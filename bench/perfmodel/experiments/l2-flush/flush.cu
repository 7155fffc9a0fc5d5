// What an L2 flush leaves behind, and what the next timed kernel pays for it.
//
// What: Warpbook (and puzzles_vs_torch.py, like triton.testing.do_bench) evicts a kernel's data
// before each timed sample by writing a scratch buffer of twice the L2. Writing leaves the L2 full
// of dirty lines, and the timed kernel's first reads must write them back to DRAM before their
// own lines can take the space. This program times the same kernels after three kinds of flush:
//   write  the scratch buffer rewritten (cuMemsetAsync), as triton.testing.do_bench does
//   read   the scratch buffer read by a kernel (the L2 ends up holding clean lines)
//   none   nothing between samples (the last sample's tail is still in the L2)
// and, for the write flush, how long the same rewrite of the scratch buffer takes on its own, so
// that the difference can be read as bytes written back.
// Run (on the GPU machine):  nvcc -O3 -arch=sm_90 -o /tmp/flush flush.cu && /tmp/flush
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      printf("%s: %s\n", #x, cudaGetErrorString(e_));                                              \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

// A read stream: each thread has 4 16-byte loads in flight; the xor goes to *sink only if it
// equals `never`, so nothing is stored but the loads cannot be dropped.
template <bool CS> __device__ __forceinline__ uint4 ld(const uint4* p) {
  return CS ? __ldcs(p) : __ldcg(p);
}
template <bool CS>
__device__ __forceinline__ void read_body(const uint4* __restrict__ p, size_t n, unsigned never,
                                          unsigned* sink) {
  unsigned acc = 0;
  const size_t step = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * step < n; i += 4 * step) {
    uint4 a = ld<CS>(p + i), b = ld<CS>(p + i + step), c = ld<CS>(p + i + 2 * step),
          d = ld<CS>(p + i + 3 * step);
    acc ^= a.x ^ a.w ^ b.y ^ b.z ^ c.x ^ c.w ^ d.y ^ d.z;
  }
  for (; i < n; i += step) acc ^= ld<CS>(p + i).x;
  if (acc == never) *sink = acc;
}
// The flushes (two cache policies) and the timed read, under separate names for Nsight Compute.
__global__ void __launch_bounds__(256)
    flush_cs(const uint4* p, size_t n, unsigned nv, unsigned* s) {
  read_body<true>(p, n, nv, s);
}
__global__ void __launch_bounds__(256)
    flush_cg(const uint4* p, size_t n, unsigned nv, unsigned* s) {
  read_body<false>(p, n, nv, s);
}
__global__ void __launch_bounds__(256)
    timed_read(const uint4* p, size_t n, unsigned nv, unsigned* s) {
  read_body<true>(p, n, nv, s);
}

// c = a + b over float4s (puzzle 01's work).
__global__ void __launch_bounds__(256)
    timed_add(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c,
              size_t n) {
  const size_t step = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    float4 x = __ldcs(a + i), y = __ldcs(b + i);
    __stcs(c + i, make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w));
  }
}

int main(int argc, char** argv) {
  const bool ncu = argc > 1; // a few samples each, for Nsight Compute

  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const size_t l2 = size_t(prop.l2CacheSize);
  const size_t scratch = std::max<size_t>(2 * l2, size_t(64) << 20); // as Warpbook's runner
  const size_t big = size_t(1) << 30;
  char *s, *s2, *x, *y, *z;
  unsigned* sink;
  CK(cudaMalloc(&s, scratch));
  CK(cudaMalloc(&s2, scratch));
  CK(cudaMalloc(&x, big));
  CK(cudaMalloc(&y, big));
  CK(cudaMalloc(&z, big));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(s, 1, scratch));
  CK(cudaMemset(s2, 2, scratch));
  CK(cudaMemset(x, 0, big));
  CK(cudaMemset(y, 0, big));
  const int grid = sms * 8;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  printf("%s, %d SMs, L2 %zu MiB, scratch %zu MiB\n", prop.name, sms, l2 >> 20, scratch >> 20);

  struct Job {
    const char* name;
    size_t bytes; // moved by the kernel
    int kind;     // 0 read, 1 add
  };
  const Job jobs[] = {{"read  66 MiB", 66u << 20, 0},
                      {"read 264 MiB", 264u << 20, 0},
                      {"read 805 MiB", 805u << 20, 0},
                      {"add  805 MiB (a+b->c)", 805u << 20, 1},
                      {"add  268 MiB (a+b->c)", 268u << 20, 1}};
  // 0 write: memset of the scratch; 1 read (ld.cs) of it; 2 read (ld.cg) of it; 3 memset, then
  // an ld.cg read of a second scratch buffer; 4 nothing.
  printf("%-22s %10s %10s %10s %14s %10s  (median us)\n", "kernel", "write", "read.cs", "read.cg",
         "write+read.cg", "none");
  for (const Job& j : jobs) {
    printf("%-22s", j.name);
    for (int m = 0; m < 5; ++m) {
      std::vector<float> t;
      for (int k = 0; k < (ncu ? 4 : 34); ++k) {
        if (m == 0 || m == 3) CK(cudaMemsetAsync(s, k & 0xFF, scratch));
        if (m == 1) flush_cs<<<grid, 256>>>((const uint4*)s, scratch / 16, 7u, sink);
        if (m == 2) flush_cg<<<grid, 256>>>((const uint4*)s, scratch / 16, 7u, sink);
        if (m == 3) flush_cg<<<grid, 256>>>((const uint4*)s2, scratch / 16, 7u, sink);
        CK(cudaEventRecord(e0));
        if (j.kind == 0)
          timed_read<<<grid, 256>>>((const uint4*)x, j.bytes / 16, 7u, sink);
        else
          timed_add<<<grid, 256>>>((const float4*)x, (const float4*)y, (float4*)z,
                                   j.bytes / 3 / 16);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (k >= 3) t.push_back(ms * 1e3f);
      }
      std::sort(t.begin(), t.end());
      printf(" %*.1f", m == 3 ? 14 : 10, t[t.size() / 2]);
    }
    printf("\n");
  }
  // The write flush on its own, and a write flush followed by an untimed read of s2, for scale.
  for (int m = 0; m < 2 && !ncu; ++m) {
    std::vector<float> t;
    for (int k = 0; k < 24; ++k) {
      CK(cudaEventRecord(e0));
      if (m == 0)
        CK(cudaMemsetAsync(s, k & 0xFF, scratch));
      else
        flush_cg<<<grid, 256>>>((const uint4*)s2, scratch / 16, 7u, sink);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (k >= 3) t.push_back(ms * 1e3f);
    }
    std::sort(t.begin(), t.end());
    printf("%s of the %zu MiB scratch alone: %.1f us (%.2f TB/s)\n", m == 0 ? "memset" : "read",
           scratch >> 20, t[t.size() / 2], scratch / (t[t.size() / 2] * 1e-6) / 1e12);
  }
  return 0;
}
