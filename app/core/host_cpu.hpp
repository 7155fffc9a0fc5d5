#pragma once
// What the host's CPU offers the vector fast paths (the simulator's handlers, the input
// generators), read once at start-up: a function-local static would test its guard on every
// access, and these are read per instruction. Each asks __builtin_cpu_init first, as it may run
// before libgcc's own initialiser. Every fast path gives the same bits as the scalar code it
// stands in for.
namespace wb::host_cpu {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
inline const bool kAvx2 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
}();
// AVX2 with FMA: the vector forms of a fused multiply-add (and the tensor-core products, exact in
// double).
inline const bool kAvx2Fma = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}();
inline const bool kF16c = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("f16c") != 0;
}();
inline const bool kAvx512f = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") != 0;
}();
// AVX-512 with the 64-bit integer multiplies and conversions (DQ).
inline const bool kAvx512dq = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}();
#else
inline constexpr bool kAvx2 = false, kAvx2Fma = false, kF16c = false, kAvx512f = false,
                      kAvx512dq = false;
#endif
} // namespace wb::host_cpu
