// Figures as a person reads them: three significant digits and an SI prefix ("326 TFLOP/s",
// "4.8 TB/s", "12.5 µs", "2050 FLOP/B"). Every figure the window and the CLI's text show goes
// through here, so that the same quantity reads the same everywhere.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wb {

// Three significant digits, no exponent for what people count (2050, 0.0123, 3.27); a power of
// ten only far outside that ("1.2×10⁻⁷"), never e-notation. Trailing zeros are dropped ("3", not
// "3.00").
std::string sig3(double v);

// Two figures set side by side (got and expected): three significant digits, or as many more as
// it takes for them to read differently when they differ (1.0001 and 1 are "1.0001" and "1", not
// "1" and "1").
std::pair<std::string, std::string> sig3_pair(double a, double b);

// value in the unit's base ("FLOP/s", "B/s", "B", "OP/s", "s" ...) with the SI prefix that leaves
// 1 <= number < 1000: si(3.26e14, "FLOP/s") = "326 TFLOP/s". Seconds stop at "s" (no "ks").
std::string si(double value, std::string_view unit);

// The quantities the workbook keeps, in the units it keeps them in.
std::string flops_text(double gflops);            // "326 TFLOP/s"
std::string bandwidth_text(double gbps);          // "4.8 TB/s"
std::string bytes_text(double bytes);             // "805 MB"
std::string time_text(double us);                 // "12.5 µs", "3.1 ms"
std::string intensity_text(double flop_per_byte); // "2050 FLOP/B"
std::string percent_text(double share);           // 0.734 -> "73%"
// A count with an SI prefix, apart from the noun: count_text(2.67e6, "clocks") = "2.67 M clocks",
// count_text(950, "clocks") = "950 clocks"; an empty noun gives "2.67 M".
std::string count_text(double n, std::string_view noun);

// Where a line of text may break when it is wrapped to a width: only at an ASCII space, and not at
// one that follows a digit or a count's prefix ("2.67 M clocks"), so that a number is never split
// from its digits ("3.273438" does not break at the dot, as ImGui's own wrap does) nor from its
// unit ("326 TFLOP/s"). A word wider than the width is cut where it must. Returns the lines (views
// into text); '\n' ends a line.
std::vector<std::string_view> wrap_lines(std::string_view text, float width,
                                         const std::function<float(std::string_view)>& measure);

} // namespace wb
