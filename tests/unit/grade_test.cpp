// `warpbook grade`'s pure parts: UTF-8 validation, the kernel pre-check, finding submissions in a
// class folder, the summary and the CSV. tests/sim/grade_test.cpp runs a whole class.
#include "common/puzzle_suite.hpp"
#include "common/temp_dir.hpp"
#include "core/catalog.hpp"
#include "core/grade.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <stdlib.h>
#include <unistd.h>

using namespace wb;
using namespace wb::grade;

namespace {

const Puzzle& vector_add() {
  const Puzzle* p = test::builtin_catalog().find_puzzle("01");
  REQUIRE(p);
  return *p;
}

using test::TempDir;

const char* kKernel =
    "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n}\n";

} // namespace

TEST_CASE("first_invalid_utf8 finds the first byte that is not UTF-8") {
  CHECK_FALSE(first_invalid_utf8(""));
  CHECK_FALSE(first_invalid_utf8("plain ASCII\n"));
  CHECK_FALSE(first_invalid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9D\x84\x9E")); // é € 𝄞
  CHECK(first_invalid_utf8("caf\xE9\n") == 3);                                  // Latin-1 é
  CHECK(first_invalid_utf8("ab\x80") == 2);           // a continuation byte with no lead
  CHECK(first_invalid_utf8("\xC0\xAF") == 0);         // an overlong '/'
  CHECK(first_invalid_utf8("x\xE0\x80\xAF") == 1);    // an overlong three-byte form
  CHECK(first_invalid_utf8("\xED\xA0\x80") == 0);     // a UTF-16 surrogate
  CHECK(first_invalid_utf8("\xF4\x90\x80\x80") == 0); // past U+10FFFF
  CHECK(first_invalid_utf8("ok\xE2\x82") == 2);       // cut off at the end
  CHECK(first_invalid_utf8("\xE2\x82 \xAC") == 0);    // interrupted
  CHECK(first_invalid_utf8(std::string("a\0b", 3)) == std::nullopt); // NUL is UTF-8
}

TEST_CASE("kernel_problem: a __global__ function with the puzzle's kernel name, outside comments") {
  const Puzzle& p = vector_add();
  CHECK(kernel_problem(kKernel, p).empty());
  // Only comments and strings hold the kernel: none.
  std::string commented = std::string("/*\n") + kKernel +
                          "*/\n// __global__ void vector_add()\n"
                          "const char* s = \"__global__ void vector_add(\";\n";
  CHECK(kernel_problem(commented, p).find("no __global__ function") == 0);
  CHECK(kernel_problem("__device__ float add(float a, float b) { return a + b; }\n", p)
            .find("no __global__ function") == 0);
  std::string misnamed =
      "extern \"C\" __global__ void vec_add(float* c) {}\n__global__ void helper() {}\n";
  std::string why = kernel_problem(misnamed, p);
  CHECK(why.find("no kernel named vector_add") == 0);
  CHECK(why.find("vec_add, helper") != std::string::npos);
  // Character literals and escaped quotes do not confuse the scanner.
  CHECK(
      kernel_problem(std::string("const char q = '\\'';\nconst char* s = \"\\\"\";\n") + kKernel, p)
          .empty());
}

TEST_CASE("precheck: too large, not UTF-8 (where), no kernel; nothing for a plausible file") {
  Submission s;
  s.student = "erin";
  s.file = "erin/01.cu";
  s.key = "01";
  s.puzzle = &vector_add();
  auto big = precheck(s, "", 300 * 1024, 256 * 1024);
  REQUIRE(big);
  CHECK(big->verdict == "too_large");
  CHECK(big->diagnostic == "the file is 300.0 KiB, over the 256.0 KiB limit for a submission");
  auto latin1 = precheck(s, std::string("// ok\n// na\xEFve\n") + kKernel, 100, 256 * 1024);
  REQUIRE(latin1);
  CHECK(latin1->verdict == "invalid_utf8");
  CHECK(latin1->diagnostic.find("byte 0xEF at offset 11 (line 2, column 6)") != std::string::npos);
  CHECK(latin1->student == "erin");
  CHECK(latin1->puzzle == "01-vector-add");
  auto none = precheck(s, "int x;\n", 7, 256 * 1024);
  REQUIRE(none);
  CHECK(none->verdict == "no_kernel");
  CHECK_FALSE(precheck(s, kKernel, 100, 256 * 1024));
}

TEST_CASE("find_submissions: student folders (nested too) and STUDENT.PUZZLE.cu files") {
  TempDir d;
  d.write("alice/01.cu", kKernel);
  d.write("alice/unpacked/src/02-row-sum.cu", "x");
  d.write("alice/notes.txt", "not a submission");
  d.write("alice/.backup/01.cu", "hidden");
  d.write("bob/vector-add.cu", "x");
  d.write("bob/99.cu", "x");
  d.write("j.smith.01-vector-add.cu", "x");
  d.write("nopuzzle.cu", "x");
  d.write(".warpbook-grade.json", "{}");
  d.write("README.md", "x");
  auto subs = find_submissions(d.path, test::builtin_catalog());
  REQUIRE(subs.size() == 6);
  CHECK(subs[0].file == "alice/01.cu");
  CHECK(subs[0].student == "alice");
  CHECK(subs[0].puzzle->id == "01-vector-add");
  CHECK(subs[1].file == "alice/unpacked/src/02-row-sum.cu");
  CHECK(subs[1].puzzle->id == "02-row-sum");
  CHECK(subs[2].file == "bob/99.cu");
  CHECK(subs[2].puzzle == nullptr);
  CHECK(subs[2].key == "99");
  CHECK(subs[3].file == "bob/vector-add.cu");
  CHECK(subs[3].puzzle->id == "01-vector-add"); // the slug names it too
  CHECK(subs[4].student == "j.smith");
  CHECK(subs[4].puzzle->id == "01-vector-add");
  CHECK(subs[5].student == "nopuzzle");
  CHECK(subs[5].key.empty());
  CHECK(subs[5].puzzle == nullptr);
}

TEST_CASE("summarize: passed of total, the fastest, the usual failure; unknown puzzles apart") {
  auto row = [](std::string student, std::string puzzle, std::string verdict, double us = 0) {
    Row r;
    r.student = std::move(student);
    r.puzzle = std::move(puzzle);
    r.verdict = std::move(verdict);
    r.time_us = us;
    r.predicted = us > 0;
    return r;
  };
  auto s =
      summarize({row("a", "01-vector-add", "passed", 200), row("b", "01-vector-add", "passed", 150),
                 row("c", "01-vector-add", "wrong_answer"), row("d", "01-vector-add", "timeout"),
                 row("e", "01-vector-add", "wrong_answer"), row("f", "02-row-sum", "compile_error"),
                 row("g", "99", "unknown_puzzle")});
  REQUIRE(s.size() == 2);
  CHECK(s[0].puzzle == "01-vector-add");
  CHECK(s[0].passed == 2);
  CHECK(s[0].total == 5);
  CHECK(s[0].fastest_student == "b");
  CHECK(s[0].fastest_us == 150);
  CHECK(s[0].fastest_predicted);
  CHECK(s[0].usual_failure == "wrong_answer");
  CHECK(s[0].usual_failure_count == 2);
  CHECK(s[1].passed == 0);
  CHECK(s[1].fastest_student.empty());
  CHECK(s[1].usual_failure == "compile_error");
}

TEST_CASE("to_csv quotes what needs it and defuses spreadsheet formulas") {
  Row r;
  r.student = "=HYPERLINK(\"x\")";
  r.puzzle = "01-vector-add";
  r.file = "a,b.cu";
  r.verdict = "wrong_answer";
  r.cases_passed = 2;
  r.cases_total = 6;
  r.diagnostic = "case n=7: c[3] = 1, expected 2";
  std::string csv = to_csv({r});
  auto nl = csv.find('\n');
  CHECK(csv.substr(0, nl) == "student,puzzle,file,verdict,cases_passed,cases_total,time_us,"
                             "predicted,speed_of_light,medal,diagnostic,seed,unchanged");
  CHECK(csv.substr(nl + 1) == "\"'=HYPERLINK(\"\"x\"\")\",01-vector-add,\"a,b.cu\",wrong_answer,2,"
                              "6,,false,,,\"case n=7: c[3] = 1, expected 2\",0,false\n");
}

TEST_CASE("group_rss_kib sums a process group's resident memory") {
  CHECK(group_rss_kib(::getpgrp()) > 1000); // this test process alone holds more than 1 MiB
  CHECK(group_rss_kib(999999999) == 0);
}
