#include "runner.hpp"

#include "catalog.hpp"
#include "check.hpp"
#include "compile.hpp"
#include "probe.hpp"
#include "report_json.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace wb::runner {

using nlohmann::json;

namespace {

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

const char* kOps[] = {"hello", "compile", "check", "run", "probe", "cancel", "tune", "sweep"};
const char* kEvents[] = {"hello", "progress", "log", "result", "exited", "case"};

Op op_from(const std::string& s) {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (s == kOps[i]) return Op(i);
  throw std::runtime_error("unknown op '" + s + "'");
}

EventKind event_kind_from(const std::string& s) {
  for (size_t i = 0; i < std::size(kEvents); ++i)
    if (s == kEvents[i]) return EventKind(i);
  throw std::runtime_error("unknown event '" + s + "'");
}

// Writes all of `s` to `fd`, retrying short writes; false when the other end is gone.
bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += size_t(n);
  }
  return true;
}

// Splits what arrives on a pipe into lines.
struct LineReader {
  int fd;
  std::string buf;
  // Returns false at EOF or error; appends complete lines to `out`.
  bool read_some(std::vector<std::string>& out) {
    char tmp[65536];
    ssize_t n = ::read(fd, tmp, sizeof tmp);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) {
      if (!buf.empty()) out.push_back(std::move(buf));
      buf.clear();
      return false;
    }
    buf.append(tmp, size_t(n));
    size_t start = 0;
    for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1)
      out.push_back(buf.substr(start, nl - start));
    buf.erase(0, start);
    return true;
  }
};

// Reads `fd` line by line until EOF or until `stopping` (guarded by `mu`) is set, polling so that
// a stop is noticed within 100 ms; each batch of lines goes to on_line with `mu` held.
template <class F> void read_lines(int fd, std::mutex& mu, const bool& stopping, F&& on_line) {
  LineReader r{fd, {}};
  std::vector<std::string> lines;
  for (bool open = true; open;) {
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, 100);
    {
      std::lock_guard lk(mu);
      if (stopping) break;
    }
    if (n <= 0) continue;
    lines.clear();
    open = r.read_some(lines);
    std::lock_guard lk(mu);
    for (auto& l : lines) on_line(l);
  }
}

} // namespace

std::string_view op_name(Op op) {
  return kOps[int(op)];
}

// ---- JSON ------------------------------------------------------------------------------------

std::string to_json(const Request& r) {
  json j = {{"id", r.id}, {"op", kOps[int(r.op)]}};
  if (!r.puzzle.empty()) j["puzzle"] = r.puzzle;
  if (!r.file.empty()) j["file"] = r.file;
  if (r.op == Op::compile || r.op == Op::check || r.op == Op::run || r.op == Op::tune ||
      r.op == Op::sweep) {
    j["source"] = r.source;
    j["backend"] = r.backend;
    j["seed"] = r.seed;
    j["time"] = r.time;
    if (!r.model_gpu.empty()) j["model_gpu"] = r.model_gpu;
  }
  if (r.op == Op::probe) j["backend"] = r.backend;
  if (!r.sizes.empty()) {
    json s = json::object();
    for (auto& [k, v] : r.sizes) s[k] = v;
    j["sizes"] = s;
  }
  if (r.op == Op::cancel) j["target"] = r.target;
  if (!r.only.empty()) j["only"] = r.only;
  if (!r.sweep.empty()) j["sweep"] = r.sweep;
  return dump_json(j);
}

