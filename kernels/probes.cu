// Roofline probes: small kernels that each run one unit of the GPU flat out, so that `warpbook
// probe` can measure the ceilings a learner's kernel is scored against (DESIGN.md, "Measurement
// and the roofline"). Warpbook compiles this file with NVRTC at run time, for the device's own
// architecture (sm_90a on compute capability 9.0, so that the wgmma probe exists there), and
// times every kernel with CUDA events; app/core/probe.cpp says how big each launch is and how
// its bytes or operations are counted.
//
//   warpbook probe            run the suite, print the table, keep the ceilings
//   warpbook devices          measured ceilings beside the datasheet's
//
// Every kernel takes `never`, a value no result can equal, and writes its result only if it does:
// the compiler cannot drop the work, and nothing is written. Blocks are 256 threads (BS).

#define BS 256

// Warpbook builds three programs from this file at once, on separate threads, because ptxas
// spends a few hundred milliseconds on each wgmma kernel: WB_PART 0 holds everything but wgmma,
// 1 the bf16 wgmma kernel, 2 the f16 one. Without WB_PART (nvcc by hand) all of it is built.
#ifndef WB_PART
#define WB_PART_MAIN 1
#define WB_PART_WGMMA_BF16 1
#define WB_PART_WGMMA_F16 1
#else
#define WB_PART_MAIN (WB_PART == 0)
#define WB_PART_WGMMA_BF16 (WB_PART == 1)
#define WB_PART_WGMMA_F16 (WB_PART == 2)
#endif

typedef unsigned long long u64;

// ---- helpers ------------------------------------------------------------------------------------

// Streaming loads: read once, so keep them out of L1 (they still pass through L2).
__device__ __forceinline__ float4 ld_stream(const float4* p) {
  float4 v;
  asm("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "l"(p));
  return v;
}

// The same with a hint to fetch the whole 256-byte L2 line pair from DRAM (sm_80 and later).
__device__ __forceinline__ float4 ld_stream_pf(const float4* p) {
#if __CUDA_ARCH__ >= 800
  float4 v;
  asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "l"(p));
  return v;
#else
  return ld_stream(p);
#endif
}
template <bool PF> __device__ __forceinline__ float4 ld_dram(const float4* p) {
  return PF ? ld_stream_pf(p) : ld_stream(p);
}

// L2 loads (cache-global: L2 only). Volatile: the L2 probe reads the same addresses on every
// pass, and the compiler must not keep them in registers.
__device__ __forceinline__ float4 ld_l2(const float4* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p));
  return v;
}

// Streaming store (evict first): the output is never read back.
__device__ __forceinline__ void st_stream(float4* p, float4 v) {
  asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z),
               "f"(v.w)
               : "memory");
}

__device__ __forceinline__ void add4(float4& a, float4 b) {
  a.x += b.x, a.y += b.y, a.z += b.z, a.w += b.w;
}

__device__ __forceinline__ void sink_if(float s, float never, float* sink) {
  if (s == never) sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// A 32-bit hash (lowbias32): every output bit depends on every input bit.
__device__ __forceinline__ unsigned mix32(unsigned x) {
  x ^= x >> 16, x *= 0x7feb352du, x ^= x >> 15, x *= 0x846ca68bu, x ^= x >> 16;
  return x;
}
// Uniform in [-1, 1) from 32 random bits.
__device__ __forceinline__ float unit_of(unsigned h) {
  return (float)(int)h * 0x1p-31f;
}
// This thread's random word number k.
__device__ __forceinline__ unsigned thread_bits(unsigned k) {
  return mix32((blockIdx.x * BS + threadIdx.x) * 64u + k);
}

#if __CUDA_ARCH__ >= 800
// Register k of the operands: two random 16-bit floats (ptx cvt.rn.{f16,bf16}x2.f32 puts its
// first source in the upper half).
template <bool BF16> __device__ __forceinline__ unsigned operand_bits(unsigned k) {
  const unsigned h = thread_bits(k);
  const float hi = unit_of(h), lo = unit_of(mix32(h ^ 0x9e3779b9u));
  unsigned r;
  if (BF16)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
#endif

#if WB_PART_MAIN

// Random-looking, never-zero data: zeros can run faster than real data (less switching).
extern "C" __global__ void __launch_bounds__(BS) wb_fill(float4* x, long n4, unsigned seed) {
  const long stride = (long)gridDim.x * BS;
  for (long i = (long)blockIdx.x * BS + threadIdx.x; i < n4; i += stride) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    float f = 0.25f + (float)(h & 0xffffu) * (1.0f / 65536.0f);
    x[i] = make_float4(f, 1.0f - f, f * 0.5f, f + 0.125f);
  }
}

// ---- DRAM -------------------------------------------------------------------------------------
// Each block handles U*BS consecutive float4 per step of a grid-stride loop: U independent 16-byte
// loads in flight per thread before the first use. The host makes n4 a multiple of
// gridDim.x * BS * U, so every thread runs the same number of steps and none is left over; a grid
// that covers the arrays ("flat") makes that one step per thread. CS: streaming stores; PF: the
// 256-byte L2 prefetch hint on loads. The host tries several and keeps the fastest.

template <int U, bool PF>
__device__ __forceinline__ void dram_read_body(const float4* __restrict__ x, long n4, float never,
                                               float* sink) {
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  const long step = (long)gridDim.x * BS * U;
  for (long i = (long)blockIdx.x * BS * U + threadIdx.x; i + (U - 1) * BS < n4; i += step) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = ld_dram<PF>(x + i + u * BS);
#pragma unroll
    for (int u = 0; u < U; ++u) add4(acc, v[u]);
  }
  sink_if(acc.x + acc.y + acc.z + acc.w, never, sink);
}

