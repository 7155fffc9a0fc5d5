// Seeded input generators: `init = "uniform(-1, 1)"` in puzzle.toml. Values come from a
// counter-based hash of (seed, stream, element index), computed with exactly rounded operations
// only (+ - * / and sqrt), so every machine and every backend sees the same bytes.
//
//   uniform(lo, hi)        floats in [lo, hi); integers in [lo, hi] for integer buffers
//   normal(mean, std)      Irwin-Hall approximation (sum of 12 uniforms), bounded to mean +- 6 std
//   randint(lo, hi)        integers in [lo, hi)
//   skewed(lo, hi, power)  integers in [lo, hi) drawn as lo + (hi-lo) * u^power: heavy at lo
//   arange(start, step)    start + i * step
//   const(v)               every element v (also `zeros`, `ones`)
//   ties(lo, hi, k)        floats from only k distinct values in [lo, hi]: many equal elements
//   q4_0(dlo, dhi)         u8 buffers only: llama.cpp q4_0 blocks of 18 bytes, an f16 scale
//                          uniform in [dlo, dhi] (little-endian) then 16 random bytes
//   randperm(n)            each run of n elements is a random permutation of 0 .. n-1 (a buffer
//                          shorter than n holds distinct values drawn from 0 .. n-1)
//   padded(lo, hi, period, keep, grow)  uniform(lo, hi) in the first keep + r * grow elements of
//                          the r-th run of `period` elements, the rest NaN (integers: -1): padding
//                          past a ragged length that a kernel must not read (grow defaults to 0)
//
// Arguments are numbers or size expressions ("randint(0, bins)").
#pragma once
#include "dtype.hpp"
#include "expr.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace wb {

struct GenArg {
  std::variant<double, Expr> value;
  double eval(const Env& env) const;
};

// A generator with its kind and arguments resolved for one buffer of one case: fills any range of
// elements without allocating (so it can run anywhere, a signal handler included).
struct ResolvedGenerator {
  enum class Kind {
    uniform,
    normal,
    randint,
    skewed,
    arange,
    constant,
    ties,
    q4_0,
    randperm,
    padded
  } kind = Kind::constant;
  DType type = DType::f32;
  double a[5] = {0, 0, 0, 0, 0};
  size_t nargs = 0;
  double cval = 0;
  uint64_t key = 0;
  // Elements [first, first + count) into dst (count * dtype_size(type) bytes).
  void fill(std::byte* dst, uint64_t first, size_t count) const;
};

struct Generator {
  std::string kind; // uniform normal randint skewed arange const ties q4_0 randperm padded
  std::vector<GenArg> args;
  std::string text;

  static Generator parse(std::string_view text); // throws ExprError naming what is wrong
  ResolvedGenerator resolve(DType t, uint64_t seed, uint64_t stream, const Env& env) const;
  // Fill `out` (count * dtype_size(t) bytes) for one buffer of one case; returns content_hash
  // (backend.hpp) of the bytes written.
  uint64_t fill(DType t, std::span<std::byte> out, uint64_t seed, uint64_t stream,
                const Env& env) const;
};

// A stable 64-bit stream id for a buffer name, so adding a buffer leaves the others' values alone.
uint64_t stream_id(std::string_view name, uint64_t case_index);
// splitmix64, the mixing step every generator shares.
uint64_t mix64(uint64_t x);

} // namespace wb
