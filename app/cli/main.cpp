// warpbook: the command line. Every subcommand is a thin call into app/core.
#include "command.hpp"
#include "core/catalog.hpp"
#include "core/check.hpp"
#include "core/compile.hpp"
#include "core/format_figure.hpp"
#include "core/perf/machine.hpp"
#include "core/report_json.hpp"
#include "core/roofline.hpp"
#include "core/store.hpp"
#include "core/workspace.hpp"
#include "prediction_text.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unistd.h>
#include <vector>

#ifdef WARPBOOK_HAVE_GUI
#include "gui/gui.hpp"
#endif

namespace {

using namespace wb;

constexpr int kExitUsage = 4;

const char* kExitCodes = R"(
Exit codes:
  0  passed
  1  wrong answer
  2  compile error
  3  runtime fault (illegal address, trap, timeout, deadlock, ...)
  4  usage or environment error (no such puzzle, no GPU for --backend cuda, ...))";

using cli::Global;
using cli::UsageError;

using cli::backend_or_throw;
using cli::open_catalog;
using cli::puzzle_or_throw;
using cli::read_source;

void print_diagnostics(const std::vector<Diagnostic>& diags) {
  for (auto& d : diags) fmt::print("{}\n", d.str());
}

// Human-readable report: verdict first, then what went wrong, then the figures.
void print_report(const CheckReport& r) {
  fmt::print("{} on {} ({}), seed {}\n", r.puzzle, r.device.name, r.device.backend, r.seed);
  print_diagnostics(r.diagnostics);
  for (auto& c : r.cases) {
    fmt::print("  {:<6} {}{}", c.verdict == Verdict::passed ? "ok" : "FAIL", c.label,
               c.perf ? " [perf size]" : "");
    fmt::print("  ({})\n", time_text(c.ms * 1e3));
    for (auto& p : c.problems) fmt::print("         {}\n", p);
    if (!c.sim_explanation.empty())
      fmt::print("         explained by the simulator: {}\n", c.sim_explanation);
    for (auto& b : c.buffers)
      for (size_t i = 1; i < b.first.size() && c.verdict == Verdict::wrong_answer; ++i) {
        auto& m = b.first[i];
        const auto [got, want] = sig3_pair(m.actual, m.expected);
        fmt::print("           {}[{}]: got {}, expected {}{} ({})\n", b.name, m.index, got, want,
                   m.unwritten ? " (unwritten)" : "", m.owner);
      }
    if (!c.printf_output.empty()) fmt::print("         printf:\n{}\n", c.printf_output);
  }
  if (r.sim_perf) {
    fmt::print("  simulator counters at {}:\n", r.sim_perf->label);
    for (auto& [k, v] : r.sim_perf->counters.total)
      fmt::print("    {:<32} {}\n", k, count_text(v, ""));
  }
  if (r.perf) {
    const PerfReport& p = *r.perf;
    if (p.timing.ok && p.predicted)
      fmt::print("  predicted time {} at the perf size ({})  {}  {}  "
                 "{} of speed of light ({}-bound){}\n",
                 time_text(p.timing.median_us), p.ceiling_source, bandwidth_text(p.gbps),
                 flops_text(p.gflops), percent_text(p.speed_of_light), p.bound,
                 p.medal.empty() ? "" : "  medal: " + p.medal + " (predicted)");
    else if (p.timing.ok)
      fmt::print("  time {} (median of {}, {}; min {}, p90 {})  {}  {}  "
                 "{} of speed of light ({}-bound){}\n",
                 time_text(p.timing.median_us), p.timing.samples_us.size(), p.timing.method,
                 time_text(p.timing.min_us), time_text(p.timing.p90_us), bandwidth_text(p.gbps),
                 flops_text(p.gflops), percent_text(p.speed_of_light), p.bound,
                 p.medal.empty() ? "" : "  medal: " + p.medal);
    for (auto& f : p.flags) fmt::print("  note: {}\n", f);
  }
  if (r.prediction)
    cli::print_why(*r.prediction, r.perf && r.perf->timing.ok && !r.perf->predicted
                                      ? r.perf->timing.median_us
                                      : 0);
  fmt::print("{}: {}\n", verdict_name(r.verdict), r.summary);
}