template <int U, bool CS, bool PF>
__device__ __forceinline__ void dram_copy_body(const float4* __restrict__ x, float4* __restrict__ y,
                                               long n4) {
  const long step = (long)gridDim.x * BS * U;
  for (long i = (long)blockIdx.x * BS * U + threadIdx.x; i + (U - 1) * BS < n4; i += step) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = ld_dram<PF>(x + i + u * BS);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (CS)
        st_stream(y + i + u * BS, v[u]);
      else
        y[i + u * BS] = v[u];
    }
  }
}

// STREAM's triad: a = b + s * c (two reads, one write).
template <int U, bool CS, bool PF>
__device__ __forceinline__ void dram_triad_body(float4* __restrict__ a,
                                                const float4* __restrict__ b,
                                                const float4* __restrict__ c, float s, long n4) {
  const long step = (long)gridDim.x * BS * U;
  for (long i = (long)blockIdx.x * BS * U + threadIdx.x; i + (U - 1) * BS < n4; i += step) {
    float4 vb[U], vc[U];
#pragma unroll
    for (int u = 0; u < U; ++u) vb[u] = ld_dram<PF>(b + i + u * BS);
#pragma unroll
    for (int u = 0; u < U; ++u) vc[u] = ld_dram<PF>(c + i + u * BS);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float4 r = make_float4(vb[u].x + s * vc[u].x, vb[u].y + s * vc[u].y, vb[u].z + s * vc[u].z,
                             vb[u].w + s * vc[u].w);
      if (CS)
        st_stream(a + i + u * BS, r);
      else
        a[i + u * BS] = r;
    }
  }
}

#define WB_READ(name, U, PF)                                                                       \
  extern "C" __global__ void __launch_bounds__(BS)                                                 \
      name(const float4* __restrict__ x, long n4, float never, float* sink) {                      \
    dram_read_body<U, PF>(x, n4, never, sink);                                                     \
  }
#define WB_COPY(name, U, CS, PF)                                                                   \
  extern "C" __global__ void __launch_bounds__(BS)                                                 \
      name(const float4* __restrict__ x, float4* __restrict__ y, long n4) {                        \
    dram_copy_body<U, CS, PF>(x, y, n4);                                                           \
  }
#define WB_TRIAD(name, U, CS, PF)                                                                  \
  extern "C" __global__ void __launch_bounds__(BS)                                                 \
      name(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,     \
           float s, long n4) {                                                                     \
    dram_triad_body<U, CS, PF>(a, b, c, s, n4);                                                    \
  }

WB_READ(dram_read_u4, 4, false)
WB_READ(dram_read_u4_pf, 4, true)
WB_COPY(dram_copy_u4_cs, 4, true, false)
WB_COPY(dram_copy_u8_cs, 8, true, false)
WB_COPY(dram_copy_u4_cs_pf, 4, true, true)
WB_COPY(dram_copy_u8_cs_pf, 8, true, true)
WB_TRIAD(dram_triad_u4_cs, 4, true, false)
WB_TRIAD(dram_triad_u4_cs_pf, 4, true, true)
WB_TRIAD(dram_triad_u8_cs_pf, 8, true, true)

// ---- L2 ---------------------------------------------------------------------------------------
// `reps` passes over a window of about half the L2, which the first pass leaves resident; every
// block rereads its own slice, cache-global (through L2, not L1).
extern "C" __global__ void __launch_bounds__(BS)
    l2_read(const float4* __restrict__ x, long n4, int reps, float never, float* sink) {
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  const long step = (long)gridDim.x * BS * 4;
  for (int r = 0; r < reps; ++r) {
    for (long i = (long)blockIdx.x * BS * 4 + threadIdx.x; i + 3 * BS < n4; i += step) {
      float4 v0 = ld_l2(x + i), v1 = ld_l2(x + i + BS), v2 = ld_l2(x + i + 2 * BS),
             v3 = ld_l2(x + i + 3 * BS);
      add4(acc, v0), add4(acc, v1), add4(acc, v2), add4(acc, v3);
    }
  }
  sink_if(acc.x + acc.y + acc.z + acc.w, never, sink);
}

