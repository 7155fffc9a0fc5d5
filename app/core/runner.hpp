// The runner: a child process that does every compile and run, so that a learner's kernel that
// crashes, hangs or poisons the CUDA context ends the runner and never the window.
//
// Protocol: JSON lines. The client writes one request per line to the runner's stdin; the runner
// writes one event per line to its stdout (and nothing else: stray prints go to stderr).
//
//   requests  {"id":7,"op":"check","puzzle":"01-vector-add","file":"01-vector-add.cu",
//              "source":"...","backend":"auto","seed":0,"time":true}
//             op: hello | compile | check | run (+ "sizes":{"n":1000}) | probe | cancel (+
//             "target") | tune (+ "only":{"BLOCK":[128,256]}) | sweep (+ "sweep":["n=2^10..2^20"])
//   events    {"id":0,"event":"hello","version":"0.1.0","pid":123,"backends":{...}}
//             {"id":7,"event":"progress","phase":"case 2 of 5","done":1,"total":5}
//             {"id":7,"event":"case","index":0,"total":5,"case":{...a report's case...}}
//             {"id":7,"event":"log","text":"..."}
//             {"id":7,"event":"result","ok":true,"report":{...report_to_json...}}
//             {"id":7,"event":"result","ok":false,"error":"...","cancelled":false}
//
// Requests run one at a time in order. A check (or run) streams each case's verdict as a "case"
// event the moment it is known, before the next case starts; the final result repeats every case.
// `cancel` is handled at once: a queued request is answered "cancelled" without running, and the
// running one stops within 200 ms wherever it is (a simulated launch, the performance model's
// sampled run, between GPU timing samples), except inside an NVRTC compile, which cannot be
// interrupted and is followed by the stop. A cancelled request's result has "cancelled":true and
// no report. The runner exits with kStickyExit after a fault that leaves the GPU unusable, so that
// the next request gets a fresh process (and a fresh CUDA context).
#pragma once
#include "backend.hpp"
#include "expr.hpp"
#include "report.hpp"
#include "sweep.hpp"
#include "tune.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <iosfwd>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace wb::runner {

constexpr int kProtocolVersion = 1;
constexpr int kStickyExit = 75; // the runner ended itself after a sticky device fault

enum class Op { hello, compile, check, run, probe, cancel, tune, sweep };
std::string_view op_name(Op op);

struct Request {
  uint64_t id = 0;
  Op op = Op::hello;
  std::string puzzle;           // id or unique prefix, resolved in the runner's catalog
  std::string file;             // the name diagnostics use
  std::string source;           // the learner's file, sent whole (the runner may be remote)
  std::string backend = "auto"; // cuda, sim, auto
  uint64_t seed = 0;
  bool time = true;
  std::string model_gpu; // the GPU profile the simulator's roofline point models ("h200")
  Env sizes;             // run
  uint64_t target = 0;   // cancel
  std::map<std::string, std::vector<int64_t>> only; // tune: narrow these tunables
  std::vector<std::string> sweep;                   // sweep: `--size` words
};

// A ceiling measured by a probe (probe.hpp's ProbeResult), as the runner reports it; the window
// keeps them in its own store, so a remote runner's GPU gets its ceilings on the laptop.
struct ProbeFigure {
  std::string metric; // "dram_gbps", "fp32_gflops", ...
  std::string label;
  std::string unit; // "GB/s", "GFLOP/s"
  double best = 0, median = 0, datasheet = 0;
  std::string skipped; // why it was not measured
};

// What a backend kind looks like from the runner's machine.
struct BackendStatus {
  std::string kind; // "cuda", "sim"
  bool available = false;
  std::string why; // when not available
  DeviceInfo device;
};

// `exited` is made by the client: the runner ended (text says how).
// `case_done` ("case" on the wire) carries one case's verdict as soon as it is known.
enum class EventKind { hello, progress, log, result, exited, case_done };