namespace {
// One protocol line: a JSON object, or an error saying what it should have been.
json parse_object(const std::string& line, const char* what) {
  json j;
  try {
    j = json::parse(line);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("not JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::runtime_error(std::string(what) + " must be a JSON object");
  return j;
}
} // namespace

Request request_from_json(const std::string& line) {
  json j = parse_object(line, "a request");
  Request r;
  r.id = j.value("id", uint64_t(0));
  r.op = op_from(j.value("op", std::string()));
  r.puzzle = j.value("puzzle", "");
  r.file = j.value("file", "");
  r.source = j.value("source", "");
  r.backend = j.value("backend", "auto");
  r.seed = j.value("seed", uint64_t(0));
  r.time = j.value("time", true);
  r.model_gpu = j.value("model_gpu", "");
  r.target = j.value("target", uint64_t(0));
  if (j.contains("sizes") && j["sizes"].is_object())
    for (auto& [k, v] : j["sizes"].items()) r.sizes[k] = v.get<int64_t>();
  if (j.contains("only") && j["only"].is_object())
    r.only = j["only"].get<std::map<std::string, std::vector<int64_t>>>();
  if (j.contains("sweep") && j["sweep"].is_array())
    r.sweep = j["sweep"].get<std::vector<std::string>>();
  return r;
}

std::string to_json(const Event& e) {
  json j = {{"id", e.id}, {"event", kEvents[int(e.kind)]}};
  switch (e.kind) {
  case EventKind::hello: {
    j["version"] = e.version;
    j["protocol"] = e.protocol;
    j["pid"] = e.pid;
    json bs = json::array();
    for (auto& b : e.backends)
      bs.push_back({{"kind", b.kind},
                    {"available", b.available},
                    {"why", b.why},
                    {"device", json::parse(device_to_json(b.device))}});
    j["backends"] = bs;
    break;
  }
  case EventKind::progress:
    j["phase"] = e.phase;
    j["done"] = e.done;
    j["total"] = e.total;
    break;
  case EventKind::log:
  case EventKind::exited:
    j["text"] = e.text;
    break;
  case EventKind::case_done:
    j["index"] = e.index;
    j["total"] = e.total;
    if (e.case_report) j["case"] = case_to_json(*e.case_report);
    break;
  case EventKind::result:
    j["ok"] = e.ok;
    if (!e.text.empty()) j["error"] = e.text;
    if (e.cancelled) j["cancelled"] = true;
    if (e.runner_died) j["runner_died"] = true;
    if (e.runner_ending) j["runner_ending"] = true;
    if (e.report) j["report"] = json::parse(report_to_json(*e.report, -1));
    if (e.tune) j["tune"] = tune_to_json(*e.tune);
    if (e.sweep) j["sweep"] = sweep_to_json(*e.sweep);
    if (!e.probe.empty() || !e.ceilings.empty()) {
      auto list = [](const std::vector<ProbeFigure>& v) {
        json p = json::array();
        for (auto& f : v)
          p.push_back({{"metric", f.metric},
                       {"label", f.label},
                       {"unit", f.unit},
                       {"best", f.best},
                       {"median", f.median},
                       {"datasheet", f.datasheet},
                       {"skipped", f.skipped}});
        return p;
      };
      j["probe"] = list(e.probe);
      j["ceilings"] = list(e.ceilings);
      j["probe_device"] = json::parse(device_to_json(e.probe_device));
    }
    break;
  }
  return dump_json(j);
}

Event event_from_json(const std::string& line) {
  json j = parse_object(line, "an event");
  Event e;
  e.id = j.value("id", uint64_t(0));
  e.kind = event_kind_from(j.value("event", std::string()));
  e.version = j.value("version", "");
  e.protocol = j.value("protocol", 0);
  e.pid = j.value("pid", int64_t(0));
  if (j.contains("backends") && j["backends"].is_array())
    for (auto& b : j["backends"]) {
      BackendStatus s;
      s.kind = b.value("kind", "");
      s.available = b.value("available", false);
      s.why = b.value("why", "");
      if (b.contains("device")) s.device = device_from_json(b["device"].dump());
      e.backends.push_back(std::move(s));
    }
  e.phase = j.value("phase", "");
  e.done = j.value("done", 0);
  e.total = j.value("total", 0);
  e.index = j.value("index", 0);
  if (j.contains("case") && j["case"].is_object()) e.case_report = case_from_json(j["case"]);
  e.text = j.value("text", j.value("error", ""));
  e.ok = j.value("ok", false);
  e.cancelled = j.value("cancelled", false);
  e.runner_died = j.value("runner_died", false);
  e.runner_ending = j.value("runner_ending", false);
  if (j.contains("report") && j["report"].is_object())
    e.report = report_from_json(j["report"].dump());
  if (j.contains("tune") && j["tune"].is_object()) e.tune = tune_from_json(j["tune"]);
  if (j.contains("sweep") && j["sweep"].is_object()) e.sweep = sweep_from_json(j["sweep"]);
  auto list = [&](const char* key, std::vector<ProbeFigure>& out) {
    if (j.contains(key) && j[key].is_array())
      for (auto& f : j[key])
        out.push_back({f.value("metric", ""), f.value("label", ""), f.value("unit", ""),
                       f.value("best", 0.0), f.value("median", 0.0), f.value("datasheet", 0.0),
                       f.value("skipped", "")});
  };
  list("probe", e.probe);
  list("ceilings", e.ceilings);
  if (j.contains("probe_device")) e.probe_device = device_from_json(j["probe_device"].dump());
  return e;
}

// ---- the runner side ---------------------------------------------------------------------------

namespace {

class Server {
public:
  Server(int out_fd, const ServeOptions& opt) : out_(out_fd), opt_(opt) {}

  void emit(const Event& e) {
    std::lock_guard lk(out_mu_);
    write_all(out_, to_json(e) + "\n");
  }

  void enqueue(Request r) {
    std::lock_guard lk(mu_);
    queue_.push_back(std::move(r));
    cv_.notify_all();
  }

  // Cancels the running request or drops a queued one; either way the target gets a result.
  void cancel(uint64_t target) {
    std::lock_guard lk(mu_);
    if (current_ == target) {
      cancel_.store(true); // the work notices it within milliseconds (CheckOptions::cancel)
      return;
    }
    for (auto it = queue_.begin(); it != queue_.end(); ++it)
      if (it->id == target) {
        Event e;
        e.id = target;
        e.kind = EventKind::result;
        e.cancelled = true;
        e.text = "cancelled before it started";
        queue_.erase(it);
        emit(e);
        return;
      }
  }

  // stdin closed: finish what was asked (so `... | warpbook runner` answers everything), then end.
  // The window never relies on this: it kills its runner.
  void stop() {
    std::lock_guard lk(mu_);
    stopping_ = true;
    cv_.notify_all();
  }

  void work() {
    for (;;) {
      Request r;
      {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        r = std::move(queue_.front());
        queue_.pop_front();
        current_ = r.id;
        cancel_.store(false);
      }
      Event res;
      res.id = r.id;
      res.kind = EventKind::result;
      try {
        handle(r, res);
      } catch (const Cancelled&) {
        res = {};
        res.id = r.id;
        res.kind = EventKind::result;
        res.cancelled = true;
        res.text = "cancelled";
      } catch (const std::exception& ex) {
        res.ok = false;
        res.text = ex.what();
      }
      {
        std::lock_guard lk(mu_);
        current_ = 0;
      }
      // A poisoned CUDA context cannot be reused: this process ends after answering, and says so
      // in the answer, so the client sends the next request to a fresh runner.
      for (auto& [kind, b] : backends_)
        if (b && !b->usable()) res.runner_ending = true;
      emit(res);
      for (auto& [kind, b] : backends_)
        if (b && !b->usable()) {
          Event log;
          log.kind = EventKind::log;
          log.id = r.id;
          log.text = "the device is unusable after a sticky fault; this runner ends";
          emit(log);
          ::_exit(kStickyExit);
        }
    }
  }

private:
  const Catalog& catalog() {
    if (!catalog_) catalog_ = load_catalog(default_catalog_root(opt_.catalog));
    return *catalog_;
  }

  const Puzzle& puzzle(const std::string& key) {
    if (const Puzzle* p = catalog().find_puzzle(key)) return *p;
    throw std::runtime_error(
        fmt::format("the runner's catalog ({}) has no puzzle '{}'", catalog().root.string(), key));
  }

  Backend* backend(const std::string& kind, std::string& why) {
    auto it = backends_.find(kind);
    if (it != backends_.end() && it->second) return it->second.get();
    auto b = make_backend(kind, why);
    Backend* raw = b.get();
    if (b) backends_[kind] = std::move(b);
    return raw;
  }

  Backend& backend_or_throw(const std::string& kind) {
    std::string why;
    if (Backend* b = backend(kind, why)) return *b;
    throw std::runtime_error(fmt::format("backend '{}' cannot run here: {}", kind, why));
  }

  CheckOptions options_for(const Request& r) {
    CheckOptions o;
    o.seed = r.seed;
    o.time = r.time;
    o.model_gpu = r.model_gpu;
    o.cancel = &cancel_;
    uint64_t id = r.id;
    // A check's cases stream; a tune's or a sweep's many checks report per configuration instead.
    if (r.op == Op::check || r.op == Op::run)
      o.on_case = [this, id](const CaseReport& c, size_t index, size_t total) {
        Event e;
        e.id = id;
        e.kind = EventKind::case_done;
        e.index = int(index);
        e.total = int(total);
        e.case_report = c;
        emit(e);
      };
    o.progress = [this, id](const std::string& phase, int done, int total) {
      if (cancel_.load()) throw Cancelled{};
      Event e;
      e.id = id;
      e.kind = EventKind::progress;
      e.phase = phase;
      e.done = done;
      e.total = total;
      emit(e);
    };
    return o;
  }

  void handle(const Request& r, Event& res) {
    switch (r.op) {
    case Op::hello: {
      res.kind = EventKind::hello;
      res.version = opt_.version.empty() ? WARPBOOK_VERSION : opt_.version;
      res.protocol = kProtocolVersion;
      res.pid = ::getpid();
      for (const char* kind : {"cuda", "sim"}) {
        BackendStatus s;
        s.kind = kind;
        if (Backend* b = backend(kind, s.why)) {
          s.available = true;
          s.device = b->info();
        }
        res.backends.push_back(std::move(s));
      }
      res.ok = true;
      return;
    }
    case Op::compile: {
      const Puzzle& p = puzzle(r.puzzle);
      CheckReport rep;
      rep.puzzle = p.id;
      rep.file = r.file;
      std::string why;
      CompileOptions co;
      if (Backend* b = backend(r.backend, why)) {
        co = b->compile_options();
        rep.device = b->info();
      }
      for (auto& t : p.tunables) co.defines[t.name] = t.default_value;
      for (auto& t : parse_tune_lines(r.source, r.file, rep.diagnostics))
        co.defines[t.name] = t.value;
      co.ptxas_report = co.arch.rfind("sm_", 0) == 0;
      Program prog = compile_source(r.source, r.file, co);
      if (prog.ok) require_kernels(prog, p.kernel_names());
      for (auto& d : prog.diagnostics) rep.diagnostics.push_back(d);
      rep.resources = prog.resources;
      rep.tunables = co.defines;
      rep.verdict = prog.ok ? Verdict::passed : Verdict::compile_error;
      rep.summary =
          prog.ok ? fmt::format("compiled in {:.0f} ms", prog.compile_ms) : "compile failed";
      rep.phases_ms.push_back({"compile", prog.compile_ms});
      rep.total_ms = prog.compile_ms;
      res.ok = true;
      res.report = std::move(rep);
      return;
    }
    case Op::check:
    case Op::run: {
      const Puzzle& p = puzzle(r.puzzle);
      Backend& b = backend_or_throw(r.backend);
      CheckOptions o = options_for(r);
      res.report = r.op == Op::check ? check_puzzle(p, r.source, r.file, b, o)
                                     : run_puzzle(p, r.source, r.file, b, r.sizes, o);
      res.ok = true;
      return;
    }
    case Op::tune: {
      const Puzzle& p = puzzle(r.puzzle);
      Backend& b = backend_or_throw(r.backend);
      std::string error;
      std::vector<TuneConfig> space = tune_space(p, r.only, error);
      if (!error.empty()) throw std::runtime_error(error);
      if (space.empty()) throw std::runtime_error(p.id + " has no tunables: nothing to tune");
      TuneOptions to;
      to.check = options_for(r); // its progress reports each configuration and raises a cancel
      res.tune = tune_puzzle(p, r.source, r.file, b, space, to);
      res.ok = true;
      return;
    }
    case Op::sweep: {
      const Puzzle& p = puzzle(r.puzzle);
      Backend& b = backend_or_throw(r.backend);
      SweepSpec spec;
      try {
        spec = parse_sweep(p, r.sweep);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(e.what());
      }
      SweepOptions so;
      so.check = options_for(r);
      auto progress = so.check.progress;
      so.on_point = [progress, &spec](const SweepSeries& s, const SweepPoint& pt, int done,
                                      int total) {
        progress(fmt::format("{} {}={} ({} of {})", s.name, spec.name, pt.size, done, total), done,
                 total);
      };
      res.sweep = sweep_puzzle(p, r.source, r.file, b, spec, so);
      res.ok = true;
      return;
    }
    case Op::probe: {
      ProbeOptions po;
      po.catalog = opt_.catalog;
      uint64_t id = r.id;
      po.progress = [this, id](const std::string& phase) {
        Event e;
        e.id = id;
        e.kind = EventKind::progress;
        e.phase = phase;
        emit(e);
      };
      // The driver allows one context per process to own the GPU comfortably: drop ours first.
      backends_.erase("cuda");
      backends_.erase("auto");
      ProbeSuite suite = run_probes(po);
      if (!suite.ok()) throw std::runtime_error(suite.error);
      for (auto& p : suite.results)
        res.probe.push_back({p.metric, p.label, p.unit, p.best, p.median, p.datasheet, p.skipped});
      for (auto& c : suite_ceilings(suite))
        res.ceilings.push_back({c.metric, c.name, c.unit, c.value, c.median, 0, {}});
      res.probe_device = suite.device;
      res.ok = true;
      return;
    }
    case Op::cancel:
      return; // handled on the reading thread
    }
  }

  int out_;
  ServeOptions opt_;
  std::mutex out_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request> queue_;
  uint64_t current_ = 0;
  std::atomic<bool> cancel_{false}; // the current request's; CheckOptions::cancel points here
  bool stopping_ = false;
  std::optional<Catalog> catalog_;
  std::map<std::string, std::unique_ptr<Backend>> backends_;
};

} // namespace

int serve(int in_fd, int out_fd, const ServeOptions& opt) {
  Server server(out_fd, opt);
  std::thread worker([&] { server.work(); });
  LineReader in{in_fd, {}};
  std::vector<std::string> lines;
  bool open = true;
  while (open) {
    lines.clear();
    open = in.read_some(lines);
    for (auto& line : lines) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      Request r;
      try {
        r = request_from_json(line);
      } catch (const std::exception& ex) {
        Event e;
        e.kind = EventKind::log;
        e.text = fmt::format("ignored a malformed request: {}", ex.what());
        server.emit(e);
        continue;
      }
      if (r.op == Op::cancel)
        server.cancel(r.target);
      else
        server.enqueue(std::move(r));
    }
  }
  server.stop();
  worker.join();
  return 0;
}

// ---- the client side ---------------------------------------------------------------------------

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    if (code == kStickyExit) return "ended itself after a fault that left the device unusable";
    if (code == 127) return "exited with code 127 (command not found?)";
    return fmt::format("exited with code {}", code);
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    const char* what = strsignal(sig);
    return fmt::format("was killed by signal {} (SIG{}: {}){}", sig, name ? name : "?",
                       what ? what : "", WCOREDUMP(status) ? ", core dumped" : "");
  }
  return fmt::format("ended with status {}", status);
}

