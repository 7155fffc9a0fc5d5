// Performance across sizes: see sweep.hpp.
#include "sweep.hpp"
#include "chart_labels.hpp"
#include "format_figure.hpp"
#include "perf/predict.hpp"
#include "report_json.hpp"
#include "roofline.hpp"
#include "workspace.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace wb {

namespace {

// "4096", "2^20", "64K", "1M", "2G" (K, M, G are powers of 1024, as sizes of buffers are).
int64_t size_value(const std::string& s, const std::string& word) {
  auto bad = [&] {
    return std::invalid_argument(
        fmt::format("--size {}: '{}' is not a size (write 4096, 2^20, 64K or 1M)", word, s));
  };
  try {
    size_t used = 0;
    if (auto caret = s.find('^'); caret != std::string::npos) {
      int64_t base = std::stoll(s.substr(0, caret), &used);
      if (used != caret) throw bad();
      int64_t e = std::stoll(s.substr(caret + 1), &used);
      if (used != s.size() - caret - 1 || base < 2 || e < 0 || e > 40) throw bad();
      int64_t v = 1;
      for (int64_t i = 0; i < e; ++i) v *= base;
      return v;
    }
    int64_t v = std::stoll(s, &used);
    std::string rest = s.substr(used);
    if (rest == "K" || rest == "k") return v << 10;
    if (rest == "M") return v << 20;
    if (rest == "G") return v << 30;
    if (!rest.empty()) throw bad();
    return v;
  } catch (const std::invalid_argument&) {
    throw bad();
  } catch (const std::out_of_range&) {
    throw bad();
  }
}

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

SweepPoint point_from(int64_t size, const CheckReport& r) {
  SweepPoint pt;
  pt.size = size;
  pt.verdict = r.verdict;
  if (r.verdict != Verdict::passed) pt.why = r.summary;
  if (r.perf && r.perf->timing.ok) {
    pt.us = r.perf->timing.median_us;
    pt.gbps = r.perf->gbps;
    pt.gflops = r.perf->gflops;
    pt.sol = r.perf->speed_of_light;
    pt.bytes = r.perf->bytes;
    pt.predicted = r.perf->predicted;
  }
  return pt;
}

} // namespace

SweepSpec parse_sweep(const Puzzle& p, const std::vector<std::string>& words) {
  if (!p.perf) throw std::invalid_argument(p.id + " has no [perf] size to sweep around");
  SweepSpec spec;
  spec.fixed = p.perf->sizes;
  for (auto& w : words) {
    auto eq = w.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument(fmt::format("--size {}: write NAME=VALUE or NAME=A..B", w));
    std::string name = w.substr(0, eq), rest = w.substr(eq + 1);
    if (!p.perf->sizes.count(name)) {
      std::string known;
      for (auto& [k, v] : p.perf->sizes) known += fmt::format("{}{}", known.empty() ? "" : ", ", k);
      throw std::invalid_argument(
          fmt::format("--size {}: {} has no size '{}' (it has {})", w, p.id, name, known));
    }
    std::vector<int64_t> values;
    if (auto dots = rest.find(".."); dots != std::string::npos) {
      std::string lo_s = rest.substr(0, dots), hi_s = rest.substr(dots + 2);
      char step_kind = '*';
      int64_t step = 2;
      if (auto k = hi_s.find_first_of("*x+"); k != std::string::npos) {
        step_kind = hi_s[k] == '+' ? '+' : '*';
        step = size_value(hi_s.substr(k + 1), w);
        hi_s = hi_s.substr(0, k);
      }
      int64_t lo = size_value(lo_s, w), hi = size_value(hi_s, w);
      if (lo < 1 || hi < lo)
        throw std::invalid_argument(
            fmt::format("--size {}: the range must go up from 1 or more", w));
      if ((step_kind == '*' && step < 2) || (step_kind == '+' && step < 1))
        throw std::invalid_argument(fmt::format("--size {}: the step must make progress", w));
      for (int64_t v = lo; v <= hi; v = step_kind == '*' ? v * step : v + step) {
        values.push_back(v);
        if (values.size() > 64)
          throw std::invalid_argument(fmt::format("--size {}: more than 64 sizes", w));
      }
    } else {
      std::stringstream list(rest);
      for (std::string item; std::getline(list, item, ',');) values.push_back(size_value(item, w));
    }
    if (values.empty()) throw std::invalid_argument(fmt::format("--size {}: no sizes", w));
    if (values.size() == 1) {
      spec.fixed[name] = values[0];
      continue;
    }
    if (!spec.name.empty())
      throw std::invalid_argument(
          fmt::format("--size {}: only one size can be swept (already sweeping {})", w, spec.name));
    spec.name = name;
    spec.values = values;
  }
  if (spec.name.empty()) {
    // The largest size of the [perf] case, doubling from 2^10 up to its [perf] value.
    auto it = std::max_element(p.perf->sizes.begin(), p.perf->sizes.end(),
                               [](auto& a, auto& b) { return a.second < b.second; });
    spec.name = it->first;
    int64_t hi = it->second;
    for (int64_t v = std::min<int64_t>(1024, hi); v < hi; v *= 2) spec.values.push_back(v);
    spec.values.push_back(hi);
  }
  std::sort(spec.values.begin(), spec.values.end());
  spec.values.erase(std::unique(spec.values.begin(), spec.values.end()), spec.values.end());
  spec.fixed.erase(spec.name);
  return spec;
}

