// Experiment · does the tensor cores' mma.sync rate depend on the data they multiply?
//
// What: `warpbook probe` times mma.sync.m16n8k16 (bf16 in, f32 accumulate) on operand registers
// that never change, and whose bits are mostly alike (one exponent, 7 varying mantissa bits). A
// GEMM feeds every mma different, random-looking operands. Switching more bits costs more
// power, and a GPU at its power limit lowers its clock. This times the same mma loop on four
// kinds of operands, and reads the SM clock inside the kernel (clock64 over %globaltimer), at
// two lengths (a GEMM-sized launch of ~0.3 ms and a long one of ~30 ms) and two occupancies
// (32 warps an SM, as the probe runs; 8 warps an SM, as puzzle 20's GEMM runs):
//   probe       the probe's operands: 0x3c00 | ((tid * 11 + k * 5) & 0x7f), the same every mma
//   same-rand   random bf16 in [-1, 1], one set a thread, the same every mma
//   rand        random bf16 in [-1, 1], four sets a thread, a different set each mma
//   zeros       all zero
// Build and run (on the GPU machine):
//   nvcc -O3 -arch=sm_90 -o /tmp/mma_data bench/perfmodel/experiments/mma-data/mma_data.cu &&
//   /tmp/mma_data
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e_));                                         \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

constexpr int NSET = 4;   // operand sets a thread cycles through
constexpr int CHAINS = 8; // independent accumulators (mma in flight) a warp

// ops: per thread, NSET sets of 6 registers (a0..a3, b0, b1), laid out [set][reg][thread].
// clk: per block, the SM clock cycles and nanoseconds thread 0 saw.
__global__ void mma_loop(int iters, const uint32_t* __restrict__ ops, float* sink, long long* clk) {
  const int nthreads = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t r[NSET][6];
#pragma unroll
  for (int s = 0; s < NSET; ++s)
#pragma unroll
    for (int q = 0; q < 6; ++q) r[s][q] = ops[(s * 6 + q) * (size_t)nthreads + t];
  float d[CHAINS][4] = {};
  long long c0 = clock64(), g0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) {
      const uint32_t* o = r[k % NSET];
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                   "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                   : "+f"(d[k][0]), "+f"(d[k][1]), "+f"(d[k][2]), "+f"(d[k][3])
                   : "r"(o[0]), "r"(o[1]), "r"(o[2]), "r"(o[3]), "r"(o[4]), "r"(o[5]));
    }
  }
  long long c1 = clock64(), g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  float s = 0;
#pragma unroll
  for (int k = 0; k < CHAINS; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3];
  if (s == 1234.5f) sink[t] = s; // keeps the loop; never true in practice
  if (threadIdx.x == 0) {
    clk[2 * blockIdx.x] = c1 - c0;
    clk[2 * blockIdx.x + 1] = g1 - g0;
  }
}

static uint16_t bf16_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16); // round to nearest even
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("%s, %d SMs\n", prop.name, sms);
  std::printf("%-10s %-14s %9s %10s %10s %9s %8s\n", "operands", "warps per SM", "launch", "us",
              "TFLOP/s", "SM MHz", "FLOP/clk");
  const char* kinds[] = {"probe", "same-rand", "rand", "zeros"};
  struct Occ {
    int block, blocks_per_sm;
  } occs[] = {{256, 4}, {128, 2}};
  float* sink;
  long long* clk;
  uint32_t* ops;
  size_t max_blocks = 0, max_threads = 0; // over the occupancies: the buffers' sizes
  for (const Occ& oc : occs) {
    max_blocks = std::max(max_blocks, size_t(sms) * oc.blocks_per_sm);
    max_threads = std::max(max_threads, size_t(sms) * oc.blocks_per_sm * oc.block);
  }
  CK(cudaMalloc(&sink, max_threads * sizeof(float)));
  CK(cudaMalloc(&clk, max_blocks * 2 * sizeof(long long)));
  CK(cudaMalloc(&ops, max_threads * NSET * 6 * sizeof(uint32_t)));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (const Occ& oc : occs) {
    const int grid = sms * oc.blocks_per_sm, nthreads = grid * oc.block;
    for (const char* kind : kinds) {
      std::vector<uint32_t> h(size_t(nthreads) * NSET * 6);
      for (int s = 0; s < NSET; ++s)
        for (int q = 0; q < 6; ++q)
          for (int t = 0; t < nthreads; ++t) {
            uint32_t v = 0;
            if (!std::strcmp(kind, "probe")) {
              const uint32_t lo = 0x3c00u | ((t * 11u + q * 5u) & 0x7fu);
              v = lo | (lo << 16);
            } else if (!std::strcmp(kind, "rand") || !std::strcmp(kind, "same-rand")) {
              v = bf16_of(u(rng)) | (uint32_t(bf16_of(u(rng))) << 16);
            }
            h[(size_t(s) * 6 + q) * nthreads + t] = v;
          }
      if (!std::strcmp(kind, "same-rand")) // every set a copy of set 0
        for (int s = 1; s < NSET; ++s)
          std::memcpy(&h[size_t(s) * 6 * nthreads], &h[0], size_t(6) * nthreads * 4);
      CK(cudaMemcpy(ops, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
      for (double target_us : {300.0, 30000.0}) {
        // Calibrate: 64 iterations, then scale.
        int iters = 64;
        float ms = 0;
        for (int rep = 0; rep < 3; ++rep) {
          CK(cudaEventRecord(e0));
          mma_loop<<<grid, oc.block>>>(iters, ops, sink, clk);
          CK(cudaEventRecord(e1));
          CK(cudaEventSynchronize(e1));
          CK(cudaEventElapsedTime(&ms, e0, e1));
          iters = std::max(1, int(iters * target_us / (ms * 1000.0)));
        }
        std::vector<float> times;
        std::vector<double> mhz;
        std::vector<long long> hc(size_t(grid) * 2);
        // GEMM-sized launches back to back (as the timing loop runs them); long ones fewer.
        const int reps = target_us < 1000 ? 50 : 8;
        for (int rep = 0; rep < reps; ++rep) {
          CK(cudaEventRecord(e0));
          mma_loop<<<grid, oc.block>>>(iters, ops, sink, clk);
          CK(cudaEventRecord(e1));
          CK(cudaEventSynchronize(e1));
          CK(cudaEventElapsedTime(&ms, e0, e1));
          times.push_back(ms * 1000.f);
          CK(cudaMemcpy(hc.data(), clk, hc.size() * 8, cudaMemcpyDeviceToHost));
          double cyc = 0, ns = 0;
          for (int b = 0; b < grid; ++b) cyc += hc[2 * b], ns += hc[2 * b + 1];
          mhz.push_back(1e3 * cyc / ns);
        }
        std::sort(times.begin(), times.end());
        std::sort(mhz.begin(), mhz.end());
        const double us = times[times.size() / 2], clock_mhz = mhz[mhz.size() / 2];
        const double flop = double(grid) * (oc.block / 32) * iters * CHAINS * 4096.0;
        std::printf("%-10s %-14d %9s %10.1f %10.1f %9.0f %8.0f\n", kind,
                    oc.block / 32 * oc.blocks_per_sm, target_us < 1000 ? "0.3 ms" : "30 ms", us,
                    flop / us * 1e-6, clock_mhz, flop / (us * 1e-6) / (clock_mhz * 1e6) / sms);
      }
    }
  }
  return 0;
}