Client::Client(ClientOptions opt) : opt_(std::move(opt)) {
  // A write to a runner that just died must fail with EPIPE, not kill the window.
  std::signal(SIGPIPE, SIG_IGN);
}

Client::~Client() {
  std::unique_lock lk(mu_);
  kill_locked("the window closed");
  stopping_ = true;
  // The readers poll with a short timeout and see `stopping_`; wait until they are gone.
  cv_.wait(lk, [&] { return live_threads_ == 0; });
}

void Client::set_options(const ClientOptions& opt) {
  std::lock_guard lk(mu_);
  bool restart = opt.command != opt_.command || opt.catalog != opt_.catalog;
  opt_ = opt;
  if (restart && pid_ > 0) kill_locked("the runner command changed");
}

bool Client::running() const {
  std::lock_guard lk(mu_);
  return pid_ > 0;
}
pid_t Client::pid() const {
  std::lock_guard lk(mu_);
  return pid_;
}
bool Client::busy() const {
  std::lock_guard lk(mu_);
  return !pending_.empty();
}
std::string Client::last_exit() const {
  std::lock_guard lk(mu_);
  return last_exit_;
}

void Client::push(Event e) {
  events_.push_back(std::move(e));
  cv_.notify_all();
}

void Client::start() {
  std::lock_guard lk(mu_);
  if (pid_ <= 0) start_locked();
}

