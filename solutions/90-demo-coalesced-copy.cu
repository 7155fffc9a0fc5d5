// Solution · 90 demo: coalesced copy, 16 bytes per thread
//
// What: dst = src over n floats with float4 (16-byte) loads and stores, 4 elements per thread.
// Run:  warpbook check 90-demo-coalesced-copy solutions/90-demo-coalesced-copy.cu
//       warpbook check 90-demo-coalesced-copy solutions/90-demo-coalesced-copy.cu --backend sim
//
// Why: the starter is already coalesced (4 sectors per request, none wasted), so the sectors
// cannot shrink; what can shrink is the number of instructions that ask for them. A float4 load
// brings 16 bytes per thread, 512 contiguous bytes per warp: 16 sectors in one request. At the
// simulator's size (n = 65536) requests fall from 2048 to 512 per direction while sectors stay at
// 8192. On a GPU, each thread then has 16 bytes in flight instead of 4, which is what keeps HBM
// busy: by Little's law the H200 needs about 4.8 TB/s x ~0.6 us ~ 3 MB in flight at all times.
//
// The launch stays one thread per element (cdiv(n, BLOCK) blocks: the puzzle fixes the grid), so
// three quarters of the threads find nothing to do and exit. That is not free: at the perf size
// it is 262144 blocks of 256 threads, 1986 on each SM, and an SM starts a block only every
// ~80-160 ns. Block scheduling, not DRAM, then sets the time, and this version is slower than
// the starter, whose every block copies. The buffers are 256-byte aligned, so element 4t starts a
// 16-byte vector; the last 1-3 elements when n is not a multiple of 4 are copied one by one by
// the thread that owns the partial vector.
//
// Figures (H200, 2026-11-23, `warpbook check`): 246 us, 2.18 TB/s, 48% of speed of light; the
// starter 201 us (58%). `warpbook predict` says 201 us and names block scheduling first. The
// float4 idea pays only with a grid a quarter the size: compare 01-vector-add's solution, which
// picks its own grid and reaches 93%.
// @tune BLOCK=256

extern "C" __global__ void coalesced_copy(const float* src, float* dst, int n) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long i = t * 4;
  if (i + 3 < n) {
    reinterpret_cast<float4*>(dst)[t] = reinterpret_cast<const float4*>(src)[t];
  } else if (i < n) {
    for (long long k = i; k < n; ++k) dst[k] = src[k];
  }
}
