#include "report_json.hpp"

#include "perf/machine.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace wb {

using nlohmann::json;

namespace {

// JSON has no NaN or Inf: write them as strings so nothing is lost.
json num(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
  return v;
}
double num(const json& j) {
  if (j.is_string()) {
    auto s = j.get<std::string>();
    return s == "NaN" ? NAN : s == "Inf" ? INFINITY : s == "-Inf" ? -INFINITY : 0;
  }
  return j.is_number() ? j.get<double>() : 0;
}
json dim(const Dim3& d) {
  return {d.x, d.y, d.z};
}
Dim3 dim(const json& j) {
  return j.is_array() && j.size() == 3 ? Dim3{j[0], j[1], j[2]} : Dim3{};
}

json to(const Counters& c) {
  json by_line = json::object();
  for (auto& [line, m] : c.by_line) by_line[std::to_string(line)] = m;
  return {{"total", c.total}, {"by_line", by_line}};
}
Counters counters_from(const json& j) {
  Counters c;
  if (!j.is_object()) return c;
  c.total = j.value("total", std::map<std::string, double>{});
  if (j.contains("by_line"))
    for (auto& [k, v] : j["by_line"].items())
      c.by_line[std::stoi(k)] = v.get<std::map<std::string, double>>();
  return c;
}

json to(const Fault& f) {
  return {{"kind", f.kind == FaultKind::none ? "none" : std::string(fault_name(f.kind))},
          {"code", int(f.kind)},
          {"message", f.message},
          {"source_line", f.source_line},
          {"launch", f.launch},
          {"sticky", f.sticky}};
}
Fault fault_from(const json& j) {
  Fault f;
  if (!j.is_object()) return f;
  f.kind = FaultKind(j.value("code", 0));
  f.message = j.value("message", "");
  f.source_line = j.value("source_line", 0);
  f.launch = j.value("launch", -1);
  f.sticky = j.value("sticky", false);
  return f;
}

json to(const Timing& t) {
  return {{"ok", t.ok},
          {"method", t.method},
          {"samples_us", t.samples_us},
          {"median_us", t.median_us},
          {"min_us", t.min_us},
          {"max_us", t.max_us},
          {"p10_us", t.p10_us},
          {"p90_us", t.p90_us},
          {"fault", to(t.fault)}};
}
Timing timing_from(const json& j) {
  Timing t;
  t.ok = j.value("ok", false);
  t.method = j.value("method", "");
  t.samples_us = j.value("samples_us", std::vector<double>{});
  t.median_us = j.value("median_us", 0.0);
  t.min_us = j.value("min_us", 0.0);
  t.max_us = j.value("max_us", 0.0);
  t.p10_us = j.value("p10_us", 0.0);
  t.p90_us = j.value("p90_us", 0.0);
  if (j.contains("fault")) t.fault = fault_from(j["fault"]);
  return t;
}

json to(const perf::Factor& f) {
  return {{"key", f.key}, {"text", f.text}, {"us", f.us}, {"share", f.share}, {"line", f.line}};
}
perf::Factor factor_from(const json& j) {
  perf::Factor f;
  f.key = j.value("key", "");
  f.text = j.value("text", "");
  f.us = j.value("us", 0.0);
  f.share = j.value("share", 0.0);
  f.line = j.value("line", 0);
  return f;
}

} // namespace

// Where the profile's figures come from and how far the model is from measured times on it.
static json profile_json(const std::string& key) {
  const perf::ProfileEvidence& e = perf::profile_evidence(key);
  json groups = json::array();
  for (auto& g : e.groups)
    groups.push_back({{"name", g.name}, {"origin", g.origin}, {"source", g.source}});
  return {{"validated", e.validated}, {"accuracy", e.accuracy}, {"parameters", groups}};
}