// The same window read by the copy engine (sm_90: cp.async.bulk, the engine TMA copies use): one
// thread a block keeps WB_BULK_SLOTS copies of WB_BULK_CHUNK bytes in flight into shared memory,
// each completing on its own mbarrier, over its blocks' chunks of the window `reps` times. No
// thread touches the bytes, so this is the L2's rate into the SMs' shared memory, not the LSU's.
#define WB_BULK_CHUNK 8192
#define WB_BULK_SLOTS 5
extern "C" __global__ void __launch_bounds__(BS)
    l2_bulk_read(const char* __restrict__ x, long chunks, int reps, float never, float* sink) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ __align__(128) unsigned char ring[WB_BULK_SLOTS * WB_BULK_CHUNK];
  __shared__ __align__(8) unsigned long long bar[WB_BULK_SLOTS];
  if (threadIdx.x != 0) return;
  unsigned b0 = (unsigned)__cvta_generic_to_shared(bar);
  unsigned r0 = (unsigned)__cvta_generic_to_shared(ring);
  for (int s = 0; s < WB_BULK_SLOTS; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b0 + 8 * s) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  long issued = 0;
  auto wait = [&](long k) { // copy k (slot k % SLOTS, that slot's (k / SLOTS)-th phase) landed
    const unsigned b = b0 + 8 * unsigned(k % WB_BULK_SLOTS),
                   parity = unsigned(k / WB_BULK_SLOTS) & 1;
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
                   "selp.u32 %0, 1, 0, p; }"
                   : "=r"(done)
                   : "r"(b), "r"(parity)
                   : "memory");
  };
  for (int r = 0; r < reps; ++r)
    for (long i = blockIdx.x; i < chunks; i += gridDim.x, ++issued) {
      if (issued >= WB_BULK_SLOTS) wait(issued - WB_BULK_SLOTS);
      const unsigned s = unsigned(issued % WB_BULK_SLOTS), b = b0 + 8 * s;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b),
                   "r"(WB_BULK_CHUNK)
                   : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                   "%2, [%3];" ::"r"(r0 + s * WB_BULK_CHUNK),
                   "l"(x + i * WB_BULK_CHUNK), "r"(WB_BULK_CHUNK), "r"(b)
                   : "memory");
    }
  for (long k = issued > WB_BULK_SLOTS ? issued - WB_BULK_SLOTS : 0; k < issued; ++k) wait(k);
  sink_if(float(ring[0]), never, sink);
#endif
}

// ---- shared memory ----------------------------------------------------------------------------
// 16-byte loads, each warp reading 32 consecutive float4 (512 bytes, no bank conflict). The index
// moves every iteration so that no load is loop-invariant.
#define WB_SMEM_F4 2048 // 32 KiB
extern "C" __global__ void __launch_bounds__(BS) shared_read(int iters, float never, float* sink) {
  __shared__ float4 s[WB_SMEM_F4];
  for (int i = threadIdx.x; i < WB_SMEM_F4; i += BS)
    s[i] = make_float4(0.5f + i, 0.25f * i, 1.0f - i, 2.0f + i);
  __syncthreads();
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  unsigned base = threadIdx.x;
  for (int it = 0; it < iters; ++it) {
    float4 v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) v[u] = s[(base + u * BS) & (WB_SMEM_F4 - 1)];
#pragma unroll
    for (int u = 0; u < 8; ++u) add4(acc, v[u]);
    base += 32;
  }
  sink_if(acc.x + acc.y + acc.z + acc.w, never, sink);
}

// ---- FP32 and FP64 ----------------------------------------------------------------------------
// 8 independent FMA chains per thread, the loop body unrolled 16 times, so that the issue slots go
// to FMAs and not to the loop. x = x * a + b with a just under 1 stays finite.
extern "C" __global__ void __launch_bounds__(BS)
    fma_f32(int iters, float a, float b, float never, float* sink) {
  float x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = threadIdx.x * 1e-3f + c;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < 16; ++u)
#pragma unroll
      for (int c = 0; c < 8; ++c) x[c] = fmaf(x[c], a, b);
  }
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  sink_if(s, never, sink);
}

extern "C" __global__ void __launch_bounds__(BS)
    fma_f64(int iters, double a, double b, float never, float* sink) {
  double x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = threadIdx.x * 1e-3 + c;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < 8; ++u)
#pragma unroll
      for (int c = 0; c < 8; ++c) x[c] = fma(x[c], a, b);
  }
  double s = 0.0;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  sink_if((float)s, never, sink);
}

