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

// m×10ⁿ with n in superscript digits: the reading of a figure far from 1 (a relative error of
// 1.2×10⁻⁷), where e-notation would be a programmer's.
std::string times_ten(double v, int digits) {
  static const char* kSup[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  int e = int(std::floor(std::log10(std::fabs(v))));
  double m = v / std::pow(10.0, e);
  std::string s = fmt::format("{:.{}f}", m, digits - 1);
  if (std::fabs(std::stod(s)) >= 10) { // 9.999 rounded up to 10.0
    ++e;
    s = fmt::format("{:.{}f}", v / std::pow(10.0, e), digits - 1);
  }
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  s += "×10";
  if (e < 0) s += "⁻";
  for (char c : std::to_string(std::abs(e))) s += kSup[c - '0'];
  return s;
}

// v to `digits` significant digits, as sig3 writes it.
std::string sig(double v, int digits) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  double r = std::stod(fmt::format("{:.{}e}", v, digits - 1)); // rounded to the digits asked
  int e = int(std::floor(std::log10(std::fabs(r)) + 1e-12));
  if (e < -4 || e >= 15) return times_ten(r, digits);
  if (e >= digits - 1) return fmt::format("{:.0f}", r);
  std::string s = fmt::format("{:.{}f}", r, digits - 1 - e);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

bool utf8_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// A space at i that belongs to a figure: after a digit ("326 TFLOP/s"), or after the SI prefix of
// a count ("2.67 M clocks").
bool after_number(std::string_view text, size_t i) {
  auto digit = [&](size_t j) { return std::isdigit(static_cast<unsigned char>(text[j])) != 0; };
  if (digit(i - 1)) return true;
  return i >= 3 && text[i - 2] == ' ' && digit(i - 3) &&
         std::string_view("kMGTP").find(text[i - 1]) != std::string_view::npos;
}

} // namespace

std::string sig3(double v) {
  return sig(v, 3);
}

std::pair<std::string, std::string> sig3_pair(double a, double b) {
  // 17 digits tell any two doubles apart.
  for (int d = 3;; ++d) {
    std::string x = sig(a, d), y = sig(b, d);
    if (x != y || a == b || d >= 17 || (std::isnan(a) && std::isnan(b))) return {x, y};
  }
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

std::string count_text(double n, std::string_view noun) {
  static const char* kPrefix[] = {"", " k", " M", " G", " T", " P"};
  std::string s;
  if (!std::isfinite(n) || std::fabs(n) < 1000) {
    s = sig3(n);
  } else {
    int e = 0;
    double r = round3(n, e);
    int p = std::min(e / 3, 5);
    s = sig3(r / std::pow(10.0, 3 * p)) + kPrefix[p];
  }
  return noun.empty() ? s : s + " " + std::string(noun);
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
        if (!after_number(text, i)) good = i;
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
