// Solution · 91 demo: the strided copy, repaired
//
// What: the same launch as the demo (cdiv(cdiv(n, STRIDE) * STRIDE, BLOCK) blocks), the same
// bytes, but consecutive threads now take consecutive 16-byte vectors: thread t copies elements
// 4t .. 4t+3 with one float4 load and one float4 store. `stride` is ignored.
// Run:  warpbook check 91-demo-strided-copy solutions/91-demo-strided-copy.cu
//       warpbook check 91-demo-strided-copy solutions/91-demo-strided-copy.cu --backend sim
//
// Why: the demo's slowness was never the copy itself but the numbering. With lane k of a warp on
// vector base + k, a warp's request covers 512 contiguous bytes, 16 sectors, every byte used:
// 512 load requests and 8192 sectors at the simulator's size, against the demo's 2048 requests
// and 65536 sectors. The grid has at least n threads for every STRIDE, so one vector per thread
// always covers the array (three quarters of the threads exit at once). The buffers are 256-byte
// aligned; the 1-3 elements past the last whole vector are copied one by one.
//
// Figures: this is the float4 copy of solutions/90-demo-coalesced-copy.cu, about 4.0 TB/s on
// our H200 (83% of the 4.8 TB/s datasheet figure).
// @tune STRIDE=32
// @tune BLOCK=256

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