// ---- tensor cores: mma.sync (compute capability 8.0 and later) --------------------------------
// Register-resident: 8 independent accumulators per warp keep the tensor pipe busy. One m16n8k16
// is 2*16*8*16 = 4096 FLOPs per warp; one m16n8k32 (int8) is 8192.
//
// The operands are random values in [-1, 1), a different set for each of the 8 mma, as a GEMM's
// fragments are. Per clock the tensor pipe does the same work whatever the data, but the clock it
// holds does not: on an H100 with near-constant operands (one exponent, 7 varying mantissa bits)
// 30 ms of mma.sync ran at 1842-1858 MHz, with random ones at 1754-1798 MHz, 4-6% fewer FLOP/s
// (bench/perfmodel/experiments/mma-data). A GEMM runs on real data, so its ceiling is this one.

#define WB_MMA16(name, type, is_bf16)                                                              \
  extern "C" __global__ void __launch_bounds__(BS) name(int iters, float never, float* sink) {     \
    float d[8][4];                                                                                 \
    _Pragma("unroll") for (int k = 0; k < 8; ++k) d[k][0] = d[k][1] = d[k][2] = d[k][3] = 0.f;     \
    WB_MMA16_BODY(type, is_bf16)                                                                   \
    float s = 0.f;                                                                                 \
    _Pragma("unroll") for (int k = 0; k < 8; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3];      \
    sink_if(s, never, sink);                                                                       \
  }

#if __CUDA_ARCH__ >= 800
#define WB_MMA16_BODY(type, is_bf16)                                                               \
  unsigned a[8][4], b[8][2];                                                                       \
  _Pragma("unroll") for (int k = 0; k < 8; ++k) {                                                  \
    _Pragma("unroll") for (int r = 0; r < 4; ++r) a[k][r] = operand_bits<is_bf16>(k * 6 + r);      \
    b[k][0] = operand_bits<is_bf16>(k * 6 + 4), b[k][1] = operand_bits<is_bf16>(k * 6 + 5);        \
  }                                                                                                \
  for (int i = 0; i < iters; ++i) {                                                                \
    _Pragma("unroll") for (int k = 0; k < 8; ++k) asm volatile(                                    \
        "mma.sync.aligned.m16n8k16.row.col.f32." type "." type ".f32 {%0, %1, %2, %3}, "           \
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};" : "+f"(d[k][0]),                           \
        "+f"(d[k][1]), "+f"(d[k][2]), "+f"(d[k][3]) : "r"(a[k][0]), "r"(a[k][1]), "r"(a[k][2]),    \
        "r"(a[k][3]), "r"(b[k][0]), "r"(b[k][1]));                                                 \
  }
#else
#define WB_MMA16_BODY(type, is_bf16)
#endif

WB_MMA16(mma_f16, "f16", false)
WB_MMA16(mma_bf16, "bf16", true)

extern "C" __global__ void __launch_bounds__(BS) mma_s8(int iters, float never, float* sink) {
  int d[8][4];
#pragma unroll
  for (int k = 0; k < 8; ++k) d[k][0] = d[k][1] = d[k][2] = d[k][3] = 0;
#if __CUDA_ARCH__ >= 800
  unsigned a[8][4], b[8][2]; // random bytes: every one is an int8
#pragma unroll
  for (int k = 0; k < 8; ++k) {
#pragma unroll
    for (int r = 0; r < 4; ++r) a[k][r] = thread_bits(k * 6 + r);
    b[k][0] = thread_bits(k * 6 + 4), b[k][1] = thread_bits(k * 6 + 5);
  }
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k)
      asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, "
                   "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                   : "+r"(d[k][0]), "+r"(d[k][1]), "+r"(d[k][2]), "+r"(d[k][3])
                   : "r"(a[k][0]), "r"(a[k][1]), "r"(a[k][2]), "r"(a[k][3]), "r"(b[k][0]),
                     "r"(b[k][1]));
  }
#endif
  int s = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) s += d[k][0] ^ d[k][1] ^ d[k][2] ^ d[k][3];
  sink_if((float)s, never, sink);
}

