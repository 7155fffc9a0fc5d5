// The L2 read by the copy engine (cp.async.bulk into shared memory, what TMA-fed kernels draw),
// by the window the SMs read from and by how many SMs read the same lines at once.
//
// What: one block per SM (whole groups of S), one thread of it keeping `slots` copies of 8 KiB in
// flight, each completing on its own mbarrier; the S blocks of a group walk the same chunks of the
// window in step, the groups interleaved, `reps` passes. Windows of 2 to 32 MiB, S = 1, 8, 16
// (puzzle 43's B and A panels), 5 and 24 slots (40 and 192 KiB in flight per SM; 43 keeps 192).
// `warpbook probe`'s l2_bulk_read is S = 1 on half the L2 with 5 slots.
// Run (on the GPU machine):  nvcc -O3 -arch=sm_90a -o /tmp/bulk bulk.cu && /tmp/bulk
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

__global__ void bulk(const char* x, long chunks, int chunk, int share, int reps, int slots,
                     float* sink) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ __align__(8) unsigned long long bar[32];
  if (threadIdx.x != 0) return;
  const int groups = gridDim.x / share, g = blockIdx.x / share;
  const unsigned b0 = (unsigned)__cvta_generic_to_shared(bar);
  const unsigned r0 = (unsigned)__cvta_generic_to_shared(ring);
  for (int s = 0; s < slots; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b0 + 8 * s) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  long issued = 0;
  auto wait = [&](long k) {
    const unsigned b = b0 + 8 * unsigned(k % slots), parity = unsigned(k / slots) & 1;
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
                   "selp.u32 %0, 1, 0, p; }"
                   : "=r"(done)
                   : "r"(b), "r"(parity)
                   : "memory");
  };
  for (int r = 0; r < reps; ++r)
    for (long c = g; c < chunks; c += groups, ++issued) {
      if (issued >= slots) wait(issued - slots);
      const unsigned s = unsigned(issued % slots), b = b0 + 8 * s;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(chunk)
                   : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                   "%2, [%3];" ::"r"(r0 + s * chunk),
                   "l"(x + c * chunk), "r"(chunk), "r"(b)
                   : "memory");
    }
  for (long k = issued > slots ? issued - slots : 0; k < issued; ++k) wait(k);
  if (ring[0] == 255 && ring[1] == 254) *sink = 1;
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("%s, %d SMs, %d MiB L2\n", prop.name, sms, prop.l2CacheSize >> 20);
  const size_t big = size_t(64) << 20;
  char* x;
  float* sink;
  cudaMalloc(&x, big);
  cudaMalloc(&sink, 4);
  cudaMemset(x, 1, big);
  cudaFuncSetAttribute(bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  auto best_of = [&](auto launch, double bytes) {
    launch(); // warms the window into the L2
    float best = 1e30f;
    for (int i = 0; i < 5; ++i) {
      cudaEventRecord(e0);
      launch();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      best = std::min(best, ms);
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) printf("  error %s\n", cudaGetErrorString(err));
    return bytes / (best * 1e-3) / 1e12;
  };
  const int chunk = 8192;
  for (int mib : {2, 4, 8, 16, 24, 32}) {
    const long chunks = (long(mib) << 20) / chunk;
    for (int share : {1, 8, 16}) {
      const int grid = sms / share * share; // whole groups
      // Every group reads the whole window once a pass; its members each read it too.
      const int reps = std::max(1, int((long(512) << 20) / (long(mib) << 20) / share));
      const double bytes = double(chunks) * chunk * share * reps;
      for (int slots : {5, 24}) {
        const double bk = best_of(
            [&] { bulk<<<grid, 32, slots * chunk>>>(x, chunks, chunk, share, reps, slots, sink); },
            bytes);
        printf("bulk   window %2d MiB  share %2d  %2d x 8 KiB in flight per SM       %6.2f TB/s\n",
               mib, share, slots, bk);
      }
    }
  }
}
