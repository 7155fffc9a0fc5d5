// printf bounded in bytes and time whatever the format (core/printf_guard.hpp): the output bound
// and its note, UTF-8 at the source, the simulator's own clamping (a call that bypasses the guard),
// the guard compiled into a learner's source, a bad %s pointer, and the report writer with bytes
// that are not UTF-8.
#include "sim_test_util.hpp"

#include "core/printf_guard.hpp"
#include "core/report_json.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <chrono>

using namespace simtest;

namespace {

bool has(const std::string& s, const std::string& w) {
  return s.find(w) != std::string::npos;
}

// Valid UTF-8 throughout: what nlohmann's strict dump accepts.
bool valid_utf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

// The learner's path: compile_source (with the guard in its prelude), then the simulator.
wb::Program guarded(const std::string& source) {
  wb::CompileOptions o;
  wb::Program p = wb::compile_source(source, "learner.cu", o);
  REQUIRE_MESSAGE(p.ok, p.log);
  return p;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

TEST_CASE("printf sink: the bound, the note, whole characters and escaped bytes") {
  wb::PrintfSink s(16);
  s.add("0123456789");
  s.add("abcdef\xc3\xa9xyz"); // é straddles the bound: cut before it, never inside
  CHECK(s.text() == "0123456789abcdef");
  CHECK(s.dropped() == 5);
  s.add("more");
  CHECK(s.dropped() == 9);
  CHECK(s.finish() == "0123456789abcdef\n\xE2\x80\xA6 9 more bytes not shown\n");
  CHECK(wb::printf_cut_note(3) == "\xE2\x80\xA6 3 more bytes not shown\n");

  CHECK(wb::utf8_escaped("ok \xff\xfe \x80 \xc3\x28 \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80") ==
        "ok \\xff\\xfe \\x80 \\xc3( \\xe2\\x82 \\xed\\xa0\\x80 \\xf4\\x90\\x80\\x80");
  CHECK(wb::utf8_escaped("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80") ==
        "caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80");
  wb::PrintfSink t;
  t.add("\xff\n");
  CHECK(t.text() == "\\xff\n");
  CHECK(t.finish() == "\\xff\n");
}

TEST_CASE("printf on the simulator: output past the bound is counted and the note is exact") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k() {
  printf("thread %3d of block %2d says: 0123456789abcdef\n", threadIdx.x, blockIdx.x);
})");
  p.launch("k", {16, 1, 1}, {256, 1, 1}, {});
  auto r = p.run();
  REQUIRE(!r.fault);
  CHECK(r.printf_truncated);
  // 4096 lines of 46 bytes: 188416 printed, 65536 kept (1424 whole lines and 32 bytes).
  const std::string note = "\xE2\x80\xA6 122880 more bytes not shown\n";
  REQUIRE(r.printf_output.size() == wb::kPrintfOutputBound + 1 + note.size());
  CHECK(r.printf_output.substr(r.printf_output.size() - note.size()) == note);
  CHECK(r.printf_output.rfind("thread   0 of block  0 says", 0) == 0);
}

TEST_CASE("printf on the simulator: enormous widths and precisions cost no more than the bound") {
  Plan p;
  // Straight to vprintf, as a call that bypasses the guard would: the simulator clamps on its own.
  p.program = program_from(R"(extern "C" __global__ void k(int n) {
  printf("[%100000000d]\n", n);
  printf("[%.*f]\n", 100000000, 1.5);
  printf("[%*d]\n", -1000000, n);
  printf("[%.1000000000d]\n", n);
})");
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::val(7)});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = p.run();
  CHECK(seconds_since(t0) < 2.0);
  REQUIRE(!r.fault);
  const std::string w(63, ' ');
  CHECK(has(r.printf_output, "[" + w + "7]\n"));
  CHECK(has(r.printf_output, "[1.5" + std::string(63, '0') + "]\n"));
  CHECK(has(r.printf_output, "[7" + w + "]\n"));
  CHECK(has(r.printf_output, "[" + std::string(63, '0') + "7]\n"));
  // What the uncut fields would have printed, per thread: (1e8 - 64) + (1e8 - 64) + (1e6 - 64)
  // + (1e9 - 64); 32 threads.
  const uint64_t more = 32ull * (100000000 - 64 + 100000000 - 64 + 1000000 - 64 + 1000000000 - 64);
  CHECK(has(r.printf_output, "\xE2\x80\xA6 " + std::to_string(more) + " more bytes not shown\n"));
}