// FP8 (e4m3) m16n8k32, f32 accumulate: compute capability 8.9 and later. Hopper's fast FP8 path is
// wgmma; this measures what mma.sync gets, the ceiling a learner's mma.sync FP8 GEMM can reach.
// On sm_90 ptxas has no FP8 mma.sync instruction: it unpacks the operands to f16 (F2FP), runs two
// HMMA.16816 into a zeroed register set and adds that to the accumulator (4 FADD). With A and B
// fixed, it hoisted the whole product out of the loop and the probe timed FADDs (1.2 "PFLOP/s").
// So one A register differs per mma and per trip (by k and the trip count), as fragments do in a
// GEMM: each mma then costs what it costs there, 2 HMMA, 4 FADD and the unpacking of one register.
// The values are random in [-1, 1]: exponent fields up to 0111, so the flips of bits 0-4 below
// never make the NaN code S.1111.111.
#if __CUDA_ARCH__ >= 890
__device__ __forceinline__ unsigned e4m3x4_bits(unsigned k) {
  const unsigned h = thread_bits(k);
  unsigned short lo, hi;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;"
      : "=h"(lo)
      : "f"(unit_of(h)), "f"(unit_of(mix32(h + 1u))));
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;"
      : "=h"(hi)
      : "f"(unit_of(mix32(h + 2u))), "f"(unit_of(mix32(h + 3u))));
  return lo | (unsigned)hi << 16;
}
#endif
extern "C" __global__ void __launch_bounds__(BS) mma_e4m3(int iters, float never, float* sink) {
  float d[8][4];
#pragma unroll
  for (int k = 0; k < 8; ++k) d[k][0] = d[k][1] = d[k][2] = d[k][3] = 0.f;
#if __CUDA_ARCH__ >= 890
  unsigned a0 = e4m3x4_bits(0), a1 = e4m3x4_bits(1), a2 = e4m3x4_bits(2), a3 = e4m3x4_bits(3),
           b0 = e4m3x4_bits(4), b1 = e4m3x4_bits(5);
  for (int i = 0; i < iters; ++i) {
    const unsigned ai = a0 ^ ((unsigned)i & 0x01010101u); // the time does not hang on the values
#pragma unroll
    for (int k = 0; k < 8; ++k)
      asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, "
                   "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                   : "+f"(d[k][0]), "+f"(d[k][1]), "+f"(d[k][2]), "+f"(d[k][3])
                   : "r"(ai ^ (unsigned)(k << 1) * 0x01010101u), "r"(a1), "r"(a2), "r"(a3), "r"(b0),
                     "r"(b1));
  }
#endif
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < 8; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3];
  sink_if(s, never, sink);
}

// ---- the performance model's probes --------------------------------------------------------
// Latencies, atomics, launches and sector-sized DRAM traffic: the parameters the performance
// model (app/core/perf/) needs beside the ceilings above. app/core/probe.cpp ("machine probes")
// says how each is timed and what it keeps.

// A pointer chase: slot k (at 8-byte word k * stride) holds the address of slot
// (k + step) % slots. With step coprime to slots that is one cycle through every slot, in an
// order that jumps far.
extern "C" __global__ void __launch_bounds__(BS)
    chase_init(unsigned long long* next, unsigned slots, unsigned stride, unsigned step) {
  for (unsigned long long k = (unsigned long long)blockIdx.x * BS + threadIdx.x; k < slots;
       k += (unsigned long long)gridDim.x * BS)
    next[k * stride] = (unsigned long long)(next + ((k + step) % slots) * stride);
}

// One thread follows the chain, 8 hops per loop trip: each load's address is the value the one
// before returned, with no arithmetic between them, so the time per hop is the load-to-use
// latency. ca: cached in L1 too; cg: L2 only. `hops` is a multiple of 8.
#define WB_CHASE(name, LD)                                                                         \
  extern "C" __global__ void name(unsigned long long p, int hops, float never, float* sink) {      \
    for (int h = 0; h < hops; h += 8) {                                                            \
      _Pragma("unroll") for (int u = 0; u < 8; ++u) asm volatile(LD " %0, [%0];" : "+l"(p));       \
    }                                                                                              \
    sink_if((float)(p & 0xff), never, sink);                                                       \
  }
WB_CHASE(chase_ca, "ld.global.ca.u64")
WB_CHASE(chase_cg, "ld.global.cg.u64")
// The same chain walked with atomics (adding 0 returns the slot's value): the round trip of one
// atomic to the L2.
WB_CHASE(chase_atomic, "atom.global.add.u64 %0, [%0], 0; //")
// Shared memory: 8192 words holding each other's shared addresses, one thread.
extern "C" __global__ void chase_shared(int hops, unsigned step, float never, float* sink) {
  __shared__ unsigned s[8192];
  for (unsigned k = threadIdx.x; k < 8192; k += blockDim.x)
    s[k] = (unsigned)__cvta_generic_to_shared(s + ((k + step) & 8191u));
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned a = (unsigned)__cvta_generic_to_shared(s);
  for (int h = 0; h < hops; h += 8) {
#pragma unroll
    for (int u = 0; u < 8; ++u) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
  }
  sink_if((float)(a & 0xff), never, sink);
}

