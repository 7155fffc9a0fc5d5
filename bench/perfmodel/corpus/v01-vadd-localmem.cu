// Corpus · v01-vadd-localmem · designed limiter: local_memory
//
// What: c = a + b with ITEMS = 16 floats per thread (256-thread blocks, coalesced: element k of a
// thread is base + k * 256 + tid). The loaded values are parked in two 16-float arrays at slot
// (k + tid) % 16 and read back from the same slot: the slot depends on threadIdx, so the arrays
// cannot be promoted to registers and live in local memory (128 B of stack per thread).
// Run:  warpbook check 01-vector-add bench/perfmodel/corpus/v01-vadd-localmem.cu
//
// Why it is slow: per element the thread issues, besides its 2 global loads and 1 store, 2 local
// stores and 2 local loads. Local memory is interleaved by lane (word w of lane l sits at
// w * 128 + 4 l within the warp's stack), so it is coalesced only when all lanes use the same
// slot; here lane l uses slot (k + l) % 16, so every local access of a warp touches 32 different
// 32-byte sectors: 4 x 32 = 128 local sectors per warp and element against the 12 sectors of its
// global traffic. The L1 moves ~4 sectors per clock per SM: 2^26 / 32 / 132 ~ 15.9 K warp-elements
// x 140 sectors / 4 = 0.56 M clocks ~ 280 us per SM at 1.98 GHz, against ~190 us for the DRAM
// traffic itself. 59 registers (the 32 loaded values wait in registers before they are parked)
// leave 1024 threads per SM, whose 128 B stacks (128 KB per SM) crowd the L1 as well. Expected:
// ~1.5x or more slower than the DRAM floor, the time going to L1 local traffic.
// @tune BLOCK=256
// @tune ITEMS=16

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  float va[ITEMS], vb[ITEMS];
  const int rot = threadIdx.x % ITEMS; // a run-time slot offset: the arrays go to local memory
  const long long base = (long long)blockIdx.x * BLOCK * ITEMS + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = base + (long long)k * BLOCK;
    const int s = (k + rot) % ITEMS;
    va[s] = i < n ? a[i] : 0.0f;
    vb[s] = i < n ? b[i] : 0.0f;
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = base + (long long)k * BLOCK;
    const int s = (k + rot) % ITEMS;
    if (i < n) c[i] = va[s] + vb[s];
  }
}
