// The learner-kernel fault suite: tests/faults/NN-name.cu, each a whole learner file that goes
// wrong in its own way, opening with a comment block that says what it must get:
//
//   // fault: one line saying what is wrong
//   // puzzle: 01-vector-add
//   // sim: VERDICT[,VERDICT...] | words | more words      (every word group must appear)
//   // gpu: VERDICT[,VERDICT...] | words                   ("same": as on the simulator)
//   // gpu-sticky: yes | no | maybe                        (the fault poisons the CUDA context)
//   // gpu-explained: words | more words                   (the simulator's explanation of the
//                                                          GPU's first failing case holds them)
//   // perf: yes                                           (check the perf size too)
//   // note: where a backend cannot see the fault, and why
//
// Several verdicts mean the backend cannot decide it reliably (a GPU reading what lies past a
// shared array); the note says why, and the simulator's expectation stays exact. `@HERE` in the
// words is the number of the line marked `/*HERE*/`.
//
// The simulator runs them in this process (check_puzzle); the GPU runs each in its own
// `warpbook check --json` process, because a sticky CUDA fault poisons the whole process.
#pragma once
#include "common/puzzle_suite.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <regex>
#include <sys/wait.h>
#include <thread>

namespace wb::test {

struct FaultExpect {
  std::vector<Verdict> verdicts;  // any of them
  std::vector<std::string> words; // all of them
};

struct FaultCase {
  std::string name; // "15-write-just-past-end"
  std::string what; // the `fault:` line
  std::string puzzle = "01-vector-add";
  std::string source;
  FaultExpect sim, gpu;
  std::vector<std::string> explained; // words the GPU verdict's simulator explanation must hold
  std::string sticky = "no";          // on the GPU: yes, no, maybe
  bool perf = false;
  std::string note;
  bool gpu_same = false; // `gpu: same`: the GPU must give the simulator's verdict and words
};

inline std::string trim_ws(std::string s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

inline std::optional<Verdict> verdict_from_name(const std::string& s) {
  for (Verdict v : {Verdict::passed, Verdict::wrong_answer, Verdict::compile_error,
                    Verdict::runtime_fault, Verdict::usage_error})
    if (verdict_name(v) == s) return v;
  return std::nullopt;
}

inline FaultExpect parse_expect(const std::string& text, const std::string& where) {
  FaultExpect e;
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == '|')
      parts.push_back(trim_ws(text.substr(start, i - start))), start = i + 1;
  std::string vs = parts.empty() ? "" : parts[0];
  start = 0;
  for (size_t i = 0; i <= vs.size(); ++i)
    if (i == vs.size() || vs[i] == ',') {
      std::string name = trim_ws(vs.substr(start, i - start));
      start = i + 1;
      auto v = verdict_from_name(name);
      REQUIRE_MESSAGE(v, where << ": unknown verdict '" << name << "'");
      e.verdicts.push_back(*v);
    }
  for (size_t i = 1; i < parts.size(); ++i)
    if (!parts[i].empty()) e.words.push_back(parts[i]);
  return e;
}

inline fs::path fault_dir() {
  return fs::path(WARPBOOK_SOURCE_ROOT) / "tests" / "faults";
}

inline FaultCase load_fault_case(const fs::path& file) {
  FaultCase fc;
  fc.name = file.stem().string();
  fc.source = read_file(file);
  std::istringstream in(fc.source);
  std::string line, sim, gpu, explained;
  int here = 0;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!here && line.find("/*HERE*/") != std::string::npos) here = n;
    if (line.rfind("// ", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(3, colon - 3), value = trim_ws(line.substr(colon + 1));
    if (key == "fault")
      fc.what = value;
    else if (key == "puzzle")
      fc.puzzle = value;
    else if (key == "sim")
      sim = value;
    else if (key == "gpu")
      gpu = value;
    else if (key == "gpu-sticky")
      fc.sticky = value;
    else if (key == "gpu-explained")
      explained = value;
    else if (key == "perf")
      fc.perf = value == "yes";
    else if (key == "note")
      fc.note = value;
  }
  std::string where = file.filename().string();
  REQUIRE_MESSAGE(!fc.what.empty(), where << ": no '// fault:' line");
  REQUIRE_MESSAGE(!sim.empty(), where << ": no '// sim:' line");
  REQUIRE_MESSAGE(!gpu.empty(), where << ": no '// gpu:' line");
  REQUIRE_MESSAGE((fc.sticky == "yes" || fc.sticky == "no" || fc.sticky == "maybe"), where);
  auto subst = [&](FaultExpect& e) {
    for (auto& w : e.words)
      for (size_t p; (p = w.find("@HERE")) != std::string::npos;) {
        REQUIRE_MESSAGE(here > 0, where << ": @HERE without a /*HERE*/ line");
        w.replace(p, 5, std::to_string(here));
      }
  };
  fc.sim = parse_expect(sim, where);
  fc.gpu_same = gpu == "same";
  fc.gpu = fc.gpu_same ? fc.sim : parse_expect(gpu, where);
  subst(fc.sim);
  subst(fc.gpu);
  if (!explained.empty()) {
    FaultExpect e = parse_expect("wrong_answer | " + explained, where);
    subst(e);
    fc.explained = e.words;
  }
  return fc;
}

// The unusual-kernel corpus: kernels a learner, a fuzzer or an attacker might write, in the same
// format, each with one verdict that both backends must give (`gpu: same`).
inline fs::path unusual_dir() {
  return fs::path(WARPBOOK_SOURCE_ROOT) / "tests" / "unusual";
}

inline std::vector<FaultCase> load_fault_cases(const fs::path& dir) {
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".cu") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<FaultCase> out;
  for (auto& f : files) out.push_back(load_fault_case(f));
  return out;
}

