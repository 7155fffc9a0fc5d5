// Device printf, bounded on both backends in bytes and in time, whatever the format
// (docs/simulator.md, "printf").
//
// Three layers:
//  - at the source: printf_guard_source() is device code the compile prelude puts before every
//    learner file. It makes `printf(...)` a variadic device function that cuts widths and
//    precisions to kPrintfFieldBound (a %s's precision to kPrintfStringBound, and a %s without
//    one gets it), turns %n into a conversion that prints nothing, and clamps `*` values, before
//    it calls the real printf. The GPU's host-side formatting and the simulator then see the same
//    bounded call.
//  - per backend: the simulator's vprintf clamps the same way (for calls that bypass the guard)
//    and counts the bytes an unclamped field would have printed; the GPU's printf FIFO is small.
//  - per run: PrintfSink keeps at most kPrintfOutputBound bytes of valid UTF-8 (invalid bytes
//    shown as \xNN) and ends cut output with "… N more bytes not shown".
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wb {

// Bytes of a run's printf output that are kept and shown.
inline constexpr size_t kPrintfOutputBound = 64 * 1024;
// The widest field width and the largest precision printf formats (larger ones are cut to it).
inline constexpr int kPrintfFieldBound = 64;
// The most bytes a %s prints, and so reads: a string that is not terminated by then is cut.
inline constexpr int kPrintfStringBound = 1024;
// printf calls in one launch. A GPU's printf goes through one buffer that the driver empties on
// the host; a launch that prints hundreds of thousands of lines (every thread in a loop) runs past
// the time limit there, so on the simulator it is the same timeout.
constexpr uint64_t kPrintfCallBound = 1u << 17;

// The device code of the guard, for the compile prelude: it ends with `#define printf(...)`.
const std::string& printf_guard_source();

// The guard's format rewrite, as a function the simulator runs natively in place of the device
// one (kPrintfGuardRewrite names it in PTX): simulating it byte by byte cost more than printf.
// Same rules and result: `out` gets the bounded format (at most 511 bytes) and the masks a bit
// per argument index; returns whether `out` differs from `f`.
struct PrintfGuardMasks {
  uint64_t field = 0, string = 0, zero = 0, str = 0; // as wb_printf_guard::Masks
};
bool printf_guard_rewrite(std::string_view f, std::string& out, PrintfGuardMasks& m);
// wb_printf_guard::rewrite(Job*): Job is {const char* f; char* b; Masks m; int changed;}.
inline constexpr std::string_view kPrintfGuardRewrite = "_ZN15wb_printf_guard7rewriteEPNS_3JobE";

// "… 12345 more bytes not shown\n": the line that ends output cut at the bound.
std::string printf_cut_note(uint64_t bytes);

// `s` as valid UTF-8: every byte that does not belong to a well-formed UTF-8 sequence becomes
// the four characters \xNN.
std::string utf8_escaped(std::string_view s);

// A run's printf output: at most kPrintfOutputBound bytes of valid UTF-8, and a count of the
// bytes printed past it.
class PrintfSink {
public:
  explicit PrintfSink(size_t bound = kPrintfOutputBound) : bound_(bound) {}
  // Appends what a kernel printed (any bytes), escaped, as far as the bound allows; the rest is
  // counted.
  void add(std::string_view printed);
  // Counts bytes that were printed but never formatted here (a clamped field's padding).
  void drop(uint64_t bytes) { dropped_ += bytes; }
  // Appends another sink's output and count.
  void add(const PrintfSink& other) {
    add(other.text_);
    dropped_ += other.dropped_;
  }
  bool full() const { return cut_; }
  const std::string& text() const { return text_; }
  uint64_t dropped() const { return dropped_; }
  // The text, ended by printf_cut_note when anything was dropped.
  std::string finish() const;

private:
  size_t bound_;
  std::string text_;
  uint64_t dropped_ = 0;
  bool cut_ = false; // the bound was reached: everything after is counted, not kept
};

} // namespace wb
