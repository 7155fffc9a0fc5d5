// Kernels written with CUDA's device libraries (tests/libraries/*.cu: cooperative groups, CUB,
// libcu++, mbarrier, device malloc), each a solution of a puzzle: every one must pass its puzzle's
// check on a backend, and where a file says `// same: COUNTER ...` the simulator must count what it
// counts for the hand-written kernel named by `// like:` (a library adds no memory traffic).
// Shared by tests/sim/libraries_test.cpp (CI) and tests/gpu/libraries_gpu_test.cpp.
#pragma once
#include "common/puzzle_suite.hpp"

#include <regex>

namespace wb::test {

struct LibraryKernel {
  fs::path file;
  std::string library, puzzle, like;
  std::string catalog; // a catalog of its own (tests/libraries/catalog), else the built-in
  std::vector<std::string> same; // counters that must match `like`'s
};

inline std::vector<LibraryKernel> library_kernels() {
  std::vector<LibraryKernel> out;
  for (auto& e : fs::directory_iterator(fs::path(WARPBOOK_SOURCE_ROOT) / "tests" / "libraries")) {
    if (e.path().extension() != ".cu") continue;
    LibraryKernel k;
    k.file = e.path();
    std::istringstream in(read_file(e.path()));
    std::string line;
    static const std::regex field(R"(^// (library|catalog|puzzle|like|same): (.*)$)");
    while (std::getline(in, line) && line.rfind("//", 0) == 0) {
      std::smatch m;
      if (!std::regex_match(line, m, field)) continue;
      if (m[1] == "library") k.library = m[2];
      if (m[1] == "puzzle") k.puzzle = m[2];
      if (m[1] == "catalog") k.catalog = m[2];
      if (m[1] == "like") k.like = m[2];
      if (m[1] == "same") {
        std::istringstream names(m[2]);
        for (std::string s; names >> s;) k.same.push_back(s);
      }
    }
    out.push_back(k);
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.file < b.file; });
  return out;
}

// The test catalog: puzzles the library kernels need that the curriculum does not have (a
// cooperative launch).
inline const Catalog& library_catalog() {
  static Catalog c =
      load_catalog(fs::path(WARPBOOK_SOURCE_ROOT) / "tests" / "libraries" / "catalog");
  return c;
}

// Puzzle 08 launches dot_partial the ordinary way: a grid sync in it finds no grid workspace, and
// cooperative groups traps, on the GPU as on the simulator.
inline const std::string kGridSyncInPuzzle08 = R"(#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void dot_partial(const float* a, const float* b, float* partial, int n) {
  float v = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    v += a[i] * b[i];
  atomicAdd(&partial[blockIdx.x], v);
  cg::this_grid().sync();
}
extern "C" __global__ void dot_final(const float* partial, float* out, int parts) {
  if (threadIdx.x == 0) out[0] = partial[0];
}
)";

inline const Puzzle& library_puzzle(const LibraryKernel& k) {
  const Puzzle* p =
      (k.catalog.empty() ? builtin_catalog() : library_catalog()).find_puzzle(k.puzzle);
  REQUIRE_MESSAGE(p, k.file.filename().string() << ": no puzzle " << k.puzzle);
  return *p;
}

} // namespace wb::test
