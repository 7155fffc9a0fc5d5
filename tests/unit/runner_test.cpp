// The runner protocol and the client that starts runners: JSON round trips, a real `warpbook
// runner` answering, and every way a runner can end (killed, crashed, hung, cancelled).
#include "core/runner.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <string>
#include <thread>
#include <unistd.h>

using namespace wb;
using namespace wb::runner;

namespace {

std::string exe() {
  const char* e = std::getenv("WARPBOOK_EXE");
  return e ? e : WARPBOOK_BINARY_DIR "/warpbook";
}

// The next result event (skipping hello, progress and log), within `s` seconds.
std::optional<Event> next_result(Client& c, double s, uint64_t id = 0) {
  for (int i = 0; i < int(s * 20); ++i) {
    auto e = c.wait(0.05);
    if (e && e->kind == EventKind::result && (id == 0 || e->id == id)) return e;
  }
  return std::nullopt;
}

Request req(Op op, const std::string& puzzle = {}, const std::string& backend = "auto") {
  Request r;
  r.op = op;
  r.puzzle = puzzle;
  r.backend = backend;
  return r;
}

} // namespace

TEST_CASE("requests and events survive a JSON round trip") {
  Request r;
  r.id = 7;
  r.op = Op::run;
  r.puzzle = "01-vector-add";
  r.file = "workspace/01-vector-add.cu";
  r.source = "extern \"C\" __global__ void k() {}\n// \"quotes\" and \\ backslashes\n";
  r.backend = "sim";
  r.seed = 123456789012345ull;
  r.time = false;
  r.model_gpu = "a100-80gb";
  r.sizes = {{"n", 65537}};
  Request b = request_from_json(to_json(r));
  CHECK(b.id == 7);
  CHECK(b.op == Op::run);
  CHECK(b.source == r.source);
  CHECK(b.seed == r.seed);
  CHECK_FALSE(b.time);
  CHECK(b.model_gpu == "a100-80gb");
  CHECK(b.sizes.at("n") == 65537);

  Event e;
  e.id = 7;
  e.kind = EventKind::result;
  e.ok = true;
  CheckReport rep;
  rep.puzzle = "01-vector-add";
  rep.verdict = Verdict::wrong_answer;
  rep.summary = "case n=7: 3 wrong";
  rep.diagnostics.push_back({"f.cu", 4, 9, Diagnostic::Severity::warning, "unused"});
  e.report = rep;
  e.probe.push_back({"dram_gbps", "DRAM", "GB/s", 4100, 4000, 4800, ""});
  Event f = event_from_json(to_json(e));
  REQUIRE(f.report);
  CHECK(f.report->verdict == Verdict::wrong_answer);
  CHECK(f.report->diagnostics.at(0).line == 4);
  CHECK(f.probe.at(0).best == 4100);

  Event p;
  p.id = 3;
  p.kind = EventKind::progress;
  p.phase = "case 2 of 5";
  p.done = 1;
  p.total = 5;
  Event q = event_from_json(to_json(p));
  CHECK(q.kind == EventKind::progress);
  CHECK(q.phase == "case 2 of 5");
  CHECK(q.total == 5);

  CHECK_THROWS(request_from_json("not json"));
  CHECK_THROWS(request_from_json(R"({"id":1,"op":"launch-missiles"})"));
  CHECK_THROWS(event_from_json("[1,2]"));
}

TEST_CASE("describe_wait_status says how a process ended") {
  CHECK(describe_wait_status(3 << 8) == "exited with code 3");
  CHECK(describe_wait_status(SIGKILL).find("signal 9 (SIGKILL") != std::string::npos);
  CHECK(describe_wait_status(kStickyExit << 8).find("unusable") != std::string::npos);
}

TEST_CASE("serve answers requests in order and ignores garbage") {
  int in[2], out[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  std::string reqs = "garbage\n" + to_json([] {
                       Request r = req(Op::probe, {}, "cuda");
                       r.id = 1;
                       return r;
                     }()) +
                     "\n";
  Request c;
  c.id = 2;
  c.op = Op::compile;
  c.puzzle = "01";
  c.file = "x.cu";
  c.source = "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, "
             "int n) { oops }";
  reqs += to_json(c) + "\n";
  REQUIRE(write(in[1], reqs.data(), reqs.size()) == ssize_t(reqs.size()));
  close(in[1]);
  std::thread t([&] {
    serve(in[0], out[1], {});
    close(out[1]);
  });
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) all.append(buf, size_t(n));
  t.join();
  close(in[0]);
  close(out[0]);
  std::vector<Event> evs;
  size_t pos = 0;
  for (size_t nl; (nl = all.find('\n', pos)) != std::string::npos; pos = nl + 1)
    evs.push_back(event_from_json(all.substr(pos, nl - pos)));
  REQUIRE(evs.size() >= 3);
  CHECK(evs[0].kind == EventKind::log); // the garbage line
  std::optional<Event> probe, compile;
  for (auto& e : evs)
    if (e.kind == EventKind::result) (e.id == 1 ? probe : compile) = e;
  REQUIRE(probe);
  // Without a GPU it says why; with one it measured (on the H200 in 0.9 s).
  CHECK((probe->ok ? !probe->probe.empty() : !probe->text.empty()));
  REQUIRE(compile);
  REQUIRE(compile->report);
  CHECK(compile->report->verdict == Verdict::compile_error);
  REQUIRE_FALSE(compile->report->diagnostics.empty());
  CHECK(compile->report->diagnostics[0].line == 1);
}

