// Solution · 91 demo: the strided copy, repaired
//
// What: the same bytes as the demo, but consecutive threads now take consecutive 16-byte vectors:
// thread t copies elements 4t .. 4t+3 with one float4 load and one float4 store, on a quarter of
// the demo's grid (`@tune ITEMS=4`). `stride` is ignored.
// Run:  warpbook check 91-demo-strided-copy solutions/91-demo-strided-copy.cu
//       warpbook check 91-demo-strided-copy solutions/91-demo-strided-copy.cu --backend sim
//
// Why: the demo's slowness was never the copy itself but the numbering. With lane k of a warp on
// vector base + k, a warp's request covers 512 contiguous bytes, 16 sectors, every byte used:
// 512 load requests and 8192 sectors at the simulator's size, against the demo's 2048 requests
// and 65536 sectors. The grid has at least n / 4 threads for every STRIDE, so one vector per
// thread always covers the array. Keeping the demo's one-thread-per-element grid instead leaves
// three quarters of the blocks starting only to exit, which the H200 measured at 247 us: slower
// than the plain coalesced copy (see solutions/90-demo-coalesced-copy.cu). The buffers are
// 256-byte aligned; the 1-3 elements past the last whole vector are copied one by one.
// Measured on the H200 (`warpbook check`): 129.9 us, 4.13 TB/s, 90.7% of
// the speed of light against the ceilings `warpbook probe` measures; gold.
// measured: 129.92 us on NVIDIA H200
// measured: 175.42 us on NVIDIA H100 80GB HBM3
// @tune STRIDE=32
// @tune BLOCK=256
// @tune ITEMS=4

extern "C" __global__ void strided_copy(const float* src, float* dst, int n, int stride) {
  (void)stride;
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long i = t * 4;
  if (i + 3 < n) {
    reinterpret_cast<float4*>(dst)[t] = reinterpret_cast<const float4*>(src)[t];
  } else if (i < n) {
    for (long long k = i; k < n; ++k) dst[k] = src[k];
  }
}