json prediction_json(const perf::Prediction& p) {
  json launches = json::array();
  for (auto& l : p.launches) {
    json fs = json::array();
    for (auto& f : l.factors) fs.push_back(to(f));
    launches.push_back({{"kernel", l.kernel},
                        {"grid", {l.grid.x, l.grid.y, l.grid.z}},
                        {"block", {l.block.x, l.block.y, l.block.z}},
                        {"us", l.us},
                        {"registers", l.registers},
                        {"spill_stores", l.spill_stores},
                        {"spill_loads", l.spill_loads},
                        {"wgmma_serialized", l.wgmma_serialized},
                        {"shared_bytes", l.shared_bytes},
                        {"resident", l.resident},
                        {"resident_running", l.resident_running},
                        {"limited_by", l.limited_by},
                        {"occupancy", l.occupancy},
                        {"blocks_per_sm", l.blocks_per_sm},
                        {"dram_bytes", l.dram_bytes},
                        {"l2_bytes", l.l2_bytes},
                        {"factors", fs}});
  }
  json factors = json::array();
  for (auto& f : p.factors) factors.push_back(to(f));
  json lines = json::array();
  for (auto& n : p.lines)
    lines.push_back({{"line", n.line},
                     {"text", n.text},
                     {"share", n.share},
                     {"bytes_used", n.bytes_used},
                     {"bytes_fetched", n.bytes_fetched},
                     {"requests", n.requests},
                     {"conflict_ways", n.conflict_ways}});
  return {{"ok", p.ok},
          {"error", p.error},
          {"gpu", p.gpu},
          {"gpu_name", p.gpu_name},
          {"us", p.us},
          {"dram_bytes", p.dram_bytes},
          {"l2_bytes", p.l2_bytes},
          {"launches", launches},
          {"factors", factors},
          {"lines", lines},
          {"method", p.method},
          {"sources", p.sources},
          {"profile", profile_json(p.gpu)},
          {"model_ms", p.model_ms},
          {"sim_ms", p.sim_ms}};
}

perf::Prediction prediction_from(const json& j) {
  perf::Prediction p;
  p.ok = j.value("ok", false);
  p.error = j.value("error", "");
  p.gpu = j.value("gpu", "");
  p.gpu_name = j.value("gpu_name", "");
  p.us = j.value("us", 0.0);
  p.dram_bytes = j.value("dram_bytes", 0.0);
  p.l2_bytes = j.value("l2_bytes", 0.0);
  for (auto& l : j.value("launches", json::array())) {
    perf::LaunchPrediction lp;
    lp.kernel = l.value("kernel", "");
    auto dim = [&](const char* k) {
      auto v = l.value(k, std::vector<uint32_t>{1, 1, 1});
      v.resize(3, 1);
      return Dim3{v[0], v[1], v[2]};
    };
    lp.grid = dim("grid");
    lp.block = dim("block");
    lp.us = l.value("us", 0.0);
    lp.registers = l.value("registers", 0);
    lp.spill_stores = l.value("spill_stores", 0);
    lp.spill_loads = l.value("spill_loads", 0);
    lp.wgmma_serialized = l.value("wgmma_serialized", std::string());
    lp.shared_bytes = l.value("shared_bytes", 0);
    lp.resident = l.value("resident", 0);
    lp.resident_running = l.value("resident_running", lp.resident);
    lp.limited_by = l.value("limited_by", "");
    lp.occupancy = l.value("occupancy", 0.0);
    lp.blocks_per_sm = l.value("blocks_per_sm", uint64_t(0));
    lp.dram_bytes = l.value("dram_bytes", 0.0);
    lp.l2_bytes = l.value("l2_bytes", 0.0);
    for (auto& f : l.value("factors", json::array())) lp.factors.push_back(factor_from(f));
    p.launches.push_back(std::move(lp));
  }
  for (auto& f : j.value("factors", json::array())) p.factors.push_back(factor_from(f));
  for (auto& n : j.value("lines", json::array())) {
    perf::LineNote ln;
    ln.line = n.value("line", 0);
    ln.text = n.value("text", "");
    ln.share = n.value("share", 0.0);
    ln.bytes_used = n.value("bytes_used", 0.0);
    ln.bytes_fetched = n.value("bytes_fetched", 0.0);
    ln.requests = n.value("requests", 0.0);
    ln.conflict_ways = n.value("conflict_ways", 0.0);
    p.lines.push_back(std::move(ln));
  }
  p.method = j.value("method", "");
  p.sources = j.value("sources", "");
  p.model_ms = j.value("model_ms", 0.0);
  p.sim_ms = j.value("sim_ms", 0.0);
  return p;
}

