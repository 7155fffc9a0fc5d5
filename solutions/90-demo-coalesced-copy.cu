// Solution · 90 demo: coalesced copy, 16 bytes per thread
//
// What: dst = src over n floats with float4 (16-byte) loads and stores, 4 elements per thread,
// launched on a quarter of the starter's grid (`@tune ITEMS=4`: cdiv(n, BLOCK * 4) blocks).
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
// The grid must shrink with the work per thread. With the starter's one-thread-per-element grid
// kept, three quarters of its 262144 blocks start only to exit: an SM starts a block only every
// ~100 ns, and that form measures 246 us (2.18 TB/s) on the H200, slower than the starter it is
// meant to beat. ITEMS = 4 launches exactly the threads that copy. The buffers are 256-byte
// aligned, so element 4t starts a 16-byte vector; the last 1-3 elements when n is not a multiple of
// 4 are copied one by one by the thread that owns the partial vector.
//
// Napkin maths: 2^26 floats read and written = 537 MB; at the 4.8 TB/s datasheet 112 us, at the
// ~4.0 TB/s a copy reaches on the H200 about 134 us.
// Measured on the H200 (`warpbook check`): 129.4 us, 4.15 TB/s, 91.0% of
// the speed of light against the ceilings `warpbook probe` measures; gold.
// measured: 129.39 us on NVIDIA H200
// measured: 175.82 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=256
// @tune ITEMS=4

extern "C" __global__ void coalesced_copy(const float* src, float* dst, int n) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long i = t * 4;
  if (i + 3 < n) {
    reinterpret_cast<float4*>(dst)[t] = reinterpret_cast<const float4*>(src)[t];
  } else if (i < n) {
    for (long long k = i; k < n; ++k) dst[k] = src[k];
  }
}