int cmd_list(const Global& g) {
  Catalog c = open_catalog(g);
  // Each lesson with the puzzles it prepares (its front matter's `puzzles`, as the window's
  // catalog groups them), then each puzzle with its lesson: the puzzle numbers do not follow the
  // order of the lessons (02 needs lesson 0005, 03 lesson 0007).
  for (auto& l : c.lessons) {
    fmt::print("lesson {:<36} {}\n", l.id, l.title);
    if (!l.puzzles.empty()) fmt::print("       then puzzles {}\n", fmt::join(l.puzzles, ", "));
  }
  for (auto& p : c.puzzles)
    fmt::print("puzzle {:<36} {} (level {}{}){}\n", p.id, p.title, p.level, p.demo ? ", demo" : "",
               p.lesson.empty() ? "" : "; after lesson " + p.lesson.substr(0, 4));
  if (!c.errors.empty())
    fmt::print("{} problem(s) in the catalog (printed above)\n", c.errors.size());
  return 0;
}

int cmd_show(const Global& g, const std::string& key) {
  Catalog c = open_catalog(g);
  const Puzzle& p = puzzle_or_throw(c, key);
  fmt::print("{}\n", read_file(p.readme).value_or(""));
  fmt::print("kernel: extern \"C\" __global__ void {}(", p.kernel_name);
  for (size_t i = 0; i < p.kernel_args.size(); ++i) {
    const std::string& a = p.kernel_args[i];
    std::string type;
    if (auto b = p.buffer(a))
      type = fmt::format("{}{}*", b->is_input() ? "const " : "", dtype_ctype(b->type));
    else if (auto s = p.scalar(a))
      type = std::string(dtype_ctype(s->type));
    else if (p.tensor_map(a))
      type = "const __grid_constant__ CUtensorMap";
    fmt::print("{}{} {}", i ? ", " : "", type, a);
  }
  fmt::print(")\nstarter: {}\n", p.starter.string());
  return 0;
}

int cmd_compile(const Global& g, const std::string& key, const std::string& file,
                const std::string& ptx_out, const std::string& cubin_out, const std::string& arch) {
  Catalog c = open_catalog(g);
  const Puzzle& p = puzzle_or_throw(c, key);
  std::string src = read_source(file);
  std::vector<Diagnostic> diags;
  std::map<std::string, int64_t> defines;
  for (auto& t : p.tunables) defines[t.name] = t.default_value;
  for (auto& t : parse_tune_lines(src, file, diags)) defines[t.name] = t.value;
  CompileOptions co;
  co.arch = arch;
  co.defines = defines;
  co.ptxas_report = true;
  Program prog = compile_source(src, file, co);
  require_kernels(prog, p.kernel_names());
  for (auto& d : prog.diagnostics) diags.push_back(d);
  print_diagnostics(diags);
  for (auto& r : prog.resources)
    fmt::print(
        "{}: {} registers, {} bytes shared, {} bytes stack, spills {} B stored / {} B loaded\n",
        r.name, r.registers, r.shared_bytes, r.local_bytes, r.spill_stores, r.spill_loads);
  for (auto& r : prog.resources)
    if (!r.wgmma_serialized.empty())
      fmt::print("{}: ptxas serialized its wgmma, due to {}\n", r.name, r.wgmma_serialized);
  if (!ptx_out.empty() && !prog.ptx.empty()) {
    std::ofstream(ptx_out) << prog.ptx;
    fmt::print("wrote {} ({} bytes of PTX)\n", ptx_out, prog.ptx.size());
  }
  if (!cubin_out.empty()) {
    if (prog.cubin.empty()) throw UsageError("no CUBIN: --cubin needs --arch sm_XY");
    std::ofstream(cubin_out, std::ios::binary).write(prog.cubin.data(), long(prog.cubin.size()));
    fmt::print("wrote {} ({} bytes of CUBIN: `cuobjdump -sass` shows what runs)\n", cubin_out,
               prog.cubin.size());
  }
  fmt::print("{} in {} ({})\n", prog.ok ? "compiled" : "compile failed",
             time_text(prog.compile_ms * 1e3), arch);
  return prog.ok ? 0 : 2;
}

