// Diagnostic · puzzle 24's K and V read with plain 16-byte loads and nothing else, in one of two
// shapes, to ask whether the order of the reads limits the DRAM rate (no arithmetic, no ring).
//   CONTIG 0: the solution's shape: block (chunk pair, KV head, sequence) reads its head's 256-byte
//             piece of each of its 1024 keys, 2 KB apart (the default).
//   CONTIG 1: working block i reads the i-th contiguous slice of K and of V (whole 2 KB cache rows,
//             every KV head of a run of keys, in address order).
// CPASYNC 1: the same pieces copied with cp.async.cg into the thread's own shared slots, waited for
//            and read back (the solution's load path, one round at a time), not loaded to
//            registers.
// CAP4 1:    a 48 KB shared array caps the SM at 4 blocks (the solution's occupancy), not 16.
// Both launch the puzzle's grid (CHUNK 512: 8192 blocks, the second half exits at once, as in the
// solution) and keep UNR loads of K and UNR of V in flight a thread. The answer is wrong on
// purpose; only the time means anything. decode_combine does nothing.
// Run (on a GPU):
//   warpbook run 24-decode-attention bench/perfmodel/experiments/read-shapes/decode-flat.cu \
//     --size B=64 --size Hq=32 --size Hkv=8 --size L=8192 --size D=128 --time-wrong
// Measured on the H200 (one call, beside the solution's 493.7 and 493.4 us):
// 469.5 and 469.4 us, 4.58 TB/s; with CONTIG 1, 477.9 and 478.0 us. See README.md.
// measured: 469.4 us on NVIDIA H200
// @tune BLOCK=128
// @tune CHUNK=512
#include <cuda_bf16.h>
#ifndef CONTIG
#define CONTIG 0
#endif
#ifndef UNR
#define UNR 4
#endif
#ifndef CPASYNC
#define CPASYNC 0
#endif
#ifndef CAP4
#define CAP4 0
#endif

__device__ __forceinline__ void cp16(void* dst, const void* src) {
  asm volatile(
      "cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)),
      "l"(src)
      : "memory");
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    decode_split(const __nv_bfloat16* q, const __nv_bfloat16* __restrict__ k,
                 const __nv_bfloat16* __restrict__ v, const int* lens, float* part,
                 __nv_bfloat16* out, int B, int Hq, int Hkv, int L, int D) {
  const int nblk = gridDim.x * gridDim.y * gridDim.z;
  const int lin = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const int F = nblk >= 4096 ? 2 : 1;
  const int work = nblk / F;
  if (lin >= work) return;
  const uint4* kq = reinterpret_cast<const uint4*>(k);
  const uint4* vq = reinterpret_cast<const uint4*>(v);
  const int P = D / 8; // 16-byte pieces per key and head
  unsigned acc = 0;
  long long n; // 16-byte pieces this block reads from K (and from V)
  long long base = 0;
  int s = 0, h = 0, b = 0, k0 = 0;
  if (CONTIG) {
    n = (long long)B * L * Hkv * P / work;
    base = lin * n;
  } else {
    const int SF = gridDim.x / F;
    s = lin % SF, h = (lin / SF) % Hkv, b = lin / (SF * Hkv);
    k0 = s * F * CHUNK;
    n = (long long)F * CHUNK * P;
  }
  auto at = [&](long long i) -> long long { // piece i of this block's share, as an index
    if (CONTIG) return base + i;
    const long long key = k0 + i / P;
    return (((long long)b * L + key) * Hkv + h) * P + i % P;
  };
#if CAP4
  __shared__ unsigned char pad[48 * 1024];
  if (acc == 1u) pad[threadIdx.x] = 0; // never: only the size matters
#endif
#if CPASYNC
  __shared__ uint4 slot[2 * UNR * BLOCK];
#endif
  long long i = threadIdx.x;
  for (; i + (UNR - 1) * BLOCK < n; i += UNR * BLOCK) {
    uint4 a[UNR], c[UNR];
#if CPASYNC
#pragma unroll
    for (int u = 0; u < UNR; ++u) {
      cp16(&slot[(2 * u) * BLOCK + threadIdx.x], kq + at(i + u * BLOCK));
      cp16(&slot[(2 * u + 1) * BLOCK + threadIdx.x], vq + at(i + u * BLOCK));
    }
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
#pragma unroll
    for (int u = 0; u < UNR; ++u) {
      a[u] = slot[(2 * u) * BLOCK + threadIdx.x];
      c[u] = slot[(2 * u + 1) * BLOCK + threadIdx.x];
    }
#else
#pragma unroll
    for (int u = 0; u < UNR; ++u) {
      a[u] = __ldg(kq + at(i + u * BLOCK));
      c[u] = __ldg(vq + at(i + u * BLOCK));
    }
#endif
#pragma unroll
    for (int u = 0; u < UNR; ++u) acc ^= a[u].x ^ a[u].w ^ c[u].y ^ c[u].z;
  }
  for (; i < n; i += BLOCK) acc ^= __ldg(kq + at(i)).x ^ __ldg(vq + at(i)).y;
  if (acc == 0x9e3779b9u) part[lin] = 1.0f; // keeps the loads; never true in practice
}

extern "C" __global__ void decode_combine(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                          const __nv_bfloat16* v, const int* lens, float* part,
                                          __nv_bfloat16* out, int B, int Hq, int Hkv, int L,
                                          int D) {}
