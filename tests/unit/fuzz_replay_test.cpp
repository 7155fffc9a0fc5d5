// Replays every file of the fuzz corpus (fuzz/corpus/<target>/) through the same entry points the
// libFuzzer targets call (fuzz/fuzz_entries.hpp), with the normal compiler: CI keeps every input
// that once crashed, hung or found new coverage, without needing clang. The inputs that found
// bugs are named crash-* / regress-*; see docs/faults.md, "Fuzzing".
#include "../../fuzz/fuzz_entries.hpp"

#include <algorithm>
#include <chrono>
#include <doctest/doctest.h>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;

template <class F> void replay(const char* target, F entry) {
  fs::path dir = fs::path(WARPBOOK_SOURCE_ROOT) / "fuzz" / "corpus" / target;
  REQUIRE_MESSAGE(fs::is_directory(dir), dir.string());
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 10);
  auto t0 = std::chrono::steady_clock::now();
  for (auto& f : files) {
    CAPTURE(f.filename().string());
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string data = ss.str();
    auto t = std::chrono::steady_clock::now();
    CHECK(entry(reinterpret_cast<const uint8_t*>(data.data()), data.size()) == 0);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    CHECK_MESSAGE(s < 2.0, "slow input: " << s << " s"); // a hang the fuzzer would report
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE(std::string(target) << ": " << files.size() << " corpus files replayed in " << s << " s");
}

} // namespace

TEST_CASE("fuzz corpus replay: PTX parser") {
  replay("ptx", wb::fuzz::ptx);
}
TEST_CASE("fuzz corpus replay: size expressions and generators") {
  replay("expr", wb::fuzz::expr);
}
TEST_CASE("fuzz corpus replay: puzzle.toml and lesson.md loader") {
  replay("puzzle", wb::fuzz::puzzle);
}