inline const std::vector<FaultCase>& fault_cases() {
  static const std::vector<FaultCase> k = load_fault_cases(fault_dir());
  return k;
}

// What one `warpbook check --json` process left: its exit status and the report it printed.
struct ProcessCheck {
  int exit_status = -1;
  std::string json;
};

// Checks `source` with the `warpbook` executable, as a separate process: a sticky GPU fault
// poisons CUDA for the whole process (as in the runner), so each GPU case gets its own. Asserts
// nothing, so that several can run at once on other threads (doctest's macros are not
// thread-safe).
inline ProcessCheck run_check_process(const std::string& exe, const std::string& puzzle,
                                      const std::string& source, const std::string& backend) {
  ProcessCheck out;
  char dir[] = "/tmp/warpbook-fault-XXXXXX";
  if (!mkdtemp(dir)) return out;
  std::string file = std::string(dir) + "/learner.cu", json = std::string(dir) + "/report.json";
  std::ofstream(file) << source;
  std::string cmd =
      fmt::format("'{}' --data-dir '{}/data' check {} '{}' --backend {} --json --no-time > '{}'",
                  exe, dir, puzzle, file, backend, json);
  int status = std::system(cmd.c_str());
  out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  out.json = read_file(json);
  fs::remove_all(dir);
  return out;
}

inline const char* warpbook_exe() {
  const char* exe = std::getenv("WARPBOOK_EXE");
  REQUIRE_MESSAGE(exe, "WARPBOOK_EXE is not set (ctest sets it)");
  return exe;
}

inline CheckReport report_of(const ProcessCheck& pc) {
  REQUIRE_MESSAGE(!pc.json.empty(), "warpbook printed no report (exit " << pc.exit_status << ")");
  return report_from_json(pc.json);
}

// Runs `run(i)` for i in [0, n) on `jobs` threads; returns the results in order.
template <class T, class F> std::vector<T> run_concurrently(size_t n, int jobs, F run) {
  std::vector<T> out(n);
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int j = 0; j < std::max(1, jobs); ++j)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < n;) out[i] = run(i);
    });
  for (auto& t : pool) t.join();
  return out;
}

// Everything a learner is shown, as one text the expected words are looked for in.
inline std::string shown_text(const CheckReport& r) {
  std::string all = r.summary;
  for (auto& d : r.diagnostics) all += "\n" + d.str();
  for (auto& c : r.cases) {
    all += "\ncase " + c.label;
    for (auto& pr : c.problems) all += "\n" + pr;
  }
  return all;
}

// A figure of a failure's text that does not read as figures read (format_figure.hpp): one in
// e-notation, or an error or tolerance given with more than three significant digits ("max abs
// error 3.273438"). Got and expected may carry more: as many as tell them apart. Empty if none.
inline std::string unreadable_figure(const std::string& text) {
  static const std::regex e_notation(R"(\b\d+(\.\d+)?[eE][+-]\d+)");
  // The error figures, each in a group (the tolerance's two).
  static const std::regex error_figure(
      R"((?:max abs error|max rel error|error is|\(relative|error at most|is within) )"
      R"((-?[0-9][0-9.]*)|tolerance allows (-?[0-9][0-9.]*) \+ (-?[0-9][0-9.]*))");
  std::smatch m;
  if (std::regex_search(text, m, e_notation)) return m.str();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), error_figure);
       it != std::sregex_iterator(); ++it)
    for (size_t g = 1; g < it->size(); ++g) {
      const std::string fig = (*it)[g].str();
      std::string digits;
      for (char c : fig)
        if (c != '.' && c != '-') digits += c;
      digits.erase(0, digits.find_first_not_of('0'));
      if (fig.find('.') == std::string::npos)
        digits.erase(digits.find_last_not_of('0') + 1); // 2050: three digits and a place
      if (digits.size() > 3) return it->str();
    }
  return {};
}

