// Held-out · h01-vadd-float4x4-block64 · designed limiter: dram
//
// What: c = a + b with ITEMS = 16 floats per thread in 64-thread blocks. A block owns 1024
// consecutive floats; thread t loads the float4 vectors t, t + 64, t + 128 and t + 192 of that
// span from each input (4 x 16 B per input, all 8 loads issued before the first add), then stores
// 4 float4. grid = cdiv(n, 64 * 16): 65536 blocks at the timed n = 2^26.
// Run:  warpbook check 01-vector-add bench/perfmodel/heldout/h01-vadd-float4x4-block64.cu
//
// Why it should be DRAM-bound: 64-thread blocks reach the 32-blocks-per-SM cap exactly at 2048
// threads, so occupancy is full, and each thread has 8 x 16 B = 128 B of loads in flight: up to
// 256 KB per SM, ten times the ~25 KB that Little's law asks for (4.8 TB/s x ~0.7 us / 132 SMs).
// Every warp instruction covers 512 contiguous bytes (16 full sectors). The arithmetic is one add
// per 12 bytes. 805 MB moved: ~168 us at the 4.8 TB/s datasheet, ~190 us at the measured ceiling.
// Small blocks mean many of them (65536, ~500 per SM) but each lives ~the DRAM latency or more.
// @tune BLOCK=64
// @tune ITEMS=16

#define VECS (ITEMS / 4) // float4 vectors per input per thread

extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n) {
  const long long base = (long long)blockIdx.x * BLOCK * ITEMS; // first float of the block
  if (base + BLOCK * ITEMS <= n) {
    // Full block: every vector is in range (and 16-byte aligned, since base is a multiple of 4).
    const float4* a4 = reinterpret_cast<const float4*>(a + base);
    const float4* b4 = reinterpret_cast<const float4*>(b + base);
    float4* c4 = reinterpret_cast<float4*>(c + base);
    float4 va[VECS], vb[VECS];
#pragma unroll
    for (int k = 0; k < VECS; ++k) {
      va[k] = a4[k * BLOCK + threadIdx.x];
      vb[k] = b4[k * BLOCK + threadIdx.x];
    }
#pragma unroll
    for (int k = 0; k < VECS; ++k)
      c4[k * BLOCK + threadIdx.x] =
          make_float4(va[k].x + vb[k].x, va[k].y + vb[k].y, va[k].z + vb[k].z, va[k].w + vb[k].w);
  } else {
    // The last, partial block: plain scalar code, one float at a time, coalesced.
    for (long long i = base + threadIdx.x; i < n && i < base + BLOCK * ITEMS; i += BLOCK)
      c[i] = a[i] + b[i];
  }
}