Verdict verdict_from(const std::string& s) {
  for (Verdict v : {Verdict::passed, Verdict::wrong_answer, Verdict::compile_error,
                    Verdict::runtime_fault, Verdict::usage_error})
    if (verdict_name(v) == s) return v;
  throw std::runtime_error("unknown verdict '" + s + "'");
}

namespace {

json to(const CaseReport& c) {
  json bufs = json::array();
  for (auto& b : c.buffers) {
    json first = json::array();
    for (auto& m : b.first)
      first.push_back({{"index", m.index},
                       {"coords", m.coords},
                       {"expected", num(m.expected)},
                       {"actual", num(m.actual)},
                       {"unwritten", m.unwritten},
                       {"owner", m.owner}});
    bufs.push_back({{"name", b.name},
                    {"dtype", b.dtype},
                    {"count", b.count},
                    {"shape", b.shape},
                    {"wrong", b.wrong},
                    {"unwritten", b.unwritten},
                    {"nan_wrong", b.nan_wrong},
                    {"max_abs_err", num(b.max_abs_err)},
                    {"max_rel_err", num(b.max_rel_err)},
                    {"first", first},
                    {"heat", b.heat},
                    {"heat_rows", b.heat_rows},
                    {"heat_cols", b.heat_cols},
                    {"guard_before_damaged", b.guard_before_damaged},
                    {"guard_after_damaged", b.guard_after_damaged},
                    {"guard_first_offset", b.guard_first_offset},
                    {"input_clobbered", b.input_clobbered},
                    {"clobbered_index", b.clobbered_index}});
  }
  return {{"label", c.label},
          {"sizes", c.sizes},
          {"perf", c.perf},
          {"verdict", verdict_name(c.verdict)},
          {"message", c.message},
          {"fault", to(c.fault)},
          {"buffers", bufs},
          {"problems", c.problems},
          {"sim_explanation", c.sim_explanation},
          {"sim_line", c.sim_line},
          {"counters", to(c.counters)},
          {"printf", c.printf_output},
          {"ms", c.ms},
          {"steps_ms", c.steps_ms},
          {"grid", dim(c.grid)},
          {"block", dim(c.block)}};
}

CaseReport case_from(const json& j) {
  CaseReport c;
  c.label = j.value("label", "");
  const json sizes = j.value("sizes", json::object()); // .items() of a temporary would dangle
  for (auto& [k, v] : sizes.items()) c.sizes[k] = v.get<int64_t>();
  c.perf = j.value("perf", false);
  c.verdict = verdict_from(j.value("verdict", "passed"));
  c.message = j.value("message", "");
  if (j.contains("fault")) c.fault = fault_from(j["fault"]);
  for (auto& b : j.value("buffers", json::array())) {
    BufferReport br;
    br.name = b.value("name", "");
    br.dtype = b.value("dtype", "");
    br.count = b.value("count", int64_t(0));
    br.shape = b.value("shape", std::vector<int64_t>{});
    br.wrong = b.value("wrong", int64_t(0));
    br.unwritten = b.value("unwritten", int64_t(0));
    br.nan_wrong = b.value("nan_wrong", int64_t(0));
    br.max_abs_err = num(b.value("max_abs_err", json(0)));
    br.max_rel_err = num(b.value("max_rel_err", json(0)));
    for (auto& m : b.value("first", json::array()))
      br.first.push_back({m.value("index", int64_t(0)), m.value("coords", std::vector<int64_t>{}),
                          num(m.value("expected", json(0))), num(m.value("actual", json(0))),
                          m.value("unwritten", false), m.value("owner", "")});
    br.heat = b.value("heat", std::vector<float>{});
    br.heat_rows = b.value("heat_rows", 0);
    br.heat_cols = b.value("heat_cols", 0);
    br.guard_before_damaged = b.value("guard_before_damaged", false);
    br.guard_after_damaged = b.value("guard_after_damaged", false);
    br.guard_first_offset = b.value("guard_first_offset", int64_t(0));
    br.input_clobbered = b.value("input_clobbered", false);
    br.clobbered_index = b.value("clobbered_index", int64_t(-1));
    c.buffers.push_back(std::move(br));
  }
  c.problems = j.value("problems", std::vector<std::string>{});
  c.sim_explanation = j.value("sim_explanation", std::string());
  c.sim_line = j.value("sim_line", 0);
  if (j.contains("counters")) c.counters = counters_from(j["counters"]);
  c.printf_output = j.value("printf", "");
  c.ms = j.value("ms", 0.0);
  c.steps_ms = j.value("steps_ms", std::vector<std::pair<std::string, double>>{});
  if (j.contains("grid")) c.grid = dim(j["grid"]);
  if (j.contains("block")) c.block = dim(j["block"]);
  return c;
}

json to(const DeviceInfo& d) {
  return {{"backend", d.backend},
          {"name", d.name},
          {"uuid", d.uuid},
          {"driver", d.driver},
          {"cc", {d.cc_major, d.cc_minor}},
          {"sm_count", d.sm_count},
          {"l2_bytes", d.l2_bytes},
          {"memory_bytes", d.memory_bytes},
          {"clock_khz", d.clock_khz},
          {"memory_clock_khz", d.memory_clock_khz},
          {"bus_width_bits", d.bus_width_bits},
          {"max_shared_per_block_optin", d.max_shared_per_block_optin},
          {"arch", d.arch()}};
}
DeviceInfo device_from(const json& j) {
  DeviceInfo d;
  d.backend = j.value("backend", "");
  d.name = j.value("name", "");
  d.uuid = j.value("uuid", "");
  d.driver = j.value("driver", "");
  if (j.contains("cc") && j["cc"].size() == 2) d.cc_major = j["cc"][0], d.cc_minor = j["cc"][1];
  d.sm_count = j.value("sm_count", 0);
  d.l2_bytes = j.value("l2_bytes", int64_t(0));
  d.memory_bytes = j.value("memory_bytes", int64_t(0));
  d.clock_khz = j.value("clock_khz", 0);
  d.memory_clock_khz = j.value("memory_clock_khz", 0);
  d.bus_width_bits = j.value("bus_width_bits", 0);
  d.max_shared_per_block_optin = j.value("max_shared_per_block_optin", 0);
  return d;
}

} // namespace