int cmd_check(const Global& g, const std::string& key, const std::string& file,
              const std::string& backend_kind, bool json, uint64_t seed, const Env* sizes,
              bool no_time, bool time_wrong = false, bool json_lines = false) {
  json = json || json_lines;
  Catalog c = open_catalog(g, json);
  const Puzzle& p = puzzle_or_throw(c, key);
  std::string src = read_source(file);
  // With --json, stdout carries the report alone: device printf (which the CUDA driver writes to
  // the process's stdout) and any library chatter go to stderr instead.
  FILE* json_out = stdout;
  if (json) {
    std::fflush(stdout);
    int fd = ::dup(1);
    ::dup2(2, 1);
    json_out = ::fdopen(fd, "w");
  }
  auto backend = backend_or_throw(backend_kind);
  CheckOptions opt;
  opt.seed = seed;
  opt.time = !no_time;
  opt.time_wrong_answers = time_wrong;
  if (!json && isatty(2))
    opt.progress = [](const std::string& s, int, int) { fmt::print(stderr, "\r\x1b[K{}...", s); };
  opt.data_dir = g.data_dir;
  // --json-lines: each case's line as soon as it is judged, then the report's.
  if (json_lines)
    opt.on_case = [json_out](const CaseReport& cr, size_t index, size_t total) {
      nlohmann::json j = {{"event", "case"}, {"index", index}, {"total", total}};
      j["case"] = case_to_json(cr);
      fmt::print(json_out, "{}\n", wb::dump_json(j));
      std::fflush(json_out);
    };
  CheckReport r = sizes ? run_puzzle(p, src, file, *backend, *sizes, opt)
                        : check_puzzle(p, src, file, *backend, opt);
  // Every attempt goes into the learner's store (the roofline's trail); a store that cannot be
  // opened is reported but never costs the learner their verdict.
  try {
    Store::open(Store::default_path(g.data_dir))->record_attempt(r, src);
  } catch (const std::exception& e) {
    fmt::print(stderr, "warning: the attempt was not recorded: {}\n", e.what());
  }
  if (opt.progress) fmt::print(stderr, "\r\x1b[K");
  if (json_lines) {
    fmt::print(json_out, "{{\"event\":\"report\",\"report\":{}}}\n", report_to_json(r, -1));
    std::fflush(json_out);
  } else if (json) {
    fmt::print(json_out, "{}\n", report_to_json(r));
    std::fflush(json_out);
  } else
    print_report(r);
  return exit_code(r.verdict);
}

// What `warpbook` does where no window can open: the catalog, then a full check of the first
// puzzle's solution on the best backend here, so a fresh install shows the whole pipeline working.
int cmd_main_job(const Global& g) {
  cmd_list(g);
  Catalog c = open_catalog(g, true);
  if (c.puzzles.empty()) return 0;
  const Puzzle& p = c.puzzles.front();
  fmt::print("\n$ warpbook check {} {}\n", p.id, p.solution.string());
  return cmd_check(g, p.id, p.solution.string(), "auto", false, 0, nullptr, false);
}