void Client::start_locked() {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
    last_exit_ = fmt::format("cannot make pipes: {}", strerror(errno));
    return;
  }
  std::vector<std::string> args;
  if (opt_.command.empty()) {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    args.push_back(n > 0 ? std::string(buf, size_t(n)) : "warpbook");
    if (!opt_.catalog.empty()) args.insert(args.end(), {"--catalog", opt_.catalog});
    args.push_back("runner");
  } else {
    // Through the shell, so that "ssh gpu-box warpbook runner" or "cd x && ./warpbook runner" work.
    // A simple command replaces the shell (exec), so the pid we hold is the runner's (or ssh's).
    bool simple = opt_.command.find_first_of(";&|<>`$()\n") == std::string::npos &&
                  opt_.command.rfind("exec ", 0) != 0;
    args = {"/bin/sh", "-c", simple ? "exec " + opt_.command : opt_.command};
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  // Its own process group, so a kill reaches the shell and everything it started; default
  // signal dispositions, because the window ignores SIGPIPE and that would be inherited.
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setflags(&at,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &fa, &at, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    ::close(err[0]);
    last_exit_ = fmt::format("cannot start the runner ({}): {}", args[0], strerror(rc));
    return;
  }
  pid_ = pid;
  in_fd_ = in[1];
  ++generation_;
  ++starts_;
  stderr_tail_.clear();
  err_done_ = false;
  int gen = generation_;
  live_threads_ += 2;
  std::thread([this, fd = out[0], pid, gen] { reader(fd, pid, gen); }).detach();
  std::thread([this, fd = err[0], gen] { err_reader(fd, gen); }).detach();
}