SweepReport sweep_puzzle(const Puzzle& p, const std::string& source, const std::string& file,
                         Backend& backend, const SweepSpec& spec, const SweepOptions& opt) {
  double t0 = now_ms();
  SweepReport rep;
  rep.puzzle = p.id;
  rep.var = spec.name;
  rep.fixed = spec.fixed;
  rep.device = backend.info();
  const bool gpu = rep.device.backend == "cuda";

  struct Kernel {
    std::string name, file, source;
  };
  std::vector<Kernel> kernels{{"your kernel", file, source}};
  // The solution's own @tune lines apply to it, as in a check of that file.
  if (opt.solution && !p.solution.empty() && fs::exists(p.solution))
    kernels.push_back({"solution", "solutions/" + p.solution.filename().string(),
                       read_file(p.solution).value_or("")});
  if (opt.reference)
    kernels.push_back(
        {"reference", p.reference.filename().string(), read_file(p.reference).value_or("")});

  CheckOptions co = opt.check;
  co.progress = nullptr;
  if (!co.seed) co.seed = fresh_seed(); // every series and size on the same inputs
  perf::Machine machine;
  if (!gpu) machine = perf::machine_for_check(rep.device, co.model_gpu, co.data_dir);
  rep.model_gpu = gpu ? "" : machine.name;
  if (gpu)
    rep.l2_bytes = double(rep.device.l2_bytes);
  else if (const GpuProfile* prof = find_profile(co.model_gpu.empty() ? "h200" : co.model_gpu))
    rep.l2_bytes = prof->l2_mib * 1048576.0;

  const int total = int(kernels.size() * spec.values.size());
  int done = 0;
  auto cancelled = [&] { return opt.cancel && opt.cancel->load(); };
  std::string bound; // of the largest size that has a figure, yours first
  double dram = 0, compute = 0;
  std::string ceiling_source;
  for (auto& k : kernels) {
    if (cancelled()) break;
    SweepSeries s;
    s.name = k.name;
    s.file = k.file;
    const std::string& src = k.source;
    std::vector<Diagnostic> diags;
    const std::map<std::string, int64_t> tune = resolve_tunables(p, k.source, k.file, diags);
    Verdict failed_as = Verdict::passed;
    if (!gpu) {
      // The simulator checks each kernel once on the puzzle's cases; sizes are then predicted.
      CheckOptions once = co;
      once.predict = false;
      CheckReport r = check_puzzle(p, src, k.file, backend, once);
      if (r.verdict != Verdict::passed) s.problem = r.summary;
      failed_as = r.verdict;
    }
    for (int64_t v : spec.values) {
      if (cancelled()) break;
      Env sizes = spec.fixed;
      sizes[spec.name] = v;
      SweepPoint pt;
      if (!s.problem.empty()) {
        pt.size = v;
        pt.verdict = failed_as;
        pt.why = s.problem;
      } else if (gpu) {
        CheckOptions one = co;
        one.predict = false;
        CheckReport r = run_puzzle(p, src, k.file, backend, sizes, one);
        pt = point_from(v, r);
        if (r.perf && r.perf->timing.ok) {
          dram = r.perf->dram_ceiling_gbps;
          compute = r.perf->compute_ceiling_gflops;
          ceiling_source = r.perf->ceiling_source;
          if (k.name == "your kernel" || bound.empty()) bound = r.perf->bound;
        }
      } else {
        Puzzle q = p;
        Case c;
        c.label = fmt::format("{}={}", spec.name, v);
        c.sizes = sizes;
        q.perf = c;
        perf::PredictOptions po;
        po.seed = co.seed;
        perf::Prediction pred = perf::predict(q, src, k.file, tune, machine, po);
        pt.size = v;
        if (!pred.ok) {
          pt.verdict = Verdict::runtime_fault;
          pt.why = pred.error;
        } else {
          PerfReport pr = perf::predicted_perf(q, pred, machine);
          pt.us = pr.timing.median_us;
          pt.gbps = pr.gbps;
          pt.gflops = pr.gflops;
          pt.sol = pr.speed_of_light;
          pt.bytes = pr.bytes;
          pt.predicted = true;
          dram = pr.dram_ceiling_gbps;
          compute = pr.compute_ceiling_gflops;
          ceiling_source = pr.ceiling_source;
          if (k.name == "your kernel" || bound.empty()) bound = pr.bound;
        }
      }
      s.points.push_back(pt);
      ++done;
      if (opt.on_point) opt.on_point(s, s.points.back(), done, total);
    }
    rep.series.push_back(std::move(s));
  }
  rep.cancelled = cancelled() && done < total;
  rep.metric = bound == "compute" ? "GFLOP/s" : "GB/s";
  const bool measured = ceiling_source == "measured";
  if (rep.metric == "GB/s" && dram > 0)
    rep.roofs.push_back({Roof::Kind::memory, metric::dram, "DRAM", dram, measured});
  if (rep.metric == "GFLOP/s" && compute > 0)
    rep.roofs.push_back({Roof::Kind::compute, metric::fp32,
                         p.cost_precision == "f32" ? "FP32" : p.cost_precision, compute, measured});
  rep.total_ms = now_ms() - t0;
  return rep;
}

