#include "format_figure.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

namespace wb {

namespace {

// v rounded to three significant digits, and the power of ten of its leading digit after rounding
// (999.7 rounds to 1000, whose leading digit is at 3).
double round3(double v, int& exp10) {
  double a = std::fabs(v);
  int e = int(std::floor(std::log10(a)));
  double step = std::pow(10.0, e - 2);
  double r = std::round(a / step) * step;
  exp10 = int(std::floor(std::log10(r) + 1e-12));
  return std::copysign(r, v);
}

bool utf8_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

} // namespace

std::string sig3(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  int e = 0;
  double r = round3(v, e);
  if (e >= 2 && e < 15) return fmt::format("{:.0f}", r);
  if (e < -4 || e >= 15) return fmt::format("{:.3g}", r);
  std::string s = fmt::format("{:.{}f}", r, 2 - e);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string si(double value, std::string_view unit) {
  static const char* kPrefix[] = {"p", "n", "µ", "m", "", "k", "M", "G", "T", "P"};
  if (value == 0 || !std::isfinite(value)) return fmt::format("{} {}", sig3(value), unit);
  int e = 0;
  double r = round3(value, e);
  int p = int(std::floor(double(e) / 3));
  p = std::clamp(p, -4, unit == "s" ? 0 : 5);
  return fmt::format("{} {}{}", sig3(r / std::pow(10.0, 3 * p)), kPrefix[p + 4], unit);
}

std::string flops_text(double gflops) {
  return si(gflops * 1e9, "FLOP/s");
}
std::string bandwidth_text(double gbps) {
  return si(gbps * 1e9, "B/s");
}
std::string bytes_text(double bytes) {
  return si(bytes, "B");
}
std::string time_text(double us) {
  return si(us * 1e-6, "s");
}
std::string intensity_text(double flop_per_byte) {
  return sig3(flop_per_byte) + " FLOP/B";
}
std::string percent_text(double share) {
  double p = 100 * share;
  return (std::fabs(p) >= 10 ? fmt::format("{:.0f}", p) : sig3(p)) + "%";
}

std::vector<std::string_view> wrap_lines(std::string_view text, float width,
                                         const std::function<float(std::string_view)>& measure) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    // One paragraph, [start, end): greedy, preferring the breaks that keep figures whole. Widths
    // add up word by word, so each line costs one pass over its text.
    size_t line = start;
    for (;;) {
      float w = 0;
      size_t from = line, good = 0, any = 0; // the last space that fits: one allowed, and any
      bool rest_fits = false;
      for (size_t i = line + 1;; ++i) {
        if (i >= end) {
          w += from < end ? measure(text.substr(from, end - from)) : 0;
          rest_fits = w <= width;
          break;
        }
        if (text[i] != ' ') continue;
        w += measure(text.substr(from, i - from));
        from = i;
        if (w > width) break;
        any = i;
        if (!std::isdigit(static_cast<unsigned char>(text[i - 1]))) good = i;
      }
      if (rest_fits) {
        lines.push_back(text.substr(line, end - line));
        break;
      }
      size_t cut = good ? good : any;
      size_t next = cut + 1;
      if (!cut) { // one word wider than the width: cut it where it must be, on a character
        cut = line + 1;
        while (cut < end && utf8_continuation(text[cut])) ++cut;
        for (size_t i = cut; i < end; ++i) {
          if (utf8_continuation(text[i])) continue;
          if (measure(text.substr(line, i - line)) > width) break;
          cut = i;
        }
        next = cut;
      }
      lines.push_back(text.substr(line, cut - line));
      line = next;
      while (line < end && text[line] == ' ') ++line;
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return lines;
}

} // namespace wb
