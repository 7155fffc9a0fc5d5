// Instruction coverage: every kernel of the corpus (tests/corpus, tests/libraries, tests/kernels:
// the wgmma GEMMs), of every puzzle (reference, starter) and of every solution, compiled for
// compute_80 and compute_90, decodes without a single instruction the simulator does not implement.
// Also writes the list of distinct instruction spellings seen (build dir:
// sim_instruction_coverage.txt) for docs/simulator.md.
#include "sim_test_util.hpp"

#include "core/backend/sim/decode.hpp"
#include "core/compile.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> sources() {
  std::vector<fs::path> v;
  fs::path root = WARPBOOK_SOURCE_ROOT;
  for (const char* dir : {"corpus", "libraries", "kernels"})
    for (auto& e : fs::directory_iterator(root / "tests" / dir))
      if (e.path().extension() == ".cu") v.push_back(e.path());
  if (fs::exists(root / "puzzles"))
    for (auto& d : fs::directory_iterator(root / "puzzles"))
      for (const char* f : {"reference.cu", "starter.cu"})
        if (fs::exists(d.path() / f)) v.push_back(d.path() / f);
  if (fs::exists(root / "solutions"))
    for (auto& e : fs::directory_iterator(root / "solutions"))
      if (e.path().extension() == ".cu") v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

// Tunables: the puzzle's defaults (a generous guess for files outside puzzles), then @tune lines.
std::map<std::string, int64_t> defines_for(const fs::path& file, const std::string& src) {
  std::map<std::string, int64_t> d = {{"BLOCK", 256}, {"GRID", 64},  {"TILE", 16}, {"ROWS", 4},
                                      {"COLS", 4},    {"BM", 64},    {"BN", 64},   {"BK", 8},
                                      {"TM", 4},      {"TN", 4},     {"WARPS", 4}, {"VEC", 4},
                                      {"ITEMS", 4},   {"RADIUS", 3}, {"BQ", 64}};
  // Library kernels: only the names their puzzles define (CUB has a member named WARPS, which a
  // -DWARPS would break).
  if (file.parent_path().filename() == "libraries")
    d = {{"BLOCK", 256}, {"GRID", 64}, {"ITEMS", 4}};
  std::vector<wb::Diagnostic> diags;
  for (auto& t : wb::parse_tune_lines(src, file.filename().string(), diags)) d[t.name] = t.value;
  return d;
}

} // namespace

TEST_CASE("every instruction of the corpus, the puzzles and the solutions is simulated") {
  std::map<std::string, int> spellings;
  std::vector<std::string> missing;
  int kernels = 0;
  for (const fs::path& f : sources()) {
    std::string src = simtest::read_file(f.string());
    for (const char* arch : {"compute_80", "compute_90"}) {
      wb::CompileOptions opt;
      opt.arch = arch;
      opt.defines = defines_for(f, src);
      // Puzzle tunables first (a reference may use a name the generic list lacks).
      wb::Program prog = wb::compile_source(src, f.filename().string(), opt);
      if (!prog.ok) {
        // A starter may not compile until the learner writes it; a corpus file or solution must.
        bool must = f.string().find("starter") == std::string::npos;
        std::string log;
        for (auto& d : prog.diagnostics) log += d.str() + "\n";
        if (must)
          FAIL_CHECK(f.string() << " does not compile for " << std::string(arch) << ":\n" << log);
        continue;
      }
      auto mod = wb::sim::load_module(prog.ptx);
      REQUIRE_MESSAGE(mod->error.empty(),
                      f.string() << ": " << mod->error << " at PTX line " << mod->error_line);
      for (auto& fn : mod->ast.funcs) {
        if (!fn.entry) continue;
        std::string why;
        const wb::sim::Program* p = wb::sim::get_program(*mod, fn.name, why);
        REQUIRE_MESSAGE(p, why);
        ++kernels;
        for (size_t i = 0; i < p->code.size(); ++i) {
          const auto& inf = p->info[i];
          ++spellings[inf.opcode];
          if (p->code[i].fn == wb::sim::h_unsupported)
            missing.push_back(f.filename().string() + " [" + arch + "] " + fn.name + ": `" +
                              inf.opcode + "` (PTX line " + std::to_string(inf.ptx_line) +
                              "): " + inf.note);
        }
      }
    }
  }
  std::string all;
  for (auto& m : missing) all += m + "\n";
  CHECK_MESSAGE(missing.empty(), "unsupported instructions:\n" << all);
  MESSAGE(kernels << " kernels decoded; " << spellings.size()
                  << " distinct instruction spellings, all simulated");
  std::ofstream out(fs::path(WARPBOOK_BINARY_DIR) / "sim_instruction_coverage.txt");
  for (auto& [s, n] : spellings) out << s << "\t" << n << "\n";
  CHECK(spellings.size() > 150);
}
