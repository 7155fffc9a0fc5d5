// Learner source -> NVRTC -> Program (PTX, CUBIN where there is a GPU, diagnostics).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace wb {

struct Diagnostic {
  enum class Severity { error, warning, note };
  std::string file;
  int line = 0;   // 1-based in the learner's file; 0 when it is about the whole file
  int column = 0; // 1-based; 0 when unknown
  Severity severity = Severity::error;
  std::string message;
  std::string str() const; // "file:line:col: error: message"
};
std::string_view severity_name(Diagnostic::Severity s);

// `// @tune NAME=VALUE` lines in a learner's file.
struct TuneLine {
  std::string name;
  int64_t value = 0;
  int line = 0;
};
// Parses every @tune line; malformed ones become error diagnostics.
std::vector<TuneLine> parse_tune_lines(const std::string& source, const std::string& file,
                                       std::vector<Diagnostic>& diags);

struct KernelResources {
  std::string name;
  int registers = -1;    // -1: unknown
  int shared_bytes = -1; // static shared memory
  int local_bytes = -1;  // stack frame per thread
  int spill_stores = -1; // bytes (from ptxas's report)
  int spill_loads = -1;
  int max_threads = -1; // most threads per block the kernel can launch with (driver)
  // ptxas's "Potential Performance Loss: wgmma.mma_async instructions are serialized due to ...":
  // the reason after "due to", empty when it did not serialize them.
  std::string wgmma_serialized;
};

struct CompileOptions {
  // "sm_90" for a GPU of compute capability 9.0 (PTX + CUBIN); "compute_80" for PTX only.
  std::string arch = "compute_80";
  std::map<std::string, int64_t> defines; // tunables become -DNAME=VALUE
  std::vector<std::string> extra;         // more options for NVRTC's front end
  bool ptxas_report = false;              // also build a CUBIN to read ptxas's resource report
  // ptxas runs apart, after NVRTC's front end (compile_ptx, then assemble), so that the PTX can be
  // used while it works; false: NVRTC makes the PTX and the cubin in one call.
  bool ptxas_apart = true;
};

struct Program {
  bool ok = false;
  std::string file; // the name diagnostics use
  std::string arch;
  std::string ptx;
  std::vector<char> cubin; // when arch is sm_XY
  std::vector<Diagnostic> diagnostics;
  std::string log;                  // NVRTC's log, raw
  std::vector<std::string> entries; // .entry names in the PTX (as written, maybe mangled)
  std::vector<KernelResources> resources;
  double compile_ms = 0;
  // compile_ptx left ptxas to assemble(): the PTX is here; the cubin, the resources and ptxas's
  // errors are not yet.
  bool ptxas_pending = false;
};

// Compiles `source`: compile_ptx, then assemble. A short prelude (INFINITY, NAN, FLT_MAX, ... that
// NVRTC lacks) is added before it with a #line so that diagnostics keep the learner's line numbers.
Program compile_source(const std::string& source, const std::string& file,
                       const CompileOptions& opt);
// NVRTC's front end: the PTX (all the simulator runs) and the front end's diagnostics. Where
// ptxas is still to run, assemble() finishes the program; it may run on another thread while the
// PTX is used.
Program compile_ptx(const std::string& source, const std::string& file, const CompileOptions& opt);
// ptxas on the PTX of a program compile_ptx left pending (the same options as for compile_ptx):
// the cubin, ptxas's resource report, and its errors on the learner's lines (ok is false then).
void assemble(Program& p, const CompileOptions& opt);

// Adds an error diagnostic for each required kernel the PTX lacks, saying exactly why: not
// extern "C" (only a C++-mangled entry exists), misnamed (names the entries there are), or not
// __global__. Returns false when any is missing.
bool require_kernels(Program& p, const std::vector<std::string>& names);

// NVRTC's log -> diagnostics (file(line): severity: message, with the column from the caret line).
std::vector<Diagnostic> parse_nvrtc_log(const std::string& log);
// The CUDA toolkit's include directory NVRTC is given (the one the loaded NVRTC came from, unless
// WARPBOOK_CUDA_INCLUDE, CUDA_HOME or CUDA_PATH names another).
std::string toolkit_include_dir();
// Does the PTX read the grid workspace that cooperative groups' grid sync needs (%envreg1/2)?
bool uses_grid_sync(const std::string& ptx);

// The NVRTC version as "13.0", or an empty string when NVRTC cannot be used.
std::string nvrtc_version();

} // namespace wb