int cmd_devices(const Global& g) {
  fmt::print("NVRTC {}\n", nvrtc_version().empty() ? "not available" : nvrtc_version());
  std::string why;
  if (auto b = make_cuda_backend(why)) {
    const DeviceInfo& d = b->info();
    fmt::print("cuda: {} (sm_{}{}), {} SMs, {:.0f} MiB L2, {:.1f} GiB, driver {}, UUID {}\n",
               d.name, d.cc_major, d.cc_minor, d.sm_count, d.l2_bytes / 1048576.0,
               d.memory_bytes / 1073741824.0, d.driver, d.uuid);
    // Measured (warpbook probe, this UUID and driver) beside the datasheet of the matching profile.
    const GpuProfile* prof = profile_for_device(d);
    std::vector<MeasuredCeiling> measured;
    try {
      fs::path db = Store::default_path(g.data_dir);
      if (fs::exists(db)) measured = Store::open(db)->ceilings(d.uuid, d.driver);
    } catch (const std::exception& e) {
      fmt::print("      (the store could not be read: {})\n", e.what());
    }
    fmt::print("      {:<22} {:>13} {:>13} {:>6}   datasheet: {}\n", "ceiling", "measured",
               "datasheet", "ratio", prof ? prof->name : "none matches this GPU");
    for (auto& r : ceiling_rows(measured, prof))
      fmt::print("      {:<22} {:>13} {:>13} {:>6}\n", r.label, rate_text(r.measured, r.unit),
                 rate_text(r.datasheet, r.unit),
                 r.measured > 0 && r.datasheet > 0
                     ? fmt::format("{:.0f}%", 100 * r.measured / r.datasheet)
                     : "");
    if (measured.empty())
      fmt::print("      nothing measured on this device and driver yet: run `warpbook probe`\n");
    else
      fmt::print("      measured {} by `warpbook probe`\n", measured.front().measured_at);
  } else {
    fmt::print("cuda: not available: {}\n", why);
  }
  if (auto s = make_sim_backend(why))
    fmt::print("sim:  {}\n", s->info().name);
  else
    fmt::print("sim:  not available: {}\n", why);
  // The GPUs the performance model predicts for (`predict --gpu KEY`, the simulator's profile),
  // where each one's figures come from and how far the model is from measured times.
  fmt::print("\nGPU profiles of the performance model:\n");
  for (auto& p : gpu_profiles()) {
    const perf::ProfileEvidence& e = perf::profile_evidence(p.key);
    fmt::print("  {:<10} {} ({})\n", p.key, p.name, e.validated ? "validated" : "not validated");
    fmt::print("             {}\n", e.accuracy);
    for (auto& gr : e.groups)
      fmt::print("             {:<34} {:<21} {}\n", gr.name, gr.origin, gr.source);
  }
  return 0;
}

// Edits that turn `a` into `b`: insertions, deletions, substitutions and swaps of two neighbours
// (optimal string alignment), so that "chek" and "lsit" are one edit from their commands.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The command `word` was probably meant to be: the nearest within one edit (two for words longer
// than four letters), else the only command it begins; empty when nothing is that close.
std::string closest_command(const std::string& word, const std::vector<std::string>& names) {
  const size_t limit = word.size() <= 4 ? 1 : 2;
  std::string best;
  size_t best_d = limit + 1;
  for (auto& n : names)
    if (size_t d = edit_distance(word, n); d < best_d) best = n, best_d = d;
  if (!best.empty() || word.size() < 3) return best;
  for (auto& n : names)
    if (n.rfind(word, 0) == 0) {
      if (!best.empty()) return {}; // the start of several: no guess
      best = n;
    }
  return best;
}

// The first word of the command line that stands where a subcommand goes but names none, skipping
// the top-level options and their values (`--catalog X chek`). CLI11 would reject it too, but with
// the whole help; with no subcommand at all, `warpbook` opens the window.
std::optional<std::string> unknown_subcommand(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") return std::nullopt;
    if (arg.size() > 1 && arg[0] == '-') {
      CLI::Option* o = app.get_option_no_throw(arg.substr(0, arg.find('=')));
      if (o && o->get_items_expected_min() > 0 && arg.find('=') == std::string::npos) ++i;
      continue;
    }
    for (CLI::App* sub : app.get_subcommands({}))
      if (sub->get_name() == arg) return std::nullopt;
    return arg;
  }
  return std::nullopt;
}

} // namespace

namespace wb::cli {
std::vector<Registered>& registry() {
  static std::vector<Registered> r;
  return r;
}
Registration::Registration(std::string name, Setup setup) {
  registry().push_back({std::move(name), std::move(setup)});
}
} // namespace wb::cli

namespace {
int run_command(int argc, char** argv);
} // namespace

int main(int argc, char** argv) {
  const int rc = run_command(argc, argv);
  wb::wait_for_predictions(); // a cancelled check's prediction may still be compiling
  return rc;
}

