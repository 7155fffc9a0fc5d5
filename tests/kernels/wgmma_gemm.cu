// wgmma GEMM kernels shared by the simulator's test (tests/sim/sim_wgmma_test.cpp) and the GPU's
// (tests/gpu/wgmma_gpu_test.cpp): one block of one warpgroup (128 threads) computes
// D (64 x N, f32, row-major) = A (64 x K, row-major) * B^T (B: N x K, row-major), both K-major.
// The threads stage A and B in shared memory with plain 16-byte stores, in one of two layouts:
//  - 128-byte swizzle: 128-byte-wide tiles (rows x 128 bytes of K), 1024-byte aligned; 16-byte
//    chunk c of row r at r * 128 + ((c ^ (r % 8)) * 16). A K slice of 32 bytes (k32 for FP8, k16
//    for f16/bf16) is described by start = tile + 32 kk, SBO 1024 (one 8-row group), LBO 16
//    (unused by a swizzled K-major operand), swizzle 1. The 64- and 32-byte swizzles likewise
//    (64- or 32-byte-wide tiles, SBO 512 or 256, chunk c ^ (r / 2 % 4) or c ^ (r / 4 % 2));
//  - no swizzle: 8-row x 16-byte core matrices of 128 contiguous bytes. A's core matrices run
//    along K first (LBO 128, SBO = 8 rows' worth of all of K), B's along N first (SBO 128, LBO =
//    N / 8 core matrices), so both offsets are exercised.
// then fence.proxy.async (the tensor cores read through the async proxy), __syncthreads, and one
// commit group of K / (32 bytes) wgmma, scale-d 0 on the first (the accumulators start as NaN: a
// wgmma that added them would show) and 1 after. `skew` is added to A's start address (0 in a
// correct run; the tests use it to get a misaligned or out-of-range descriptor).
// The _tb kernels stage B N-major instead (imm-trans-b 1: n innermost, B's element (n, k) of
// K-row k), the _ta ones A M-major too (imm-trans-a 1), and _rega_tb takes A from registers with
// an N-major B (FlashAttention's P V: P in registers, V as it lies in memory, [key][d]); see
// wgmma_gemm_mn below for their layouts.
// On a GPU this needs sm_90a; NVRTC passes inline PTX through unchecked, so the simulator runs the
// same source compiled for compute_80.
typedef unsigned long long u64;

__device__ __forceinline__ u64 wg_desc(unsigned addr, unsigned lbo, unsigned sbo, unsigned swz) {
  return (u64)((addr & 0x3ffffu) >> 4) | ((u64)((lbo & 0x3ffffu) >> 4) << 16) |
         ((u64)((sbo & 0x3ffffu) >> 4) << 32) | ((u64)swz << 62);
}

// The accumulators as asm operands: N / 2 f32 registers.
#define WG_D32                                                                                     \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),     \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),   \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),   \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define WG_D64                                                                                     \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),     \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),   \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),   \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),   \
      "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),   \
      "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),   \
      "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),   \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define WG_D128                                                                                    \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),     \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),   \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),   \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),   \
      "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),   \
      "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),   \
      "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),   \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),   \
      "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]),   \
      "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),   \
      "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),   \
      "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),   \
      "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]),   \
      "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),           \
      "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]),          \
      "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),          \
      "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]),          \
      "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