TEST_CASE("printf on the simulator: %n writes nothing, %s reads to its precision or the bound") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out) {
  __shared__ char text[3000];
  for (int i = threadIdx.x; i < 3000; i += blockDim.x) text[i] = i < 2000 ? 'a' + i % 26 : 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    printf("abc%n|\n", out);
    printf("%.3s|\n", text);
    printf("%s|\n", text);
    printf("%s|\n", (const char*)0);
  }
})");
  int O = p.buffer("out", std::vector<int32_t>(1, 42));
  p.launch("k", {1, 1, 1}, {64, 1, 1}, {Plan::buf(O)});
  auto r = p.run();
  REQUIRE(!r.fault);
  CHECK(p.get<int32_t>(O)[0] == 42);
  std::string alphabet;
  for (int i = 0; i < wb::kPrintfStringBound; ++i) alphabet += char('a' + i % 26);
  CHECK(r.printf_output == "abc|\nabc|\n" + alphabet + "|\n(null)|\n");
}

TEST_CASE("printf on the simulator: a bad %s pointer is an out-of-bounds fault naming the line") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(const float* a) {
  if (threadIdx.x == 5)
    printf("%s\n", (const char*)(a + (1 << 28)));
})");
  int A = p.buffer("a", std::vector<float>(32, 1.0f));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(A)});
  auto r = p.run();
  REQUIRE(r.fault.kind == wb::FaultKind::out_of_bounds);
  CHECK(r.fault.source_line == 3);
  CHECK(has(r.fault.message, "thread (5,0,0) of block (0,0,0) read address"));
  CHECK(has(r.fault.message, "outside every buffer"));
  CHECK(has(r.fault.message, "at line 3, reading printf's %s argument"));
}

TEST_CASE("printf on the simulator: bytes that are not UTF-8 come out escaped") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k() {
  printf("A\xff%c%c\xc3\xa9\n", 0xc3, 0x28);
})");
  p.launch("k", {1, 1, 1}, {1, 1, 1}, {});
  auto r = p.run();
  REQUIRE(!r.fault);
  CHECK(r.printf_output == "A\\xff\\xc3(\xc3\xa9\n");
  CHECK(valid_utf8(r.printf_output));
}

TEST_CASE("printf guard: the learner's printf is bounded at the source, and keeps its lines") {
  // Through compile_source: the guard rewrites the format before the real printf sees it.
  Plan p;
  p.program = guarded(R"(extern "C" __global__ void k(int* out, int n) {
  int count = 0;
  if (threadIdx.x == 0) {
    printf("[%100000000d]\n", n);
    printf("[%.*f][%*d]\n", 100000000, 0.25, 1 << 30, n);
    printf("abc%n|%-5d|%.2f|%s|%5.1s|\n", out, n, 2.5, "str", "xy");
    std::printf("%%|%c|%p\n", 'z', (void*)0);
  }
  out[1] = count;
  if (threadIdx.x == 1) printf("%s\n", (const char*)(out + (1 << 28)));
})");
  int O = p.buffer("out", std::vector<int32_t>(2, 42));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(O), Plan::val(7)});
  auto r = p.run();
  REQUIRE(r.fault.kind == wb::FaultKind::out_of_bounds);
  CHECK(r.fault.source_line == 10); // the call's line, not the guard's
  CHECK(has(r.fault.message, "reading printf's %s argument"));
  CHECK(p.get<int32_t>(O)[0] == 42); // %n stored nothing
  const std::string w(63, ' ');
  CHECK(has(r.printf_output, "[" + w + "7]\n"));
  CHECK(has(r.printf_output, "[0.25" + std::string(62, '0') + "][" + w + "7]\n"));
  CHECK(has(r.printf_output, "abc|7    |2.50|str|    x|\n"));
  CHECK(has(r.printf_output, "%|z|0x0\n"));
  // The guard clamped the fields before the simulator saw them: no bytes were left uncounted.
  CHECK_FALSE(r.printf_truncated);
}

