// library: libcu++ (cuda::atomic_ref with block and device scopes)
// puzzle: 10-histogram
// like: solutions/10-histogram.cu
// same: global_load_sectors
//
// A byte histogram with cuda::atomic_ref: each block counts into a shared histogram through
// atomic_ref<unsigned, thread_scope_block> (relaxed: only the final counts matter), then adds its
// counts to the global bins through atomic_ref<unsigned, thread_scope_device>. The atomics are
// the same atom.shared / red.global instructions atomicAdd gives, with the scope spelled out.
#include <cuda/atomic>
// @tune BLOCK=256

extern "C" __global__ void histogram(const unsigned char* data, unsigned int* bins, int n) {
  __shared__ unsigned int local[256];
  for (int i = threadIdx.x; i < 256; i += BLOCK) local[i] = 0;
  __syncthreads();
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n;
       i += (long long)gridDim.x * BLOCK) {
    cuda::atomic_ref<unsigned int, cuda::thread_scope_block> bin(local[data[i]]);
    bin.fetch_add(1u, cuda::memory_order_relaxed);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += BLOCK) {
    if (!local[i]) continue;
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> bin(bins[i]);
    bin.fetch_add(local[i], cuda::memory_order_relaxed);
  }
}