TEST_CASE("the client talks to a real runner, and survives it being killed") {
  ClientOptions o;
  o.command = "'" + exe() + "' runner";
  Client c(o);
  uint64_t id = c.send(req(Op::hello));
  std::optional<Event> hello;
  for (int i = 0; i < 600 && !hello; ++i)
    if (auto e = c.wait(0.05); e && e->kind == EventKind::hello) hello = e;
  REQUIRE(hello);
  CHECK(hello->id == id);
  CHECK(hello->protocol == kProtocolVersion);
  CHECK(hello->backends.size() == 2);
  REQUIRE(c.running());
  CHECK(c.starts() == 1);

  // kill -9 while a request is in flight: the request gets an answer that says so.
  Request slow;
  slow.op = Op::compile;
  slow.puzzle = "01";
  slow.file = "x.cu";
  slow.source =
      "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {}";
  uint64_t sid = c.send(slow);
  ::kill(c.pid(), SIGKILL);
  auto r = next_result(c, 10, sid);
  REQUIRE(r);
  CHECK_FALSE(r->ok);
  CHECK(r->runner_died);
  CHECK_FALSE(r->timed_out);
  CHECK(r->text.find("signal 9") != std::string::npos);
  CHECK(c.last_exit().find("SIGKILL") != std::string::npos);

  // The next request starts a fresh runner.
  uint64_t again = c.send(slow);
  auto r2 = next_result(c, 60, again);
  REQUIRE(r2);
  CHECK(r2->ok);
  CHECK(c.starts() == 2);
}

TEST_CASE("a runner that never answers is killed at the timeout") {
  ClientOptions o;
  o.command = "exec sleep 30";
  o.timeout_s = 0.5;
  Client c(o);
  uint64_t id = c.send(req(Op::check, "01"));
  auto r = next_result(c, 10, id);
  REQUIRE(r);
  CHECK(r->runner_died);
  CHECK(r->timed_out); // its own time ran out: the window does not send it again
  CHECK(r->text.find("longer than") != std::string::npos);
  CHECK_FALSE(c.running());
}

TEST_CASE("a runner that exits at once is reported with its exit code") {
  ClientOptions o;
  o.command = "echo 'no GPU on this host' >&2; exit 3";
  Client c(o);
  uint64_t id = c.send(req(Op::hello));
  auto r = next_result(c, 10, id);
  REQUIRE(r);
  CHECK(r->runner_died);
  CHECK(r->text.find("exited with code 3") != std::string::npos);
  CHECK(r->text.find("no GPU on this host") != std::string::npos); // its last words
}

TEST_CASE("a cancel the runner ignores ends in a kill after the grace period") {
  ClientOptions o;
  o.command = "exec cat >/dev/null";
  o.cancel_grace_s = 0.3;
  Client c(o);
  uint64_t id = c.send(req(Op::check, "01"));
  c.cancel(id);
  auto r = next_result(c, 10, id);
  REQUIRE(r);
  CHECK(r->cancelled);
  CHECK(r->runner_died);
  CHECK_FALSE(r->timed_out);
}

TEST_CASE("a cancel's grace can be longer than the options' for a request others queue behind") {
  ClientOptions o;
  o.command = "exec cat >/dev/null";
  o.cancel_grace_s = 0.2;
  Client c(o);
  uint64_t id = c.send(req(Op::check, "01"));
  c.cancel(id, 1.5);
  CHECK_FALSE(next_result(c, 0.8, id)); // past the options' grace, still waiting
  auto r = next_result(c, 10, id);
  REQUIRE(r);
  CHECK(r->cancelled);
  CHECK(r->runner_died);
}

TEST_CASE("the runner streams each case before its result, and answers a cancel within 200 ms") {
  ClientOptions o;
  o.command = "'" + exe() + "' runner";
  Client c(o);
  Request wrong = req(Op::check, "01", "sim");
  wrong.file = "x.cu";
  wrong.seed = 1;
  wrong.source = "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* "
                 "c, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) "
                 "c[i] = a[i] - b[i];\n}\n";
  uint64_t id = c.send(wrong, 300);
  std::vector<Event> cases;
  std::optional<Event> result;
  for (int i = 0; i < 300 * 20 && !result; ++i)
    if (auto e = c.wait(0.05); e && e->id == id) {
      if (e->kind == EventKind::case_done) cases.push_back(*e);
      if (e->kind == EventKind::result) result = e;
    }
  REQUIRE(result);
  REQUIRE(result->report);
  CHECK(result->report->verdict == Verdict::wrong_answer);
  REQUIRE(cases.size() == result->report->cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    CHECK(cases[i].index == int(i));
    CHECK(cases[i].total == int(cases.size()));
    REQUIRE(cases[i].case_report);
    CHECK(cases[i].case_report->label == result->report->cases[i].label);
  }
  CHECK(cases[0].case_report->verdict == Verdict::wrong_answer);

  // A kernel that never ends, cancelled in the middle of its simulated run.
  Request endless = wrong;
  endless.source = "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* "
                   "c, int n) {\n  volatile int spin = 1;\n  while (spin) {}\n}\n";
  uint64_t eid = c.send(endless, 300);
  bool in_case = false;
  for (int i = 0; i < 120 * 20 && !in_case; ++i)
    if (auto e = c.wait(0.05); e && e->id == eid && e->kind == EventKind::progress)
      in_case = e->phase.rfind("case ", 0) == 0;
  REQUIRE(in_case);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto t0 = std::chrono::steady_clock::now();
  c.cancel(eid);
  auto r = next_result(c, 10, eid);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(r);
  MESSAGE("the runner answered the cancel in " << ms << " ms");
  CHECK(r->cancelled);
  CHECK_FALSE(r->runner_died);
  CHECK(ms < 200);
  CHECK(c.starts() == 1); // answered, not killed
}
