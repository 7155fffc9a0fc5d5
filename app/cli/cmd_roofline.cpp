// warpbook roofline: the roofline chart of a device (measured ceilings solid, datasheet ones
// dashed) with the puzzles' latest attempts from the store, or with the reference solutions and
// starters run now (--run), written as SVG and/or PNG and printed as a table.
#include "command.hpp"
#include "core/catalog.hpp"
#include "core/chart.hpp"
#include "core/check.hpp"
#include "core/format_figure.hpp"
#include "core/roofline.hpp"
#include "core/store.hpp"

#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace {

using namespace wb;

struct RooflineArgs {
  std::vector<std::string> puzzles;
  std::string svg, png, backend = "auto", gpu, device, title;
  bool run = false, no_starters = false;
  int width = 1000, height = 640;
};

std::string read_text(const fs::path& p, bool& ok) {
  std::ifstream in(p, std::ios::binary);
  ok = bool(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool same_file(const std::string& a, const fs::path& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ec1, ec2;
  fs::path ca = fs::weakly_canonical(a, ec1), cb = fs::weakly_canonical(b, ec2);
  return ec1 || ec2 ? fs::path(a) == b : ca == cb;
}

std::string short_id(const std::string& id) {
  return id.substr(0, id.find('-'));
}

// One row of the table and (when it has one) one point of the chart.
struct Row {
  std::string puzzle, kind, verdict, file;
  double time_us = 0, gbps = 0, gflops = 0, intensity = 0, sol = 0;
  std::string medal;
  bool predicted = false;
  RoofPoint point() const {
    std::string label = fmt::format("{} {}", short_id(puzzle), kind);
    if (verdict != "passed")
      label += " (wrong)";
    else if (sol > 0)
      label += fmt::format(", {:.0f}%", 100 * sol);
    return {label, intensity, gflops, predicted ? "predicted" : kind};
  }
};

Row row_from(const CheckReport& r, const std::string& kind) {
  Row w;
  w.puzzle = r.puzzle, w.kind = kind, w.verdict = std::string(verdict_name(r.verdict)),
  w.file = r.file;
  if (r.perf && (r.perf->timing.ok || r.perf->predicted)) {
    const PerfReport& p = *r.perf;
    w.time_us = p.timing.ok ? p.timing.median_us : 0;
    w.gbps = p.gbps, w.gflops = p.gflops, w.intensity = p.intensity, w.sol = p.speed_of_light;
    w.medal = p.medal, w.predicted = p.predicted;
  }
  return w;
}

Row row_from(const Attempt& a, const std::string& kind) {
  Row w;
  w.puzzle = a.puzzle, w.kind = kind, w.verdict = a.verdict, w.file = a.file;
  w.time_us = a.time_us, w.gbps = a.gbps, w.gflops = a.gflops, w.intensity = a.intensity,
  w.sol = a.sol;
  w.medal = a.medal, w.predicted = a.predicted;
  return w;
}

int run_roofline(const cli::Global& g, const RooflineArgs& a) {
  Catalog cat = load_catalog(default_catalog_root(g.catalog));
  std::vector<const Puzzle*> puzzles;
  for (auto& key : a.puzzles) {
    const Puzzle* p = cat.find_puzzle(key);
    if (!p) throw cli::UsageError(fmt::format("no puzzle '{}' in {}", key, cat.root.string()));
    puzzles.push_back(p);
  }
  if (a.puzzles.empty())
    for (auto& p : cat.puzzles) puzzles.push_back(&p);
  const GpuProfile* chosen = nullptr;
  if (!a.gpu.empty() && !(chosen = find_profile(a.gpu))) {
    std::string keys;
    for (auto& p : gpu_profiles()) keys += (keys.empty() ? "" : ", ") + p.key;
    throw cli::UsageError(fmt::format("--gpu {}: no such profile (there are: {})", a.gpu, keys));
  }
  auto store = Store::open(Store::default_path(g.data_dir));

  // The device whose roofs are drawn.
  DeviceInfo device;
  std::unique_ptr<Backend> backend;
  std::string why;
  if (a.run) {
    backend = make_backend(a.backend, why);
    if (!backend)
      throw cli::UsageError(fmt::format("backend '{}' cannot run here: {}", a.backend, why));
    device = backend->info();
  } else if (!a.device.empty()) {
    for (auto& d : store->measured_devices())
      if (d.uuid == a.device) device.uuid = d.uuid, device.driver = d.driver, device.name = d.name;
    if (device.uuid.empty())
      throw cli::UsageError(fmt::format("--device {}: no ceilings stored for it", a.device));
    device.backend = "cuda";
  } else if (auto cuda = a.backend == "sim" ? nullptr : make_cuda_backend(why)) {
    device = cuda->info();
  } else if (auto devs = store->measured_devices(); !devs.empty() && a.backend != "sim") {
    // No GPU here: the device most recently probed (a store copied from a GPU machine, say).
    device.uuid = devs[0].uuid, device.driver = devs[0].driver, device.name = devs[0].name;
    device.backend = "cuda";
  } else {
    // Nothing probed: the GPU of the newest timed attempt, if any, with its datasheet roofs.
    for (auto& at : store->attempts({}, 200))
      if (at.backend == "cuda" && at.has_point() && a.backend != "sim") {
        device = at.report().device;
        break;
      }
    if (device.backend != "cuda") {
      device.backend = "sim";
      device.name = "simulator";
    }
  }
  const bool sim = device.backend == "sim";
  const GpuProfile* prof = chosen ? chosen
                           : sim  ? &model_profile(device)
                                  : profile_for_device(device);
  std::vector<MeasuredCeiling> measured =
      sim ? std::vector<MeasuredCeiling>{} : store->ceilings(device.uuid, device.driver);

  // The points.
  std::vector<Row> rows;
  for (const Puzzle* p : puzzles) {
    if (a.run) {
      std::vector<std::pair<fs::path, std::string>> files;
      std::error_code ec;
      if (!p->solution.empty() && fs::is_regular_file(p->solution, ec))
        files.emplace_back(p->solution, "solution");
      if (!a.no_starters) files.emplace_back(p->starter, "starter");
      for (auto& [file, kind] : files) {
        bool ok;
        std::string src = read_text(file, ok);
        if (!ok) throw cli::UsageError(fmt::format("cannot read {}", file.string()));
        if (isatty(2)) fmt::print(stderr, "\r\x1b[K{} {}...", p->id, kind);
        CheckOptions o;
        o.data_dir = g.data_dir;
        o.model_gpu = chosen ? chosen->key : "";
        o.time_wrong_answers = true; // starters are wrong by design; their time is still a point
        CheckReport r = check_puzzle(*p, src, file.string(), *backend, o);
        store->record_attempt(r, src);
        rows.push_back(row_from(r, kind));
        if (!backend->usable()) { // a sticky fault: a fresh context for the next file
          backend = make_backend(a.backend, why);
          if (!backend) throw cli::UsageError(fmt::format("the GPU was lost: {}", why));
        }
      }
      if (isatty(2)) fmt::print(stderr, "\r\x1b[K");
      continue;
    }
    // The newest attempt with a point of each file on this device.
    std::vector<std::string> seen;
    for (auto& at : store->attempts(p->id)) {
      if (!at.has_point() || at.predicted != sim) continue;
      if (!sim && at.device_uuid != device.uuid) continue;
      if (std::find(seen.begin(), seen.end(), at.file) != seen.end()) continue;
      seen.push_back(at.file);
      std::string kind = same_file(at.file, p->solution)  ? "solution"
                         : same_file(at.file, p->starter) ? "starter"
                                                          : "attempt";
      if (kind == "starter" && a.no_starters) continue;
      rows.push_back(row_from(at, kind));
    }
  }

  // The table.
  fmt::print("{}{}\n", sim ? "predicted for the " : "",
             sim ? (prof ? prof->name : "no GPU profile") : device.name);
  fmt::print("{:<16} {:<9} {:<14} {:>10} {:>11} {:>13} {:>11} {:>6}  {}\n", "puzzle", "kernel",
             "verdict", sim ? "-" : "time", "bandwidth", "compute", "intensity", "SOL", "medal");
  for (auto& r : rows)
    fmt::print("{:<16} {:<9} {:<14} {:>10} {:>11} {:>13} {:>11} {:>6}  {}\n", r.puzzle, r.kind,
               r.verdict, time_text(r.time_us), bandwidth_text(r.gbps), flops_text(r.gflops),
               intensity_text(r.intensity), percent_text(r.sol), r.medal);
  if (rows.empty())
    fmt::print("(no attempts with a roofline point{}: run `warpbook roofline --run`, or check some "
               "kernels)\n",
               sim ? "" : " on this device");

  RooflineChart chart;
  chart.roofs = device_roofs(measured, prof);
  for (auto& r : rows)
    if (r.intensity > 0 && r.gflops > 0) chart.points.push_back(r.point());
  chart.title = !a.title.empty() ? a.title
                : sim
                    ? fmt::format("Roofline predicted for the {}", prof ? prof->name : "datasheet")
                    : fmt::format("{}: roofline", device.name);
  if (sim)
    chart.subtitle = "simulator: counted FLOPs and bytes at the [sim_perf] size, placed on the "
                     "attainable bound of the datasheet roofs (dashed)";
  else if (!measured.empty())
    chart.subtitle =
        fmt::format("solid: measured by warpbook probe {} (driver {}); dashed: datasheet",
                    measured.front().measured_at.substr(0, 10), device.driver);
  else
    chart.subtitle = "dashed: datasheet (run `warpbook probe` to add measured roofs)";

  if (!a.svg.empty()) {
    std::ofstream out(a.svg, std::ios::binary);
    out << chart_svg(chart, a.width, a.height);
    if (!out) throw cli::UsageError("cannot write " + a.svg);
    fmt::print("wrote {}\n", a.svg);
  }
  if (!a.png.empty()) {
    if (!write_chart_png(chart, a.png, why, a.width, a.height)) throw cli::UsageError(why);
    fmt::print("wrote {}\n", a.png);
  }
  return 0;
}

cli::Registration reg("roofline", [](CLI::App& app, cli::Global& g) -> std::function<int()> {
  auto a = std::make_shared<RooflineArgs>();
  auto* sub = app.add_subcommand("roofline",
                                 "draw the roofline chart: the device's ceilings and the puzzles' "
                                 "latest attempts (SVG, PNG, table)");
  sub->add_option("PUZZLE", a->puzzles, "puzzles to show (default: all)");
  sub->add_option("--svg", a->svg, "write the chart as SVG");
  sub->add_option("--png", a->png, "write the chart as PNG");
  sub->add_flag("--run", a->run,
                "check the reference solutions and the starters now (and keep the attempts)");
  sub->add_flag("--no-starters", a->no_starters, "leave the starters out");
  cli::add_backend_option(sub, a->backend,
                          "cuda, sim or auto (with --run; sim draws predicted points)");
  sub->add_option("--gpu", a->gpu,
                  "the GPU profile for datasheet roofs and the simulator's model (h200, l4, ...)");
  sub->add_option("--device", a->device, "draw the stored ceilings of this device UUID");
  sub->add_option("--title", a->title, "the chart's title");
  sub->add_option("--width", a->width, "pixels")->capture_default_str();
  sub->add_option("--height", a->height, "pixels")->capture_default_str();
  return [a, &g] { return run_roofline(g, *a); };
});

} // namespace
