// TMA (compute_90): each block loads an 8 x 32 tile of x through a 128B-swizzled tensor map,
// copies the box to `raw` as shared memory holds it (swizzled, zeros past the ragged edges),
// undoes the swizzle itself to compute y = 2x + 1, and stores its tile of y through an
// unswizzled map, which clips it at y's edges.
struct __align__(64) TensorMap {
  unsigned long long opaque[16];
};

__device__ unsigned smem(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

extern "C" __global__ void tma_tile(const __grid_constant__ TensorMap tx,
                                    const __grid_constant__ TensorMap ty, float* raw) {
  __shared__ __align__(1024) float in[8 * 32];
  __shared__ __align__(128) float out[8 * 32];
  __shared__ __align__(8) unsigned long long bar;
  const int t = threadIdx.x, c0 = blockIdx.x * 32, c1 = blockIdx.y * 8;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (t < 32) {
    unsigned leader = 0;
    asm volatile("{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 %0, 1, 0, p; }"
                 : "=r"(leader));
    if (leader) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 1024;" ::"r"(smem(&bar))
                   : "memory");
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
          " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem(in)),
          "l"((unsigned long long)&tx), "r"(c0), "r"(c1), "r"(smem(&bar))
          : "memory");
    }
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; "
                 "selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(smem(&bar))
                 : "memory");
  raw[(blockIdx.y * gridDim.x + blockIdx.x) * 256 + t] = in[t];
  // Element (r, k) sits in 16-byte chunk (k / 4) ^ (r % 8) of its 128-byte row.
  const int r = t / 32, k = t % 32;
  out[t] = 2.0f * in[r * 32 + ((k / 4) ^ (r % 8)) * 4 + k % 4] + 1.0f;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (t == 0) {
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
            (unsigned long long)&ty),
        "r"(c0), "r"(c1), "r"(smem(out))
        : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}