struct Event {
  uint64_t id = 0;
  EventKind kind = EventKind::log;
  // hello
  std::string version;
  int protocol = 0;
  int64_t pid = 0;
  std::vector<BackendStatus> backends;
  // progress
  std::string phase;
  int done = 0, total = 0;
  // case: the case's report, its index in the check's list and the list's length (`total`)
  int index = 0;
  std::optional<CaseReport> case_report;
  // log, and the error of a failed result
  std::string text;
  // result
  bool ok = false;
  bool cancelled = false;
  bool runner_died = false;   // made by the client: the runner ended before answering
  bool timed_out = false;     // made by the client: killed because this request ran too long
  bool runner_ending = false; // the runner ends itself after this answer (a sticky device fault)
  std::optional<CheckReport> report;
  std::optional<TuneReport> tune;   // a tune's ranked table
  std::optional<SweepReport> sweep; // a sweep's series
  std::vector<ProbeFigure> probe;   // a probe's figures, and the ceilings to store
  std::vector<ProbeFigure> ceilings;
  DeviceInfo probe_device; // the device they were measured on
  double elapsed_ms = 0;   // client side: from send to this event
};

std::string to_json(const Request& r);
std::string to_json(const Event& e);
// Both throw std::runtime_error on malformed input.
Request request_from_json(const std::string& line);
Event event_from_json(const std::string& line);

// ---- the runner side -------------------------------------------------------------------------

struct ServeOptions {
  std::string catalog; // as --catalog gives it; empty: the default catalog
  std::string version; // empty: this build's
};
// Reads requests from fd `in`, writes events to fd `out` until stdin closes. Returns the exit code.
int serve(int in_fd, int out_fd, const ServeOptions& opt);

// ---- the client side (the window) ------------------------------------------------------------

struct ClientOptions {
  // A shell command line that starts a runner ("ssh gpu-box warpbook runner"); empty: this very
  // executable with `--catalog CATALOG runner`.
  std::string command;
  std::string catalog;       // passed to the default command
  double timeout_s = 120;    // per request, wall clock; the runner is killed past it
  double cancel_grace_s = 2; // after a cancel, how long the runner has to answer before a kill
};

// How a runner ended, in words: "exited with code 3", "killed by signal 9 (SIGKILL)".
std::string describe_wait_status(int status);

// Starts runners and talks to them. Thread-safe; poll() from one thread (the UI's). A reader
// thread turns the runner's lines into events; timeouts are enforced when poll() or wait() runs.
class Client {
public:
  explicit Client(ClientOptions opt);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends a request (its id is assigned here and returned), starting a runner when none runs.
  // `timeout_s` <= 0 uses the default.
  uint64_t send(Request r, double timeout_s = 0);
  // Asks the runner to stop request `id`; kills it when it does not answer within the grace
  // (`grace_s`, or the options' when 0). A caller with other requests queued behind this one
  // gives a long grace: a compile cannot be interrupted, and a kill would fail those too.
  void cancel(uint64_t id, double grace_s = 0);
  // Starts a runner now (to learn the device early); harmless when one runs.
  void start();
  // Kills the runner, if any (the next send starts a fresh one).
  void kill(const std::string& reason = "stopped");
  // Events received since the last call; never blocks.
  std::vector<Event> poll();
  // Blocks until an event arrives or `seconds` pass.
  std::optional<Event> wait(double seconds);

  bool running() const;
  pid_t pid() const;
  bool busy() const; // a request is in flight
  // Why the last runner ended ("" while the first one lives).
  std::string last_exit() const;
  int starts() const { return starts_; }
  const ClientOptions& options() const { return opt_; }
  void set_options(const ClientOptions& opt); // kills a running runner when the command changes

private:
  struct Pending {
    Op op;
    double deadline;
    double sent;
    double cancel_deadline = 0;
    int generation = 0;
    double limit = 0;
  };
  void start_locked();
  void kill_locked(const std::string& reason);
  void reader(int fd, pid_t pid, int generation);
  void err_reader(int fd, int generation);
  void push(Event e);
  void enforce_deadlines();
  bool write_line(const std::string& line);

  ClientOptions opt_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> events_;
  std::map<uint64_t, Pending> pending_;
  pid_t pid_ = -1;
  int in_fd_ = -1;
  int generation_ = 0;
  int ending_generation_ = -1; // this runner said it is ending: the next request starts another
  uint64_t timed_out_id_ = 0;  // the request whose deadline the kill being made is for
  std::string kill_reason_;
  std::string last_exit_;
  std::deque<std::string> stderr_tail_;
  bool err_done_ = false;
  bool stopping_ = false;
  int live_threads_ = 0; // detached readers still running
  uint64_t next_id_ = 1;
  std::atomic<int> starts_{0};
};

} // namespace wb::runner