// Runs every case, each on a fresh backend from `make` (on the GPU, in a child process).
// `only`, when not empty, keeps the cases whose name holds it (WARPBOOK_FAULTS=NN-name).
template <class Make>
void check_fault_cases(Make make, bool gpu, const std::vector<FaultCase>& cases = fault_cases(),
                       size_t at_least = 40) {
  const Catalog& cat = builtin_catalog();
  CheckOptions opt;
  opt.time = false;
  opt.case_timeout_s = 5;
  opt.stop_at_first_failure = true;
  opt.seed = 12345;
  const char* only = std::getenv("WARPBOOK_FAULTS");
  REQUIRE(cases.size() >= at_least);
  std::vector<const FaultCase*> chosen;
  for (const FaultCase& fc : cases)
    if (!only || !*only || fc.name.find(only) != std::string::npos) chosen.push_back(&fc);
  // On the GPU each case is its own process, and most of their time is process start-up, NVRTC
  // and the CUDA context, not the GPU: several at once (WARPBOOK_FAULT_JOBS, default 6) bring
  // the suite on the H200 from over 270 s to 135. Each process has its own context, so a sticky
  // fault in one cannot touch another; a hung kernel is time-sliced with the others' and still hits
  // its own timeout.
  std::vector<ProcessCheck> ran;
  if (gpu) {
    const char* j = std::getenv("WARPBOOK_FAULT_JOBS");
    std::string exe = warpbook_exe();
    ran = run_concurrently<ProcessCheck>(chosen.size(), j && *j ? std::atoi(j) : 6, [&](size_t i) {
      return run_check_process(exe, chosen[i]->puzzle, chosen[i]->source, "cuda");
    });
  }
  std::string table;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const FaultCase& fc = *chosen[i];
    CAPTURE(fc.name);
    const Puzzle* p = cat.find_puzzle(fc.puzzle);
    REQUIRE_MESSAGE(p, fc.name << ": no puzzle " << fc.puzzle);
    CheckReport r;
    bool sticky = false;
    if (gpu) {
      r = report_of(ran[i]);
      CHECK(ran[i].exit_status == exit_code(r.verdict));
      for (auto& c : r.cases) sticky = sticky || c.fault.sticky;
    } else {
      auto backend = make();
      REQUIRE(backend);
      opt.perf_case = fc.perf;
      r = check_puzzle(*p, fc.source, "learner.cu", *backend, opt);
    }
    const FaultExpect& want = gpu ? fc.gpu : fc.sim;
    std::string all = shown_text(r);
    std::string first = r.summary.substr(0, 150);
    table += fmt::format("| {} | {} | {} |\n", fc.name, verdict_name(r.verdict), first);
    CHECK_MESSAGE(std::find(want.verdicts.begin(), want.verdicts.end(), r.verdict) !=
                      want.verdicts.end(),
                  fc.name << ": got " << verdict_name(r.verdict) << ": " << describe(r));
    for (auto& w : want.words)
      CHECK_MESSAGE(all.find(w) != std::string::npos,
                    fc.name << ": expected the words '" << w << "' in: " << all);
    // The check's own sentences (a case's name is the puzzle author's, "s = 1e-10 / 448").
    for (auto& c : r.cases)
      for (auto& pr : c.problems)
        CHECK_MESSAGE(unreadable_figure(pr).empty(),
                      fc.name << ": '" << unreadable_figure(pr) << "' in: " << pr);
    if (gpu && fc.sticky != "maybe") CHECK_MESSAGE(sticky == (fc.sticky == "yes"), fc.name);
    if (gpu && !fc.explained.empty()) {
      std::string why;
      for (auto& c : r.cases) why += c.sim_explanation;
      for (auto& w : fc.explained)
        CHECK_MESSAGE(why.find(w) != std::string::npos,
                      fc.name << ": expected the simulator's explanation to hold '" << w
                              << "', got: " << why);
    }
  }
  MESSAGE("fault suite on " << (gpu ? "the GPU" : "the simulator") << ":\n" << table);
  if (const char* out = std::getenv("WARPBOOK_FAULT_TABLE"); out && *out)
    std::ofstream(out) << table;
}

} // namespace wb::test