std::string report_to_json(const CheckReport& r, int indent) {
  json diags = json::array();
  for (auto& d : r.diagnostics)
    diags.push_back({{"file", d.file},
                     {"line", d.line},
                     {"column", d.column},
                     {"severity", severity_name(d.severity)},
                     {"message", d.message}});
  json res = json::array();
  for (auto& k : r.resources)
    res.push_back({{"name", k.name},
                   {"registers", k.registers},
                   {"shared_bytes", k.shared_bytes},
                   {"local_bytes", k.local_bytes},
                   {"spill_stores", k.spill_stores},
                   {"spill_loads", k.spill_loads},
                   {"max_threads", k.max_threads},
                   {"wgmma_serialized", k.wgmma_serialized}});
  json cases = json::array();
  for (auto& c : r.cases) cases.push_back(to(c));
  json phases = json::array();
  for (auto& [name, ms] : r.phases_ms) phases.push_back({{"phase", name}, {"ms", ms}});
  json j = {{"puzzle", r.puzzle},
            {"file", r.file},
            {"device", to(r.device)},
            {"seed", r.seed},
            {"verdict", verdict_name(r.verdict)},
            {"exit_code", exit_code(r.verdict)},
            {"summary", r.summary},
            {"diagnostics", diags},
            {"resources", res},
            {"tunables", r.tunables},
            {"cases", cases},
            {"phases_ms", phases},
            {"total_ms", r.total_ms}};
  if (r.perf) {
    const PerfReport& p = *r.perf;
    j["perf"] = {{"sizes", p.sizes},
                 {"timing", to(p.timing)},
                 {"bytes", p.bytes},
                 {"flops", p.flops},
                 {"gbps", p.gbps},
                 {"gflops", p.gflops},
                 {"intensity", p.intensity},
                 {"speed_of_light", p.speed_of_light},
                 {"bound", p.bound},
                 {"medal", p.medal},
                 {"flags", p.flags},
                 {"dram_ceiling_gbps", p.dram_ceiling_gbps},
                 {"compute_ceiling_gflops", p.compute_ceiling_gflops},
                 {"ceiling_source", p.ceiling_source},
                 {"predicted", p.predicted}};
  }
  if (r.sim_perf) j["sim_perf"] = to(*r.sim_perf);
  if (r.prediction) j["prediction"] = prediction_json(*r.prediction);
  return dump_json(j, indent);
}