namespace {
int run_command(int argc, char** argv) {
  CLI::App app{"Warpbook: learn to write fast GPU kernels.\nWith no subcommand, opens the window."};
  app.footer(kExitCodes);
  app.fallthrough(); // subcommands inherit it: --catalog and --data-dir may follow the subcommand
  Global g;
  app.add_option(
      "--catalog", g.catalog,
      "folder holding puzzles/ and lessons/ (default: $WARPBOOK_CATALOG, else the built-in one)");
  app.add_option("--data-dir", g.data_dir, "where the workspace and the progress database live");

  auto* list = app.add_subcommand("list", "list lessons and puzzles");
  std::string puzzle, file, backend = "auto", ptx_out, cubin_out, arch = "sm_90a";
  bool json = false, json_lines = false, no_time = false;
  uint64_t seed = 0;
  std::vector<std::string> size_args;

  auto* show = app.add_subcommand("show", "print a puzzle's statement and kernel signature");
  show->add_option("PUZZLE", puzzle, "puzzle id (01-vector-add, 01) or folder")->required();

  auto* compile = app.add_subcommand(
      "compile", "compile a kernel file with NVRTC and print diagnostics and resources");
  compile->add_option("PUZZLE", puzzle)->required();
  compile->add_option("FILE", file)->required();
  compile->add_option("--ptx", ptx_out, "write the PTX here");
  compile->add_option("--cubin", cubin_out, "write the CUBIN here (with --arch sm_XY)");
  compile->add_option("--arch", arch, "compute_XY or sm_XY")->capture_default_str();

  auto add_run_opts = [&](CLI::App* s) {
    s->add_option("PUZZLE", puzzle)->required();
    s->add_option("FILE", file)->required();
    cli::add_backend_option(s, backend);
    s->add_flag("--json", json, "print the report as JSON");
    s->add_flag("--json-lines", json_lines,
                "print one JSON object per line: each case as it is judged, then the report");
    s->add_option("--seed", seed, "input seed (default: fresh each run; the report says which)");
    s->add_flag("--no-time", no_time, "skip timing");
  };
  auto* check = app.add_subcommand("check", "check a kernel against every case; time it on a GPU");
  add_run_opts(check);
  auto* run = app.add_subcommand("run", "run one case at the sizes given, with its figures");
  add_run_opts(run);
  run->add_option("--size", size_args, "NAME=VALUE, once per size")->required();
  bool time_wrong = false;
  run->add_flag("--time-wrong", time_wrong,
                "time the kernel on a GPU even when its answer is wrong (how fast a load pattern "
                "or a starter runs)");

  auto* devices = app.add_subcommand("devices", "show the GPU, the simulator and their ceilings");
  std::vector<std::pair<CLI::App*, std::function<int()>>> extra;
  for (auto& r : cli::registry()) {
    size_t before = app.get_subcommands({}).size();
    auto action = r.setup(app, g);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) extra.emplace_back(subs.back(), std::move(action));
  }
  app.require_subcommand(0, 1);

  if (auto word = unknown_subcommand(app, argc, argv)) {
    std::vector<std::string> names;
    for (CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    std::string guess = closest_command(*word, names);
    fmt::print(stderr, "warpbook: no command '{}'{} (warpbook --help lists them)\n", *word,
               guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess));
    return kExitUsage;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  try {
    if (*list) return cmd_list(g);
    if (*show) return cmd_show(g, puzzle);
    if (*compile) return cmd_compile(g, puzzle, file, ptx_out, cubin_out, arch);
    if (*check)
      return cmd_check(g, puzzle, file, backend, json, seed, nullptr, no_time, false, json_lines);
    if (*run) {
      Env sizes;
      for (auto& s : size_args) {
        auto eq = s.find('=');
        if (eq == std::string::npos)
          throw UsageError(fmt::format("--size {}: write NAME=VALUE", s));
        try {
          sizes[s.substr(0, eq)] = std::stoll(s.substr(eq + 1));
        } catch (...) {
          throw UsageError(fmt::format("--size {}: VALUE must be an integer", s));
        }
      }
      return cmd_check(g, puzzle, file, backend, json, seed, &sizes, no_time, time_wrong,
                       json_lines);
    }
    if (*devices) return cmd_devices(g);
    for (auto& [sub, action] : extra)
      if (*sub) return action();
#ifdef WARPBOOK_HAVE_GUI
    const char* display = std::getenv("DISPLAY");
    const char* wayland = std::getenv("WAYLAND_DISPLAY");
    if ((display && *display) || (wayland && *wayland))
      return run_gui(argc, argv, g.catalog, g.data_dir);
    fmt::print("No display: showing the catalog and checking puzzle 01's solution instead of "
               "opening the window.\n\n");
#endif
    return cmd_main_job(g);
  } catch (const UsageError& e) {
    fmt::print(stderr, "warpbook: {}\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "warpbook: {}\n", e.what());
    return kExitUsage;
  }
}
} // namespace
