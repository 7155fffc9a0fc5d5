// warpbook tune PUZZLE FILE: every combination of the puzzle's tunables, checked for correctness,
// then timed (GPU) or predicted (simulator), ranked; `--write` puts the winner's @tune lines into
// FILE. Ctrl+C stops after the configurations under way and writes nothing.
#include "command.hpp"
#include "core/catalog.hpp"
#include "core/format_figure.hpp"
#include "core/tune.hpp"
#include "core/workspace.hpp"

#include <atomic>
#include <csignal>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <unistd.h>

namespace {

using namespace wb;

struct TuneArgs {
  std::string puzzle, file, backend = "auto", gpu;
  std::vector<std::string> only;
  bool json = false, write = false;
  uint64_t seed = 0;
  int jobs = 0;
};

std::string time_text(const TuneRow& r) {
  if (r.us <= 0) return "";
  return wb::time_text(r.us) + (r.predicted ? " (p)" : "");
}

// The limiter's name alone: "DRAM" from "dot_partial (1): DRAM: 1.07 GB at ..." (a puzzle of
// several launches names the launch first).
std::string limiter_name(const std::string& text) {
  static const std::regex launch(R"(^\S+ \(\d+\): )");
  std::string s = std::regex_replace(text, launch, "", std::regex_constants::format_first_only);
  return s.substr(0, s.find(':'));
}

void print_table(const TuneReport& t, const Puzzle& p) {
  std::string head = fmt::format("{:>4}", "rank");
  for (auto& tu : p.tunables) head += fmt::format(" {:>6}", tu.name);
  fmt::print("{}  {:<13} {:>14} {:>8} {:>5}  {:<8} {}\n", head, "verdict", "time", "GB/s", "SOL",
             "medal", "limiter (performance model)");
  int rank = 0;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const TuneRow& r = t.rows[i];
    const bool timed = r.timed();
    std::string line = timed ? fmt::format("{:>4}", ++rank) : fmt::format("{:>4}", "-");
    for (auto& tu : p.tunables) {
      auto it = r.config.find(tu.name);
      line += fmt::format(" {:>6}", it == r.config.end() ? "" : std::to_string(it->second));
    }
    std::string note = r.is_default ? "  <- your file" : "";
    if (int(i) == t.winner) note += "  <- fastest";
    if (timed)
      fmt::print("{}  {:<13} {:>14} {:>8.0f} {:>4.0f}%  {:<8} {}{}\n", line,
                 verdict_name(r.verdict), time_text(r), r.gbps, 100 * r.sol, r.medal,
                 limiter_name(r.limiter), note);
    else
      fmt::print("{}  {:<13} {}{}\n", line, verdict_name(r.verdict), r.why, note);
  }
}