// Atomics without a return value (red), as `atomicAdd(&x, v);` compiles. Values differ per thread
// so nothing can be merged by value.
// Every thread of the grid adds to ONE float.
extern "C" __global__ void __launch_bounds__(BS) atomic_one(float* p, int iters) {
  const float v = 1e-30f * (float)(threadIdx.x + 1);
  for (int i = 0; i < iters; ++i) atomicAdd(p, v);
}
// The same on one unsigned word (RED.ADD.U32): the L2's atomic unit may apply integer adds to one
// address faster than float ones (a histogram's hot bin is integer).
extern "C" __global__ void __launch_bounds__(BS) atomic_one_u32(unsigned* p, int iters) {
  const unsigned v = threadIdx.x + 1u;
  for (int i = 0; i < iters; ++i) atomicAdd(p, v);
}
// The same with one lane of each warp: is the one address's serialisation per lane or per warp
// instruction?
extern "C" __global__ void __launch_bounds__(BS) atomic_one_lane(float* p, int iters) {
  const float v = 1e-30f * (float)(threadIdx.x + 1);
  if ((threadIdx.x & 31) != 0) return;
  for (int i = 0; i < iters; ++i) atomicAdd(p, v);
}
// Every warp adds to its own word (its own sector): 32 lanes, one address.
extern "C" __global__ void __launch_bounds__(BS) atomic_warp(unsigned* p, int iters) {
  unsigned* q = p + ((size_t)blockIdx.x * BS + threadIdx.x) / 32 * 8;
  const unsigned v = 1u + (threadIdx.x & 1u);
  for (int i = 0; i < iters; ++i) atomicAdd(q, v);
}
// Every thread adds to a different word of a window that stays in the L2 (mask + 1 words).
extern "C" __global__ void __launch_bounds__(BS)
    atomic_spread(unsigned* p, unsigned mask, int iters) {
  unsigned k = (unsigned)(blockIdx.x * BS + threadIdx.x) * 8u;
  for (int i = 0; i < iters; ++i) {
    atomicAdd(p + (k & mask), 1u);
    k += 8u * 4099u; // another sector every time
  }
}
// Every thread of a block adds to one shared-memory float.
extern "C" __global__ void __launch_bounds__(BS)
    atomic_shared_one(int iters, float never, float* sink) {
  __shared__ float s;
  if (threadIdx.x == 0) s = 0.f;
  __syncthreads();
  const float v = 1e-30f * (float)(threadIdx.x + 1);
  for (int i = 0; i < iters; ++i) atomicAdd(&s, v);
  __syncthreads();
  if (threadIdx.x == 0) sink_if(s, never, sink);
}

// Shared-memory integer atomics: every thread of a block on one word (spread 0), every lane on
// its own word (1), and the lanes of a warp on their warp's own word (2): a histogram's extremes,
// and what a warp with colliding lanes costs when no other warp shares its word.
extern "C" __global__ void __launch_bounds__(BS)
    atomic_shared_u32(int iters, int spread, float never, float* sink) {
  __shared__ unsigned s[BS];
  s[threadIdx.x] = 0;
  __syncthreads();
  unsigned* p = spread == 1 ? s + threadIdx.x : spread == 2 ? s + (threadIdx.x >> 5) : s;
  const unsigned v = 1u + (threadIdx.x & 1u);
  for (int i = 0; i < iters; ++i) atomicAdd(p, v);
  __syncthreads();
  if (threadIdx.x == 0) sink_if((float)s[0], never, sink);
}

// Float adds, where the integer probes above do not answer for them (on one word the L2 applies
// an integer add in 0.73 ns and a float one in 1.76 on an H100): every warp on its own float word
// (its own sector), and every thread of a block on its block's word, the words side by side as a
// row sum's outputs are.
extern "C" __global__ void __launch_bounds__(BS) atomic_warp_f32(float* p, int iters) {
  float* q = p + ((size_t)blockIdx.x * BS + threadIdx.x) / 32 * 8;
  const float v = 1e-30f * (float)(threadIdx.x + 1);
  for (int i = 0; i < iters; ++i) atomicAdd(q, v);
}
extern "C" __global__ void __launch_bounds__(BS) atomic_row_f32(float* p, int iters) {
  const float v = 1e-30f * (float)(threadIdx.x + 1);
  for (int i = 0; i < iters; ++i) atomicAdd(p + blockIdx.x, v);
}
// Shared float adds with the lanes of each warp on their warp's own word. Beside
// atomic_shared_one (all 8 warps of a block on one word): whether a word's compare-and-swap loop
// takes one add per trip however many warps wait on it (then this is 8x that rate, the words
// being 8x as many), or contending warps slow each other's trips.
extern "C" __global__ void __launch_bounds__(BS)
    atomic_shared_f32_warp(int iters, float never, float* sink) {
  __shared__ float s[BS / 32];
  if (threadIdx.x < BS / 32) s[threadIdx.x] = 0.f;
  __syncthreads();
  const float v = 1e-30f * (float)(threadIdx.x + 1);
  for (int i = 0; i < iters; ++i) atomicAdd(&s[threadIdx.x >> 5], v);
  __syncthreads();
  if (threadIdx.x == 0) sink_if(s[0], never, sink);
}

