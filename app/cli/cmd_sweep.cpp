// warpbook sweep PUZZLE FILE --size n=2^10..2^28: one run per size for the learner's kernel, the
// puzzle's solution and its reference (timed on a GPU, predicted on the simulator), as a table
// and a chart of GB/s (or GFLOP/s) against size with the roofs across.
#include "command.hpp"
#include "core/catalog.hpp"
#include "core/format_figure.hpp"
#include "core/sweep.hpp"
#include "core/workspace.hpp"

#include <atomic>
#include <csignal>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace {

using namespace wb;

struct SweepArgs {
  std::string puzzle, file, backend = "auto", gpu, svg, png, replot;
  std::vector<std::string> sizes;
  bool json = false, no_solution = false, no_reference = false;
  uint64_t seed = 0;
};

void print_table(const SweepReport& r) {
  const bool flops = r.metric == "GFLOP/s";
  std::string head = fmt::format("{:>12}", r.var);
  for (auto& s : r.series) head += fmt::format(" | {:>24}", s.name);
  fmt::print("{}\n", head);
  std::string sub = fmt::format("{:>12}", "");
  for (size_t i = 0; i < r.series.size(); ++i)
    sub += fmt::format(" | {:>12} {:>11}", "time", flops ? "GFLOP/s" : "GB/s");
  fmt::print("{}\n", sub);
  size_t rows = 0;
  for (auto& s : r.series) rows = std::max(rows, s.points.size());
  for (size_t i = 0; i < rows; ++i) {
    std::string line;
    for (auto& s : r.series) {
      if (line.empty() && i < s.points.size()) line = fmt::format("{:>12}", s.points[i].size);
    }
    for (auto& s : r.series) {
      if (i >= s.points.size()) {
        line += fmt::format(" | {:>24}", "");
        continue;
      }
      const SweepPoint& p = s.points[i];
      if (p.verdict != Verdict::passed || p.us <= 0)
        line += fmt::format(" | {:>24}", verdict_name(p.verdict));
      else
        line += fmt::format(" | {:>11}{} {:>10}", time_text(p.us), p.predicted ? "*" : " ",
                            sig3(flops ? p.gflops : p.gbps));
    }
    fmt::print("{}\n", line);
  }
  for (auto& s : r.series)
    if (!s.problem.empty()) fmt::print("{} failed its check: {}\n", s.name, s.problem);
  for (auto& s : r.series)
    for (auto& p : s.points)
      if (p.verdict != Verdict::passed && s.problem.empty()) {
        fmt::print("{} at {}={}: {}\n", s.name, r.var, p.size, p.why);
        break;
      }
  for (auto& roof : r.roofs) fmt::print("roof: {}\n", roof.label());
  if (r.device.backend != "cuda")
    fmt::print("*: predicted for the {} by the performance model, not measured\n", r.model_gpu);
}

// --svg and --png, for a sweep run now or replotted.
void write_charts(const SweepReport& r, const SweepArgs& a) {
  if (!a.svg.empty()) {
    std::string err = write_file_atomic(a.svg, sweep_svg(r));
    if (!err.empty()) throw cli::UsageError(err);
  }
  std::string why;
  if (!a.png.empty() && !write_sweep_png(r, a.png, why)) throw cli::UsageError(why);
}

// Draws a sweep saved with --json (on a GPU machine, say) without running anything.
int replot(const SweepArgs& a) {
  const std::string text = cli::read_source(a.replot);
  SweepReport r;
  try {
    r = sweep_from_json(nlohmann::json::parse(text));
  } catch (const std::exception& e) {
    throw cli::UsageError(fmt::format("{}: {}", a.replot, e.what()));
  }
  write_charts(r, a);
  print_table(r);
  return 0;
}

