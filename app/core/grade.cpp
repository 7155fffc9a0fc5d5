#include "grade.hpp"

#include "format_figure.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "workspace.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <unistd.h>

namespace wb::grade {

using nlohmann::json;

namespace {

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Cuts `s` to at most `max` bytes without splitting a UTF-8 sequence.
std::string clip(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max;
  while (cut > 0 && (uint8_t(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

// Diagnostics quote the learner's source, and a hostile one can hold terminal escapes or line
// breaks: one line, no control characters, bounded.
std::string one_line(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    uint8_t u = uint8_t(c);
    if (c == '\n' || c == '\r' || c == '\t')
      out += ' ';
    else if (u < 0x20 || u == 0x7f)
      out += '?';
    else
      out += c;
  }
  size_t b = out.find_first_not_of(' '), e = out.find_last_not_of(' ');
  return clip(b == std::string::npos ? "" : out.substr(b, e - b + 1), 400);
}

std::string size_text(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.1f} MiB", bytes / 1048576.0);
}

// ---- reading a submission ----------------------------------------------------------------------

struct FileRead {
  std::string text;
  uint64_t bytes = 0;  // the size on disk
  std::string problem; // why it could not be read
};

// Reads at most `max_bytes`. A symbolic link is refused: an unpacked archive can hold a link to any
// file the instructor can read, and its text would reach the runner and the diagnostics. Opened
// non-blocking, so that a FIFO named like a submission cannot hang the grade.
FileRead read_submission(const fs::path& path, size_t max_bytes) {
  FileRead r;
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    r.problem = errno == ELOOP ? "a symbolic link, not a file: grade reads only regular files "
                                 "(a link may point outside the class folder)"
                               : fmt::format("cannot be opened: {}", strerror(errno));
    return r;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    r.problem = "not a regular file";
    ::close(fd);
    return r;
  }
  r.bytes = uint64_t(st.st_size);
  if (r.bytes > max_bytes) {
    ::close(fd);
    return r;
  }
  r.text.resize(r.bytes);
  size_t got = 0;
  while (got < r.text.size()) {
    ssize_t n = ::read(fd, r.text.data() + got, r.text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  r.text.resize(got); // it may have shrunk meanwhile; what was read is what is judged
  ::close(fd);
  return r;
}

// ---- rows from a runner's answer ---------------------------------------------------------------

// The sizes a check judges: the [[case]] list and the backend's performance size ([perf] on a
// GPU, where it is checked too; [sim_perf] on the simulator).
int cases_total(const Puzzle& p, const std::string& device_backend) {
  bool perf = device_backend == "cuda"  ? p.perf.has_value()
              : device_backend == "sim" ? p.sim_perf.has_value()
                                        : p.perf.has_value() || p.sim_perf.has_value();
  return int(p.cases.size()) + (perf ? 1 : 0);
}

Row row_from_report(const Submission& s, const CheckReport& rep) {
  Row r;
  r.student = s.student;
  r.puzzle = s.puzzle->id;
  r.file = s.file;
  r.verdict = std::string(verdict_name(rep.verdict));
  r.seed = rep.seed;
  r.cases_total = cases_total(*s.puzzle, rep.device.backend);
  for (auto& c : rep.cases) r.cases_passed += c.verdict == Verdict::passed;
  if (rep.sim_perf && rep.sim_perf->verdict == Verdict::passed) ++r.cases_passed;
  if (rep.verdict == Verdict::passed && rep.perf && rep.perf->timing.ok) {
    r.time_us = rep.perf->timing.median_us;
    r.predicted = rep.perf->predicted;
    r.speed_of_light = rep.perf->speed_of_light;
    r.medal = rep.perf->medal;
  }
  // A failure's summary is its first compile error or first case problem; a pass may still have
  // something to say (a warning).
  if (rep.verdict != Verdict::passed && !rep.summary.empty())
    r.diagnostic = one_line(rep.summary);
  else if (!rep.diagnostics.empty())
    r.diagnostic = one_line(rep.diagnostics.front().str());
  return r;
}

Row row_for(const Submission& s, std::string_view verdict, std::string diagnostic) {
  Row r;
  r.student = s.student;
  r.puzzle = s.puzzle ? s.puzzle->id : s.key;
  r.file = s.file;
  r.verdict = std::string(verdict);
  r.diagnostic = one_line(diagnostic);
  return r;
}

// Checks one submission in a fresh runner, watching its time and resident memory.
Row check_in_runner(runner::Client& client, const Submission& s, const std::string& source,
                    const Options& opt) {
  runner::Request rq;
  rq.op = runner::Op::check;
  rq.puzzle = s.puzzle->id;
  rq.file = s.file;
  rq.source = source;
  rq.backend = opt.backend;
  rq.time = true;
  const double start = now_s();
  // The client's own deadline is only a backstop: the grade kills at opt.timeout_s itself, so that
  // it knows the row is a timeout and not a crash.
  const uint64_t id = client.send(rq, opt.timeout_s + 30);
  const int64_t limit_kib = int64_t(opt.memory_mib * 1024);
  double next_scan = 0;
  Row row;
  for (;;) {
    std::optional<runner::Event> e = client.wait(0.1);
    if (e && e->kind == runner::EventKind::result && e->id == id) {
      if (e->ok && e->report) {
        row = row_from_report(s, *e->report);
      } else if (e->runner_died) {
        std::string why = e->text;
        const std::string tail = "; the next request starts a fresh one";
        if (ends_with(why, tail)) why.resize(why.size() - tail.size());
        row = row_for(s, kRunnerCrashed, why.empty() ? "the runner ended without answering" : why);
      } else {
        // The runner answered but could not check: its catalog lacks the puzzle, or the backend
        // cannot run on its machine.
        row = row_for(s, verdict_name(Verdict::usage_error),
                      e->text.empty() ? "the runner answered with no report" : e->text);
      }
      break;
    }
    const double elapsed = now_s() - start;
    if (elapsed > opt.timeout_s) {
      client.kill("the grade's time limit");
      row = row_for(s, kTimeout,
                    fmt::format("still running after {} s (the --timeout), so its runner was "
                                "killed: an endless loop?",
                                sig3(opt.timeout_s)));
      break;
    }
    // Every 0.1 s, however many log lines the runner writes meanwhile.
    if (limit_kib > 0 && now_s() >= next_scan) {
      next_scan = now_s() + 0.1;
      if (pid_t pid = client.pid(); pid > 0) {
        int64_t kib = group_rss_kib(pid);
        if (kib > limit_kib) {
          client.kill("the grade's memory limit");
          row = row_for(s, kOutOfMemory,
                        fmt::format("its runner's resident memory reached {:.0f} MiB, over the "
                                    "--memory limit of {} MiB, so it was killed",
                                    kib / 1024.0, sig3(opt.memory_mib)));
          break;
        }
      }
    }
  }
  // A fresh runner for every submission: nothing one leaves behind reaches the next.
  client.kill("graded");
  while (client.wait(0)) {
  }
  row.seconds = now_s() - start;
  return row;
}

// ---- the cache ---------------------------------------------------------------------------------

struct Hasher {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  Hasher& add(std::string_view s) {
    // Each part's length first, so that ("ab", "c") and ("a", "bc") differ.
    std::string len = std::to_string(s.size()) + ':';
    for (char c : len) h = (h ^ uint8_t(c)) * 1099511628211ull;
    for (char c : s) h = (h ^ uint8_t(c)) * 1099511628211ull;
    return *this;
  }
  std::string hex() const { return fmt::format("{:016x}", h); }
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Everything a row depends on: the file, the puzzle as the catalog defines it (its statement and
// reference), the backend, the limits and this Warpbook.
std::string cache_key(const Submission& s, const std::string& source, const Options& opt,
                      std::map<std::string, std::string>& puzzle_texts) {
  auto [it, fresh] = puzzle_texts.try_emplace(s.puzzle->id);
  if (fresh)
    it->second = read_all(s.puzzle->dir / "puzzle.toml") + '\0' + read_all(s.puzzle->reference);
  return Hasher{}
      .add(WARPBOOK_VERSION)
      .add(s.puzzle->id)
      .add(it->second)
      .add(opt.backend)
      .add(fmt::format("{:g} {:g}", opt.timeout_s, opt.memory_mib))
      .add(source)
      .hex();
}

json row_json(const Row& r) {
  return {{"student", r.student},
          {"puzzle", r.puzzle},
          {"file", r.file},
          {"verdict", r.verdict},
          {"cases_passed", r.cases_passed},
          {"cases_total", r.cases_total},
          {"time_us", r.time_us > 0 ? json(r.time_us) : json(nullptr)},
          {"predicted", r.predicted},
          {"speed_of_light", r.time_us > 0 ? json(r.speed_of_light) : json(nullptr)},
          {"medal", r.medal},
          {"diagnostic", r.diagnostic},
          {"seed", r.seed},
          {"seconds", r.seconds},
          {"unchanged", r.unchanged}};
}

Row row_from_json(const json& j) {
  Row r;
  r.student = j.value("student", "");
  r.puzzle = j.value("puzzle", "");
  r.file = j.value("file", "");
  r.verdict = j.value("verdict", "");
  r.cases_passed = j.value("cases_passed", 0);
  r.cases_total = j.value("cases_total", 0);
  if (j.contains("time_us") && j["time_us"].is_number()) r.time_us = j["time_us"].get<double>();
  r.predicted = j.value("predicted", false);
  if (j.contains("speed_of_light") && j["speed_of_light"].is_number())
    r.speed_of_light = j["speed_of_light"].get<double>();
  r.medal = j.value("medal", "");
  r.diagnostic = j.value("diagnostic", "");
  r.seed = j.value("seed", uint64_t(0));
  r.seconds = j.value("seconds", 0.0);
  return r;
}

std::string dump(const json& j) {
  // File and folder names need not be UTF-8; they must not make the output fail.
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

struct CacheEntry {
  std::string key;
  Row row;
};

std::map<std::string, CacheEntry> load_cache(const fs::path& path,
                                             std::vector<std::string>& warnings) {
  std::map<std::string, CacheEntry> out;
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  try {
    json j = json::parse(read_all(path));
    for (auto& [file, e] : j.at("entries").items())
      out[file] = {e.at("key").get<std::string>(), row_from_json(e.at("row"))};
  } catch (const std::exception& e) {
    warnings.push_back(fmt::format("{} could not be read ({}), so everything is checked again",
                                   path.string(), e.what()));
    out.clear();
  }
  return out;
}

// Keeps the cache on disk current after every row, so that an interrupted grade loses nothing it
// finished.
class CacheWriter {
public:
  CacheWriter(fs::path path, std::vector<std::string>& warnings)
      : path_(std::move(path)), warnings_(warnings) {}

  void keep(const std::string& file, const CacheEntry& e) {
    std::lock_guard lk(mu_);
    entries_[file] = e;
  }
  void put(const std::string& file, const CacheEntry& e) {
    std::lock_guard lk(mu_);
    entries_[file] = e;
    write_locked();
  }
  void flush() {
    std::lock_guard lk(mu_);
    write_locked();
  }

private:
  void write_locked() {
    json entries = json::object();
    for (auto& [file, e] : entries_) {
      Row r = e.row;
      r.unchanged = false;
      entries[file] = {{"key", e.key}, {"row", row_json(r)}};
    }
    json j = {{"warpbook", WARPBOOK_VERSION}, {"entries", entries}};
    std::string why = write_file_atomic(path_, dump(j));
    if (!why.empty() && !warned_) {
      warned_ = true;
      warnings_.push_back(fmt::format("the grade cache was not saved: {}", why));
    }
  }

  fs::path path_;
  std::vector<std::string>& warnings_;
  std::mutex mu_;
  std::map<std::string, CacheEntry> entries_;
  bool warned_ = false;
};

// ---- scanning sources --------------------------------------------------------------------------

// `source` with comments, string and character literals blanked, so that a commented-out kernel
// does not count.
std::string code_only(std::string_view s) {
  std::string out(s.size(), ' ');
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
    } else if (s[i] == '"' || s[i] == '\'') {
      char q = s[i++];
      while (i < s.size() && s[i] != q && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
      ++i;
    } else {
      out[i] = s[i];
      ++i;
    }
  }
  return out;
}

bool ident_char(char c) {
  return std::isalnum(uint8_t(c)) || c == '_';
}

std::vector<std::string_view> identifiers_and_parens(std::string_view code) {
  std::vector<std::string_view> toks;
  for (size_t i = 0; i < code.size();) {
    if (ident_char(code[i])) {
      size_t b = i;
      while (i < code.size() && ident_char(code[i])) ++i;
      if (!std::isdigit(uint8_t(code[b]))) toks.push_back(code.substr(b, i - b));
    } else {
      if (code[i] == '(' || code[i] == ';' || code[i] == '{') toks.push_back(code.substr(i, 1));
      ++i;
    }
  }
  return toks;
}

} // namespace

// ---- the pieces --------------------------------------------------------------------------------

std::optional<size_t> first_invalid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const uint8_t c = uint8_t(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF)
      len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
      len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
      len = 4, cp = c & 0x07;
    else
      return i; // a continuation byte with no lead, 0xC0/0xC1 (overlong) or 0xF5..0xFF
    if (i + size_t(len) > s.size()) return i;
    for (int k = 1; k < len; ++k) {
      const uint8_t b = uint8_t(s[i + size_t(k)]);
      if ((b & 0xC0) != 0x80) return i;
      cp = cp << 6 | (b & 0x3F);
    }
    if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return i;
    if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return i;
    i += size_t(len);
  }
  return std::nullopt;
}

std::string kernel_problem(const std::string& source, const Puzzle& p) {
  const std::string code = code_only(source);
  const auto toks = identifiers_and_parens(code);
  std::set<std::string_view> idents(toks.begin(), toks.end());
  // The name a __global__ declaration gives: the last identifier before its '('.
  std::vector<std::string> globals;
  for (size_t i = 0; i < toks.size(); ++i) {
    if (toks[i] != "__global__") continue;
    std::string_view name;
    for (size_t k = i + 1; k < toks.size() && toks[k] != "(" && toks[k] != ";" && toks[k] != "{";
         ++k)
      name = toks[k];
    if (!name.empty()) globals.emplace_back(name);
  }
  std::string wanted;
  for (auto& k : p.kernel_names()) wanted += fmt::format("{}{}", wanted.empty() ? "" : ", ", k);
  if (globals.empty())
    return fmt::format("no __global__ function in the file (the puzzle's kernel: extern \"C\" "
                       "__global__ void {}(...))",
                       wanted);
  std::vector<std::string> missing;
  for (auto& k : p.kernel_names())
    if (!idents.count(k)) missing.push_back(k);
  if (missing.empty()) return {};
  std::string found;
  for (auto& g : globals) found += fmt::format("{}{}", found.empty() ? "" : ", ", g);
  return fmt::format("no kernel named {} (the puzzle's); the file's __global__ functions: {}",
                     missing.front(), found);
}

std::optional<Row> precheck(const Submission& s, const std::string& source, size_t file_bytes,
                            size_t max_bytes) {
  if (file_bytes > max_bytes)
    return row_for(s, kTooLarge,
                   fmt::format("the file is {}, over the {} limit for a submission",
                               size_text(file_bytes), size_text(max_bytes)));
  if (auto bad = first_invalid_utf8(source)) {
    const size_t at = *bad;
    const auto line = 1 + std::count(source.begin(), source.begin() + long(at), '\n');
    const size_t line_start = source.rfind('\n', at == 0 ? 0 : at - 1);
    const size_t column =
        at - (line_start == std::string::npos || at == 0 ? 0 : line_start + 1) + 1;
    return row_for(s, kInvalidUtf8,
                   fmt::format("not valid UTF-8: byte 0x{:02X} at offset {} (line {}, column "
                               "{}); save the file as UTF-8",
                               uint8_t(source[at]), at, line, column));
  }
  if (std::string why = kernel_problem(source, *s.puzzle); !why.empty())
    return row_for(s, kNoKernel, why);
  return std::nullopt;
}

std::vector<Submission> find_submissions(const fs::path& dir, const Catalog& catalog) {
  std::vector<Submission> out;
  auto add = [&](std::string student, const fs::path& path, std::string key) {
    Submission s;
    s.student = std::move(student);
    s.path = path;
    s.file = path.lexically_relative(dir).generic_string();
    s.key = std::move(key);
    if (!s.key.empty()) s.puzzle = catalog.find_puzzle(s.key);
    out.push_back(std::move(s));
  };
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (e.is_directory(ec)) {
      // One folder per student, searched all the way down (archives unpack into subfolders).
      fs::recursive_directory_iterator it(e.path(), fs::directory_options::skip_permission_denied,
                                          ec);
      for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string fname = it->path().filename().string();
        if (fname[0] == '.') {
          if (it->is_directory(ec)) it.disable_recursion_pending();
          continue;
        }
        if (!ends_with(fname, ".cu") || it->is_directory(ec)) continue;
        add(name, it->path(), fname.substr(0, fname.size() - 3));
      }
      ec.clear();
    } else if (ends_with(name, ".cu")) {
      // STUDENT.PUZZLE.cu: the puzzle after the last dot, so that a student may be "j.smith".
      const std::string stem = name.substr(0, name.size() - 3);
      const size_t dot = stem.rfind('.');
      if (dot == std::string::npos)
        add(stem, e.path(), "");
      else
        add(stem.substr(0, dot), e.path(), stem.substr(dot + 1));
    }
  }
  std::sort(out.begin(), out.end(), [](const Submission& a, const Submission& b) {
    return std::tie(a.student, a.file) < std::tie(b.student, b.file);
  });
  return out;
}

int64_t group_rss_kib(pid_t pgid) {
  int64_t total = 0;
  DIR* proc = ::opendir("/proc");
  if (!proc) return 0;
  while (dirent* d = ::readdir(proc)) {
    if (!std::isdigit(uint8_t(d->d_name[0]))) continue;
    const std::string dir = std::string("/proc/") + d->d_name;
    std::ifstream stat(dir + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state;
    long ppid, pgrp;
    if (std::sscanf(line.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3 ||
        pgrp != pgid)
      continue;
    std::ifstream status(dir + "/status");
    while (std::getline(status, line))
      if (line.rfind("VmRSS:", 0) == 0) {
        total += std::atoll(line.c_str() + 6);
        break;
      }
  }
  ::closedir(proc);
  return total;
}

std::vector<PuzzleSummary> summarize(const std::vector<Row>& rows) {
  std::map<std::string, PuzzleSummary> by;
  std::map<std::string, std::map<std::string, int>> failures;
  for (auto& r : rows) {
    if (r.verdict == kUnknownPuzzle) continue;
    PuzzleSummary& s = by[r.puzzle];
    s.puzzle = r.puzzle;
    ++s.total;
    if (r.verdict == verdict_name(Verdict::passed)) {
      ++s.passed;
      if (r.time_us > 0 && (s.fastest_student.empty() || r.time_us < s.fastest_us)) {
        s.fastest_student = r.student;
        s.fastest_us = r.time_us;
        s.fastest_predicted = r.predicted;
      }
    } else {
      ++failures[r.puzzle][r.verdict];
    }
  }
  std::vector<PuzzleSummary> out;
  for (auto& [id, s] : by) {
    for (auto& [verdict, n] : failures[id])
      if (n > s.usual_failure_count) s.usual_failure = verdict, s.usual_failure_count = n;
    out.push_back(s);
  }
  return out;
}

// ---- output ------------------------------------------------------------------------------------

namespace {

// A text cell a spreadsheet might run as a formula (a student named "=HYPERLINK(...)") gets a
// leading quote, and any cell with a comma, quote or line break is quoted.
std::string csv_text(const std::string& s) {
  std::string v = s;
  if (!v.empty() && std::string_view("=+-@").find(v[0]) != std::string_view::npos) v = "'" + v;
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string q = "\"";
  for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string time_text(const Row& r) {
  return r.time_us > 0 ? wb::time_text(r.time_us) + (r.predicted ? "*" : "") : "";
}

// The display width of UTF-8 text (one column per code point; enough for names and messages).
size_t width(std::string_view s) {
  size_t w = 0;
  for (char c : s) w += (uint8_t(c) & 0xC0) != 0x80;
  return w;
}

std::string pad(std::string_view s, size_t w) {
  std::string out(s);
  for (size_t n = width(s); n < w; ++n) out += ' ';
  return out;
}

std::string table(const std::vector<std::vector<std::string>>& cells) {
  std::vector<size_t> widths;
  for (auto& row : cells)
    for (size_t c = 0; c < row.size(); ++c) {
      if (widths.size() <= c) widths.push_back(0);
      widths[c] = std::max(widths[c], width(row[c]));
    }
  std::string out;
  for (auto& row : cells) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += c + 1 == row.size() ? row[c] : pad(row[c], widths[c]) + "  ";
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

} // namespace

std::string to_csv(const std::vector<Row>& rows) {
  std::string out = "student,puzzle,file,verdict,cases_passed,cases_total,time_us,predicted,"
                    "speed_of_light,medal,diagnostic,seed,unchanged\n";
  for (auto& r : rows)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_text(r.student),
                       csv_text(r.puzzle), csv_text(r.file), r.verdict, r.cases_passed,
                       r.cases_total, r.time_us > 0 ? fmt::format("{:.3f}", r.time_us) : "",
                       r.predicted ? "true" : "false",
                       r.time_us > 0 ? fmt::format("{:.4f}", r.speed_of_light) : "", r.medal,
                       csv_text(r.diagnostic), r.seed, r.unchanged ? "true" : "false");
  return out;
}

std::string to_json(const Result& res, const Options& opt) {
  json rows = json::array();
  for (auto& r : res.rows) rows.push_back(row_json(r));
  json summary = json::array();
  for (auto& s : res.summary)
    summary.push_back(
        {{"puzzle", s.puzzle},
         {"passed", s.passed},
         {"total", s.total},
         {"fastest", s.fastest_student.empty() ? json(nullptr)
                                               : json{{"student", s.fastest_student},
                                                      {"time_us", s.fastest_us},
                                                      {"predicted", s.fastest_predicted}}},
         {"usual_failure", s.usual_failure.empty() ? json(nullptr)
                                                   : json{{"verdict", s.usual_failure},
                                                          {"count", s.usual_failure_count}}}});
  json j = {{"warpbook", WARPBOOK_VERSION},
            {"dir", opt.dir.string()},
            {"backend", opt.backend},
            {"timeout_s", opt.timeout_s},
            {"memory_mib", opt.memory_mib},
            {"checked", res.checked},
            {"unchanged", res.unchanged},
            {"rows", rows},
            {"summary", summary}};
  return dump(j) + "\n";
}

std::string format_table(const Result& res) {
  std::vector<std::vector<std::string>> cells = {
      {"STUDENT", "PUZZLE", "VERDICT", "CASES", "TIME", "SOL", "MEDAL", "FIRST DIAGNOSTIC"}};
  bool any_predicted = false;
  for (auto& r : res.rows) {
    any_predicted |= r.time_us > 0 && r.predicted;
    cells.push_back({one_line(r.student), one_line(r.puzzle), r.verdict,
                     r.cases_total ? fmt::format("{}/{}", r.cases_passed, r.cases_total) : "",
                     time_text(r),
                     r.time_us > 0 ? fmt::format("{:.0f}%", 100 * r.speed_of_light) : "", r.medal,
                     clip(r.diagnostic, 100)});
  }
  std::string out = table(cells);
  std::vector<std::vector<std::string>> sum = {{"PUZZLE", "PASSED", "FASTEST", "USUAL FAILURE"}};
  for (auto& s : res.summary) {
    Row fastest;
    fastest.time_us = s.fastest_us;
    fastest.predicted = s.fastest_predicted;
    sum.push_back(
        {s.puzzle, fmt::format("{} of {}", s.passed, s.total),
         s.fastest_student.empty() ? "" : one_line(s.fastest_student) + " " + time_text(fastest),
         s.usual_failure.empty()
             ? ""
             : fmt::format("{} ({} of {})", s.usual_failure, s.usual_failure_count, s.total)});
  }
  if (res.summary.size()) out += "\n" + table(sum);
  if (any_predicted) out += "\n* predicted by the simulator's performance model, not measured\n";
  return out;
}

// ---- the whole grade ---------------------------------------------------------------------------

Result grade_class(const Catalog& catalog, const Options& opt) {
  std::error_code ec;
  if (!fs::is_directory(opt.dir, ec))
    throw std::invalid_argument(fmt::format("{} is not a folder", opt.dir.string()));
  if (opt.jobs < 1) throw std::invalid_argument("--jobs must be at least 1");
  if (opt.backend != "sim" && opt.backend != "cuda" && opt.backend != "auto")
    throw std::invalid_argument(fmt::format("no backend '{}' (cuda, sim, auto)", opt.backend));

  Result res;
  const std::vector<Submission> subs = find_submissions(opt.dir, catalog);
  if (subs.empty()) return res; // a wrong folder: leave no cache file in it
  res.rows.resize(subs.size());
  std::vector<std::string> sources(subs.size()), keys(subs.size());
  const fs::path cache_path = opt.dir / kCacheName;
  const auto cached =
      opt.force ? std::map<std::string, CacheEntry>{} : load_cache(cache_path, res.warnings);
  CacheWriter cache(cache_path, res.warnings);
  std::map<std::string, std::string> puzzle_texts;
  std::mutex say_mu;
  std::atomic<int> done{0};
  const int total = int(subs.size());
  auto say = [&](const std::string& line) {
    if (!opt.progress) return;
    std::lock_guard lk(say_mu);
    opt.progress(line);
  };
  auto finished = [&](const Row& r, std::string_view how) {
    say(fmt::format("[{}/{}] {} {}: {}{}", ++done, total, one_line(r.student), one_line(r.puzzle),
                    how.empty() ? r.verdict : std::string(how),
                    r.seconds > 0 ? fmt::format(" ({:.1f} s)", r.seconds) : ""));
  };

  // The checks that need no runner, and the rows the cache still holds.
  std::vector<size_t> to_check;
  for (size_t i = 0; i < subs.size(); ++i) {
    const Submission& s = subs[i];
    Row& row = res.rows[i];
    if (!s.puzzle) {
      row = row_for(s, kUnknownPuzzle,
                    s.key.empty()
                        ? "the file name names no puzzle: name it STUDENT.PUZZLE.cu at the top of "
                          "the class folder (PUZZLE: 01 or 01-vector-add)"
                        : fmt::format("'{}' names no puzzle of the catalog (or more than one): "
                                      "name the file after its puzzle (01.cu or 01-vector-add.cu)",
                                      s.key));
      finished(row, "");
      continue;
    }
    FileRead f = read_submission(s.path, opt.max_bytes);
    if (!f.problem.empty()) {
      row = row_for(s, kUnreadable, f.problem);
      finished(row, "");
      continue;
    }
    if (auto bad = precheck(s, f.text, f.bytes, opt.max_bytes)) {
      row = *bad;
      finished(row, "");
      continue;
    }
    sources[i] = std::move(f.text);
    keys[i] = cache_key(s, sources[i], opt, puzzle_texts);
    auto hit = cached.find(s.file);
    if (hit != cached.end() && hit->second.key == keys[i]) {
      row = hit->second.row;
      row.unchanged = true;
      ++res.unchanged;
      cache.keep(s.file, hit->second);
      finished(row, fmt::format("unchanged since the last run ({})", row.verdict));
      continue;
    }
    to_check.push_back(i);
  }

  // The runners: opt.jobs slots, each taking the next submission until none is left.
  std::atomic<size_t> next{0};
  auto slot = [&] {
    runner::ClientOptions co;
    co.command = opt.runner_command;
    co.catalog = opt.catalog;
    runner::Client client(co);
    for (;;) {
      const size_t k = next++;
      if (k >= to_check.size()) return;
      const size_t i = to_check[k];
      const Submission& s = subs[i];
      say(fmt::format("checking {} ({} by {})", one_line(s.file), s.puzzle->id,
                      one_line(s.student)));
      Row row;
      try {
        row = check_in_runner(client, s, sources[i], opt);
      } catch (const std::exception& e) {
        row = row_for(s, kRunnerCrashed, e.what());
      }
      res.rows[i] = row;
      // A runner crash may be the machine's doing (a dropped ssh connection) rather than the
      // submission's: such rows are checked again next time.
      if (row.verdict != kRunnerCrashed) cache.put(s.file, {keys[i], row});
      finished(row, "");
    }
  };
  res.checked = int(to_check.size());
  std::vector<std::thread> slots;
  const size_t n_slots = std::min(size_t(opt.jobs), to_check.size());
  for (size_t t = 0; t < n_slots; ++t) slots.emplace_back(slot);
  for (auto& t : slots) t.join();
  cache.flush(); // also drops the entries of files that are gone

  std::stable_sort(res.rows.begin(), res.rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.student, a.puzzle, a.file) < std::tie(b.student, b.puzzle, b.file);
  });
  res.summary = summarize(res.rows);
  return res;
}

} // namespace wb::grade