// Memory-level parallelism: a read stream where each thread has exactly U 16-byte loads in flight
// (nothing unrolled beyond that), run with a chosen number of warps per SM, so that the bytes in
// flight per SM are known: the bandwidth they reach gives the loaded latency (Little's law).
template <int U>
__device__ __forceinline__ void mlp_body(const float4* __restrict__ x, long n4, float never,
                                         float* sink) {
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  const long step = (long)gridDim.x * blockDim.x * U;
#pragma unroll 1
  for (long i = (long)blockIdx.x * blockDim.x * U + threadIdx.x;
       i + (U - 1) * (long)blockDim.x < n4; i += step) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = ld_stream(x + i + u * blockDim.x);
#pragma unroll
    for (int u = 0; u < U; ++u) add4(acc, v[u]);
  }
  sink_if(acc.x + acc.y + acc.z + acc.w, never, sink);
}
extern "C" __global__ void mlp_read_u1(const float4* x, long n4, float never, float* sink) {
  mlp_body<1>(x, n4, never, sink);
}
extern "C" __global__ void mlp_read_u2(const float4* x, long n4, float never, float* sink) {
  mlp_body<2>(x, n4, never, sink);
}
extern "C" __global__ void mlp_read_u4(const float4* x, long n4, float never, float* sink) {
  mlp_body<4>(x, n4, never, sink);
}

// The L2 one sector at a time: each lane reads or writes 4 bytes of its own 32-byte sector, over
// a window that stays in the L2 (`mask` + 1 floats), `reps` passes.
extern "C" __global__ void __launch_bounds__(BS)
    l2_sector_read(const float* x, unsigned mask, int reps, float never, float* sink) {
  float acc = 0.f;
  const unsigned n = (mask + 1) / 8;
  for (int r = 0; r < reps; ++r)
    for (unsigned t = blockIdx.x * BS + threadIdx.x; t < n; t += gridDim.x * BS) {
      float v;
      asm volatile("ld.global.cg.f32 %0, [%1];"
                   : "=f"(v)
                   : "l"(x + ((t * 8u + (unsigned)r) & mask)));
      acc += v;
    }
  sink_if(acc, never, sink);
}
extern "C" __global__ void __launch_bounds__(BS)
    l2_sector_write(float* x, unsigned mask, int reps) {
  const unsigned n = (mask + 1) / 8;
  for (int r = 0; r < reps; ++r)
    for (unsigned t = blockIdx.x * BS + threadIdx.x; t < n; t += gridDim.x * BS)
      x[(t * 8u + (unsigned)(r & 7)) & mask] = (float)r;
}
// Whole lines written to a window that stays in the L2.
extern "C" __global__ void __launch_bounds__(BS) l2_write(float4* x, unsigned n4, int reps) {
  const float4 v = make_float4(1.f, 2.f, 3.f, (float)threadIdx.x);
  for (int r = 0; r < reps; ++r)
    for (unsigned i = blockIdx.x * BS + threadIdx.x; i < n4; i += gridDim.x * BS) x[i] = v;
}

// One thread per SM walks its own contiguous region, adding up floats: the loads do not depend on
// each other, but a thread has only the few the compiler unrolls in flight. The time per 64 bytes
// against the DRAM latency says whether the memory system fetches ahead for a sequential stream.
extern "C" __global__ void seq_read(const float* x, long per_block, float never, float* sink) {
  if (threadIdx.x != 0) return;
  const float* p = x + (long)blockIdx.x * per_block;
  float s = 0.f;
  for (long i = 0; i < per_block; ++i) s += p[i];
  sink_if(s, never, sink);
}

// Launches: a kernel that does nothing (timed alone, back to back, and with many blocks).
extern "C" __global__ void empty_kernel(float never, float* sink) {
  if (never == 1.0f) sink[0] = never;
}