std::string dump_json(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

CheckReport report_from_json(const std::string& text) {
  json j = json::parse(text); // throws json::parse_error (a std::exception)
  CheckReport r;
  r.puzzle = j.value("puzzle", "");
  r.file = j.value("file", "");
  if (j.contains("device")) r.device = device_from(j["device"]);
  r.seed = j.value("seed", uint64_t(0));
  r.verdict = verdict_from(j.value("verdict", "passed"));
  r.summary = j.value("summary", "");
  for (auto& d : j.value("diagnostics", json::array())) {
    Diagnostic dg;
    dg.file = d.value("file", "");
    dg.line = d.value("line", 0);
    dg.column = d.value("column", 0);
    std::string sev = d.value("severity", "error");
    dg.severity = sev == "warning" ? Diagnostic::Severity::warning
                  : sev == "note"  ? Diagnostic::Severity::note
                                   : Diagnostic::Severity::error;
    dg.message = d.value("message", "");
    r.diagnostics.push_back(std::move(dg));
  }
  for (auto& k : j.value("resources", json::array()))
    r.resources.push_back({k.value("name", ""), k.value("registers", -1),
                           k.value("shared_bytes", -1), k.value("local_bytes", -1),
                           k.value("spill_stores", -1), k.value("spill_loads", -1),
                           k.value("max_threads", -1), k.value("wgmma_serialized", std::string())});
  r.tunables = j.value("tunables", std::map<std::string, int64_t>{});
  for (auto& c : j.value("cases", json::array())) r.cases.push_back(case_from(c));
  for (auto& p : j.value("phases_ms", json::array()))
    r.phases_ms.emplace_back(p.value("phase", ""), p.value("ms", 0.0));
  r.total_ms = j.value("total_ms", 0.0);
  if (j.contains("perf")) {
    const json& p = j["perf"];
    PerfReport pr;
    const json sizes = p.value("sizes", json::object()); // .items() of a temporary would dangle
    for (auto& [k, v] : sizes.items()) pr.sizes[k] = v.get<int64_t>();
    if (p.contains("timing")) pr.timing = timing_from(p["timing"]);
    pr.bytes = p.value("bytes", 0.0);
    pr.flops = p.value("flops", 0.0);
    pr.gbps = p.value("gbps", 0.0);
    pr.gflops = p.value("gflops", 0.0);
    pr.intensity = p.value("intensity", 0.0);
    pr.speed_of_light = p.value("speed_of_light", 0.0);
    pr.bound = p.value("bound", "");
    pr.medal = p.value("medal", "");
    pr.flags = p.value("flags", std::vector<std::string>{});
    pr.dram_ceiling_gbps = p.value("dram_ceiling_gbps", 0.0);
    pr.compute_ceiling_gflops = p.value("compute_ceiling_gflops", 0.0);
    pr.ceiling_source = p.value("ceiling_source", "");
    pr.predicted = p.value("predicted", p.value("modelled", false));
    r.perf = std::move(pr);
  }
  if (j.contains("sim_perf")) r.sim_perf = case_from(j["sim_perf"]);
  if (j.contains("prediction")) r.prediction = prediction_from(j["prediction"]);
  return r;
}

std::string device_to_json(const DeviceInfo& d, int indent) {
  return dump_json(to(d), indent);
}
DeviceInfo device_from_json(const std::string& text) {
  return device_from(json::parse(text));
}

json case_to_json(const CaseReport& c) {
  return to(c);
}
CaseReport case_from_json(const json& j) {
  return case_from(j);
}

} // namespace wb