TEST_CASE("printf guard: a flood of wide fields on every thread ends quickly") {
  Plan p;
  p.program = guarded(R"(extern "C" __global__ void k(float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k) printf("%*d|%1000000.3f|%-1000000s|\n", 1 << 20, i, 0.5f, "left");
  if (i < n) c[i] = 1.0f;
})");
  const int n = 256 * 64;
  int C = p.buffer("c", std::vector<float>(n));
  p.launch("k", {64, 1, 1}, {256, 1, 1}, {Plan::buf(C), Plan::val(n)});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = p.run();
  CHECK(seconds_since(t0) < 10.0);
  REQUIRE(!r.fault);
  CHECK(r.printf_truncated);
  CHECK(has(r.printf_output, " more bytes not shown\n"));
  CHECK(valid_utf8(r.printf_output));
}

TEST_CASE("report JSON: bytes that are not UTF-8 never stop a report from being written") {
  wb::CheckReport rep;
  rep.verdict = wb::Verdict::passed;
  rep.summary = "ok \xff";
  wb::CaseReport c;
  c.label = "n=1";
  c.printf_output = "bad \xc3\x28 bytes \xfe\n";
  rep.cases.push_back(c);
  std::string text;
  REQUIRE_NOTHROW(text = wb::report_to_json(rep, -1));
  CHECK(valid_utf8(text));
  const wb::CheckReport back = wb::report_from_json(text);
  REQUIRE(back.cases.size() == 1);
  CHECK(back.cases[0].printf_output == "bad \xef\xbf\xbd( bytes \xef\xbf\xbd\n"); // U+FFFD
  CHECK(back.summary == "ok \xef\xbf\xbd");
  nlohmann::json j = {{"printf", "\x80"}};
  CHECK(wb::dump_json(j) == "{\"printf\":\"\xef\xbf\xbd\"}");
}

