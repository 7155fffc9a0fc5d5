// How many L1 misses an SM keeps in flight: scattered 4-byte loads (each lane its own line) at
// rising warps an SM and loads in flight a thread, from DRAM and from the L2.
//
// What: B blocks of 256 threads an SM (one wave), each thread issuing U independent 4-byte loads
// a step (unrolled), each to a line no other load touches that step: a warp's load is 32 lines,
// 32 sectors, as a row-per-thread walk's first touch of each sector is. The sectors asked for in
// flight at most are B x 8 warps x 32 lanes x U. Little's law turns the rate into the sectors an
// SM actually had in flight (rate x the latency of one load alone, measured by B = 1/8 warp, U =
// 1): where that stops growing while the sectors asked for still do, something caps the misses.
// Two windows: 4 GiB (every load from DRAM) and 16 MiB (from the L2, after a warming pass); each
// with loads that bypass the L1 (.cg) and plain ones, which allocate a line for every miss.
// Run (on the GPU machine):  nvcc -O3 -arch=sm_90 -o /tmp/misscap misscap.cu && /tmp/misscap
#include <cstdio>
#include <cuda_runtime.h>
#include <type_traits>

template <int U, bool CG>
__global__ void scatter(const float* __restrict__ x, long lines, int steps, float* out) {
  const long t = long(blockIdx.x) * blockDim.x + threadIdx.x,
             threads = long(gridDim.x) * blockDim.x;
  float s = 0;
  long at = t;
#pragma unroll 1
  for (int k = 0; k < steps; ++k) {
    float v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      long line = (at + long(u) * threads) % lines;
      v[u] = CG ? __ldcg(x + line * 32) : x[line * 32]; // .cg: not kept in the L1
    }
#pragma unroll
    for (int u = 0; u < U; ++u) s += v[u];
    at += long(U) * threads + 7919; // the next step's lines: none of this step's
  }
  out[t] = s;
}

template <int U, bool CG>
float run(const float* x, long lines, int grid, int block, int steps, float* out) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  scatter<U, CG><<<grid, block>>>(x, lines, steps, out); // warm-up (and fills the L2 window)
  float best = 1e30f;
  for (int r = 0; r < 3; ++r) {
    cudaEventRecord(e0);
    scatter<U, CG><<<grid, block>>>(x, lines, steps, out);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    best = ms < best ? ms : best;
  }
  return best;
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("%s, %d SMs\n", prop.name, sms);
  const long big = 4l << 30;
  float *x, *out;
  cudaMalloc(&x, big);
  cudaMalloc(&out, long(sms) * 8 * 256 * 4);
  cudaMemset(x, 0, big);
  auto sweep = [&](auto cg, long window, const char* what) {
    constexpr bool CG = decltype(cg)::value;
    const long lines = window / 128;
    // One load alone: one warp on the GPU, one load in flight.
    const int lone_steps = 2000;
    const float lone = run<1, CG>(x, lines, 1, 32, lone_steps, out);
    const double lat_ns = lone * 1e6 / lone_steps;
    printf("%s: one load alone %.0f ns\n", what, lat_ns);
    for (int b : {1, 2, 4, 8})
      for (int u : {1, 2, 4, 8}) {
        const int grid = sms * b, steps = 256 / u;
        float ms = u == 1   ? run<1, CG>(x, lines, grid, 256, steps, out)
                   : u == 2 ? run<2, CG>(x, lines, grid, 256, steps, out)
                   : u == 4 ? run<4, CG>(x, lines, grid, 256, steps, out)
                            : run<8, CG>(x, lines, grid, 256, steps, out);
        const double sectors = double(grid) * 256 * steps * u; // one a lane a load
        const double rate = sectors / sms / (ms * 1e6);        // sectors a ns an SM
        printf("  B=%d U=%d: %5d sectors asked for an SM  %6.3f sectors/ns an SM (%5.0f GB/s)"
               "  in flight ~%5.0f\n",
               b, u, b * 256 * u, rate, rate * 32 * sms, rate * lat_ns);
      }
  };
  sweep(std::true_type{}, big, "DRAM, ld.global.cg (4 GiB)");
  sweep(std::false_type{}, big, "DRAM, ld.global (4 GiB)");
  sweep(std::true_type{}, 16l << 20, "L2, ld.global.cg (16 MiB)");
  sweep(std::false_type{}, 16l << 20, "L2, ld.global (16 MiB)");
  cudaError_t err = cudaGetLastError();
  printf("%s\n", err == cudaSuccess ? "no error" : cudaGetErrorString(err));
}
