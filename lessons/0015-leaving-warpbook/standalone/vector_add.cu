// Lesson 0015 · puzzle 01's solution outside Warpbook: allocate, fill, launch, time, check.
// Build and run (an H100 or H200; sm_90a is Hopper's architecture-specific target):
//   nvcc -O3 -arch=sm_90a -lineinfo -DBLOCK=1024 -DITEMS=4 -o vector_add vector_add.cu
//   ./vector_add            # n = 2^26, as puzzle 01's [perf] size
//   ./vector_add 1000003    # any n
// The kernel is solutions/01-vector-add.cu as Warpbook compiles it: its `// @tune` lines become
// the -D options above, and the launch is puzzle.toml's: grid cdiv(n, BLOCK * ITEMS), BLOCK threads.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef BLOCK
#define BLOCK 1024
#endif
#ifndef ITEMS
#define ITEMS 4
#endif

// Every CUDA call returns an error code; a launch reports its own through cudaGetLastError, and
// a fault inside the kernel only at the next call that waits for it (cudaDeviceSynchronize,
// cudaEventSynchronize, a cudaMemcpy). Check all of them, or a failure shows up calls later.
#define CUDA_CHECK(call)                                                                          \
  do {                                                                                            \
    cudaError_t err_ = (call);                                                                    \
    if (err_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                          \
                   cudaGetErrorString(err_));                                                     \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n) {
  const int vecs = ITEMS / 4; // float4 vectors per thread
  long long first = (long long)blockIdx.x * blockDim.x * vecs + threadIdx.x;
  long long n4 = n / 4;
  float4 x[vecs], y[vecs];
#pragma unroll
  for (int k = 0; k < vecs; ++k) {
    long long v = first + (long long)k * blockDim.x;
    if (v < n4) { // cudaMalloc returns 256-byte aligned memory, as Warpbook's buffers are
      x[k] = reinterpret_cast<const float4*>(a)[v];
      y[k] = reinterpret_cast<const float4*>(b)[v];
    }
  }
#pragma unroll
  for (int k = 0; k < vecs; ++k) {
    long long v = first + (long long)k * blockDim.x;
    if (v < n4)
      __stcs(reinterpret_cast<float4*>(c) + v,
             make_float4(x[k].x + y[k].x, x[k].y + y[k].y, x[k].z + y[k].z, x[k].w + y[k].w));
    else if (v == n4)
      for (long long i = n4 * 4; i < n; ++i) c[i] = a[i] + b[i]; // the 0-3 leftover elements
  }
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1 << 26;
  const size_t bytes = size_t(n) * sizeof(float);
  std::vector<float> ha(n), hb(n), hc(n);
  for (int i = 0; i < n; ++i) ha[i] = float(i % 1000) * 0.5f, hb[i] = float(i % 7) - 3.0f;

  float *a, *b, *c;
  CUDA_CHECK(cudaMalloc(&a, bytes));
  CUDA_CHECK(cudaMalloc(&b, bytes));
  CUDA_CHECK(cudaMalloc(&c, bytes));
  CUDA_CHECK(cudaMemcpy(a, ha.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b, hb.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(c, 0xff, bytes)); // NaN everywhere: an element never written shows

  const int grid = int((n + (long long)BLOCK * ITEMS - 1) / ((long long)BLOCK * ITEMS));
  vector_add<<<grid, BLOCK>>>(a, b, c, n); // the first launch also loads the module: not timed
  CUDA_CHECK(cudaGetLastError());          // a bad grid or block size fails here
  CUDA_CHECK(cudaDeviceSynchronize());     // a fault inside the kernel fails here

  CUDA_CHECK(cudaMemcpy(hc.data(), c, bytes, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    if (!(hc[i] == ha[i] + hb[i]) && wrong++ < 5)
      std::printf("c[%d] = %g, expected %g\n", i, hc[i], ha[i] + hb[i]);
  if (wrong) {
    std::printf("%d of %d elements wrong\n", wrong, n);
    return 1;
  }

  // Timing: events on the stream, one pair per launch, the median of 20. Here the three buffers
  // (768 MiB at n = 2^26) are many times the L2, so little of one launch's data is left for the
  // next; for a small kernel, flush the L2 between launches (write a buffer larger than it), as
  // Warpbook does before every sample.
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms(20);
  for (float& t : ms) {
    CUDA_CHECK(cudaEventRecord(start));
    vector_add<<<grid, BLOCK>>>(a, b, c, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
  }
  std::sort(ms.begin(), ms.end());
  const double us = 1000.0 * ms[ms.size() / 2];
  std::printf("vector_add n=%d: %.1f us median, %.0f GB/s\n", n, us, 3.0 * bytes / (us * 1e3));

  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  CUDA_CHECK(cudaFree(c));
  return 0;
}
