// 43 · A TMA-fed, warp-specialised, persistent GEMM: C = A x B^T with A (M x K) and B (N x K) in
// bf16, both row-major, C (M x N) in bf16.
//     C[r][c] = bf16( sum over k of A[r][k] * B[c][k] )   (products exact, sums in f32, one rounding)
// The launch is persistent: min(SMS, tiles) blocks of 384 threads (three warpgroups), each block
// walking the BM x BN tiles of C t = blockIdx.x, + gridDim.x, ... until none is left. tmA and tmB
// are tensor maps of A and B (boxes of BK x BM and BK x BN elements, 128B-swizzled, zeros past the
// edges); A and B are there too as plain pointers. Dynamic shared memory: STAGES slots of one A
// box and one B box, 16 * STAGES bytes for mbarriers, 1 KB of slack. Change the tunables with
// // @tune STAGES=3 (and so on).
//
// This kernel has the shape of the fast one: warpgroup 0 is the producer (one thread issues the
// TMA copies into a ring of STAGES slots), warpgroups 1 and 2 the consumers (they wait for a slot
// to fill, use it, and hand it back). Once the ring wraps round it stops for good: find out why
// with `warpbook check`.
// Then make it fast: the consumers multiply on the CUDA cores, one FMA at a time.
#include <cuda.h> // CUtensorMap
#include <cuda_bf16.h>


#define A_BYTES (BM * BK * 2)
#define B_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Arrive once, and tell the barrier how many bytes of copies this phase also waits for.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spin until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (!done);
}
// The box of `map` at element (x along K, y along rows) into shared memory at dst; its bytes are
// counted on the mbarrier `bar` as they land.
__device__ __forceinline__ void tma_load(unsigned dst, const CUtensorMap* map, int x, int y,
                                         unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
               "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(bar)
               : "memory");
}
// Element k of row r of a 128B-swizzled box (rows of 64 bf16 = 128 bytes): 16-byte chunk c of row
// r sits at chunk c ^ (r % 8).
__device__ __forceinline__ float at(const unsigned char* box, int r, int k) {
  const int c = k / 8;
  const __nv_bfloat16* p =
      reinterpret_cast<const __nv_bfloat16*>(box + r * 128 + ((c ^ (r % 8)) << 4));
  return __bfloat162float(p[k % 8]);
}

extern "C" __global__ void __launch_bounds__(384, 1)
    ws_gemm(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
            const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned raw = smem_addr(smem_raw);
  const unsigned sbase = (raw + 1023u) & ~1023u; // the swizzle's atoms are 1 KB
  unsigned char* ring = smem_raw + (sbase - raw);
  const unsigned bars = sbase + STAGES * STAGE_BYTES;
  auto full = [&](int s) { return bars + 8u * s; };              // the producer's copies landed
  auto empty = [&](int s) { return bars + 8u * (STAGES + s); }; // the consumers are done

  const int tid = threadIdx.x;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), 256);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int tiles = tiles_m * tiles_n, ktiles = (K + BK - 1) / BK;

  if (tid < 128) { // the producer warpgroup: thread 0 issues every copy
    if (tid != 0) return;
    int it = 0; // k-steps so far: slot it % STAGES, pass it / STAGES over the ring
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      const int tm = t / tiles_n, tn = t % tiles_n;
      for (int kt = 0; kt < ktiles; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(empty(s), ((it / STAGES) & 1) ^ 1);
        const unsigned dst = sbase + s * STAGE_BYTES;
        mbar_arrive_expect_tx(full(s), A_BYTES);
        tma_load(dst, &tmA, kt * BK, tm * BM, full(s));
        tma_load(dst + A_BYTES, &tmB, kt * BK, tn * BN, full(s));
      }
    }
    return;
  }

  // The consumers: thread ct owns row ct % BM of the tile and BN / 2 of its columns.
  // TODO (speed): wgmma from the slots (puzzle 21's descriptors read this very layout), each
  // warpgroup 64 rows; setmaxnreg to move registers from the producer to the consumers; a raster
  // that keeps the tiles running at once on a few panels of A and B.
  const int ct = tid - 128, r = ct % BM, half = ct / BM;
  int it = 0;
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int tm = t / tiles_n, tn = t % tiles_n;
    float acc[BN / 2];
#pragma unroll
    for (int j = 0; j < BN / 2; ++j) acc[j] = 0.0f;
    for (int kt = 0; kt < ktiles; ++kt, ++it) {
      const int s = it % STAGES;
      mbar_wait(full(s), (it / STAGES) & 1);
      const unsigned char* sa = ring + s * STAGE_BYTES;
      for (int k = 0; k < BK; ++k) {
        const float a = at(sa, r, k);
#pragma unroll
        for (int j = 0; j < BN / 2; ++j) acc[j] += a * at(sa + A_BYTES, half * (BN / 2) + j, k);
      }
      mbar_arrive(empty(s));
    }
    const int row = tm * BM + r;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < BN / 2; ++j) {
      const int c = tn * BN + half * (BN / 2) + j;
      if (c < N) C[(long long)row * N + c] = __float2bfloat16(acc[j]);
    }
  }
}