nlohmann::json sweep_to_json(const SweepReport& r) {
  nlohmann::json j;
  j["puzzle"] = r.puzzle;
  j["var"] = r.var;
  j["fixed"] = nlohmann::json(std::map<std::string, int64_t>(r.fixed.begin(), r.fixed.end()));
  j["device"] = nlohmann::json::parse(device_to_json(r.device));
  j["model_gpu"] = r.model_gpu;
  j["metric"] = r.metric;
  j["l2_bytes"] = r.l2_bytes;
  j["cancelled"] = r.cancelled;
  j["total_ms"] = r.total_ms;
  for (auto& roof : r.roofs)
    j["roofs"].push_back({{"kind", roof.kind == Roof::Kind::memory ? "memory" : "compute"},
                          {"metric", roof.metric},
                          {"name", roof.name},
                          {"value", roof.value},
                          {"measured", roof.measured}});
  if (r.roofs.empty()) j["roofs"] = nlohmann::json::array();
  j["series"] = nlohmann::json::array();
  for (auto& s : r.series) {
    nlohmann::json js{{"name", s.name}, {"file", s.file}, {"problem", s.problem}};
    js["points"] = nlohmann::json::array();
    for (auto& pt : s.points) {
      nlohmann::json jp{{"size", pt.size},     {"verdict", verdict_name(pt.verdict)},
                        {"time_us", pt.us},    {"gbps", pt.gbps},
                        {"gflops", pt.gflops}, {"speed_of_light", pt.sol},
                        {"bytes", pt.bytes},   {"predicted", pt.predicted}};
      if (!pt.why.empty()) jp["why"] = pt.why;
      js["points"].push_back(std::move(jp));
    }
    j["series"].push_back(std::move(js));
  }
  return j;
}

