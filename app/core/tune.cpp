// Autotuning: see tune.hpp.
#include "tune.hpp"
#include "compile.hpp"
#include "report_json.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace wb {

std::vector<int64_t> tune_candidates(const Tunable& t) {
  std::vector<int64_t> v = t.allowed;
  if (v.empty()) {
    // A range: powers of two, near the default when the range is wide (GRID in [1, 65535] would
    // otherwise be 17 values, most of them pointless).
    int64_t lo = t.min, hi = t.max;
    if (hi / std::max<int64_t>(lo, 1) > 256) {
      lo = std::max(lo, t.default_value / 16);
      hi = std::min(hi, t.default_value * 16);
    }
    for (int64_t x = 1; x <= hi && x > 0; x *= 2)
      if (x >= lo && t.reject_reason(x).empty()) v.push_back(x);
  }
  if (t.reject_reason(t.default_value).empty()) v.push_back(t.default_value);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<TuneConfig> tune_space(const Puzzle& p,
                                   const std::map<std::string, std::vector<int64_t>>& only,
                                   std::string& error) {
  for (auto& [name, values] : only) {
    const Tunable* t = p.tunable(name);
    if (!t) {
      std::string known;
      for (auto& k : p.tunables) known += fmt::format("{}{}", known.empty() ? "" : ", ", k.name);
      error = fmt::format("--only {}: {} has no tunable '{}' ({})", name, p.id, name,
                          known.empty() ? "it has none" : "it has " + known);
      return {};
    }
    for (int64_t v : values)
      if (auto why = t->reject_reason(v); !why.empty()) {
        error = fmt::format("--only {}={}: {}", name, v, why);
        return {};
      }
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> axes;
  for (auto& t : p.tunables) {
    auto it = only.find(t.name);
    axes.emplace_back(t.name, it != only.end() ? it->second : tune_candidates(t));
  }
  std::vector<TuneConfig> out(1);
  for (auto& [name, values] : axes) {
    std::vector<TuneConfig> next;
    for (auto& c : out)
      for (int64_t v : values) {
        TuneConfig d = c;
        d[name] = v;
        next.push_back(std::move(d));
      }
    out = std::move(next);
  }
  if (p.tunables.empty()) out.clear();
  return out;
}

std::map<std::string, std::vector<int64_t>> parse_only(const std::vector<std::string>& words) {
  std::map<std::string, std::vector<int64_t>> out;
  for (auto& w : words) {
    auto eq = w.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == w.size())
      throw std::invalid_argument(
          fmt::format("--only {}: write NAME=V1,V2,... (e.g. BLOCK=128,256)", w));
    std::string name = w.substr(0, eq);
    std::stringstream rest(w.substr(eq + 1));
    for (std::string item; std::getline(rest, item, ',');) {
      try {
        size_t used = 0;
        int64_t v = std::stoll(item, &used);
        if (used != item.size()) throw std::invalid_argument("");
        out[name].push_back(v);
      } catch (...) {
        throw std::invalid_argument(fmt::format("--only {}: '{}' is not an integer", w, item));
      }
    }
  }
  return out;
}

std::string config_text(const TuneConfig& c) {
  std::string s;
  for (auto& [k, v] : c) s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
  return s;
}

std::string source_with_tunables(const std::string& source, const TuneConfig& config, bool at_top) {
  std::vector<Diagnostic> ignored;
  std::map<int, std::string> rewrite; // line number -> name
  std::map<std::string, bool> has_line;
  for (auto& t : parse_tune_lines(source, "", ignored))
    if (config.count(t.name)) {
      rewrite[t.line] = t.name;
      has_line[t.name] = true;
    }
  std::string added;
  for (auto& [name, v] : config)
    if (!has_line[name]) added += fmt::format("// @tune {}={}\n", name, v);

  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  bool ends_newline = !source.empty() && source.back() == '\n';
  for (auto& [n, name] : rewrite) {
    std::string& l = lines[size_t(n - 1)];
    l = l.substr(0, l.find("//")) + fmt::format("// @tune {}={}", name, config.at(name));
  }
  size_t insert_at = lines.size();
  if (at_top) {
    // After the opening comment block: the file's header says what it is; tunables come next.
    insert_at = 0;
    while (insert_at < lines.size() && lines[insert_at].rfind("//", 0) == 0 &&
           lines[insert_at].find("@tune") == std::string::npos)
      ++insert_at;
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == insert_at) out += added;
    out += lines[i];
    if (i + 1 < lines.size() || ends_newline) out += '\n';
  }
  if (insert_at == lines.size()) {
    if (!out.empty() && out.back() != '\n' && !added.empty()) out += '\n';
    out += added;
  }
  return out;
}