// Sector-sized DRAM traffic. Each thread touches one 4-byte word every `stride` words, so with a
// stride of 32 (128 bytes) every lane of a warp is in its own 128-byte line and its own sector.
extern "C" __global__ void __launch_bounds__(BS)
    sector_read(const float* x, long count, int stride, float never, float* sink) {
  float acc = 0.f;
  const long step = (long)gridDim.x * BS;
  for (long t = (long)blockIdx.x * BS + threadIdx.x; t < count; t += step) {
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(x + t * stride));
    acc += v;
  }
  sink_if(acc, never, sink);
}
extern "C" __global__ void __launch_bounds__(BS) sector_write(float* x, long count, int stride) {
  const long step = (long)gridDim.x * BS;
  for (long t = (long)blockIdx.x * BS + threadIdx.x; t < count; t += step) x[t * stride] = (float)t;
}
// A pure write stream: 16-byte streaming stores, 4 per thread per step.
extern "C" __global__ void __launch_bounds__(BS) dram_write_cs(float4* y, long n4) {
  const long step = (long)gridDim.x * BS * 4;
  const float4 v = make_float4(1.f, 2.f, 3.f, (float)threadIdx.x);
  for (long i = (long)blockIdx.x * BS * 4 + threadIdx.x; i + 3 * BS < n4; i += step) {
#pragma unroll
    for (int u = 0; u < 4; ++u) st_stream(y + i + u * BS, v);
  }
}

#endif // WB_PART_MAIN

// ---- tensor cores: wgmma (sm_90a only) ----------------------------------------------------------
// Each warpgroup (128 threads) issues m64n256k16 with A (64x16) and B (256x16) in shared memory and
// a 64x256 FP32 accumulator in registers (128 per thread): 2*64*256*16 = 524288 FLOPs each, four
// per commit group. Two warpgroups per block, one block per SM. The tiles never change: this
// measures the tensor cores, not the loads that would feed them; their values are random.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// Shared-memory matrix descriptor, no swizzle: start address, leading-dimension byte offset
// (between the two 8x8 core matrices along K) and stride byte offset (between 8-row groups),
// each in units of 16 bytes.
__device__ __forceinline__ u64 smem_desc(unsigned addr) {
  return (u64)((addr & 0x3ffffu) >> 4) | ((u64)(128 >> 4) << 16) | ((u64)(256 >> 4) << 32);
}

#define WB_WGMMA_REGS                                                                              \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                        \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "               \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "               \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "               \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "               \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "               \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "   \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "     \
  "%127}"

#define WB_R8(i)                                                                                   \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]),      \
      "+f"(d[i + 6]), "+f"(d[i + 7])

#define WB_WGMMA(type)                                                                             \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                       \
               "wgmma.mma_async.sync.aligned.m64n256k16.f32." type "." type " " WB_WGMMA_REGS      \
               ", %128, %129, p, 1, 1, 0, 0;\n}\n"                                                 \
               : WB_R8(0), WB_R8(8), WB_R8(16), WB_R8(24), WB_R8(32), WB_R8(40), WB_R8(48),        \
                 WB_R8(56), WB_R8(64), WB_R8(72), WB_R8(80), WB_R8(88), WB_R8(96), WB_R8(104),     \
                 WB_R8(112), WB_R8(120)                                                            \
               : "l"(da), "l"(db), "r"(1))

#define WB_WGMMA_KERNEL_BODY(type, is_bf16)                                                        \
  __shared__ __align__(1024) unsigned tile[(64 + 256) * 16 / 2];                                   \
  /* Random values in [-1, 1), as the mma.sync probes have, for the same reason. */                \
  for (int i = threadIdx.x; i < (64 + 256) * 16 / 2; i += blockDim.x)                              \
    tile[i] = operand_bits<is_bf16>(i);                                                            \
  /* Written by ordinary stores, read by the tensor cores (the async proxy). */                    \
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");                                     \
  __syncthreads();                                                                                 \
  const unsigned base = (unsigned)__cvta_generic_to_shared(tile);                                  \
  const u64 da = smem_desc(base), db = smem_desc(base + 64 * 16 * 2);                              \
  float d[128];                                                                                    \
  _Pragma("unroll") for (int k = 0; k < 128; ++k) d[k] = 0.f;                                      \
  for (int i = 0; i < iters; ++i) {                                                                \
    /* Orders the accumulators' registers before this group, as ptxas would otherwise insert. */   \
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");                                        \
    WB_WGMMA(type);                                                                                \
    WB_WGMMA(type);                                                                                \
    WB_WGMMA(type);                                                                                \
    WB_WGMMA(type);                                                                                \
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");                                 \
    /* One group in flight while the next is issued. */                                            \
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");                                 \
  }                                                                                                \
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");                                   \
  float s = 0.f;                                                                                   \
  _Pragma("unroll") for (int k = 0; k < 128; ++k) s += d[k];                                       \
  sink_if(s, never, sink);

#if WB_PART_WGMMA_BF16
extern "C" __global__ void __launch_bounds__(256, 1)
    wgmma_bf16(int iters, float never, float* sink) {
  WB_WGMMA_KERNEL_BODY("bf16", true)
}
#endif
#if WB_PART_WGMMA_F16
extern "C" __global__ void __launch_bounds__(256, 1)
    wgmma_f16(int iters, float never, float* sink) {
  WB_WGMMA_KERNEL_BODY("f16", false)
}
#endif

#endif
