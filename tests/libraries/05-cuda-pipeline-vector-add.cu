// library: libcu++ (cuda::pipeline, cuda::memcpy_async)
// puzzle: 01-vector-add
// like: solutions/01-vector-add.cu
// same: global_load_sectors global_store_sectors
//
// A vector add whose block walks ITEMS tiles of BLOCK elements, staging the next tiles of a and b
// in shared memory with cuda::memcpy_async while it adds the current ones: a two-stage
// cuda::pipeline (cp.async on sm_80 and later), the double buffering of puzzle 17's solution in
// the library's words. Each thread copies and then reads its own element, so the pipeline is the
// thread's own (cuda::thread_scope_thread). The last step waits for every stage: waiting for all
// but the newest there too reads a tile still in flight (wrong on the H200, and on the simulator,
// whose cp.async copies land only when waited for).
#include <cuda/pipeline>
// @tune BLOCK=256
// @tune ITEMS=16

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  __shared__ float sa[2][BLOCK], sb[2][BLOCK];
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  const long long base = (long long)blockIdx.x * BLOCK * ITEMS + threadIdx.x;
  auto stage = [&](int k) {
    const long long i = base + (long long)k * BLOCK;
    pipe.producer_acquire();
    if (i < n) {
      cuda::memcpy_async(&sa[k & 1][threadIdx.x], a + i, sizeof(float), pipe);
      cuda::memcpy_async(&sb[k & 1][threadIdx.x], b + i, sizeof(float), pipe);
    }
    pipe.producer_commit();
  };
  stage(0);
  for (int k = 0; k < ITEMS; ++k) {
    if (k + 1 < ITEMS) {
      stage(k + 1);
      cuda::pipeline_consumer_wait_prior<1>(pipe); // all but the stage just issued have landed
    } else {
      cuda::pipeline_consumer_wait_prior<0>(pipe); // the last stage: nothing newer to skip
    }
    const long long i = base + (long long)k * BLOCK;
    if (i < n) c[i] = sa[k & 1][threadIdx.x] + sb[k & 1][threadIdx.x];
    pipe.consumer_release();
  }
}
