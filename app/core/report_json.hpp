// CheckReport <-> JSON: what `check --json` prints and what the runner sends to the window.
#pragma once
#include "report.hpp"

#include <string>

namespace wb {

std::string report_to_json(const CheckReport& r, int indent = 2);
// Throws std::runtime_error on malformed input.
CheckReport report_from_json(const std::string& text);

std::string device_to_json(const DeviceInfo& d, int indent = -1);
DeviceInfo device_from_json(const std::string& text);

} // namespace wb