TEST_CASE("printf guard: the simulator's native rewrite gives what the device code gives") {
  // The guard's device code under another namespace is not intercepted: simulated byte by byte.
  std::string guard = wb::printf_guard_source();
  for (size_t at; (at = guard.find("wb_printf_guard::")) != std::string::npos;)
    guard.replace(at, 17, "wb_guard_copy::");
  for (size_t at; (at = guard.find("namespace wb_printf_guard")) != std::string::npos;)
    guard.replace(at, 25, "namespace wb_guard_copy");
  guard =
      guard.substr(0, guard.find("template <class... A> __host__ __device__ __forceinline__ int "
                                 "wb_printf_bounded"));
  const std::vector<std::string> formats = {
      "plain text\n",
      "%d %5d %-08.3f %s %.2s %c %%\n",
      "[%100000000d] [%.*f] [%*.*d] %n|%5n|%*.*n\n",
      "%.100000s %1000000.1000000e %lld %hhx %zu %p",
      std::string(600, 'x') + "%d",
      std::string(505, 'y') + "%100d tail",
      "%d " + std::string(600, 'z') + "%100000000d %*d\n",
      "%",
      "%5",
      "%ls %lc %jd %td %Lf %qd",
  };
  std::string packed;
  std::vector<int32_t> starts;
  for (auto& f : formats) {
    starts.push_back(int32_t(packed.size()));
    packed += f;
    packed += '\0';
  }
  Plan p;
  p.program = program_from(guard + R"(
extern "C" __global__ void k(const char* text, const int* starts, char* out,
                             unsigned long long* masks, int* changed, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  wb_guard_copy::Job job{text + starts[i], out + 512 * i, {0, 0, 0, 0}, 0};
  wb_guard_copy::rewrite(&job);
  changed[i] = job.changed;
  masks[4 * i] = job.m.field;
  masks[4 * i + 1] = job.m.string;
  masks[4 * i + 2] = job.m.zero;
  masks[4 * i + 3] = job.m.str;
}
)");
  const int n = int(formats.size());
  int T = p.buffer("text", std::vector<uint8_t>(packed.begin(), packed.end()));
  int S = p.buffer("starts", starts);
  int O = p.buffer("out", std::vector<uint8_t>(512 * size_t(n)));
  int M = p.buffer("masks", std::vector<uint64_t>(4 * size_t(n)));
  int C = p.buffer("changed", std::vector<int32_t>(size_t(n)));
  p.launch("k", {1, 1, 1}, {32, 1, 1},
           {Plan::buf(T), Plan::buf(S), Plan::buf(O), Plan::buf(M), Plan::buf(C), Plan::val(n)});
  auto r = p.run();
  REQUIRE(!r.fault);
  const auto out = p.get<uint8_t>(O);
  const auto masks = p.get<uint64_t>(M);
  const auto changed = p.get<int32_t>(C);
  for (int i = 0; i < n; ++i) {
    CAPTURE(formats[size_t(i)]);
    std::string got(reinterpret_cast<const char*>(out.data()) + 512 * i);
    wb::PrintfGuardMasks want_m;
    std::string want;
    const bool want_changed = wb::printf_guard_rewrite(formats[size_t(i)], want, want_m);
    CHECK(changed[size_t(i)] == int(want_changed));
    if (want_changed) CHECK(got == want);
    CHECK(masks[4 * size_t(i)] == want_m.field);
    CHECK(masks[4 * size_t(i) + 1] == want_m.string);
    CHECK(masks[4 * size_t(i) + 2] == want_m.zero);
    CHECK(masks[4 * size_t(i) + 3] == want_m.str);
  }
  // And what the rules give, spelled out for a few.
  wb::PrintfGuardMasks m;
  std::string s;
  CHECK(wb::printf_guard_rewrite("[%100000000d] [%.*f] %n|%s", s, m));
  CHECK(s == "[%64d] [%.*f] %.0llx|%.1024s");
  CHECK(m.field == 0b10);
  CHECK(m.zero == 0b1000);
  CHECK(m.str == 0b10000);
  m = {};
  CHECK_FALSE(wb::printf_guard_rewrite("%d %*d %.3s", s, m));
  CHECK(m.field == 0b10);
  // Too long for the copy: cut before the unit that does not fit, the masks still whole.
  m = {};
  CHECK(wb::printf_guard_rewrite("%d " + std::string(600, 'z') + "%100000000d %*d", s, m));
  CHECK(s == "%d " + std::string(508, 'z'));
  CHECK(m.field == 0b100);
  m = {};
  CHECK_FALSE(wb::printf_guard_rewrite(std::string(600, 'z') + "%5d", s, m)); // used whole
}

TEST_CASE("printf guard: compiles with -default-device, from helpers, lambdas and std::printf") {
  wb::CompileOptions o;
  o.extra = {"-default-device"};
  const wb::Program p = wb::compile_source(R"(
void helper(const char* fmt, int v) { printf(fmt, v); }
__host__ __device__ void both(int v) { std::printf("both %d\n", v); }
extern "C" __global__ void k(int n) {
  auto l = [&](int v) { printf("lambda %d %s\n", v, "x"); };
  l(n);
  helper("%5d\n", n);
  both(n);
  printf("no arguments\n");
  printf("%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n",
         1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
         28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40);
}
)",
                                           "learner.cu", o);
  REQUIRE_MESSAGE(p.ok, p.log);
  CHECK(p.diagnostics.empty());
  Plan run;
  run.program = p;
  run.launch("k", {1, 1, 1}, {1, 1, 1}, {Plan::val(3)});
  auto r = run.run();
  REQUIRE(!r.fault);
  CHECK(
      r.printf_output ==
      "lambda 3 x\n    3\nboth 3\nno arguments\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 "
      "21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40\n");
}
