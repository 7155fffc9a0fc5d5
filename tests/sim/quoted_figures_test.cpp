// Every figure a lesson or a puzzle's README quotes about a kernel in this repository is what that
// kernel gives today: a *predicted* time is what `warpbook predict` says now (the model changes;
// the text must follow), a *measured* one agrees with its file's `// measured:` line for that GPU
// within 5% (run to run; the gpu tests hold the line itself to the GPU). A figure about a GPU
// (bandwidth, L2, SMs, FLOP/s) is its one source's: the datasheet table, the performance model's
// machine or the stored probe. The figures are listed in a figures.toml beside lesson.md or
// README.md (docs/lessons.md says how).
#include "common/puzzle_suite.hpp"
#include "core/perf/machine.hpp"
#include "core/perf/predict.hpp"
#include "core/roofline.hpp"
#include "core/store.hpp"
#include "core/tune.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <toml++/toml.h>

using namespace wb;

namespace {

struct Written {
  std::string form; // how the lesson writes it: "70.8" or "13.9 ms"
  double slack = 0; // half a unit of its last digit, in µs
};

// Where `text` shows `us`: as written in the entry ("6172", "70.8"), or in milliseconds.
std::optional<Written> shown(const std::string& text, double us) {
  const std::string plain = fmt::format("{:g}", us);
  auto half_unit = [](const std::string& s) {
    const size_t dot = s.find('.');
    return dot == std::string::npos ? 0.5 : 0.5 * std::pow(10.0, -double(s.size() - dot - 1));
  };
  if (text.find(plain) != std::string::npos) return Written{plain, half_unit(plain)};
  const std::string ms = fmt::format("{:g}", us / 1000);
  if (text.find(ms + " ms") != std::string::npos) return Written{ms + " ms", 1000 * half_unit(ms)};
  return std::nullopt;
}

bool close_to(double got, double written, double slack, double rel) {
  return std::abs(got - written) <= std::max(slack, rel * written);
}

void only_keys(const toml::table& t, std::initializer_list<const char*> keys,
               const std::string& where) {
  std::set<std::string> ok(keys.begin(), keys.end());
  for (auto& [k, v] : t)
    CHECK_MESSAGE(ok.count(std::string(k.str())), where << ": unknown key '" << k.str() << "'");
}

// The source the lesson means: the file, with its one edit made.
std::string source_of(const toml::table& e, const std::string& where) {
  const std::string rel = e["file"].value_or(std::string());
  std::string src = test::read_file(fs::path(WARPBOOK_SOURCE_ROOT) / rel);
  REQUIRE_MESSAGE(!src.empty(), where << ": cannot read '" << rel << "'");
  if (auto* edit = e["edit"].as_array()) {
    REQUIRE_MESSAGE(edit->size() == 2, where << ": edit is [from, to]");
    const std::string from = edit->at(0).value_or(std::string());
    const std::string to = edit->at(1).value_or(std::string());
    const size_t at = src.find(from);
    REQUIRE_MESSAGE((at != std::string::npos && src.find(from, at + 1) == std::string::npos),
                    where << ": '" << from << "' must occur exactly once in " << rel);
    src.replace(at, from.size(), to);
  }
  return src;
}

void check_predicted(const toml::table& e, const std::string& document, const std::string& where) {
  only_keys(e,
            {"puzzle", "file", "edit", "tune", "perf", "launch", "text", "us", "speed_of_light",
             "medal", "limiter"},
            where);
  const std::string text = e["text"].value_or(std::string());
  const Puzzle* found = test::builtin_catalog().find_puzzle(e["puzzle"].value_or(std::string()));
  REQUIRE_MESSAGE(found, where << ": no puzzle");
  Puzzle pz = *found;
  REQUIRE(pz.perf);
  if (auto* perf = e["perf"].as_table())
    for (auto& [k, v] : *perf) {
      REQUIRE_MESSAGE(pz.perf->sizes.count(std::string(k.str())),
                      where << ": the perf size has no " << k.str());
      pz.perf->sizes[std::string(k.str())] = v.value_or(int64_t(0));
    }
  std::string src = source_of(e, where);
  if (auto* tune = e["tune"].as_table()) {
    TuneConfig cfg;
    for (auto& [k, v] : *tune) cfg[std::string(k.str())] = v.value_or(int64_t(0));
    src = source_with_tunables(src, cfg);
  }
  const std::string file = e["file"].value_or(std::string());
  std::vector<Diagnostic> diags;
  const auto defines = resolve_tunables(pz, src, file, diags);
  for (auto& d : diags) FAIL_CHECK(where << ": " << d.str());

  const perf::Machine m = perf::machine_for(*find_profile("h200"));
  // Several entries often quote one prediction (its launches, its medal): make it once.
  static std::map<std::string, perf::Prediction> made;
  std::string key = pz.id + "\n" + src;
  for (auto& [k, v] : pz.perf->sizes) key += fmt::format("\n{}={}", k, v);
  if (!made.count(key)) made[key] = perf::predict(pz, src, file, defines, m);
  const perf::Prediction& p = made[key];
  REQUIRE_MESSAGE(p.ok, where << ": " << p.error);
  double us = p.us;
  const std::vector<perf::Factor>* factors = &p.factors;
  if (auto launch = e["launch"].value<std::string>()) {
    auto l = std::find_if(p.launches.begin(), p.launches.end(),
                          [&](auto& x) { return x.kernel == *launch; });
    REQUIRE_MESSAGE(l != p.launches.end(), where << ": no launch " << *launch);
    us = l->us, factors = &l->factors;
  }
  const PerfReport score = perf::predicted_perf(pz, p, m);
  const std::string limiter = factors->empty() ? "" : factors->front().key;
  MESSAGE(fmt::format("{}: predicted {:.1f} us, {:.0f}%, '{}', limiter {}", where, us,
                      100 * score.speed_of_light, score.medal, limiter));

  const double written = e["us"].value_or(0.0);
  const auto form = shown(text, written);
  CHECK_MESSAGE(form, where << ": the text does not show us = " << written);
  if (form)
    CHECK_MESSAGE(close_to(us, written, form->slack, 0.02),
                  where << ": " << document << " says " << form->form << " (\"" << text
                        << "\"); the model now predicts " << fmt::format("{:.1f} us", us));
  if (auto sol = e["speed_of_light"].value<double>()) {
    CHECK_MESSAGE(text.find(fmt::format("{:g}%", *sol)) != std::string::npos,
                  where << ": the text does not show " << *sol << "%");
    CHECK_MESSAGE(close_to(100 * score.speed_of_light, *sol, 1.0, 0.03),
                  where << ": says " << *sol << "% of speed of light; now "
                        << fmt::format("{:.1f}%", 100 * score.speed_of_light));
  }
  if (auto medal = e["medal"].value<std::string>()) {
    CHECK_MESSAGE(text.find(*medal) != std::string::npos, where << ": text lacks " << *medal);
    CHECK_MESSAGE(score.medal == *medal,
                  where << ": says '" << *medal << "'; now '" << score.medal << "'");
  }
  if (auto lim = e["limiter"].value<std::string>())
    CHECK_MESSAGE(limiter == *lim,
                  where << ": says the model names " << *lim << " first; now " << limiter);
}

void check_measured(const toml::table& e, const std::string& where) {
  only_keys(e, {"file", "gpu", "text", "us"}, where);
  const std::string file = e["file"].value_or(std::string());
  const std::string src = source_of(e, where);
  // `gpu` picks the line of that GPU (CUDA's name for it); without it the file has one line.
  test::MeasuredLine line;
  if (auto gpu = e["gpu"].value<std::string>()) {
    const auto lines = test::measured_lines(src);
    const test::MeasuredLine* on = test::measured_on(lines, *gpu);
    REQUIRE_MESSAGE(on, where << ": " << file << " has no `// measured:` line on " << *gpu);
    line = *on;
  } else {
    const auto lines = test::measured_lines(src);
    REQUIRE_MESSAGE(lines.size() == 1,
                    where << ": " << file << " has " << lines.size()
                          << " `// measured:` lines; name the GPU with gpu = \"...\"");
    line = lines.front();
  }
  const double written = e["us"].value_or(0.0);
  const auto form = shown(e["text"].value_or(std::string()), written);
  CHECK_MESSAGE(form, where << ": the text does not show us = " << written);
  if (form)
    CHECK_MESSAGE(close_to(line.us, written, form->slack, 0.05),
                  where << ": says " << form->form << "; " << file << " measured " << line.us
                        << " us on " << line.device);
}

// ---- hardware figures ----------------------------------------------------------------------
// A figure about a GPU (its bandwidth, L2, SMs, FLOP/s) has one source: roofline.cpp's datasheet
// table, the performance model's machine (perf/machine.cpp: what `warpbook probe` measured on a
// GPU of that kind, which the model uses), or the stored probe of that GPU. A lesson names the
// figure (`h200.model.dram_read_gbps`) and the test compares what the prose shows with it.

struct Source {
  double value = 0; // in the unit its name ends with (_gbps, _gflops, _mib, _count, _mhz)
  double rel = 0;   // how far another run of the same probe may be: 0 for a table's own figure
};

// The stored `warpbook probe` of each GPU the lessons quote.
const std::map<std::string, std::string>& probe_files() {
  static const std::map<std::string, std::string> files = {
      {"h200", "bench/perfmodel/data/h200-capture19/capture19-probe.json"},
      {"h100", "bench/perfmodel/data/h100-vs-torch-curriculum3/probe.json"}};
  return files;
}

std::optional<Source> hardware_source(const std::string& name) {
  const size_t a = name.find('.'), b = name.find('.', a + 1);
  if (a == std::string::npos || b == std::string::npos) return std::nullopt;
  const std::string gpu = name.substr(0, a), kind = name.substr(a + 1, b - a - 1),
                    field = name.substr(b + 1);
  const GpuProfile* p = find_profile(gpu == "h100" ? "h100-sxm" : gpu);
  if (!p) return std::nullopt;
  if (kind == "datasheet") {
    const std::map<std::string, double> table = {
        {"dram_gbps", p->dram_gbps},           {"l2_mib", p->l2_mib},
        {"sm_count", double(p->sm_count)},     {"boost_mhz", p->boost_mhz},
        {"fp64_gflops", p->fp64_gflops},       {"fp32_gflops", p->fp32_gflops},
        {"fp16_tc_gflops", p->fp16_tc_gflops}, {"bf16_tc_gflops", p->bf16_tc_gflops},
        {"tf32_tc_gflops", p->tf32_tc_gflops}, {"fp8_tc_gflops", p->fp8_tc_gflops},
        {"int8_tc_gops", p->int8_tc_gops}};
    if (auto it = table.find(field); it != table.end()) return Source{it->second, 0};
  } else if (kind == "model") {
    const perf::Machine m = perf::machine_for(*p);
    const double clk = m.sm_count * m.clock_ghz; // FLOPs a clock a SM -> GFLOP/s
    const std::map<std::string, double> table = {{"dram_read_gbps", m.dram_read_gbps},
                                                 {"dram_copy_gbps", m.dram_copy_gbps},
                                                 {"dram_write_gbps", m.dram_write_gbps},
                                                 {"dram_triad_gbps", m.dram_triad_gbps},
                                                 {"l2_gbps", m.l2_gbps},
                                                 {"l2_capacity_mib", m.l2_capacity / 1048576},
                                                 {"wgmma_f16_gflops", m.wgmma_flops_clk_sm * clk},
                                                 {"mma_e4m3_gflops", m.fp8_mma_flops_clk_sm * clk}};
    if (auto it = table.find(field); it != table.end()) return Source{it->second, 0};
  } else if (kind == "probe" && probe_files().count(gpu)) {
    const std::string path = (fs::path(WARPBOOK_SOURCE_ROOT) / probe_files().at(gpu)).string();
    static std::map<std::string, nlohmann::json> read;
    if (!read.count(path)) read[path] = nlohmann::json::parse(test::read_file(path));
    const auto& c = read[path]["ceilings"];
    // Probes of one GPU differ run to run by a per cent or two; prose rounds to that.
    if (c.contains(field)) return Source{c[field].get<double>(), 0.02};
  }
  return std::nullopt;
}

// "4.56 TB/s" -> 4560 in the unit `field` ends with; "132 SMs" -> 132.
struct Shown {
  double value = 0, slack = 0;
};
std::optional<Shown> parse_shown(const std::string& shows, const std::string& field) {
  static const std::regex form(R"(^(?:about |≈ ?|~)?([0-9]+(?:\.[0-9]+)?) ?(\S+(?: \S+)?)$)");
  std::smatch m;
  if (!std::regex_match(shows, m, form)) return std::nullopt;
  const std::string num = m[1], unit = m[2];
  const size_t dot = num.find('.');
  const double half =
      dot == std::string::npos ? 0.5 : 0.5 * std::pow(10.0, -double(num.size() - dot - 1));
  auto ends = [&](const char* suffix) {
    const std::string s = suffix;
    return field.size() >= s.size() && field.compare(field.size() - s.size(), s.size(), s) == 0;
  };
  double scale = 0;
  if (ends("_gbps"))
    scale = unit == "TB/s" ? 1000 : unit == "GB/s" ? 1 : 0;
  else if (ends("_gflops") || ends("_gops"))
    scale = unit == "TFLOP/s" || unit == "TOP/s" ? 1000 : unit == "GFLOP/s" ? 1 : 0;
  else if (ends("_mib"))
    scale = unit == "MiB" ? 1 : 0;
  else if (field == "sm_count")
    scale = unit == "SMs" ? 1 : 0;
  else if (ends("_mhz"))
    scale = unit == "MHz" ? 1 : unit == "GHz" ? 1000 : 0;
  if (scale == 0) return std::nullopt;
  return Shown{std::stod(num) * scale, half * scale};
}

void check_hardware(const toml::table& e, const std::string& where) {
  only_keys(e, {"figure", "text", "shows"}, where);
  const std::string name = e["figure"].value_or(std::string());
  const std::string text = e["text"].value_or(std::string());
  const std::string shows = e["shows"].value_or(std::string());
  const auto src = hardware_source(name);
  REQUIRE_MESSAGE(src, where << ": no hardware figure '" << name << "' (docs/lessons.md)");
  CHECK_MESSAGE(text.find(shows) != std::string::npos,
                where << ": the text does not show '" << shows << "'");
  const auto form = parse_shown(shows, name.substr(name.rfind('.') + 1));
  REQUIRE_MESSAGE(form, where << ": '" << shows << "' is not a figure in the unit of " << name);
  CHECK_MESSAGE(close_to(src->value, form->value, form->slack, src->rel),
                where << ": the prose says " << shows << "; " << name << " is "
                      << fmt::format("{:g}", src->value));
}

// What a lesson's prose writes as a hardware figure: a number and a unit of bandwidth, FLOP/s,
// L2 size or SM count.
struct Quoted {
  size_t at;
  std::string shows;
};
std::vector<Quoted> quoted_hardware(const std::string& prose) {
  static const std::regex figure(R"(([0-9]+(?:\.[0-9]+)?) ?(TB/s|GB/s|TFLOP/s|MiB|SMs)\b)");
  std::vector<Quoted> out;
  for (auto it = std::sregex_iterator(prose.begin(), prose.end(), figure);
       it != std::sregex_iterator(); ++it)
    out.push_back({size_t(it->position(0)), it->str(0)});
  return out;
}

// Every figure the tables above know, for telling a hardware figure in prose from another number.
std::vector<std::pair<std::string, double>> known_hardware() {
  std::vector<std::pair<std::string, double>> out;
  for (const char* gpu : {"h200", "h100"})
    for (const char* kind : {"datasheet", "model", "probe"})
      for (const char* field :
           {"dram_gbps",      "l2_mib",          "sm_count",         "fp32_gflops",
            "fp64_gflops",    "bf16_tc_gflops",  "tf32_tc_gflops",   "fp8_tc_gflops",
            "dram_read_gbps", "dram_copy_gbps",  "dram_write_gbps",  "dram_triad_gbps",
            "l2_gbps",        "l2_capacity_mib", "wgmma_f16_gflops", "mma_e4m3_gflops",
            "mma_f16_gflops", "mma_bf16_gflops", "fp16_tc_gflops",   "mma_e4m3_f32acc_gflops"}) {
        const std::string name = fmt::format("{}.{}.{}", gpu, kind, field);
        if (auto src = hardware_source(name)) out.push_back({name, src->value});
      }
  return out;
}

// One document (a lesson or a puzzle's README) and the figures.toml beside it. Every number it
// writes as a bandwidth, FLOP/s, L2 size or SM count that lies within 12% of a figure of the GPUs
// the documents quote must be inside an entry's text: a [[hardware]] entry that names its source,
// or, for a figure that is not the GPU's (a kernel's, a medal's bar), an entry that says what it
// is.
int check_figures(const std::string& id, const fs::path& dir, const fs::path& document) {
  const std::string prose = test::read_file(document);
  const std::string name = document.filename().string();
  const fs::path path = dir / "figures.toml";
  toml::table doc;
  if (fs::exists(path)) {
    try {
      doc = toml::parse_file(path.string());
    } catch (const toml::parse_error& err) {
      FAIL_CHECK(path.string() << ": " << err.description());
      return 0;
    }
  }
  only_keys(doc, {"predicted", "measured", "hardware", "other"}, path.string());
  int entries = 0;
  std::vector<std::pair<size_t, size_t>> covered; // [from, to) of prose inside an entry's text
  for (const char* kind : {"predicted", "measured", "hardware", "other"}) {
    const toml::array* list = doc[kind].as_array();
    if (!list) continue;
    int i = 0;
    for (auto& node : *list) {
      const std::string where = fmt::format("{} [[{}]] #{}", id, kind, ++i);
      const toml::table* e = node.as_table();
      REQUIRE_MESSAGE(e, where << ": not a table");
      const std::string text = (*e)["text"].value_or(std::string());
      CHECK_MESSAGE((!text.empty() && prose.find(text) != std::string::npos),
                    where << ": " << name << " has no \"" << text << "\"");
      for (size_t at = text.empty() ? std::string::npos : prose.find(text); at != std::string::npos;
           at = prose.find(text, at + 1))
        covered.push_back({at, at + text.size()});
      ++entries;
      const std::string k = kind;
      if (k == "predicted")
        check_predicted(*e, id + "/" + name, where);
      else if (k == "measured")
        check_measured(*e, where);
      else if (k == "hardware")
        check_hardware(*e, where);
      else {
        only_keys(*e, {"text", "what"}, where);
        CHECK_MESSAGE(!(*e)["what"].value_or(std::string()).empty(),
                      where << ": say what the figure is (what = \"...\")");
      }
    }
  }
  static const auto known = known_hardware();
  for (const Quoted& q : quoted_hardware(prose)) {
    const bool inside = std::any_of(covered.begin(), covered.end(), [&](auto& c) {
      return c.first <= q.at && q.at + q.shows.size() <= c.second;
    });
    if (inside) continue;
    for (auto& [figure, value] : known) {
      const auto form = parse_shown(q.shows, figure.substr(figure.rfind('.') + 1));
      if (form && std::abs(form->value - value) <= 0.12 * value) {
        const size_t line = std::count(prose.begin(), prose.begin() + q.at, '\n') + 1;
        FAIL_CHECK(fmt::format("{}/{}:{}: '{}' is near {} ({:g}) but no figures.toml entry holds "
                               "it: list it as [[hardware]], or as [[other]] saying what it is",
                               id, name, line, q.shows, figure, value));
        break;
      }
    }
  }
  return entries;
}

} // namespace

TEST_CASE("quoted figures: every predicted, measured or hardware figure a lesson or README "
          "quotes is today's and its source's") {
  int entries = 0;
  for (const Lesson& l : test::builtin_catalog().lessons)
    entries += check_figures(l.id, l.dir, l.file);
  for (const Puzzle& p : test::builtin_catalog().puzzles)
    entries += check_figures(p.id, p.dir, p.readme);
  // The lessons and READMEs that quote figures list them; an empty sweep would prove nothing.
  CHECK(entries >= 30);
}