__device__ __forceinline__ void wg_e4m3_n64(float* d, u64 da, u64 db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1;\n}\n"
      : WG_D32
      : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wg_e4m3_n256(float* d, u64 da, u64 db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "
      "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, "
      "%87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, "
      "%103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, "
      "%117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1;\n}\n"
      : WG_D128
      : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wg_e5m2_n64(float* d, u64 da, u64 db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1;\n}\n"
      : WG_D32
      : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wg_f16_n64(float* d, u64 da, u64 db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : WG_D32
      : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wg_bf16_n128(float* d, u64 da, u64 db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : WG_D64
      : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wg_f16_n128(float* d, u64 da, u64 db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : WG_D64
      : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wg_e4m3_n64_neg(float* d, u64 da, u64 db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, -1, 1;\n}\n"
      : WG_D32
      : "l"(da), "l"(db), "r"(scale_d));
}

// Byte offset of 16-byte chunk c (along K) of row r in a tile of R rows and KB bytes of K, with a
// W-byte swizzle (W = 128, 64, 32: W-byte-wide tiles side by side along K; the 16-byte chunk bits
// of the address XORed with bits 7 and up, which row r % 8 of an atom of 8 W bytes sets to
// r W / 128) or none (W = 0).
template <int R, int KB, int W, bool IS_B>
__device__ __forceinline__ unsigned chunk_at(int r, int c) {
  constexpr int S = W ? W : 128; // (the swizzled branch's width, nonzero in every instantiation)
  if (W)
    return (c / (S / 16)) * (R * S) + r * S + (((c % (S / 16)) ^ ((r * S / 128) % (S / 16))) * 16);
  if (!IS_B) return (r / 8) * (KB / 16) * 128 + c * 128 + (r % 8) * 16; // K first
  return c * (R / 8) * 128 + (r / 8) * 128 + (r % 8) * 16;              // N first
}

// One warpgroup: N columns, KB bytes of K per row, the wgmma wrapper WG.
template <int N, int KB, int SW, void (*WG)(float*, u64, u64, int)>
__device__ __forceinline__ void wgmma_gemm(const unsigned char* A, const unsigned char* B, float* D,
                                           int skew) {
  __shared__ __align__(1024) unsigned char sA[64 * KB];
  __shared__ __align__(1024) unsigned char sB[N * KB];
  const int t = threadIdx.x;
  for (int i = t; i < 64 * KB / 16; i += 128) {
    const int r = i / (KB / 16), c = i % (KB / 16);
    *(uint4*)(sA + chunk_at<64, KB, SW, false>(r, c)) = ((const uint4*)A)[i];
  }
  for (int i = t; i < N * KB / 16; i += 128) {
    const int r = i / (KB / 16), c = i % (KB / 16);
    *(uint4*)(sB + chunk_at<N, KB, SW, true>(r, c)) = ((const uint4*)B)[i];
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const unsigned a0 = (unsigned)__cvta_generic_to_shared(sA) + (unsigned)skew;
  const unsigned b0 = (unsigned)__cvta_generic_to_shared(sB);
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = __int_as_float(0x7fc00000); // NaN: scale-d 0 must drop it
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
  for (int s = 0; s < KB / 32; ++s) {
    u64 da, db;
    if (SW) {
      // Descriptor swizzle modes: 1 128-byte, 2 64-byte, 3 32-byte; SBO one atom of 8 rows.
      constexpr int S = SW ? SW : 128, per = S / 32, mode = S == 128 ? 1 : S == 64 ? 2 : 3;
      da = wg_desc(a0 + (s / per) * 64 * S + 32 * (s % per), 16, 8 * S, mode);
      db = wg_desc(b0 + (s / per) * N * S + 32 * (s % per), 16, 8 * S, mode);
    } else {
      da = wg_desc(a0 + 2 * s * 128, 128, (KB / 16) * 128, 0);
      db = wg_desc(b0 + 2 * s * (N / 8) * 128, (N / 8) * 128, 128, 0);
    }
    WG(d, da, db, s > 0);
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  const int w = t / 32, l = t % 32;
  const int row = 16 * w + l / 4;
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    const int col = 8 * j + 2 * (l % 4);
    D[row * N + col] = d[4 * j];
    D[row * N + col + 1] = d[4 * j + 1];
    D[(row + 8) * N + col] = d[4 * j + 2];
    D[(row + 8) * N + col + 1] = d[4 * j + 3];
  }
}

#define WG_KERNEL(name, N, KB, SW, WG)                                                             \
  extern "C" __global__ void __launch_bounds__(128)                                                \
      name(const unsigned char* A, const unsigned char* B, float* D, int skew) {                   \
    wgmma_gemm<N, KB, SW, WG>(A, B, D, skew);                                                      \
  }

// name, N, bytes of K per row, swizzle bytes (0: none), wgmma form (K = KB for FP8, KB / 2 for
// 16-bit).
WG_KERNEL(wgmma_e4m3_n64_sw128, 64, 128, 128, wg_e4m3_n64)
WG_KERNEL(wgmma_e4m3_n256_sw128, 256, 128, 128, wg_e4m3_n256)
WG_KERNEL(wgmma_e5m2_n64_sw128_k256, 64, 256, 128, wg_e5m2_n64)
WG_KERNEL(wgmma_f16_n64_sw128_k128, 64, 256, 128, wg_f16_n64)
WG_KERNEL(wgmma_bf16_n128_sw128, 128, 128, 128, wg_bf16_n128)
WG_KERNEL(wgmma_e4m3_n64_neg_sw128, 64, 128, 128, wg_e4m3_n64_neg)
WG_KERNEL(wgmma_e4m3_n64_none, 64, 128, 0, wg_e4m3_n64)
WG_KERNEL(wgmma_f16_n128_none, 128, 128, 0, wg_f16_n128)
WG_KERNEL(wgmma_e4m3_n64_sw64, 64, 128, 64, wg_e4m3_n64)
WG_KERNEL(wgmma_f16_n64_sw32, 64, 128, 32, wg_f16_n64)

// A from registers: {a0, a1, a2, a3} in mma.sync's A layout for the warp's 16 rows.
__device__ __forceinline__ void wg_f16_n64_rega(float* d, const unsigned* a, u64 db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
      : WG_D32
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wg_e4m3_n64_rega(float* d, const unsigned* a, u64 db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
      : WG_D32
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
}

// The same GEMM with A read from global memory straight into the fragments: register q of a K
// slice holds row 16 w + l / 4 (+ 8 for q odd) and the 4 bytes at byte 4 (l % 4) (+ 16 for q >= 2)
// of the slice's 32 (two f16 or four FP8 values). B is staged with the 128-byte swizzle.
template <int N, int KB, void (*WG)(float*, const unsigned*, u64, int)>
__device__ __forceinline__ void wgmma_gemm_rega(const unsigned char* A, const unsigned char* B,
                                                float* D) {
  __shared__ __align__(1024) unsigned char sB[N * KB];
  const int t = threadIdx.x, w = t / 32, l = t % 32;
  for (int i = t; i < N * KB / 16; i += 128) {
    const int r = i / (KB / 16), c = i % (KB / 16);
    *(uint4*)(sB + chunk_at<N, KB, 128, true>(r, c)) = ((const uint4*)B)[i];
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const unsigned b0 = (unsigned)__cvta_generic_to_shared(sB);
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = __int_as_float(0x7fc00000);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
  for (int s = 0; s < KB / 32; ++s) {
    unsigned a[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int row = 16 * w + l / 4 + 8 * (q % 2), byte = 32 * s + 4 * (l % 4) + 16 * (q / 2);
      a[q] = *(const unsigned*)(A + row * KB + byte);
    }
    const u64 db = wg_desc(b0 + (s / 4) * N * 128 + 32 * (s % 4), 16, 1024, 1);
    WG(d, a, db, s > 0);
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  const int row = 16 * w + l / 4;
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    const int col = 8 * j + 2 * (l % 4);
    D[row * N + col] = d[4 * j];
    D[row * N + col + 1] = d[4 * j + 1];
    D[(row + 8) * N + col] = d[4 * j + 2];
    D[(row + 8) * N + col + 1] = d[4 * j + 3];
  }
}

#define WG_KERNEL_REGA(name, N, KB, WG)                                                            \
  extern "C" __global__ void __launch_bounds__(128)                                                \
      name(const unsigned char* A, const unsigned char* B, float* D, int) {                        \
    wgmma_gemm_rega<N, KB, WG>(A, B, D);                                                           \
  }

WG_KERNEL_REGA(wgmma_f16_n64_rega, 64, 128, wg_f16_n64_rega)
WG_KERNEL_REGA(wgmma_e4m3_n64_rega, 64, 128, wg_e4m3_n64_rega)

// ---- M- and N-major operands (imm-trans 1), 16-bit types ----
// An M- or N-major operand of R rows (m or n) and K elements of k is stored with k as its rows:
//  - 128-byte swizzle: tiles of 64 rows-of-the-operand (128 bytes) side by side, each K k-rows of
//    128 bytes, 16-byte chunk c of k-row k at k * 128 + ((c ^ (k % 8)) * 16); LBO = one tile
//    (K * 128 bytes: the next 64 of n), SBO = 1024 (the next 8 k-rows); a k16 slice s starts
//    2048 s bytes in;
//  - no swizzle: core matrices of 8 k-rows x 16 bytes (8 of n), element (n, k) at
//    (n / 8) * 128 + (k / 8) * LBO + (k % 8) * 16 + (n % 8) * 2: SBO = 128 (the next 8 of n),
//    LBO = R / 8 core matrices (the next 8 of k); a k16 slice starts 2 LBO s bytes in.
template <int R, int K, int SW> __device__ __forceinline__ unsigned mn_at(int n, int k) {
  if (SW) return (n / 64) * K * 128 + k * 128 + ((((n % 64) / 8) ^ (k % 8)) * 16) + (n % 8) * 2;
  return (n / 8) * 128 + (k / 8) * (R / 8) * 128 + (k % 8) * 16 + (n % 8) * 2;
}
template <int R, int K, int SW> __device__ __forceinline__ u64 mn_desc(unsigned base, int s) {
  if (SW) return wg_desc(base + 2048 * s, K * 128, 1024, 1);
  return wg_desc(base + 2 * s * (R / 8) * 128, (R / 8) * 128, 128, 0);
}

// The accumulators' asm operands as text: "{%0, ..., %N/2 - 1}".
#define WG_R32                                                                                     \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "    \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define WG_R64                                                                                     \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "    \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "     \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "     \
  "%56, %57, %58, %59, %60, %61, %62, %63}"

__device__ __forceinline__ void wg_bf16_n128_tb(float* d, u64 da, u64 db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " WG_R64
               ", %64, %65, p, 1, 1, 0, 1;\n}\n"
               : WG_D64
               : "l"(da), "l"(db), "r"(scale_d));
}
__device__ __forceinline__ void wg_f16_n64_tb(float* d, u64 da, u64 db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " WG_R32
               ", %32, %33, p, 1, 1, 0, 1;\n}\n"
               : WG_D32
               : "l"(da), "l"(db), "r"(scale_d));
}
__device__ __forceinline__ void wg_f16_n64_ta_tb(float* d, u64 da, u64 db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " WG_R32
               ", %32, %33, p, 1, 1, 1, 1;\n}\n"
               : WG_D32
               : "l"(da), "l"(db), "r"(scale_d));
}
__device__ __forceinline__ void wg_bf16_n128_rega_tb(float* d, const unsigned* a, u64 db,
                                                     int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " WG_R64
               ", {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
               : WG_D64
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
}

// D = A B^T as above (A 64 x K, B N x K, 16-bit, row-major in global memory), B staged N-major
// (and A M-major when TA; A from registers when REGA) with swizzle SW (128 or 0).
template <int N, int K, int SW, bool TA, bool REGA, void (*WG)(float*, u64, u64, int),
          void (*WGR)(float*, const unsigned*, u64, int)>
__device__ __forceinline__ void wgmma_gemm_mn(const unsigned short* A, const unsigned short* B,
                                              float* D) {
  __shared__ __align__(1024) unsigned char sA[64 * K * 2];
  __shared__ __align__(1024) unsigned char sB[N * K * 2];
  const int t = threadIdx.x, w = t / 32, l = t % 32;
  // Pairs of elements adjacent in shared memory, one 4-byte store each: (k, k + 1) of a row
  // K-major, (n, n + 1) of a k-row M- or N-major.
  for (int i = t; i < 32 * K; i += 128) {
    if (TA) {
      const int m = 2 * (i / K), k = i % K;
      *(unsigned*)(sA + mn_at<64, K, SW>(m, k)) = A[m * K + k] | (unsigned)A[(m + 1) * K + k] << 16;
    } else {
      const int m = i / (K / 2), k = 2 * (i % (K / 2));
      *(unsigned*)(sA + chunk_at<64, K * 2, SW, false>(m, k / 8) + (k % 8) * 2) =
          A[m * K + k] | (unsigned)A[m * K + k + 1] << 16;
    }
  }
  for (int i = t; i < N / 2 * K; i += 128) {
    const int n = 2 * (i / K), k = i % K;
    *(unsigned*)(sB + mn_at<N, K, SW>(n, k)) = B[n * K + k] | (unsigned)B[(n + 1) * K + k] << 16;
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const unsigned a0 = (unsigned)__cvta_generic_to_shared(sA);
  const unsigned b0 = (unsigned)__cvta_generic_to_shared(sB);
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = __int_as_float(0x7fc00000);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
  for (int s = 0; s < K / 16; ++s) {
    const u64 db = mn_desc<N, K, SW>(b0, s);
    if constexpr (REGA) {
      unsigned a[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int row = 16 * w + l / 4 + 8 * (q % 2), col = 16 * s + 2 * (l % 4) + 8 * (q / 2);
        a[q] = *(const unsigned*)(A + row * K + col);
      }
      WGR(d, a, db, s > 0);
    } else {
      const u64 da = TA ? mn_desc<64, K, SW>(a0, s)
                        : (SW ? wg_desc(a0 + (s / 4) * 64 * 128 + 32 * (s % 4), 16, 1024, 1)
                              : wg_desc(a0 + 2 * s * 128, 128, (K / 8) * 128, 0));
      WG(d, da, db, s > 0);
    }
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  const int row = 16 * w + l / 4;
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    const int col = 8 * j + 2 * (l % 4);
    D[row * N + col] = d[4 * j];
    D[row * N + col + 1] = d[4 * j + 1];
    D[(row + 8) * N + col] = d[4 * j + 2];
    D[(row + 8) * N + col + 1] = d[4 * j + 3];
  }
}

#define WG_KERNEL_MN(name, N, K, SW, TA, REGA, WG, WGR)                                            \
  extern "C" __global__ void __launch_bounds__(128)                                                \
      name(const unsigned short* A, const unsigned short* B, float* D, int) {                      \
    wgmma_gemm_mn<N, K, SW, TA, REGA, WG, WGR>(A, B, D);                                           \
  }

WG_KERNEL_MN(wgmma_bf16_n128_tb_sw128, 128, 64, 128, false, false, wg_bf16_n128_tb, nullptr)
WG_KERNEL_MN(wgmma_f16_n64_tb_none, 64, 64, 0, false, false, wg_f16_n64_tb, nullptr)
WG_KERNEL_MN(wgmma_f16_n64_ta_tb_sw128, 64, 64, 128, true, false, wg_f16_n64_ta_tb, nullptr)
WG_KERNEL_MN(wgmma_bf16_n128_rega_tb_sw128, 128, 128, 128, false, true, nullptr,
             wg_bf16_n128_rega_tb)
