// warpbook predict PUZZLE FILE: the performance model alone (no correctness cases): how long the
// kernel would take at the puzzle's [perf] size on a GPU of the table, and why. `check` shows the
// same prediction beside its verdict; this is the quick way to ask "and on an A100?".
#include "command.hpp"
#include "core/catalog.hpp"
#include "core/check.hpp"
#include "core/format_figure.hpp"
#include "core/perf/explain.hpp"
#include "core/perf/predict.hpp"
#include "core/report_json.hpp"
#include "core/roofline.hpp"
#include "core/store.hpp"
#include "prediction_text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace {

using namespace wb;

struct PredictArgs {
  std::string puzzle, file, gpu = "h200", ceilings;
  bool json = false, measured = false;
};

// The "ceilings" object of a probe.json (`warpbook probe`'s figures, as the data folders of
// bench/perfmodel keep them): metric name -> value. A GPU-side `check` predicts with these.
std::vector<MeasuredCeiling> read_ceilings(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(cli::read_source(path));
  } catch (const nlohmann::json::exception& e) {
    throw cli::UsageError(fmt::format("{}: not JSON ({})", path, e.what()));
  }
  if (!j.contains("ceilings") || !j["ceilings"].is_object())
    throw cli::UsageError(path + ": no \"ceilings\" object (a probe.json of `warpbook probe`)");
  std::vector<MeasuredCeiling> out;
  for (auto& [metric, v] : j["ceilings"].items())
    if (v.is_number()) {
      MeasuredCeiling c;
      c.metric = metric;
      c.value = c.median = v.get<double>();
      out.push_back(c);
    }
  return out;
}

int run_predict(const cli::Global& g, const PredictArgs& a) {
  Catalog cat = cli::open_catalog(g, a.json);
  const Puzzle* pz = &cli::puzzle_or_throw(cat, a.puzzle);
  const std::string source = cli::read_source(a.file);
  const GpuProfile* prof = find_profile(a.gpu);
  if (!prof) {
    std::string keys;
    for (auto& p : gpu_profiles()) keys += (keys.empty() ? "" : ", ") + p.key;
    throw cli::UsageError(fmt::format("no GPU profile '{}' (there are: {})", a.gpu, keys));
  }
  std::vector<Diagnostic> diags;
  const std::map<std::string, int64_t> tune = resolve_tunables(*pz, source, a.file, diags);
  for (auto& d : diags) fmt::print(stderr, "{}\n", d.str());
  perf::Machine m = perf::machine_for(*prof, a.ceilings.empty() ? std::vector<MeasuredCeiling>{}
                                                                : read_ceilings(a.ceilings));
  perf::Prediction p = perf::predict(*pz, source, a.file, tune, m);
  PerfReport score = perf::predicted_perf(*pz, p, m);
  if (a.json) {
    nlohmann::json j = prediction_json(p);
    j["puzzle"] = pz->id;
    j["file"] = a.file;
    j["speed_of_light"] = score.speed_of_light;
    j["medal"] = score.medal;
    j["gbps"] = score.gbps;
    j["gflops"] = score.gflops;
    fmt::print("{}\n", j.dump(2));
    return p.ok ? 0 : 3;
  }
  if (!p.ok) {
    fmt::print(stderr, "predict: {}\n", p.error);
    return 3;
  }
  fmt::print("{} on the {} (predicted): {} at the perf size", pz->id, p.gpu_name,
             perf::us_text(p.us));
  for (auto& [k, v] : score.sizes) fmt::print(" {}={}", k, v);
  fmt::print("\n  {}, {}, {} of speed of light{}\n", bandwidth_text(score.gbps),
             flops_text(score.gflops), percent_text(score.speed_of_light),
             score.medal.empty() ? "" : ", " + score.medal + " (predicted)");
  cli::print_why(p);
  return 0;
}

cli::Registration reg("predict", [](CLI::App& app, cli::Global& g) -> std::function<int()> {
  auto a = std::make_shared<PredictArgs>();
  auto* sub = app.add_subcommand("predict", "predict a kernel's time at its puzzle's perf size on "
                                            "a GPU of the table, and why (no GPU needed)");
  sub->add_option("puzzle", a->puzzle, "puzzle id or prefix")->required();
  sub->add_option("file", a->file, "the kernel file")->required();
  sub->add_option("--gpu", a->gpu, "GPU profile (h200, h100-sxm, a100-80gb, ...)")
      ->capture_default_str();
  sub->add_flag("--json", a->json, "print the prediction as JSON");
  sub->add_option("--ceilings", a->ceilings,
                  "a probe.json whose measured ceilings replace the profile's figures (what a "
                  "check on that GPU predicts with)");
  return [a, &g] { return run_predict(g, *a); };
});

} // namespace