bool Client::write_line(const std::string& line) {
  return in_fd_ >= 0 && write_all(in_fd_, line + "\n");
}

uint64_t Client::send(Request r, double timeout_s) {
  std::lock_guard lk(mu_);
  r.id = next_id_++;
  if (pid_ > 0 && ending_generation_ == generation_)
    kill_locked("the runner ended itself after a sticky device fault"); // it is exiting anyway
  if (pid_ <= 0) start_locked();
  if (pid_ <= 0) {
    Event e;
    e.id = r.id;
    e.kind = EventKind::result;
    e.runner_died = true;
    e.text = last_exit_;
    push(std::move(e));
    return r.id;
  }
  double t = now_s();
  double limit = timeout_s > 0 ? timeout_s : opt_.timeout_s;
  pending_[r.id] = {r.op, t + limit, t, 0, generation_, limit};
  // A failed write means the runner is dying: its reader reports that and fails this request.
  write_line(to_json(r));
  return r.id;
}

void Client::cancel(uint64_t id, double grace_s) {
  std::lock_guard lk(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  if (it->second.cancel_deadline == 0)
    it->second.cancel_deadline = now_s() + (grace_s > 0 ? grace_s : opt_.cancel_grace_s);
  Request c;
  c.op = Op::cancel;
  c.target = id;
  write_line(to_json(c));
}

void Client::kill(const std::string& reason) {
  std::lock_guard lk(mu_);
  kill_locked(reason);
}

void Client::kill_locked(const std::string& reason) {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  if (in_fd_ >= 0) ::close(in_fd_);
  in_fd_ = -1;
  last_exit_ = reason;
  // Every request still in flight gets its answer now.
  for (auto& [id, p] : pending_) {
    Event e;
    e.id = id;
    e.kind = EventKind::result;
    e.runner_died = true;
    e.cancelled = p.cancel_deadline > 0;
    e.timed_out = id == timed_out_id_;
    e.text = reason;
    e.elapsed_ms = 1e3 * (now_s() - p.sent);
    push(std::move(e));
  }
  pending_.clear();
  Event x;
  x.kind = EventKind::exited;
  x.text = reason;
  push(std::move(x));
  pid_ = -1;
  ++generation_; // the old readers see that they are stale and only reap
}

void Client::enforce_deadlines() {
  double t = now_s();
  for (auto& [id, p] : pending_) {
    if (p.cancel_deadline > 0 && t > p.cancel_deadline) {
      kill_locked("the runner did not stop in the time a cancel allows, so it was killed; the "
                  "next request starts a fresh one");
      return;
    }
    if (t > p.deadline) {
      timed_out_id_ = id;
      kill_locked(fmt::format("{} took longer than {:.0f} s, so the runner was killed (an endless "
                              "loop?); the next request starts a fresh one",
                              op_name(p.op), p.limit));
      return;
    }
  }
}

std::vector<Event> Client::poll() {
  std::lock_guard lk(mu_);
  enforce_deadlines();
  std::vector<Event> out(std::make_move_iterator(events_.begin()),
                         std::make_move_iterator(events_.end()));
  events_.clear();
  return out;
}

std::optional<Event> Client::wait(double seconds) {
  std::unique_lock lk(mu_);
  double end = now_s() + seconds;
  for (;;) {
    enforce_deadlines();
    if (!events_.empty()) {
      Event e = std::move(events_.front());
      events_.pop_front();
      return e;
    }
    double left = end - now_s();
    if (left <= 0) return std::nullopt;
    cv_.wait_for(lk, std::chrono::duration<double>(std::min(left, 0.05)));
  }
}

void Client::err_reader(int fd, int gen) {
  read_lines(fd, mu_, stopping_, [&](std::string& l) {
    if (gen == generation_) {
      stderr_tail_.push_back(l);
      if (stderr_tail_.size() > 20) stderr_tail_.pop_front();
    }
    Event e;
    e.kind = EventKind::log;
    e.text = l;
    push(std::move(e));
  });
  ::close(fd);
  std::lock_guard lk(mu_);
  if (gen == generation_) err_done_ = true;
  --live_threads_;
  cv_.notify_all();
}

void Client::reader(int fd, pid_t pid, int gen) {
  read_lines(fd, mu_, stopping_, [&](std::string& l) {
    if (l.empty()) return;
    Event e;
    try {
      e = event_from_json(l);
    } catch (const std::exception&) {
      // Not protocol: show it rather than lose it (a remote shell's banner, say).
      e = {};
      e.kind = EventKind::log;
      e.text = l;
    }
    if (gen != generation_) return; // a killed runner's last words: already answered
    if (e.runner_ending) ending_generation_ = gen;
    if (e.kind == EventKind::result || e.kind == EventKind::hello) {
      auto it = pending_.find(e.id);
      if (it != pending_.end()) {
        e.elapsed_ms = 1e3 * (now_s() - it->second.sent);
        pending_.erase(it);
      }
    }
    push(std::move(e));
  });
  ::close(fd);
  // The runner closed its stdout: it is ending. Reap it and say why.
  int status = 0;
  bool reaped = false;
  for (;;) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      reaped = true;
      break;
    }
    if (w < 0) break;
    std::unique_lock lk(mu_);
    if (stopping_) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    }
    lk.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::unique_lock lk(mu_);
  if (gen == generation_) {
    // Let the stderr reader catch the runner's last lines (a crash message) first.
    cv_.wait_for(lk, std::chrono::milliseconds(300), [&] { return err_done_ || stopping_; });
    std::string why = reaped ? "the runner " + describe_wait_status(status) : "the runner ended";
    if (!stderr_tail_.empty()) why += ": " + stderr_tail_.back();
    pid_ = -1;
    if (in_fd_ >= 0) ::close(in_fd_);
    in_fd_ = -1;
    last_exit_ = why;
    for (auto& [id, p] : pending_) {
      Event e;
      e.id = id;
      e.kind = EventKind::result;
      e.runner_died = true;
      e.cancelled = p.cancel_deadline > 0;
      e.text = why + "; the next request starts a fresh one";
      e.elapsed_ms = 1e3 * (now_s() - p.sent);
      push(std::move(e));
    }
    pending_.clear();
    Event x;
    x.kind = EventKind::exited;
    x.text = why;
    push(std::move(x));
    ++generation_;
  }
  --live_threads_;
  cv_.notify_all();
}

} // namespace wb::runner
