// warpbook probe: measure this GPU's ceilings (kernels/probes.cu) and keep them in the store, so
// that every later check on this device and driver scores against them.
#include "command.hpp"
#include "core/format_figure.hpp"
#include "core/probe.hpp"
#include "core/roofline.hpp"
#include "core/store.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace {

using namespace wb;

struct ProbeArgs {
  bool no_save = false, json = false, variants = false, no_wgmma = false;
  double ms = 25;
  std::string kernels;
};

std::string rate(double v, const std::string& unit) {
  return rate_text(v, unit);
}

nlohmann::json result_json(const ProbeResult& r) {
  return {{"metric", r.metric},   {"label", r.label},         {"unit", r.unit},
          {"best", r.best},       {"median", r.median},       {"datasheet", r.datasheet},
          {"samples", r.samples}, {"launch_us", r.launch_us}, {"kernel", r.kernel},
          {"skipped", r.skipped}};
}

int run_probe(const cli::Global& g, const ProbeArgs& a) {
  ProbeOptions o;
  o.kernels_file = a.kernels;
  o.catalog = g.catalog;
  o.variants = a.variants;
  o.wgmma = !a.no_wgmma;
  o.ms_per_probe = a.ms;
  const bool tty = !a.json && isatty(2);
  if (tty) o.progress = [](const std::string& s) { fmt::print(stderr, "\r\x1b[K{}...", s); };
  ProbeSuite s = run_probes(o);
  if (tty) fmt::print(stderr, "\r\x1b[K");
  if (!s.ok()) throw cli::UsageError("probe: " + s.error);

  std::vector<MeasuredCeiling> ceilings = suite_ceilings(s);
  std::string saved;
  if (!a.no_save) {
    auto store = Store::open(Store::default_path(g.data_dir));
    store->save_ceilings(s.device, ceilings);
    saved = store->path().string();
  }

  if (a.json) {
    nlohmann::json j;
    j["device"] = {{"name", s.device.name},
                   {"uuid", s.device.uuid},
                   {"driver", s.device.driver},
                   {"cc", fmt::format("{}.{}", s.device.cc_major, s.device.cc_minor)},
                   {"sm_count", s.device.sm_count},
                   {"l2_bytes", s.device.l2_bytes}};
    j["profile"] = s.profile;
    j["results"] = nlohmann::json::array();
    for (auto& r : s.results) j["results"].push_back(result_json(r));
    j["variants"] = nlohmann::json::array();
    for (auto& r : s.variants) j["variants"].push_back(result_json(r));
    j["ceilings"] = nlohmann::json::object();
    for (auto& c : ceilings) j["ceilings"][c.metric] = c.value;
    j["total_ms"] = s.total_ms;
    j["compile_ms"] = s.compile_ms;
    j["ramp_ms"] = s.ramp_ms;
    j["saved_to"] = saved;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }

  fmt::print("{} (sm_{}{}, {} SMs, {:.0f} MiB L2), driver {}, {}\n", s.device.name,
             s.device.cc_major, s.device.cc_minor, s.device.sm_count, s.device.l2_bytes / 1048576.0,
             s.device.driver, s.device.uuid);
  const GpuProfile* prof = find_profile(s.profile);
  fmt::print("datasheet: {}\n\n", prof ? prof->name : "none (no profile matches this GPU)");
  fmt::print("{:<48} {:>13} {:>13} {:>13} {:>7}  {}\n", "probe", "best", "median", "datasheet",
             "ratio", "kernel (launch)");
  for (auto& r : s.results) {
    if (!r.ok()) {
      fmt::print("{:<48} {:>13}  {}\n", r.label, "-", r.skipped);
      continue;
    }
    std::string ratio = r.datasheet > 0 ? fmt::format("{:.0f}%", 100 * r.best / r.datasheet) : "";
    fmt::print("{:<48} {:>13} {:>13} {:>13} {:>7}  {} ({} x {})\n", r.label, rate(r.best, r.unit),
               rate(r.median, r.unit), rate(r.datasheet, r.unit), ratio, r.kernel,
               time_text(r.launch_us), r.samples);
  }
  if (!s.variants.empty()) {
    fmt::print("\nDRAM variants:\n");
    for (auto& r : s.variants)
      fmt::print("  {:<22} {:>13} best {:>13} median  ({} x {})\n", r.kernel, rate(r.best, r.unit),
                 rate(r.median, r.unit), time_text(r.launch_us), r.samples);
  }
  fmt::print("\n{} in all (compile {}, clock ramp {})\n", time_text(s.total_ms * 1e3),
             time_text(s.compile_ms * 1e3), time_text(s.ramp_ms * 1e3));
  if (!saved.empty())
    fmt::print("kept {} ceilings for {} / driver {} in {}\n", ceilings.size(), s.device.uuid,
               s.device.driver, saved);
  return 0;
}

cli::Registration reg("probe", [](CLI::App& app, cli::Global& g) -> std::function<int()> {
  auto a = std::make_shared<ProbeArgs>();
  auto* sub = app.add_subcommand(
      "probe", "measure this GPU's ceilings (DRAM, L2, shared memory, FP32, FP64, "
               "tensor cores) and keep them for scoring");
  sub->add_flag("--json", a->json, "print the results as JSON");
  sub->add_flag("--no-save", a->no_save, "measure only; keep nothing in the store");
  sub->add_flag("--variants", a->variants, "also print every DRAM kernel variant tried");
  sub->add_flag("--no-wgmma", a->no_wgmma, "skip the sm_90a wgmma probes");
  sub->add_option("--ms", a->ms, "GPU milliseconds of timed launches per probe")
      ->capture_default_str();
  sub->add_option("--kernels", a->kernels,
                  "the probe source (default: kernels/probes.cu beside the catalog)");
  return [a, &g] { return run_probe(g, *a); };
});

} // namespace