SweepReport sweep_from_json(const nlohmann::json& j) {
  SweepReport r;
  try {
    r.puzzle = j.at("puzzle").get<std::string>();
    r.var = j.at("var").get<std::string>();
    for (auto& [k, v] : j.at("fixed").items()) r.fixed[k] = v.get<int64_t>();
    r.device = device_from_json(j.at("device").dump());
    r.model_gpu = j.at("model_gpu").get<std::string>();
    r.metric = j.at("metric").get<std::string>();
    r.l2_bytes = j.at("l2_bytes").get<double>();
    r.cancelled = j.at("cancelled").get<bool>();
    r.total_ms = j.at("total_ms").get<double>();
    for (auto& jr : j.at("roofs"))
      r.roofs.push_back({jr.at("kind") == "memory" ? Roof::Kind::memory : Roof::Kind::compute,
                         jr.at("metric").get<std::string>(), jr.at("name").get<std::string>(),
                         jr.at("value").get<double>(), jr.at("measured").get<bool>()});
    for (auto& js : j.at("series")) {
      SweepSeries s;
      s.name = js.at("name").get<std::string>();
      s.file = js.at("file").get<std::string>();
      s.problem = js.at("problem").get<std::string>();
      for (auto& jp : js.at("points")) {
        SweepPoint pt;
        pt.size = jp.at("size").get<int64_t>();
        pt.verdict = verdict_from(jp.at("verdict").get<std::string>());
        pt.why = jp.value("why", "");
        pt.us = jp.at("time_us").get<double>();
        pt.gbps = jp.at("gbps").get<double>();
        pt.gflops = jp.at("gflops").get<double>();
        pt.sol = jp.at("speed_of_light").get<double>();
        pt.bytes = jp.at("bytes").get<double>();
        pt.predicted = jp.at("predicted").get<bool>();
        s.points.push_back(pt);
      }
      r.series.push_back(std::move(s));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("malformed sweep report: ") + e.what());
  }
  return r;
}

} // namespace wb

