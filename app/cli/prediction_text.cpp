#include "prediction_text.hpp"

#include "core/format_figure.hpp"
#include "core/perf/explain.hpp"
#include "core/perf/machine.hpp"

#include <fmt/format.h>

namespace wb::cli {

void print_why(const perf::Prediction& p, double measured_us, int max_factors) {
  if (!p.ok) {
    fmt::print("  prediction: none ({})\n", p.error);
    return;
  }
  if (measured_us > 0)
    fmt::print("  predicted {} on the {} (measured {}: the prediction is {}x the "
               "measurement)\n",
               perf::us_text(p.us), p.gpu_name, perf::us_text(measured_us),
               sig3(p.us / measured_us));
  fmt::print("  why this speed (predicted for the {}):\n", p.gpu_name);
  int k = 0;
  for (auto& f : p.factors) {
    if (++k > max_factors) break;
    fmt::print("    {:>3.0f}%  {}\n", 100 * f.share, f.text);
  }
  for (auto& l : p.launches) fmt::print("    {}\n", perf::launch_text(l));
  for (auto& n : p.lines) fmt::print("    line {:>3}: {}\n", n.line, n.text);
  fmt::print("    how: {} ({} to model)\n", p.method, time_text(p.model_ms * 1e3));
  const perf::ProfileEvidence& e = perf::profile_evidence(p.gpu);
  fmt::print("    the {} profile: {}. Its figures, by origin: {}\n", p.gpu_name, e.accuracy,
             origins_text(e));
}

} // namespace wb::cli
