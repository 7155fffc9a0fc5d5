// Solution · 01 vector add
//
// What: c = a + b over n floats, with 16-byte (float4) loads and stores, 4 elements per thread.
// Run:  warpbook check 01-vector-add solutions/01-vector-add.cu
//
// Why it is fast: vector add is pure bandwidth (1 FLOP per 12 bytes), so the only goal is to keep
// the memory system busy. float4 accesses move 16 bytes per instruction instead of 4, so a warp
// issues a quarter of the load instructions for the same bytes, and each warp request covers 512
// contiguous bytes: 16 full 32-byte sectors, perfectly coalesced. The 1-4 leftover elements when
// n is not a multiple of 4 are handled by the thread that owns the final partial vector. The
// launch stays one thread per element (cdiv(n, BLOCK) blocks), so three quarters of the threads
// exit at once; those cost little next to the DRAM traffic.
//
// Napkin maths on the H200: 12 B x 2^26 = 805 MB at 4.8 TB/s is 168 us; measured figures are in
// the closing note of the foundation issue and in README.md.
// @tune BLOCK=256

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long i = t * 4;
  if (i + 3 < n) {
    // a, b and c are 256-byte aligned, so every 4th element starts a 16-byte vector.
    float4 x = reinterpret_cast<const float4*>(a)[t];
    float4 y = reinterpret_cast<const float4*>(b)[t];
    reinterpret_cast<float4*>(c)[t] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  } else if (i < n) {
    for (long long k = i; k < n; ++k) c[k] = a[k] + b[k];
  }
}
