// `warpbook grade` over a whole class on the simulator: a passing, a wrong, a faulting, an endless,
// a crashing (its runner dies), a non-UTF-8, a huge and two kernel-less submissions and one that
// names no puzzle, each with its row; the summary, the CSV and the JSON; the cache (a second run
// skips what did not change, --force does not); the memory limit.
#include "common/puzzle_suite.hpp"
#include "common/temp_dir.hpp"
#include "core/catalog.hpp"
#include "core/grade.hpp"

#include <algorithm>
#include <cstdlib>
#include <doctest/doctest.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdlib.h>

using namespace wb;
using namespace wb::grade;

namespace {

std::string exe() {
  const char* e = std::getenv("WARPBOOK_EXE");
  return e ? e : WARPBOOK_BINARY_DIR "/warpbook";
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using test::TempDir;

const Row& row_of(const Result& r, const std::string& student) {
  for (auto& row : r.rows)
    if (row.student == student) return row;
  static const Row none;
  FAIL("no row for " << student);
  return none;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const char* kSignature =
    "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n";

std::string kernel(const std::string& body) {
  return kSignature + body + "}\n";
}

// A runner that dies of SIGSEGV when its request holds CRASH_THE_RUNNER, and is a real `warpbook
// runner` otherwise: a crash of the runner process itself, not a fault the checker reports.
std::string crashing_runner_script() {
  return "ulimit -c 0\n"
         "IFS= read -r request\n"
         "case \"$request\" in *CRASH_THE_RUNNER*) kill -SEGV $$ ;; esac\n"
         "{ printf '%s\\n' \"$request\"; exec cat; } | exec '" +
         exe() + "' --catalog '" + WARPBOOK_SOURCE_ROOT + "' runner\n";
}

} // namespace

TEST_CASE("grade: one row per submission, whatever it does; the summary, CSV, JSON and cache") {
  TempDir work;
  TempDir cls;
  const std::string solution = read(fs::path(WARPBOOK_SOURCE_ROOT) / "solutions/01-vector-add.cu");
  REQUIRE(!solution.empty());
  const std::string index = "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n";
  cls.write("alice/01.cu", solution);
  cls.write("bob/01-vector-add.cu", kernel(index + "  if (i < n) c[i] = a[i] - b[i];\n"));
  cls.write("carol/01.cu", kernel(index + "  if (i < n) c[i + (1 << 28)] = a[i] + b[i];\n"));
  // An endless loop that the simulator runs slowly: an empty `while (true) {}` reaches the
  // simulator's instruction budget (432 M warp instructions) in about 6 s on a 2-core machine,
  // and then ends as the simulator's own fault, racing the grade's 6-second limit this test is
  // about; an atomic in the loop keeps it far below that budget until the grade stops it.
  cls.write("dave/01.cu", kernel("  while (true) { atomicAdd(c, 1.0f); }\n"));
  cls.write("erin/01.cu",
            "// caf\xE9 au lait\n" + kernel(index + "  if (i < n) c[i] = a[i] + b[i];\n"));
  cls.write("frank/01.cu", solution + "// " + std::string(300 * 1024, 'x') + "\n");
  cls.write("grace/01.cu", "__device__ float add(float a, float b) { return a + b; }\n");
  cls.write("heidi.01.cu", "extern \"C\" __global__ void vec_add(float* c) { c[0] = 1; }\n");
  cls.write("ivan/99.cu", solution);
  cls.write("mallory/01.cu", solution + "// CRASH_THE_RUNNER\n");
  cls.write("README.txt", "not a submission");
  work.write("runner.sh", crashing_runner_script());

  Options opt;
  opt.dir = cls.path;
  opt.backend = "sim";
  opt.jobs = 2;
  opt.runner_command = "bash " + (work.path / "runner.sh").string();
  opt.timeout_s = 6; // under the simulator's own 10 s per case, so the grade is what stops dave
  std::vector<std::string> progress;
  opt.progress = [&](const std::string& line) { progress.push_back(line); };

  Result r = grade_class(test::builtin_catalog(), opt);
  REQUIRE(r.rows.size() == 10);
  CHECK(r.checked == 5); // alice, bob, carol, dave, mallory: the rest needed no runner
  CHECK(r.unchanged == 0);
  CHECK(r.warnings.empty());

  const Row& alice = row_of(r, "alice");
  CHECK(alice.verdict == "passed");
  CHECK(alice.puzzle == "01-vector-add");
  CHECK(alice.file == "alice/01.cu");
  CHECK(alice.cases_passed == 6); // five [[case]]s and the [sim_perf] size
  CHECK(alice.cases_total == 6);
  CHECK(alice.time_us > 0);
  CHECK(alice.predicted);
  CHECK(alice.speed_of_light > 0);
  CHECK_FALSE(alice.medal.empty());
  CHECK(alice.diagnostic.empty());

  const Row& bob = row_of(r, "bob");
  CHECK(bob.verdict == "wrong_answer");
  CHECK(bob.cases_passed == 0);
  CHECK(bob.cases_total == 6);
  CHECK(bob.time_us == 0);
  CHECK_MESSAGE(bob.diagnostic.rfind("case n=1: 1 of 1 elements of c are wrong", 0) == 0,
                bob.diagnostic);

  const Row& carol = row_of(r, "carol");
  CHECK(carol.verdict == "runtime_fault");
  CHECK_MESSAGE(carol.diagnostic.rfind("case n=1: out-of-bounds access", 0) == 0, carol.diagnostic);
  CHECK_MESSAGE(has(carol.diagnostic, "at line 3"), carol.diagnostic);

  const Row& dave = row_of(r, "dave");
  CHECK(dave.verdict == "timeout");
  CHECK(dave.diagnostic ==
        "still running after 6 s (the --timeout), so its runner was killed: an endless loop?");
  CHECK(dave.seconds >= 6);
  CHECK(dave.seconds < 9);

  const Row& erin = row_of(r, "erin");
  CHECK(erin.verdict == "invalid_utf8");
  CHECK(erin.diagnostic == "not valid UTF-8: byte 0xE9 at offset 6 (line 1, column 7); save the "
                           "file as UTF-8");

  const Row& frank = row_of(r, "frank");
  CHECK(frank.verdict == "too_large");
  CHECK_MESSAGE(has(frank.diagnostic, "KiB, over the 256.0 KiB limit"), frank.diagnostic);

  CHECK(row_of(r, "grace").verdict == "no_kernel");
  CHECK(row_of(r, "grace").diagnostic.rfind("no __global__ function in the file", 0) == 0);
  const Row& heidi = row_of(r, "heidi");
  CHECK(heidi.verdict == "no_kernel");
  CHECK(heidi.file == "heidi.01.cu");
  CHECK(heidi.diagnostic ==
        "no kernel named vector_add (the puzzle's); the file's __global__ functions: vec_add");

  const Row& ivan = row_of(r, "ivan");
  CHECK(ivan.verdict == "unknown_puzzle");
  CHECK(ivan.puzzle == "99");
  CHECK(has(ivan.diagnostic, "'99' names no puzzle"));

  const Row& mallory = row_of(r, "mallory");
  CHECK(mallory.verdict == "runner_crashed");
  CHECK_MESSAGE(has(mallory.diagnostic, "killed by signal 11 (SIGSEGV"), mallory.diagnostic);

  // Progress: a line per finished row, n of m, and the runner checks as they start.
  CHECK(progress.size() == 15);
  CHECK(std::count_if(progress.begin(), progress.end(),
                      [](auto& l) { return has(l, "[10/10] "); }) == 1);
  CHECK(std::count_if(progress.begin(), progress.end(), [](auto& l) {
          return l == "checking dave/01.cu (01-vector-add by dave)";
        }) == 1);

  // The summary: ivan's unknown puzzle is no part of 01's.
  REQUIRE(r.summary.size() == 1);
  const PuzzleSummary& s = r.summary[0];
  CHECK(s.puzzle == "01-vector-add");
  CHECK(s.passed == 1);
  CHECK(s.total == 9);
  CHECK(s.fastest_student == "alice");
  CHECK(s.fastest_us == alice.time_us);
  CHECK(s.usual_failure == "no_kernel");
  CHECK(s.usual_failure_count == 2);

  // CSV: a header and a line per row, in the rows' order (by student).
  const std::string csv = to_csv(r.rows);
  std::vector<std::string> lines;
  for (std::stringstream ss(csv); std::getline(ss, lines.emplace_back());) {
  }
  lines.pop_back();
  REQUIRE(lines.size() == 11);
  CHECK(lines[1].rfind("alice,01-vector-add,alice/01.cu,passed,6,6,", 0) == 0);
  CHECK(has(lines[1], ",true,")); // predicted
  CHECK(lines[5] == "erin,01-vector-add,erin/01.cu,invalid_utf8,0,0,,false,,,\"not valid UTF-8: "
                    "byte 0xE9 at offset 6 (line 1, column 7); save the file as UTF-8\",0,false");
  CHECK(lines[9].rfind("ivan,99,ivan/99.cu,unknown_puzzle,", 0) == 0);

  // JSON: every row and the summary.
  auto j = nlohmann::json::parse(to_json(r, opt));
  CHECK(j["backend"] == "sim");
  CHECK(j["checked"] == 5);
  REQUIRE(j["rows"].size() == 10);
  CHECK(j["rows"][0]["student"] == "alice");
  CHECK(j["rows"][0]["verdict"] == "passed");
  CHECK(j["rows"][0]["time_us"].get<double>() == doctest::Approx(alice.time_us));
  CHECK(j["rows"][3]["verdict"] == "timeout");
  CHECK(j["rows"][3]["time_us"].is_null());
  CHECK(j["summary"][0]["passed"] == 1);
  CHECK(j["summary"][0]["total"] == 9);
  CHECK(j["summary"][0]["fastest"]["student"] == "alice");
  CHECK(j["summary"][0]["usual_failure"]["verdict"] == "no_kernel");
  CHECK(j["summary"][0]["usual_failure"]["count"] == 2);

  // The cache, written atomically inside DIR: every runner-checked row but the crashed one (the
  // crash may have been the machine's).
  auto cache = nlohmann::json::parse(read(cls.path / kCacheName));
  CHECK(cache["entries"].size() == 4);
  CHECK_FALSE(cache["entries"].contains("mallory/01.cu"));

  // Again, unchanged: only mallory's crash is checked again; dave's timeout costs nothing now.
  progress.clear();
  Result again = grade_class(test::builtin_catalog(), opt);
  CHECK(again.checked == 1);
  CHECK(again.unchanged == 4);
  CHECK(row_of(again, "alice").unchanged);
  CHECK(row_of(again, "alice").time_us == alice.time_us);
  CHECK(row_of(again, "dave").verdict == "timeout");
  CHECK(row_of(again, "dave").unchanged);
  CHECK_FALSE(row_of(again, "mallory").unchanged);
  CHECK(std::count_if(progress.begin(), progress.end(), [](auto& l) {
          return has(l, "alice 01-vector-add: unchanged since the last run (passed)");
        }) == 1);

  // Bob fixes his kernel: his file is checked again, and now passes.
  cls.write("bob/01-vector-add.cu", kernel(index + "  if (i < n) c[i] = a[i] + b[i];\n"));
  Result fixed = grade_class(test::builtin_catalog(), opt);
  CHECK(fixed.checked == 2);
  CHECK(fixed.unchanged == 3);
  CHECK(row_of(fixed, "bob").verdict == "passed");
  CHECK_FALSE(row_of(fixed, "bob").unchanged);
  CHECK(fixed.summary[0].passed == 2);

  // --force checks everything again.
  opt.force = true;
  Result forced = grade_class(test::builtin_catalog(), opt);
  CHECK(forced.checked == 5);
  CHECK(forced.unchanged == 0);
  CHECK(row_of(forced, "dave").verdict == "timeout");
  CHECK_FALSE(row_of(forced, "alice").unchanged);
}

TEST_CASE("grade: a runner past --memory is killed and its row says so") {
  TempDir cls;
  cls.write("alice/01.cu", read(fs::path(WARPBOOK_SOURCE_ROOT) / "solutions/01-vector-add.cu"));
  Options opt;
  opt.dir = cls.path;
  opt.backend = "sim";
  opt.runner_command = "'" + exe() + "' --catalog '" + WARPBOOK_SOURCE_ROOT + "' runner";
  opt.memory_mib = 16; // any runner holds more once NVRTC is loaded
  Result r = grade_class(test::builtin_catalog(), opt);
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].verdict == "out_of_memory");
  CHECK_MESSAGE(has(r.rows[0].diagnostic, "over the --memory limit of 16 MiB, so it was killed"),
                r.rows[0].diagnostic);
  // The limit is part of what a row depends on: a higher one checks the file again.
  opt.memory_mib = 4096;
  Result more = grade_class(test::builtin_catalog(), opt);
  CHECK(more.checked == 1);
  CHECK(more.rows[0].verdict == "passed");
}

TEST_CASE("grade: usage problems are thrown, an empty folder leaves no cache behind") {
  TempDir cls;
  Options opt;
  opt.dir = cls.path / "missing";
  CHECK_THROWS_AS(grade_class(test::builtin_catalog(), opt), std::invalid_argument);
  opt.dir = cls.path;
  opt.jobs = 0;
  CHECK_THROWS_AS(grade_class(test::builtin_catalog(), opt), std::invalid_argument);
  opt.jobs = 1;
  CHECK(grade_class(test::builtin_catalog(), opt).rows.empty());
  CHECK_FALSE(fs::exists(cls.path / kCacheName));
}
