// Solution · 01 vector add
//
// What: c = a + b over n floats. `@tune ITEMS=4` gives each thread one float4 (16-byte) vector
// of each input; blocks of 1024 threads. Stores are streaming (__stcs): c is not read again.
// Run:  warpbook check 01-vector-add solutions/01-vector-add.cu
//
// Why it is fast: vector add is pure bandwidth (1 FLOP per 12 bytes), so the only goal is to keep
// the memory system busy. float4 accesses move 16 bytes per instruction instead of 4; a warp's
// float4 request covers 512 contiguous bytes, 16 full 32-byte sectors, perfectly coalesced. Both
// loads of a thread are issued before its add (the __restrict__ pointers let the compiler keep
// them together), and with 2048 resident threads per SM that is 64 KB of loads in flight per SM,
// more than the ~25 KB Little's law asks for (4.8 TB/s x ~0.7 us / 132 SMs). The grid is
// cdiv(n, BLOCK * 4), so no thread starts without work. The last, partial vector is done by
// scalar code in the thread that owns it (n need not be a multiple of 4).
// The last percent, measured side by side on the H200 (median of 4 checks each): two float4s per
// input per thread and plain stores 189.4 us; streaming stores alone 189.2; one float4 per thread
// with streaming stores 188.7 (BLOCK 256), 188.5 (512), 188.3 (1024); the L2 256-byte prefetch
// hint on the loads was slower (189.8). torch.add in the same run: 188.8-189.0 us.
//
// Napkin maths on the H200: 12 B x 2^26 = 805 MB; at the 4.8 TB/s datasheet that is 168 us.
// Measured on the H200: 183.33 us, 4393 GB/s: 92% of the 4.8 TB/s datasheet, 96% of the 4.56 TB/s
// DRAM read ceiling `warpbook probe` measures; gold. At parity with torch.add (both sit at the DRAM
// limit; ours was 0.3% faster in that run). With the L2 flushed by writing instead of reading, the
// flush's dirty lines drain during the timed kernel and it takes 189.02 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 183.33 us on NVIDIA H200
// measured: 258.98 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=1024
// @tune ITEMS=4

extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n) {
  const int vecs = ITEMS / 4; // float4 vectors per thread
  long long first = (long long)blockIdx.x * blockDim.x * vecs + threadIdx.x;
  long long n4 = n / 4;
  float4 x[vecs], y[vecs];
#pragma unroll
  for (int k = 0; k < vecs; ++k) {
    long long v = first + (long long)k * blockDim.x;
    if (v < n4) {
      // a, b and c are 256-byte aligned, so every 4th element starts a 16-byte vector.
      x[k] = reinterpret_cast<const float4*>(a)[v];
      y[k] = reinterpret_cast<const float4*>(b)[v];
    }
  }
#pragma unroll
  for (int k = 0; k < vecs; ++k) {
    long long v = first + (long long)k * blockDim.x;
    if (v < n4)
      __stcs(reinterpret_cast<float4*>(c) + v,
             make_float4(x[k].x + y[k].x, x[k].y + y[k].y, x[k].z + y[k].z, x[k].w + y[k].w));
    else if (v == n4)
      for (long long i = n4 * 4; i < n; ++i) c[i] = a[i] + b[i]; // the 0-3 leftover elements
  }
}