int run_tune(const cli::Global& g, const TuneArgs& a) {
  Catalog cat = cli::open_catalog(g, a.json);
  const Puzzle* p = &cli::puzzle_or_throw(cat, a.puzzle);
  const std::string source = cli::read_source(a.file);
  if (p->tunables.empty())
    throw cli::UsageError(fmt::format("{} has no tunables: there is nothing to tune", p->id));
  std::map<std::string, std::vector<int64_t>> only;
  try {
    only = parse_only(a.only);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
  std::string error;
  std::vector<TuneConfig> space = tune_space(*p, only, error);
  if (!error.empty()) throw cli::UsageError(error);

  auto backend = cli::backend_or_throw(a.backend);

  TuneOptions opt;
  opt.check.seed = a.seed;
  opt.check.model_gpu = a.gpu;
  opt.check.data_dir = g.data_dir;
  opt.jobs = a.jobs;
  const bool gpu = backend->info().backend == "cuda";
  fmt::print(stderr, "tuning {} on {}: {} configurations, each checked, then {}\n", p->id,
             backend->info().name, space.size(), gpu ? "timed" : "predicted by the model");
  opt.on_row = [](const TuneRow& r, int done, int total) {
    fmt::print(stderr, "[{:>3}/{}] {:<28} {}\n", done, total, config_text(r.config),
               r.verdict == Verdict::passed
                   ? (r.us > 0 ? time_text(r) : "passed (not timed)")
                   : fmt::format("{}: {}", verdict_name(r.verdict), r.why));
  };
  cli::StopOnCtrlC stop("\nstopping after the configurations under way (Ctrl+C again to quit); "
                        "nothing will be written\n");
  opt.cancel = stop.flag();
  TuneReport t = tune_puzzle(*p, source, a.file, *backend, space, opt);

  bool wrote = false;
  std::string write_error;
  if (a.write && !t.cancelled && t.winner >= 0) {
    std::string out = source_with_tunables(source, t.rows[size_t(t.winner)].config, true);
    write_error = write_file_atomic(a.file, out);
    wrote = write_error.empty();
  }
  if (a.json) {
    nlohmann::json j = tune_to_json(t);
    j["written"] = wrote;
    fmt::print("{}\n", j.dump(2));
  } else {
    print_table(t, *p);
    if (t.winner >= 0) {
      const TuneRow& w = t.rows[size_t(t.winner)];
      fmt::print("\nfastest: {}, {} ({:.0f}% of speed of light{})", config_text(w.config),
                 time_text(w), 100 * w.sol, w.predicted ? ", predicted" : "");
      // Within 2% is inside a GPU's run-to-run spread and the model's resolution: not a win.
      if (t.default_row >= 0 && t.default_row != t.winner && t.margin() >= 1.02)
        fmt::print(", {:.2f}x faster than your file's {} ({})", t.margin(),
                   config_text(t.rows[size_t(t.default_row)].config),
                   time_text(t.rows[size_t(t.default_row)]));
      else if (t.default_row >= 0 && t.default_row != t.winner && t.margin() > 0)
        fmt::print(", within 2% of your file's {} ({}): keep yours, the difference is noise",
                   config_text(t.rows[size_t(t.default_row)].config),
                   time_text(t.rows[size_t(t.default_row)]));
      else if (t.default_row == t.winner)
        fmt::print(": your file's own configuration is already the fastest");
      fmt::print("\n");
    } else {
      fmt::print("\nno configuration passed with a time\n");
    }
    int failed = 0;
    for (auto& r : t.rows) failed += r.verdict != Verdict::passed;
    if (failed) fmt::print("{} configuration(s) failed (their reasons are in the table)\n", failed);
    if (t.cancelled)
      fmt::print("cancelled after {} of {} configurations; {} was not changed\n", t.rows.size(),
                 t.configurations, a.file);
    else if (wrote)
      fmt::print("wrote the fastest configuration's @tune lines into {}\n", a.file);
    else if (a.write && t.winner >= 0)
      fmt::print("could not write {}: {}\n", a.file, write_error);
    if (!gpu && !t.rows.empty() && t.rows.front().predicted)
      fmt::print("(p): predicted by the performance model for the {}, not measured\n",
                 t.model_gpu.empty() ? "GPU" : t.model_gpu);
  }
  if (t.cancelled) return 130;
  if (!write_error.empty()) return 4;
  return t.winner >= 0 ? 0 : 1;
}

cli::Registration reg("tune", [](CLI::App& app, cli::Global& g) -> std::function<int()> {
  auto a = std::make_shared<TuneArgs>();
  auto* sub = app.add_subcommand(
      "tune", "try every combination of a puzzle's tunables: check each, time (GPU) or predict "
              "(simulator) the correct ones, rank them; --write keeps the fastest");
  sub->add_option("PUZZLE", a->puzzle, "puzzle id or prefix")->required();
  sub->add_option("FILE", a->file, "the kernel file")->required();
  sub->add_option("--only", a->only,
                  "NAME=V1,V2 ...: only these values (e.g. BLOCK=128,256 ITEMS=1,4)");
  cli::add_backend_option(sub, a->backend);
  sub->add_option("--gpu", a->gpu, "simulator: the GPU profile predicted for (default h200)");
  sub->add_option("--seed", a->seed, "input seed, the same for every configuration");
  sub->add_option("--jobs", a->jobs, "simulator: configurations checked at once (default: cores)");
  sub->add_flag("--write", a->write, "put the fastest configuration's @tune lines into FILE");
  sub->add_flag("--json", a->json, "print the ranked table as JSON");
  return [a, &g] { return run_tune(g, *a); };
});

} // namespace
