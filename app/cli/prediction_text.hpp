// The performance model's prediction as text, for `check` and `predict`.
#pragma once
#include "core/perf/prediction.hpp"

namespace wb::cli {

// "why this speed" (ranked factors), each launch's occupancy line, and the line notes. On a GPU
// `measured_us` > 0 puts the prediction beside the measurement.
void print_why(const perf::Prediction& p, double measured_us = 0, int max_factors = 8);

} // namespace wb::cli
