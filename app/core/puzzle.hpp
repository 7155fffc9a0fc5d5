// A puzzle as puzzle.toml declares it (DESIGN.md, "Puzzle format"), validated when loaded.
#pragma once
#include "dtype.hpp"
#include "expr.hpp"
#include "generate.hpp"
#include "tensor_map.hpp"

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wb {

namespace fs = std::filesystem;

// Where a malformed file is wrong: printed as "file:line:col: key: message".
struct LoadError {
  fs::path file;
  std::string key; // "buffer[2].type", "case[0].n"; empty for the whole file
  int line = 0;
  int column = 0;
  std::string message;
  std::string str() const;
};

struct BufferDecl {
  std::string name;
  DType type = DType::f32;
  Expr count;              // elements
  std::vector<Expr> shape; // optional; row-major; its product equals count
  std::optional<Generator> init;
  bool output = false;  // the kernel writes it; checked against the reference
  bool scratch = false; // the kernel may write it; never checked (workspace)
  int line = 0;
  bool is_input() const { return !output && !scratch; }
};

struct ScalarDecl {
  std::string name;
  DType type = DType::i32;
  // Integers: a size expression (default: the size of the same name). Floats: `number`.
  std::optional<Expr> expr;
  std::optional<double> number;
};

// A [[tensor_map]]: a CUtensorMap kernel argument describing a global buffer, for TMA copies.
struct TensorMapDecl {
  std::string name;                     // the kernel argument
  std::string buffer;                   // the [[buffer]] it describes
  std::vector<Expr> dims, box, strides; // innermost first; strides in bytes, dims 1.. (optional)
  TmSwizzle swizzle = TmSwizzle::none;
  int l2_promotion = 128;
  int line = 0;
};

struct LaunchDecl {
  std::string kernel; // extern "C" name
  std::vector<std::string> args;
  std::array<Expr, 3> grid;
  std::array<Expr, 3> block;
  Expr shared_bytes;        // dynamic shared memory, may be empty (0)
  bool cooperative = false; // a cooperative launch (Launch::cooperative)
};

struct Tunable {
  std::string name;
  int64_t default_value = 0;
  std::vector<int64_t> allowed; // empty: any value in [min, max]
  int64_t min = 1;
  int64_t max = 1 << 20;
  bool pow2 = false;
  // An empty string when `v` is acceptable, else why not ("BLOCK must be a power of two ...").
  std::string reject_reason(int64_t v) const;
};

struct Case {
  std::string label;
  Env sizes;
  std::map<std::string, Generator> init; // per-case override of a buffer's init
};

struct Puzzle {
  std::string id; // the folder name, "01-vector-add"
  fs::path dir;
  std::string title;
  int level = 1;
  std::vector<std::string> tags;
  std::string lesson;
  bool demo = false;

  std::string kernel_name;
  std::vector<std::string> kernel_args;
  std::vector<BufferDecl> buffers;
  std::vector<ScalarDecl> scalars;
  std::vector<TensorMapDecl> tensor_maps;
  std::vector<LaunchDecl> launches;
  std::vector<Tunable> tunables;
  std::vector<Case> cases;
  std::optional<Case> perf;     // timed on a GPU
  std::optional<Case> sim_perf; // counters reported by the simulator

  std::optional<double> rtol, atol; // [check]; else the defaults of the output's dtype
  // [check] rtol_of_max: adds rtol_of_max x (the largest finite |expected| of the output) to atol,
  // for sums whose hardware keeps fewer bits than the answer (FP8 tensor cores): their error
  // scales with the sum's terms, not with each element's own value.
  std::optional<double> rtol_of_max;
  Expr cost_bytes, cost_flops;
  std::string cost_precision = "f32";    // which compute ceiling the speed of light uses
  std::map<std::string, int64_t> budget; // global_loads_per_thread, global_stores_per_thread
  double bronze = 0.5, silver = 0.7, gold = 0.85;

  fs::path readme, starter, reference, hints, solution; // solution may not exist in user packs

  const BufferDecl* buffer(std::string_view name) const;
  const ScalarDecl* scalar(std::string_view name) const;
  const TensorMapDecl* tensor_map(std::string_view name) const;
  const Tunable* tunable(std::string_view name) const;
  std::vector<std::string> kernel_names() const; // every distinct kernel the launches use
  // Sizes and tunables for one case: the case's sizes, then tunables (defaults unless overridden).
  Env env(const Case& c, const std::map<std::string, int64_t>& tune = {}) const;
};

// A tensor map's extents for one case's sizes and tunables. Without `strides`, the buffer's
// row-major shape gives them when it has as many dimensions as the map (a map over part of a
// matrix); otherwise the map's own dims, packed. Throws ExprError.
TensorMapSpec eval_tensor_map(const Puzzle& p, const TensorMapDecl& m, const Env& env);

// Default tolerances by dtype: (rtol, atol).
std::pair<double, double> default_tolerance(DType t);

// Loads and fully validates dir/puzzle.toml; the puzzle's id is dir's name. Returns nullopt and
// appends to `errors` when anything is wrong (every problem found, not just the first).
std::optional<Puzzle> load_puzzle(const fs::path& dir, const fs::path& solutions_dir,
                                  std::vector<LoadError>& errors);

} // namespace wb