int run_sweep(const cli::Global& g, const SweepArgs& a) {
  if (!a.replot.empty()) return replot(a);
  if (a.puzzle.empty() || a.file.empty())
    throw cli::UsageError("sweep needs PUZZLE and FILE (or --replot SWEEP.json)");
  Catalog cat = cli::open_catalog(g, a.json);
  const Puzzle* p = &cli::puzzle_or_throw(cat, a.puzzle);
  const std::string source = cli::read_source(a.file);
  SweepSpec spec;
  try {
    spec = parse_sweep(*p, a.sizes);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
  auto backend = cli::backend_or_throw(a.backend);

  SweepOptions opt;
  opt.check.seed = a.seed;
  opt.check.model_gpu = a.gpu;
  opt.check.data_dir = g.data_dir;
  opt.solution = !a.no_solution;
  opt.reference = !a.no_reference;
  fmt::print(stderr, "sweeping {} over {} = {} .. {} ({} sizes) on {}\n", p->id, spec.name,
             spec.values.front(), spec.values.back(), spec.values.size(), backend->info().name);
  opt.on_point = [&spec](const SweepSeries& s, const SweepPoint& pt, int done, int total) {
    fmt::print(stderr, "[{:>3}/{}] {:<12} {}={:<12} {}\n", done, total, s.name, spec.name, pt.size,
               pt.verdict == Verdict::passed && pt.us > 0
                   ? time_text(pt.us) + (pt.predicted ? " (predicted)" : "")
                   : std::string(verdict_name(pt.verdict)));
  };
  cli::StopOnCtrlC stop("\nstopping after the run under way (Ctrl+C again to quit)\n");
  opt.cancel = stop.flag();
  SweepReport r = sweep_puzzle(*p, source, a.file, *backend, spec, opt);

  write_charts(r, a);
  if (a.json)
    fmt::print("{}\n", sweep_to_json(r).dump(2));
  else {
    print_table(r);
    if (!a.svg.empty()) fmt::print("wrote {}\n", a.svg);
    if (!a.png.empty()) fmt::print("wrote {}\n", a.png);
    if (r.cancelled) fmt::print("cancelled: the table and chart hold the sizes done\n");
  }
  if (r.cancelled) return 130;
  const SweepSeries& yours = r.series.front();
  if (!yours.problem.empty()) return 1;
  for (auto& pt : yours.points)
    if (pt.verdict != Verdict::passed) return exit_code(pt.verdict);
  return 0;
}

cli::Registration reg("sweep", [](CLI::App& app, cli::Global& g) -> std::function<int()> {
  auto a = std::make_shared<SweepArgs>();
  auto* sub = app.add_subcommand(
      "sweep", "run a kernel, the solution and the reference across sizes (timed on a GPU, "
               "predicted on the simulator): a table and a GB/s-against-size chart");
  sub->add_option("PUZZLE", a->puzzle, "puzzle id or prefix");
  sub->add_option("FILE", a->file, "the kernel file");
  sub->add_option("--replot", a->replot,
                  "draw a sweep saved with --json (--svg, --png) instead of running one");
  sub->add_option("--size", a->sizes,
                  "n=2^10..2^28 (doubling), n=2^10..2^28*4, n=1K..64K+1K, n=256,1000 or "
                  "cols=4096 (fixed); default: the largest [perf] size from 2^10 up");
  cli::add_backend_option(sub, a->backend);
  sub->add_option("--gpu", a->gpu, "simulator: the GPU profile predicted for (default h200)");
  sub->add_option("--seed", a->seed, "input seed");
  sub->add_option("--svg", a->svg, "write the chart as SVG");
  sub->add_option("--png", a->png, "write the chart as PNG");
  sub->add_flag("--no-solution", a->no_solution, "leave the puzzle's solution out");
  sub->add_flag("--no-reference", a->no_reference, "leave the puzzle's reference out");
  sub->add_flag("--json", a->json, "print the sweep as JSON");
  return [a, &g] { return run_sweep(g, *a); };
});

} // namespace
