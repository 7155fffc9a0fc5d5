#include "core/format_figure.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <string>

using namespace wb;

TEST_CASE("figures: three significant digits and an SI prefix") {
  CHECK(sig3(3.273438) == "3.27");
  CHECK(sig3(2050.4) == "2050");
  CHECK(sig3(0.012345) == "0.0123");
  CHECK(sig3(3.0) == "3");
  CHECK(sig3(-12.34) == "-12.3");
  CHECK(sig3(0) == "0");
  CHECK(flops_text(325786.3) == "326 TFLOP/s");
  CHECK(flops_text(999.7) == "1 TFLOP/s"); // the prefix is chosen after rounding
  CHECK(bandwidth_text(4800) == "4.8 TB/s");
  CHECK(bandwidth_text(33500) == "33.5 TB/s");
  CHECK(bandwidth_text(0.5) == "500 MB/s");
  CHECK(intensity_text(2.05e3) == "2050 FLOP/B");
  CHECK(intensity_text(7.0812) == "7.08 FLOP/B");
  CHECK(time_text(12.46) == "12.5 µs");
  CHECK(time_text(3140) == "3.14 ms");
  CHECK(time_text(0.25) == "250 ns");
  CHECK(time_text(5e7) == "50 s"); // no kiloseconds
  CHECK(bytes_text(805e6) == "805 MB");
  CHECK(percent_text(0.734) == "73%");
  CHECK(si(0, "FLOP/s") == "0 FLOP/s");
  CHECK(count_text(2.67e6, "clocks") == "2.67 M clocks");
  CHECK(count_text(3.2149e6, "instructions") == "3.21 M instructions");
  CHECK(count_text(993018, "clocks") == "993 k clocks");
  CHECK(count_text(999999, "clocks") == "1 M clocks"); // the prefix is chosen after rounding
  CHECK(count_text(950, "clocks") == "950 clocks");
  CHECK(count_text(12.26, "") == "12.3");
  CHECK(sig3(1.234e-7) == "1.23×10⁻⁷");
  CHECK(sig3(-4.5e16) == "-4.5×10¹⁶");
  CHECK(sig3(9.9996e-6) == "1×10⁻⁵"); // 9.9996 rounds up to 10: the next power
}

TEST_CASE("figures: no e-notation at any magnitude") {
  for (double e = -30; e <= 30; e += 0.37) {
    for (double sign : {1.0, -1.0}) {
      const double v = sign * std::pow(10.0, e);
      CAPTURE(v);
      for (const std::string& s :
           {sig3(v), si(v, "B/s"), time_text(v), count_text(v, "clocks"), percent_text(v),
            sig3_pair(v, v * 1.0000001).first, sig3_pair(v, v * 1.0000001).second})
        CHECK_MESSAGE(s.find_first_of("eE") == std::string::npos, s);
    }
  }
}

TEST_CASE("figures: got and expected read differently when they differ") {
  CHECK(sig3_pair(3.273438, 0) == std::pair<std::string, std::string>{"3.27", "0"});
  CHECK(sig3_pair(1.0001, 1) == std::pair<std::string, std::string>{"1.0001", "1"});
  CHECK(sig3_pair(2049.5, 2050) == std::pair<std::string, std::string>{"2049.5", "2050"});
  CHECK(sig3_pair(0.1f, 0.1) ==
        std::pair<std::string, std::string>{"0.100000001", "0.1"}); // float against double
  CHECK(sig3_pair(7, 7) == std::pair<std::string, std::string>{"7", "7"});
  auto nan = sig3_pair(std::nan(""), 1);
  CHECK(nan.first == "NaN");
  CHECK(nan.second == "1");
}

namespace {

// Each byte is one unit wide: a width in characters.
float chars(std::string_view s) {
  return float(s.size());
}

// True when every figure in figs appears whole on one of the lines text wraps to at width.
bool figures_whole(const std::string& text, const std::vector<std::string>& figs, float width) {
  auto lines = wrap_lines(text, width, chars);
  for (auto& f : figs) {
    bool found = false;
    for (auto l : lines) found = found || l.find(f) != std::string_view::npos;
    if (!found) return false;
  }
  return true;
}

} // namespace

TEST_CASE("figures: a wrapped line never splits a number or a number from its unit") {
  const std::vector<std::string> figs = {sig3(3.273438),       flops_text(325786.3),
                                         intensity_text(2050), time_text(12.46),
                                         bandwidth_text(4800), count_text(3.14e6, "clocks")};
  std::string text = "max abs error " + figs[0] + " at " + figs[1] + " and " + figs[2] +
                     ", which took " + figs[3] + " (" + figs[5] + ") at " + figs[4] + ".";
  // At every width from that of the longest figure with its brackets, "(3.14 M clocks)", to the
  // whole text.
  for (float w = 16; w <= float(text.size()); w += 1) {
    INFO("width ", w);
    CHECK(figures_whole(text, figs, w));
    for (auto l : wrap_lines(text, w, chars)) CHECK(chars(l) <= w);
  }
  // ImGui's own wrap would break after the dot; this does not, even with no space nearby.
  auto lines = wrap_lines("error 3.273438", 10, chars);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1] == "3.273438");
}

TEST_CASE("figures: wrapping keeps newlines, cuts a word too wide, never loses text") {
  auto lines = wrap_lines("a b\nccccccccccc d", 4, chars);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == "a b");
  CHECK(lines[1] == "cccc");
  CHECK(lines[2] == "cccc");
  CHECK(lines[3] == "ccc");
  CHECK(lines[4] == "d");
  // A space after a number is kept when nothing else fits ("1 2 3 4 ..." wraps at its spaces).
  lines = wrap_lines("1 2 3 4 5 6", 4, chars);
  CHECK(lines.size() == 3);
  // A multi-byte character is never cut in half.
  lines = wrap_lines("µµµµµ", 3, chars);
  for (auto l : lines) CHECK(!l.empty());
  std::string joined;
  for (auto l : lines) joined += std::string(l);
  CHECK(joined == "µµµµµ");
}