namespace wb {

namespace {

Rgb series_color(const std::string& name) {
  if (name == "solution") return {44, 160, 44};
  if (name == "reference") return {120, 120, 120};
  return {49, 130, 189}; // yours
}

// 1K, 64K, 1M, 256M: sizes in powers of 1024, as the --size words write them.
std::string size_label(double v) {
  const char* suffix[] = {"", "K", "M", "G", "T"};
  int k = 0;
  while (v >= 1024 && k < 4 && std::fmod(v, 1024) == 0) v /= 1024, ++k;
  return (v == std::floor(v) ? fmt::format("{:.0f}", v) : sig3(v)) + suffix[k];
}

// A step of 1, 2 or 5 times a power of ten that gives about `n` ticks over [0, hi].
double nice_step(double hi, int n) {
  double raw = hi / n;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

} // namespace

std::vector<Shape> sweep_shapes(const SweepReport& r, int width, int height) {
  std::vector<Shape> out;
  const Rgb ink{40, 40, 40}, grid{225, 225, 225}, roof_ink{214, 39, 40};
  auto text = [&](double x, double y, const std::string& t, double size, Rgb c, int anchor,
                  const std::string& role, bool bold = false) {
    Shape s;
    s.type = Shape::Type::text;
    s.x0 = x;
    s.y0 = y;
    s.text = t;
    s.size = size;
    s.fill = c;
    s.filled = true;
    s.stroked = false;
    s.anchor = anchor;
    s.role = role;
    s.bold = bold;
    out.push_back(s);
  };
  auto line = [&](double x0, double y0, double x1, double y1, Rgb c, double w, bool dashed,
                  const std::string& role) {
    Shape s;
    s.type = Shape::Type::line;
    s.x0 = x0, s.y0 = y0, s.x1 = x1, s.y1 = y1;
    s.stroke = c;
    s.width = w;
    s.dashed = dashed;
    s.role = role;
    out.push_back(s);
  };
  Shape bg;
  bg.type = Shape::Type::rect;
  bg.x1 = width, bg.y1 = height;
  bg.filled = true;
  bg.fill = {255, 255, 255};
  bg.stroked = false;
  bg.role = "background";
  out.push_back(bg);

  const bool flops = r.metric == "GFLOP/s";
  auto value = [&](const SweepPoint& p) { return flops ? p.gflops : p.gbps; };
  double lo = 0, hi = 0, top = 0;
  for (auto& s : r.series)
    for (auto& p : s.points) {
      if (p.size <= 0) continue;
      lo = lo == 0 ? double(p.size) : std::min(lo, double(p.size));
      hi = std::max(hi, double(p.size));
      top = std::max(top, value(p));
    }
  for (auto& roof : r.roofs) top = std::max(top, roof.value);
  if (hi <= lo) hi = lo * 2 + 2, lo = std::max(1.0, lo);
  if (top <= 0) top = 1;
  // Thousands of GB/s read better as TB/s.
  const double unit = top >= 2000 ? 1000 : 1;
  const std::string unit_name =
      flops ? (unit > 1 ? "TFLOP/s" : "GFLOP/s") : (unit > 1 ? "TB/s" : "GB/s");
  const double step = nice_step(top / unit * 1.08, 6) * unit;
  const double y_hi = std::ceil(top * 1.08 / step) * step;

  const double L = 78, R = width - 40.0, T = 58, B = height - 78.0;
  const double lx0 = std::log2(lo), lx1 = std::log2(hi);
  auto X = [&](double size) { return L + (std::log2(size) - lx0) / (lx1 - lx0) * (R - L); };
  auto Y = [&](double v) { return B - v / y_hi * (B - T); };

  std::string title = fmt::format("{}: {} against {}", r.puzzle, unit_name, r.var);
  text(L, 24, title, 16, ink, -1, "title", true);
  std::string sub;
  for (auto& [k, v] : r.fixed) sub += fmt::format("{}={}, ", k, v);
  sub += r.device.backend == "cuda"
             ? "measured on the " + r.device.name + " (L2 flushed before each launch)"
             : "predicted for the " + r.model_gpu + " by the performance model";
  text(L, 44, sub, 11, {100, 100, 100}, -1, "subtitle");

  // Horizontal grid and value labels.
  for (double v = 0; v <= y_hi + step / 2; v += step) {
    line(L, Y(v), R, Y(v), grid, 1, false, "grid");
    text(L - 8, Y(v) + 4, sig3(v / unit), 11, ink, 1, "tick");
  }
  // Sizes: a tick at every power of two, labelled so that about ten labels fit.
  const int span = int(std::ceil(lx1) - std::floor(lx0));
  const int every = std::max(1, (span + 9) / 10);
  for (int e = int(std::ceil(lx0)); e <= int(std::floor(lx1)); ++e) {
    double x = X(std::ldexp(1.0, e));
    line(x, B, x, B + 4, ink, 1, false, "tick");
    if (e % every == 0) text(x, B + 18, size_label(std::ldexp(1.0, e)), 11, ink, 0, "tick");
  }
  line(L, B, R, B, ink, 1, false, "axis");
  line(L, T, L, B, ink, 1, false, "axis");
  text((L + R) / 2, B + 36, r.var + " (log scale)", 12, ink, 0, "axis-label");
  {
    Shape s;
    s.type = Shape::Type::text;
    s.x0 = 14, s.y0 = T - 10;
    s.text = unit_name;
    s.size = 12;
    s.fill = ink;
    s.filled = true;
    s.stroked = false;
    s.role = "axis-label";
    out.push_back(s);
  }

  // Where the data outgrows the L2: the size at which the [cost] bytes reach its capacity.
  // The series share the puzzle's [cost], so the first with figures places the one marker.
  bool l2_marked = false;
  for (auto& s : r.series) {
    const SweepPoint* prev = nullptr;
    for (auto& p : s.points) {
      if (!l2_marked && r.l2_bytes > 0 && prev && prev->bytes > 0 && p.bytes > 0 &&
          prev->bytes < r.l2_bytes && p.bytes >= r.l2_bytes) {
        double f = std::log(r.l2_bytes / prev->bytes) / std::log(p.bytes / prev->bytes);
        double size = std::exp2(std::log2(double(prev->size)) +
                                f * (std::log2(double(p.size)) - std::log2(double(prev->size))));
        double x = X(size);
        line(x, T, x, B, {150, 150, 150}, 1, true, "l2");
        text(x + 4, B - 8, fmt::format("data > L2 ({:.0f} MiB)", r.l2_bytes / 1048576), 10,
             {110, 110, 110}, -1, "l2");
        l2_marked = true;
      }
      prev = &p;
    }
  }

  for (auto& roof : r.roofs) {
    double y = Y(roof.value);
    line(L, y, R, y, roof_ink, 1.5, !roof.measured, "roof");
    text(R - 4, y - 5, roof.label(), 11, roof_ink, 1, "roof");
  }

  // The series: lines through the sizes that have a figure, a marker at each.
  for (auto& s : r.series) {
    Rgb c = series_color(s.name);
    const SweepPoint* prev = nullptr;
    for (auto& p : s.points) {
      if (p.verdict != Verdict::passed || value(p) <= 0) {
        prev = nullptr;
        continue;
      }
      double x = X(double(p.size)), y = Y(value(p));
      if (prev) line(X(double(prev->size)), Y(value(*prev)), x, y, c, 2, p.predicted, "series");
      Shape m;
      m.type = Shape::Type::circle;
      m.x0 = x, m.y0 = y;
      m.radius = 3.5;
      m.stroke = c;
      m.width = 1.5;
      m.filled = true; // hollow (white) when predicted, as on the roofline
      m.fill = p.predicted ? Rgb{255, 255, 255} : c;
      m.role = "point";
      m.title =
          fmt::format("{} {}={}: {:.1f} us, {:.0f} {}{}", s.name, r.var, p.size, p.us, value(p),
                      flops ? "GFLOP/s" : "GB/s", p.predicted ? " (predicted)" : "");
      out.push_back(m);
      prev = &p;
    }
  }
  // Legend: one row under the axis label, outside the plot, so no line or roof runs through it.
  double lx = L;
  const double ly = B + 62;
  for (auto& s : r.series) {
    bool predicted = std::any_of(s.points.begin(), s.points.end(),
                                 [](const SweepPoint& p) { return p.predicted; });
    std::string label = s.name;
    if (!s.problem.empty())
      label += ": failed its check, not drawn";
    else if (predicted)
      label += " (predicted)";
    line(lx, ly - 4, lx + 22, ly - 4, series_color(s.name), 2, predicted, "legend");
    text(lx + 28, ly, label, 11, ink, -1, "legend");
    lx += 28 + estimate_text(label, 11).w + 24;
  }
  return out;
}

std::string sweep_svg(const SweepReport& r, int width, int height) {
  return shapes_svg(sweep_shapes(r, width, height), width, height,
                    fmt::format("{}: {} against {}", r.puzzle, r.metric, r.var));
}

bool write_sweep_png(const SweepReport& r, const std::string& path, std::string& why, int width,
                     int height) {
  return write_shapes_png(sweep_shapes(r, width, height), path, why, width, height);
}

} // namespace wb
