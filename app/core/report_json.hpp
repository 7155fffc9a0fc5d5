// CheckReport <-> JSON: what `check --json` prints and what the runner sends to the window.
#pragma once
#include "report.hpp"

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace wb {

// Text that is not valid UTF-8 anywhere in a report (a kernel's printf, a learner's source) is
// written with U+FFFD in place of the bad bytes: a report is always written, never dropped.
std::string report_to_json(const CheckReport& r, int indent = 2);
// j.dump(indent) that replaces invalid UTF-8 instead of throwing: for every JSON that carries
// text from a learner or a kernel.
std::string dump_json(const nlohmann::json& j, int indent = -1);
// Throws std::runtime_error on malformed input.
CheckReport report_from_json(const std::string& text);

std::string device_to_json(const DeviceInfo& d, int indent = -1);
// One case of a report, as it appears in the report's "cases" (the runner streams them).
nlohmann::json case_to_json(const CaseReport& c);
CaseReport case_from_json(const nlohmann::json& j);

// The performance model's prediction (`check --json`'s "prediction", `predict --json`).
nlohmann::json prediction_json(const perf::Prediction& p);
perf::Prediction prediction_from(const nlohmann::json& j);
DeviceInfo device_from_json(const std::string& text);
// verdict_name()'s inverse; throws std::runtime_error on an unknown name.
Verdict verdict_from(const std::string& name);

} // namespace wb