double TuneReport::margin() const {
  if (winner < 0 || default_row < 0) return 0;
  const TuneRow& w = rows[size_t(winner)];
  const TuneRow& d = rows[size_t(default_row)];
  if (w.us <= 0 || d.us <= 0 || d.verdict != Verdict::passed) return 0;
  return d.us / w.us;
}

namespace {

TuneRow row_from(const CheckReport& r, const TuneConfig& config) {
  TuneRow row;
  row.config = config;
  row.verdict = r.verdict;
  if (r.verdict != Verdict::passed) row.why = r.summary;
  if (r.verdict == Verdict::passed && r.perf && r.perf->timing.ok) {
    row.us = r.perf->timing.median_us;
    row.predicted = r.perf->predicted;
    row.gbps = r.perf->gbps;
    row.gflops = r.perf->gflops;
    row.sol = r.perf->speed_of_light;
    row.intensity = r.perf->intensity;
    row.medal = r.perf->medal;
  }
  if (r.prediction && r.prediction->ok && !r.prediction->factors.empty())
    row.limiter = r.prediction->factors.front().text;
  if (!r.resources.empty()) row.registers = r.resources.front().registers;
  row.check_ms = r.total_ms;
  return row;
}

} // namespace

TuneReport tune_puzzle(const Puzzle& p, const std::string& source, const std::string& file,
                       Backend& backend, const std::vector<TuneConfig>& space,
                       const TuneOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  TuneReport rep;
  rep.puzzle = p.id;
  rep.file = file;
  rep.device = backend.info();
  rep.configurations = int(space.size());
  // One seed for every configuration: they are judged on the same inputs.
  rep.seed = opt.check.seed ? opt.check.seed : fresh_seed();
  std::vector<Diagnostic> ignored;
  const TuneConfig own = resolve_tunables(p, source, file, ignored);

  CheckOptions co = opt.check;
  co.seed = rep.seed;
  co.stop_at_first_failure = true; // a wrong configuration needs one failing case, not all
  co.progress = nullptr;           // progress is per configuration, below

  const bool gpu = rep.device.backend == "cuda";
  int jobs = opt.jobs > 0 ? opt.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
  if (gpu) jobs = 1; // timings must not share the GPU
  jobs = std::max(1, std::min(jobs, int(space.size())));

  std::vector<std::optional<TuneRow>> rows(space.size());
  std::mutex mu;
  size_t next = 0;
  int done = 0;
  auto cancelled = [&] { return opt.cancel && opt.cancel->load(); };
  // Workers take configurations in order; rows are reported as they finish (under the lock, so
  // on_row is never called from two threads at once).
  std::exception_ptr failure; // the first exception a worker met (a cancel raised by progress)
  auto work = [&](Backend& b) {
    try {
      for (;;) {
        size_t i;
        {
          std::lock_guard lk(mu);
          if (next >= space.size() || cancelled() || failure) return;
          i = next++;
        }
        std::string src = source_with_tunables(source, space[i]);
        CheckReport r = check_puzzle(p, src, file, b, co);
        std::lock_guard lk(mu);
        rows[i] = row_from(r, space[i]);
        if (rep.model_gpu.empty() && r.prediction && r.prediction->ok)
          rep.model_gpu = r.prediction->gpu_name;
        rows[i]->is_default = space[i] == own;
        ++done;
        if (opt.on_row) opt.on_row(*rows[i], done, int(space.size()));
        if (opt.check.progress)
          opt.check.progress(
              fmt::format("{} ({} of {})", config_text(space[i]), done, space.size()), done,
              int(space.size()));
      }
    } catch (...) {
      std::lock_guard lk(mu);
      if (!failure) failure = std::current_exception();
    }
  };
  if (jobs == 1) {
    work(backend);
  } else {
    std::vector<std::unique_ptr<Backend>> more;
    std::vector<std::thread> threads;
    for (int k = 1; k < jobs; ++k) {
      std::string why;
      if (auto b = make_backend(rep.device.backend, why)) more.push_back(std::move(b));
    }
    for (auto& b : more) threads.emplace_back([&work, &b] { work(*b); });
    work(backend);
    for (auto& t : threads) t.join();
  }
  if (failure) std::rethrow_exception(failure);
  rep.cancelled = cancelled() && done < int(space.size());

  for (auto& r : rows)
    if (r) rep.rows.push_back(std::move(*r));
  std::stable_sort(rep.rows.begin(), rep.rows.end(), [&](const TuneRow& a, const TuneRow& b) {
    if (a.timed() != b.timed()) return a.timed();
    if (a.timed()) return a.us < b.us;
    return int(a.verdict) < int(b.verdict);
  });
  for (size_t i = 0; i < rep.rows.size(); ++i) {
    if (rep.winner < 0 && rep.rows[i].timed()) rep.winner = int(i);
    if (rep.rows[i].is_default) rep.default_row = int(i);
  }
  rep.total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

nlohmann::json tune_to_json(const TuneReport& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (auto& r : t.rows) {
    nlohmann::json j;
    j["config"] = r.config;
    j["default"] = r.is_default;
    j["verdict"] = verdict_name(r.verdict);
    if (!r.why.empty()) j["why"] = r.why;
    j["time_us"] = r.us;
    j["predicted"] = r.predicted;
    j["gbps"] = r.gbps;
    j["gflops"] = r.gflops;
    j["speed_of_light"] = r.sol;
    j["intensity"] = r.intensity;
    j["medal"] = r.medal;
    if (!r.limiter.empty()) j["limiter"] = r.limiter;
    j["registers"] = r.registers;
    j["check_ms"] = r.check_ms;
    rows.push_back(std::move(j));
  }
  nlohmann::json j;
  j["puzzle"] = t.puzzle;
  j["file"] = t.file;
  j["device"] = nlohmann::json::parse(device_to_json(t.device));
  j["model_gpu"] = t.model_gpu;
  j["seed"] = t.seed;
  j["configurations"] = t.configurations;
  j["cancelled"] = t.cancelled;
  j["winner"] = t.winner;
  j["default"] = t.default_row;
  j["margin"] = t.margin();
  j["total_ms"] = t.total_ms;
  j["rows"] = std::move(rows);
  return j;
}

TuneReport tune_from_json(const nlohmann::json& j) {
  TuneReport t;
  try {
    t.puzzle = j.at("puzzle").get<std::string>();
    t.file = j.at("file").get<std::string>();
    t.device = device_from_json(j.at("device").dump());
    t.model_gpu = j.value("model_gpu", "");
    t.seed = j.at("seed").get<uint64_t>();
    t.configurations = j.at("configurations").get<int>();
    t.cancelled = j.at("cancelled").get<bool>();
    t.winner = j.at("winner").get<int>();
    t.default_row = j.at("default").get<int>();
    t.total_ms = j.at("total_ms").get<double>();
    for (auto& r : j.at("rows")) {
      TuneRow row;
      row.config = r.at("config").get<TuneConfig>();
      row.is_default = r.at("default").get<bool>();
      row.verdict = verdict_from(r.at("verdict").get<std::string>());
      row.why = r.value("why", "");
      row.us = r.at("time_us").get<double>();
      row.predicted = r.at("predicted").get<bool>();
      row.gbps = r.at("gbps").get<double>();
      row.gflops = r.at("gflops").get<double>();
      row.sol = r.at("speed_of_light").get<double>();
      row.intensity = r.at("intensity").get<double>();
      row.medal = r.at("medal").get<std::string>();
      row.limiter = r.value("limiter", "");
      row.registers = r.at("registers").get<int>();
      row.check_ms = r.at("check_ms").get<double>();
      t.rows.push_back(std::move(row));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("malformed tune report: ") + e.what());
  }
  if (t.winner >= int(t.rows.size()) || t.default_row >= int(t.rows.size()))
    throw std::runtime_error("malformed tune report: winner or default out of range");
  return t;
}

} // namespace wb
