// Every figure a lesson or a puzzle's README quotes about a kernel in this repository is what that
// kernel gives today: a *predicted* time is what `warpbook predict` says now (the model changes;
// the text must follow), a *measured* one agrees with its solution's `// measured:` line within 5%
// (run to run on the H200; the gpu tests hold the line itself to the GPU). The figures are listed
// in a figures.toml beside lesson.md or README.md (docs/lessons.md says how).
#include "common/puzzle_suite.hpp"
#include "core/perf/predict.hpp"
#include "core/store.hpp"
#include "core/tune.hpp"

#include <cmath>
#include <map>
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
  only_keys(e, {"file", "text", "us", "gpu"}, where);
  const std::string file = e["file"].value_or(std::string());
  // The line of the GPU named (`gpu`, the device's name), or the file's first line.
  const auto lines = test::measured_lines(source_of(e, where));
  REQUIRE_MESSAGE(!lines.empty(), where << ": " << file << " has no // measured: line");
  const auto gpu = e["gpu"].value<std::string>();
  const test::MeasuredLine* found = gpu ? test::measured_on(lines, *gpu) : &lines.front();
  REQUIRE_MESSAGE(found, where << ": " << file << " has no // measured: line for " << *gpu);
  const test::MeasuredLine& line = *found;
  const double written = e["us"].value_or(0.0);
  const auto form = shown(e["text"].value_or(std::string()), written);
  CHECK_MESSAGE(form, where << ": the text does not show us = " << written);
  if (form)
    CHECK_MESSAGE(close_to(line.us, written, form->slack, 0.05),
                  where << ": says " << form->form << "; " << file << " measured " << line.us
                        << " us");
}

// One document and the figures.toml beside it.
int check_figures(const std::string& id, const fs::path& dir, const fs::path& document) {
  const fs::path path = dir / "figures.toml";
  if (!fs::exists(path)) return 0;
  toml::table doc;
  try {
    doc = toml::parse_file(path.string());
  } catch (const toml::parse_error& err) {
    FAIL_CHECK(path.string() << ": " << err.description());
    return 0;
  }
  const std::string prose = test::read_file(document);
  const std::string name = document.filename().string();
  only_keys(doc, {"predicted", "measured"}, path.string());
  int entries = 0;
  for (const char* kind : {"predicted", "measured"}) {
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
      ++entries;
      if (std::string(kind) == "predicted")
        check_predicted(*e, id + "/" + name, where);
      else
        check_measured(*e, where);
    }
  }
  return entries;
}

} // namespace

TEST_CASE(
    "quoted figures: every predicted or measured figure a lesson or README quotes is today's") {
  int entries = 0;
  for (const Lesson& l : test::builtin_catalog().lessons)
    entries += check_figures(l.id, l.dir, l.file);
  for (const Puzzle& p : test::builtin_catalog().puzzles)
    entries += check_figures(p.id, p.dir, p.readme);
  // The lessons and READMEs that quote figures list them; an empty sweep would prove nothing.
  CHECK(entries >= 30);
}
