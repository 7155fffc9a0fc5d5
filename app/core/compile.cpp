#include "compile.hpp"
#include "printf_guard.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <nvrtc.h>
#include <regex>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace wb {

namespace fs = std::filesystem;

std::string_view severity_name(Diagnostic::Severity s) {
  switch (s) {
  case Diagnostic::Severity::error:
    return "error";
  case Diagnostic::Severity::warning:
    return "warning";
  default:
    return "note";
  }
}

std::string Diagnostic::str() const {
  std::string where = file;
  if (line > 0) where += fmt::format(":{}", line);
  if (line > 0 && column > 0) where += fmt::format(":{}", column);
  return fmt::format("{}: {}: {}", where, severity_name(severity), message);
}

namespace {

// What NVRTC lacks and learners reach for. The prelude goes before the learner's source, then a
// #line puts the learner's line numbers back.
constexpr const char* kPrelude = R"(#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
)";

// Headers NVRTC cannot open (the host C and C++ library's), answered with what device code needs
// of them: the CUDA math functions NVRTC already has, put into std as well; libcu++'s cuda::std
// where it has the header (which costs a second or two of compile the first time a file includes
// it); CUB's block- and warp-level algorithms for <cub/cub.cuh>, whose device-wide ones launch
// kernels from the host and cannot compile here.
constexpr const char* kStdMath = R"(#pragma once
namespace std {
using ::abs; using ::fabs; using ::fabsf; using ::sqrt; using ::sqrtf; using ::cbrt; using ::hypot;
using ::exp; using ::expf; using ::exp2; using ::expm1; using ::log; using ::logf; using ::log2;
using ::log10; using ::log1p; using ::pow; using ::powf; using ::sin; using ::cos; using ::tan;
using ::asin; using ::acos; using ::atan; using ::atan2; using ::sinh; using ::cosh; using ::tanh;
using ::erf; using ::erfc; using ::tgamma; using ::lgamma; using ::floor; using ::ceil;
using ::trunc; using ::round; using ::lround; using ::llround; using ::rint; using ::nearbyint;
using ::fmod; using ::remainder; using ::fmin; using ::fmax; using ::fdim; using ::fma;
using ::copysign; using ::ldexp; using ::frexp; using ::modf; using ::scalbn; using ::ilogb;
using ::logb; using ::isnan; using ::isinf; using ::isfinite; using ::signbit; using ::min;
using ::max;
}
)";
constexpr const char* kStdLib = R"(#pragma once
namespace std {
using ::abs; using ::labs; using ::llabs; using ::malloc; using ::free;
}
)";
constexpr const char* kStdAlgorithm = R"(#pragma once
namespace std {
using ::min; using ::max;
template <class T> __device__ void swap(T& a, T& b) { T t = a; a = b; b = t; }
}
)";
constexpr const char* kStdInt = R"(#pragma once
#include <cuda/std/cstdint>
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t; using ::uint8_t;
using ::uint16_t; using ::uint32_t; using ::uint64_t; using ::intptr_t; using ::uintptr_t;
}
)";
constexpr const char* kStdDef = R"(#pragma once
#include <cuda/std/cstddef>
namespace std {
using cuda::std::size_t; using cuda::std::ptrdiff_t; using cuda::std::nullptr_t;
}
)";
#define WB_LIBCUXX_SHIM(h)                                                                         \
  "#pragma once\n#include <cuda/std/" h ">\nnamespace std { using namespace cuda::std; }\n"

const std::pair<const char*, const char*> kShims[] = {
    {"cfloat", R"(#pragma once
#ifndef FLT_MAX
#define FLT_MAX 3.402823466e+38f
#define FLT_MIN 1.175494351e-38f
#define FLT_EPSILON 1.192092896e-07f
#define FLT_MANT_DIG 24
#define DBL_MAX 1.7976931348623158e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-16
#define DBL_MANT_DIG 53
#endif
)"},
    // libcu++'s own, so that a file that also includes libcu++ sees one definition of each.
    {"climits", "#pragma once\n#include <cuda/std/climits>\n"},
    {"cassert", "#pragma once\n"}, // NVRTC defines assert() itself
    {"cstdio", "#pragma once\nnamespace std { using ::printf; }\n"}, // printf is built in
    {"cuda_runtime.h", "#pragma once\n"},
    // For CUtensorMap, the 128-byte kernel parameter TMA copies name (the driver header itself
    // includes host headers NVRTC cannot open). The layout is cuda.h's.
    {"cuda.h", R"(#pragma once
typedef unsigned long long cuuint64_t;
typedef unsigned int cuuint32_t;
typedef struct CUtensorMap_st {
  alignas(64) cuuint64_t opaque[16];
} CUtensorMap;
)"},
    {"cmath", kStdMath},
    {"cstdlib", kStdLib},
    {"algorithm", kStdAlgorithm},
    {"cstdint", kStdInt},
    {"cstddef", kStdDef},
    {"type_traits", WB_LIBCUXX_SHIM("type_traits")},
    {"utility", WB_LIBCUXX_SHIM("utility")},
    {"limits", WB_LIBCUXX_SHIM("limits")},
    {"cub/cub.cuh", R"(#pragma once
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
)"},
};
#undef WB_LIBCUXX_SHIM
const std::pair<const char*, const char*> kAliases[] = {
    {"float.h", "cfloat"},   {"limits.h", "climits"}, {"assert.h", "cassert"},
    {"stdio.h", "cstdio"},   {"math.h", "cmath"},     {"stdlib.h", "cstdlib"},
    {"stdint.h", "cstdint"}, {"stddef.h", "cstddef"}};

// The toolkit's include directory: where the NVRTC this process loaded came from, unless the
// environment names one; the one Warpbook was built against last.
std::vector<std::string> cuda_include_candidates() {
  std::vector<std::string> out;
  if (const char* e = std::getenv("WARPBOOK_CUDA_INCLUDE"); e && *e) out.push_back(e);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* e = std::getenv(var); e && *e) out.push_back(std::string(e) + "/include");
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) && info.dli_fname) {
    // lib64/libnvrtc.so (beside include/) or targets/<arch>/lib/libnvrtc.so (include/ beside lib/)
    const fs::path lib = fs::weakly_canonical(fs::path(info.dli_fname)).parent_path();
    out.push_back((lib.parent_path() / "include").string());
  }
  std::string d = WARPBOOK_CUDA_INCLUDE;
  auto semi = d.find(';');
  out.push_back(semi == std::string::npos ? d : d.substr(0, semi));
  return out;
}

} // namespace

std::string toolkit_include_dir() {
  const auto c = cuda_include_candidates();
  for (const auto& d : c) {
    std::error_code ec;
    if (fs::exists(fs::path(d) / "cuda_fp16.h", ec)) return d;
  }
  return c.back();
}

namespace {

// The include directories NVRTC is given: the toolkit's, and its CCCL (CUB, libcu++, Thrust, which
// cooperative groups needs too), which CUDA 13 keeps in include/cccl.
std::vector<std::string> cuda_include_dirs() {
  std::vector<std::string> out{toolkit_include_dir()};
  std::error_code ec;
  if (fs::is_directory(fs::path(out[0]) / "cccl", ec)) out.push_back(out[0] + "/cccl");
  return out;
}

// "cannot open source file "cub/block/block_reduce.cuh"": say where Warpbook looked, and what
// the header belongs to.
void explain_missing_headers(std::vector<Diagnostic>& diags) {
  static const std::regex missing(R"re(cannot open source file "([^"]+)")re");
  for (auto& d : diags) {
    std::smatch m;
    if (d.severity != Diagnostic::Severity::error || !std::regex_search(d.message, m, missing))
      continue;
    const std::string h = m[1];
    auto starts = [&](const char* p) { return h.rfind(p, 0) == 0; };
    const char* part = starts("cub/")                     ? "CUB (part of CUDA's CCCL)"
                       : starts("cuda/") || starts("nv/") ? "libcu++ (part of CUDA's CCCL)"
                       : starts("thrust/")                ? "Thrust (part of CUDA's CCCL)"
                       : starts("cooperative_groups")     ? "cooperative groups"
                                                          : nullptr;
    std::string dirs;
    for (auto& x : cuda_include_dirs()) dirs += (dirs.empty() ? "" : ", ") + x;
    d.message += fmt::format(
        " ({}is not in the toolkit's headers Warpbook gives NVRTC: {}; set WARPBOOK_CUDA_INCLUDE "
        "to the include directory of a CUDA toolkit that has it)",
        part ? fmt::format("{} ", part) : std::string(), dirs);
  }
}

// An error on a line that calls what only host code can call: say so, and what to use instead.
void explain_host_only(std::vector<Diagnostic>& diags, const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  for (auto& d : diags) {
    if (d.severity != Diagnostic::Severity::error || d.line <= 0 || d.line > int(lines.size()))
      continue;
    const std::string& text = lines[size_t(d.line - 1)];
    if (text.find("cub::Device") != std::string::npos)
      d.message += " (CUB's device-wide algorithms, cub::Device*, launch kernels from the host, "
                   "and a Warpbook file holds only device code: use the block- and warp-level "
                   "ones, such as cub::BlockReduce, cub::BlockScan and cub::WarpReduce, which "
                   "<cub/cub.cuh> gives you here)";
    else if (text.find("<<<") != std::string::npos)
      d.message += " (a Warpbook file holds only device code: the puzzle launches your kernel "
                   "itself, with the grid its puzzle.toml gives)";
  }
}

std::vector<std::string> ptx_entries(const std::string& ptx) {
  std::vector<std::string> out;
  static const std::regex re(R"(\.entry\s+([A-Za-z_$][\w$]*))");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), re), end; it != end; ++it)
    out.push_back((*it)[1]);
  return out;
}

// ptxas -v lines: "Compiling entry function 'k' for 'sm_90'", "Function properties for k",
// "N bytes stack frame, N bytes spill stores, N bytes spill loads", "Used N registers, ... N bytes
// smem".
std::vector<KernelResources> parse_ptxas_report(const std::string& log) {
  std::vector<KernelResources> out;
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  // Printed before the function's own lines, and named: kept aside, then given to it.
  static const std::regex serial(
      R"(wgmma\.mma_async instructions are serialized due to (.*) in the function '([^']+)')");
  std::map<std::string, std::string> serialized;
  std::istringstream in(log);
  std::string line;
  KernelResources* cur = nullptr;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, serial)) {
      serialized[m[2]] = m[1];
    } else if (std::regex_search(line, m, entry)) {
      out.push_back({});
      out.back().name = m[1];
      cur = &out.back();
    } else if (cur && std::regex_search(line, m, frame)) {
      cur->local_bytes = std::stoi(m[1]);
      cur->spill_stores = std::stoi(m[2]);
      cur->spill_loads = std::stoi(m[3]);
    } else if (cur && std::regex_search(line, m, used)) {
      cur->registers = std::stoi(m[1]);
      cur->shared_bytes = std::regex_search(line, m, smem) ? std::stoi(m[1]) : 0; // ptxas omits 0
    }
  }
  for (auto& r : out)
    if (auto it = serialized.find(r.name); it != serialized.end()) r.wgmma_serialized = it->second;
  return out;
}

struct NvrtcResult {
  nvrtcResult status = NVRTC_SUCCESS;
  std::string log, ptx;
  std::vector<char> cubin;
};

NvrtcResult nvrtc_uncached(const std::string& text, const std::string& file,
                           const std::vector<std::string>& options, bool want_cubin) {
  NvrtcResult r;
  std::vector<const char*> hdr_src, hdr_names;
  for (auto& [n, s] : kShims) hdr_names.push_back(n), hdr_src.push_back(s);
  for (auto& [alias, target] : kAliases) {
    hdr_names.push_back(alias);
    for (auto& [n, s] : kShims)
      if (std::string_view(n) == target) hdr_src.push_back(s);
  }
  nvrtcProgram prog;
  r.status = nvrtcCreateProgram(&prog, text.c_str(), file.c_str(), int(hdr_src.size()),
                                hdr_src.data(), hdr_names.data());
  if (r.status != NVRTC_SUCCESS) {
    r.log = fmt::format("nvrtcCreateProgram: {}", nvrtcGetErrorString(r.status));
    return r;
  }
  std::vector<const char*> opts;
  for (auto& o : options) opts.push_back(o.c_str());
  r.status = nvrtcCompileProgram(prog, int(opts.size()), opts.data());
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  r.log.resize(n);
  if (n) nvrtcGetProgramLog(prog, r.log.data());
  std::erase(r.log, '\0'); // ptxas's part of the log can follow a NUL
  if (r.status == NVRTC_SUCCESS) {
    nvrtcGetPTXSize(prog, &n);
    r.ptx.resize(n);
    nvrtcGetPTX(prog, r.ptx.data());
    while (!r.ptx.empty() && r.ptx.back() == '\0') r.ptx.pop_back();
    if (want_cubin && nvrtcGetCUBINSize(prog, &n) == NVRTC_SUCCESS && n) {
      r.cubin.resize(n);
      nvrtcGetCUBIN(prog, r.cubin.data());
    }
  }
  nvrtcDestroyProgram(&prog);
  return r;
}

// NVRTC's answers, kept on disk under everything that decides them (the text with its prelude and
// file name, the options, the header shims, NVRTC's version): a reference, a solution or an
// unchanged file compiles once per machine instead of once per check. The whole key is stored
// in the entry and compared on reading, so two inputs never share an answer.
fs::path compile_cache_dir() {
  if (const char* d = std::getenv("WARPBOOK_CACHE_DIR"); d && *d)
    return std::string_view(d) == "off" ? fs::path() : fs::path(d) / "nvrtc";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return fs::path(x) / "warpbook" / "nvrtc";
  if (const char* h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".cache" / "warpbook" / "nvrtc";
  return {};
}

std::string cache_key(const std::string& text, const std::vector<std::string>& options,
                      bool want_cubin) {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  std::string k = fmt::format("nvrtc {}.{} cubin {}\n", major, minor, want_cubin);
  for (auto& o : options) k += o + "\n";
  for (auto& [n, src] : kShims)
    k += fmt::format("{} {}\n{}\n", n, std::string_view(src).size(), src);
  k += text;
  return k;
}

uint64_t fnv1a(std::string_view s, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

void put_field(std::string& out, std::string_view v) {
  out += fmt::format("{}\n", v.size());
  out += v;
}
bool get_field(std::string_view& in, std::string& v) {
  size_t nl = in.find('\n');
  if (nl == std::string_view::npos) return false;
  size_t n = 0;
  for (char c : in.substr(0, nl)) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + size_t(c - '0');
  }
  in.remove_prefix(nl + 1);
  if (in.size() < n) return false;
  v.assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

// `produce` is NVRTC's front end or ptxas; `key` is everything that decides its answer.
NvrtcResult run_cached(const std::string& key, const std::function<NvrtcResult()>& produce) {
  const fs::path dir = compile_cache_dir();
  if (dir.empty()) return produce();
  const fs::path path =
      dir / fmt::format("{:016x}{:016x}", fnv1a(key), fnv1a(key, 0x84222325cbf29ce4ull));
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      const std::string data = ss.str();
      std::string_view v = data;
      std::string k, status, log, ptx, cubin;
      if (get_field(v, k) && k == key && get_field(v, status) && get_field(v, log) &&
          get_field(v, ptx) && get_field(v, cubin)) {
        NvrtcResult r;
        r.status = nvrtcResult(std::atoi(status.c_str()));
        r.log = std::move(log);
        r.ptx = std::move(ptx);
        r.cubin.assign(cubin.begin(), cubin.end());
        return r;
      }
    }
  }
  NvrtcResult r = produce();
  // Only what the compiler decided from the input is kept (a failure to start it is not).
  if (r.status != NVRTC_SUCCESS && r.status != NVRTC_ERROR_COMPILATION) return r;
  std::string out;
  put_field(out, key);
  put_field(out, std::to_string(int(r.status)));
  put_field(out, r.log);
  put_field(out, r.ptx);
  put_field(out, std::string_view(r.cubin.data(), r.cubin.size()));
  std::error_code ec;
  fs::create_directories(dir, ec);
  // Written aside and renamed: another process reading the entry sees all of it or none.
  const fs::path tmp = path.string() + fmt::format(".{}.tmp", ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f || !f.write(out.data(), std::streamsize(out.size()))) {
      fs::remove(tmp, ec);
      return r;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
  return r;
}

// A check compiles the learner's file for the predicted GPU twice at once: for its cases and for
// the performance model, with the same options. The second asks while the first still compiles;
// it waits for that answer instead of running the compiler again.
NvrtcResult run_shared(const std::string& key, const std::function<NvrtcResult()>& produce) {
  static std::mutex mu;
  static std::map<std::string, std::shared_future<NvrtcResult>> in_flight;
  std::promise<NvrtcResult> mine;
  std::shared_future<NvrtcResult> theirs;
  {
    std::lock_guard lk(mu);
    if (auto it = in_flight.find(key); it != in_flight.end())
      theirs = it->second;
    else
      in_flight.emplace(key, mine.get_future().share());
  }
  if (theirs.valid()) return theirs.get();
  NvrtcResult r;
  try {
    r = run_cached(key, produce);
  } catch (...) {
    mine.set_exception(std::current_exception());
    std::lock_guard lk(mu);
    in_flight.erase(key);
    throw;
  }
  mine.set_value(r);
  std::lock_guard lk(mu);
  in_flight.erase(key);
  return r;
}

NvrtcResult run_nvrtc(const std::string& text, const std::string& file,
                      const std::vector<std::string>& options, bool want_cubin) {
  return run_shared(cache_key(text, options, want_cubin),
                    [&] { return nvrtc_uncached(text, file, options, want_cubin); });
}

// The toolkit's ptxas beside the NVRTC this process loaded (the same release, so the same
// assembler NVRTC runs inside itself); empty when there is none.
const std::string& ptxas_binary() {
  static const std::string path = [] {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) || !info.dli_fname)
      return std::string();
    // lib64/libnvrtc.so (bin/ beside lib64/) or targets/<arch>/lib/libnvrtc.so
    const fs::path lib = fs::weakly_canonical(fs::path(info.dli_fname)).parent_path();
    for (const fs::path& p : {lib.parent_path() / "bin" / "ptxas",
                              lib.parent_path().parent_path().parent_path() / "bin" / "ptxas"})
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    return std::string();
  }();
  return path;
}

// ptxas on `ptx` for `sm` (sm_XY), as NVRTC runs it for --gpu-architecture=sm_XY: -lineinfo,
// and -v for the resource report. The status says whether it assembled (NVRTC's codes).
NvrtcResult ptxas_uncached(const std::string& ptx, const std::vector<std::string>& args) {
  NvrtcResult r;
  r.status = NVRTC_ERROR_INTERNAL_ERROR;
  std::string dir = (fs::temp_directory_path() / "warpbook-ptxas-XXXXXX").string();
  if (!::mkdtemp(dir.data())) {
    r.log = fmt::format("could not make a folder for ptxas: {}", std::strerror(errno));
    return r;
  }
  const std::string in = dir + "/in.ptx", out = dir + "/out.cubin", log = dir + "/log";
  std::ofstream(in, std::ios::binary).write(ptx.data(), std::streamsize(ptx.size()));
  std::vector<std::string> argv{ptxas_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  for (const std::string& a : {std::string("-o"), out, in}) argv.push_back(a);
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  // Nothing of the runner's (its request pipe, say) stays open in ptxas, which may outlive it.
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  pid_t pid = 0;
  int status = 0;
  const int err = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) {
    r.log = fmt::format("could not run {}: {}", argv[0], std::strerror(err));
  } else {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::stringstream ls, cs;
    ls << std::ifstream(log, std::ios::binary).rdbuf();
    r.log = ls.str();
    if (WIFEXITED(status)) {
      r.status = WEXITSTATUS(status) == 0 ? NVRTC_SUCCESS : NVRTC_ERROR_COMPILATION;
      if (r.status == NVRTC_SUCCESS) {
        cs << std::ifstream(out, std::ios::binary).rdbuf();
        const std::string c = cs.str();
        r.cubin.assign(c.begin(), c.end());
      }
    } else {
      r.log += fmt::format("\n{} ended by signal {}", argv[0], WTERMSIG(status));
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return r;
}

NvrtcResult run_ptxas(const std::string& ptx, const std::string& sm, bool report) {
  std::vector<std::string> args{"-arch=" + sm, "-lineinfo"};
  if (report) args.push_back("-v");
  std::error_code ec;
  const std::string& bin = ptxas_binary();
  std::string key = fmt::format("ptxas {} {} {}\n", bin, fs::file_size(bin, ec),
                                fs::last_write_time(bin, ec).time_since_epoch().count());
  for (auto& a : args) key += a + "\n";
  key += ptx;
  return run_shared(key, [&] { return ptxas_uncached(ptx, args); });
}

// ptxas's errors name a line of the PTX ("ptxas application ptx input, line 56; error : ..."), or
// none ("File uses too much global constant data (0x13880 bytes, 0x10000 max)"). Each becomes an
// error on the learner's line: the source line of the nearest `.loc` at or before it in the PTX
// (compiled with -lineinfo), with its byte counts in decimal.
std::vector<Diagnostic> ptxas_diagnostics(const std::string& log, const std::string& ptx,
                                          const std::string& file) {
  static const std::regex at_line(R"(^ptxas[^,]*, line (\d+); error\s*: (.*)$)");
  static const std::regex no_line(R"(^\s*ptxas error\s*: (.*)$)");
  static const std::regex hex(R"(0x([0-9a-fA-F]+))");
  // PTX line -> source line, from `.loc FILE LINE COL` where FILE is the learner's (NVVM writes
  // the `.file` table after the functions, so it is read first).
  std::vector<int> src_of_ptx{0};
  {
    static const std::regex file_re(R"re(^\s*\.file\s+(\d+)\s+"([^"]*)")re");
    static const std::regex loc_re(R"(^\s*\.loc\s+(\d+)\s+(\d+))");
    int learner_file = -1;
    std::istringstream files(ptx);
    for (std::string l; learner_file < 0 && std::getline(files, l);) {
      std::smatch m;
      if (l.find(".file") != std::string::npos && std::regex_search(l, m, file_re) &&
          fs::path(std::string(m[2])).filename() == fs::path(file).filename())
        learner_file = std::stoi(m[1]);
    }
    std::istringstream in(ptx);
    int cur = 0;
    for (std::string l; std::getline(in, l);) {
      std::smatch m;
      if (l.find(".loc") != std::string::npos && std::regex_search(l, m, loc_re) &&
          std::stoi(m[1]) == learner_file)
        cur = std::stoi(m[2]);
      src_of_ptx.push_back(cur);
    }
  }
  auto decimal = [&](std::string msg) {
    std::string out;
    auto begin = msg.cbegin();
    for (std::sregex_iterator it(msg.begin(), msg.end(), hex), end; it != end; ++it) {
      out.append(begin, (*it)[0].first);
      out += std::to_string(std::stoull((*it)[1], nullptr, 16));
      begin = (*it)[0].second;
    }
    out.append(begin, msg.cend());
    return out;
  };
  std::vector<Diagnostic> out;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, at_line)) {
      const int pl = std::stoi(m[1]);
      const int line = pl < int(src_of_ptx.size()) ? src_of_ptx[size_t(pl)] : 0;
      out.push_back({file, line, 0, Diagnostic::Severity::error,
                     fmt::format("ptxas (the assembler that makes the GPU's machine code): {} "
                                 "(PTX line {})",
                                 decimal(m[2]), pl)});
    } else if (std::regex_search(l, m, no_line)) {
      out.push_back({file, 0, 0, Diagnostic::Severity::error,
                     fmt::format("ptxas (the assembler that makes the GPU's machine code): {}",
                                 decimal(m[1]))});
    }
  }
  return out;
}

} // namespace

std::vector<Diagnostic> parse_nvrtc_log(const std::string& log) {
  std::vector<Diagnostic> out;
  static const std::regex head(
      R"(^(.*)\((\d+)\): (catastrophic error|error|warning|remark)(?: #[\w-]+)?: (.*)$)");
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(l);
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, head)) continue;
    Diagnostic d;
    d.file = m[1];
    d.line = std::stoi(m[2]);
    std::string sev = m[3];
    d.severity = sev == "warning"  ? Diagnostic::Severity::warning
                 : sev == "remark" ? Diagnostic::Severity::note
                                   : Diagnostic::Severity::error;
    d.message = m[4];
    // NVRTC echoes the source line indented by two spaces and puts a caret under the column.
    if (i + 2 < lines.size()) {
      const std::string& caret = lines[i + 2];
      size_t pos = caret.find('^');
      if (pos != std::string::npos && caret.find_first_not_of(' ') == pos && pos >= 2)
        d.column = int(pos - 2) + 1;
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<TuneLine> parse_tune_lines(const std::string& source, const std::string& file,
                                       std::vector<Diagnostic>& diags) {
  std::vector<TuneLine> out;
  static const std::regex tune(R"(^\s*//\s*@tune\b(.*)$)");
  static const std::regex assign(R"(^\s*([A-Za-z_]\w*)\s*=\s*(-?\d+)\s*$)");
  std::istringstream in(source);
  int n = 0;
  for (std::string l; std::getline(in, l);) {
    ++n;
    std::smatch m;
    if (!std::regex_search(l, m, tune)) continue;
    std::string rest = m[1];
    std::smatch a;
    if (std::regex_match(rest, a, assign)) {
      try {
        TuneLine t{a[1], std::stoll(a[2]), n};
        auto same = std::find_if(out.begin(), out.end(), [&](auto& o) { return o.name == t.name; });
        if (same != out.end()) {
          diags.push_back({file, n, int(l.find("@tune")) + 1, Diagnostic::Severity::error,
                           fmt::format("@tune {} is set twice: {}={} on line {} and {}={} here; "
                                       "keep one",
                                       t.name, t.name, same->value, same->line, t.name, t.value)});
          continue;
        }
        out.push_back(std::move(t));
        continue;
      } catch (...) {
      }
    }
    diags.push_back(
        {file, n, int(l.find("@tune")) + 1, Diagnostic::Severity::error,
         "malformed @tune line: write it as `// @tune NAME=VALUE`, e.g. `// @tune BLOCK=256`"});
  }
  return out;
}

namespace {
// A learner's file is compiled with the toolkit's headers and nothing else on the machine: an
// #include of an absolute path, one that climbs out with "..", a quoted one that is not a toolkit
// header, or one spelled through a macro is refused before NVRTC opens anything (it would
// otherwise read, and echo in its errors, any file the process can read, and a runner on another
// machine would not have it). So is a byte NVRTC would stop reading at.
std::vector<Diagnostic> refused_source(const std::string& source, const std::string& file) {
  static const std::regex inc(R"re(^\s*#\s*include\s*(.*)$)re");
  std::vector<Diagnostic> out;
  std::istringstream in(source);
  int n = 0;
  for (std::string l; std::getline(in, l);) {
    ++n;
    std::smatch m;
    if (const size_t ff = l.find('\xff'); ff != std::string::npos) {
      out.push_back({file, n, int(ff) + 1, Diagnostic::Severity::error,
                     "this line holds the byte 0xFF, which NVRTC takes for the end of the file: it "
                     "would ignore everything after it. Save the file as UTF-8"});
      continue;
    }
    if (!std::regex_match(l, m, inc)) continue;
    const std::string what = m[1];
    const char open = what.empty() ? 0 : what[0];
    const size_t close = what.find(open == '<' ? '>' : '"', 1);
    const std::string name =
        (open == '<' || open == '"') && close != std::string::npos ? what.substr(1, close - 1) : "";
    std::string why;
    auto in_toolkit = [&] {
      for (auto& [shim, text] : kShims)
        if (name == shim) return true;
      for (auto& [alias, target] : kAliases)
        if (name == alias) return true;
      std::error_code ec;
      for (auto& d : cuda_include_dirs())
        if (fs::exists(fs::path(d) / name, ec)) return true;
      return false;
    };
    if (name.empty())
      why = "write the header's name in <> or \"\"";
    else if (name[0] == '/' || name.find("..") != std::string::npos)
      why = fmt::format("\"{}\" names a file elsewhere on this machine", name);
    else if (open == '"' && !in_toolkit()) // NVRTC would look beside the file, on this machine
      why = fmt::format("\"{}\" is not one of the toolkit's headers, and a GPU elsewhere would "
                        "not have it",
                        name);
    if (why.empty()) continue;
    out.push_back({file, n, 1, Diagnostic::Severity::error,
                   fmt::format("#include: {}. Warpbook compiles your one file with the CUDA "
                               "toolkit's headers (and the C and C++ headers it stands in for), "
                               "so include those by name, such as <cuda_fp16.h>",
                               why)});
  }
  return out;
}
} // namespace

Program compile_ptx(const std::string& source, const std::string& file, const CompileOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  Program p;
  p.file = file;
  p.arch = opt.arch;
  p.diagnostics = refused_source(source, file);
  if (!p.diagnostics.empty()) return p;
  const bool real_arch = opt.arch.rfind("sm_", 0) == 0;
  const std::string number = opt.arch.substr(opt.arch.find('_') + 1);
  // NVRTC makes the PTX only (its own ptxas would hold the PTX back until the cubin is made);
  // ptxas runs on it in assemble(). Without a ptxas beside NVRTC, NVRTC makes both at once.
  const bool split = opt.ptxas_apart && !ptxas_binary().empty();
  // -default-device: a learner's file holds device code only, so an unannotated helper function
  // or a plain lambda is device code (NVRTC would call it a host function and refuse it).
  std::vector<std::string> options = {"--gpu-architecture=" +
                                          (split ? "compute_" + number : opt.arch),
                                      "-lineinfo",
                                      "-std=c++17",
                                      "-default-device",
                                      "--device-int128",
                                      "-DWARPBOOK=1"};
  for (auto& d : cuda_include_dirs()) options.push_back("-I" + d);
  for (auto& [k, v] : opt.defines) options.push_back(fmt::format("-D{}={}", k, v));
  for (auto& e : opt.extra) options.push_back(e);
  const bool whole = real_arch && !split;
  if (whole && opt.ptxas_report) options.push_back("--ptxas-options=-v");
  std::string text =
      fmt::format("{}{}#line 1 \"{}\"\n{}", kPrelude, printf_guard_source(), file, source);

  NvrtcResult r = run_nvrtc(text, file, options, whole);
  p.log = r.log;
  p.diagnostics = parse_nvrtc_log(r.log);
  // libcu++ (under NVRTC) defines INFINITY and NAN its own way over the prelude's: same values.
  std::erase_if(p.diagnostics, [](const Diagnostic& d) {
    return d.severity == Diagnostic::Severity::warning &&
           (d.message.rfind("incompatible redefinition of macro \"INFINITY\"", 0) == 0 ||
            d.message.rfind("incompatible redefinition of macro \"NAN\"", 0) == 0);
  });
  explain_missing_headers(p.diagnostics);
  explain_host_only(p.diagnostics, source);
  // NVRTC's own ptxas failed: its errors, on the learner's lines, from the PTX the front end
  // makes (compiled again without ptxas; cached like any compile).
  if (whole && r.status == NVRTC_ERROR_COMPILATION && r.log.find("ptxas") != std::string::npos &&
      std::none_of(p.diagnostics.begin(), p.diagnostics.end(),
                   [](auto& d) { return d.severity == Diagnostic::Severity::error; })) {
    std::vector<std::string> o2 = options;
    o2[0] = "--gpu-architecture=compute_" + number;
    std::erase(o2, std::string("--ptxas-options=-v"));
    const NvrtcResult front = run_nvrtc(text, file, o2, false);
    for (auto& d : ptxas_diagnostics(r.log, front.ptx, file)) p.diagnostics.push_back(d);
  }
  if (r.status != NVRTC_SUCCESS && r.status != NVRTC_ERROR_COMPILATION)
    p.diagnostics.push_back({file, 0, 0, Diagnostic::Severity::error,
                             fmt::format("NVRTC failed: {}", nvrtcGetErrorString(r.status))});
  if (r.status == NVRTC_ERROR_COMPILATION &&
      std::none_of(p.diagnostics.begin(), p.diagnostics.end(),
                   [](auto& d) { return d.severity == Diagnostic::Severity::error; }))
    p.diagnostics.push_back(
        {file, 0, 0, Diagnostic::Severity::error,
         "the compile failed: " + (r.log.empty() ? std::string("no log") : r.log)});
  p.ok = r.status == NVRTC_SUCCESS;
  p.ptx = std::move(r.ptx);
  p.cubin = std::move(r.cubin);
  p.entries = ptx_entries(p.ptx);
  if (whole && opt.ptxas_report) p.resources = parse_ptxas_report(r.log);
  p.ptxas_pending = p.ok && (real_arch || opt.ptxas_report) && split;
  // No GPU and no ptxas: build once more for the matching real arch just to read its report.
  if (p.ok && !real_arch && opt.ptxas_report && !split) {
    std::vector<std::string> o2 = options;
    o2[0] = "--gpu-architecture=sm_" + number;
    o2.push_back("--ptxas-options=-v");
    p.resources = parse_ptxas_report(run_nvrtc(text, file, o2, true).log);
  }
  p.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

void assemble(Program& p, const CompileOptions& opt) {
  if (!p.ptxas_pending) return;
  p.ptxas_pending = false;
  auto t0 = std::chrono::steady_clock::now();
  const bool real_arch = p.arch.rfind("sm_", 0) == 0;
  NvrtcResult r = run_ptxas(p.ptx, "sm_" + p.arch.substr(p.arch.find('_') + 1), opt.ptxas_report);
  if (opt.ptxas_report) p.resources = parse_ptxas_report(r.log);
  p.compile_ms +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!real_arch) return; // compute_XY: the PTX is the program; ptxas only gave its report
  p.log += r.log;
  if (r.status == NVRTC_SUCCESS) {
    p.cubin = std::move(r.cubin);
    return;
  }
  p.ok = false;
  std::vector<Diagnostic> d = ptxas_diagnostics(r.log, p.ptx, p.file);
  if (d.empty())
    d.push_back({p.file, 0, 0, Diagnostic::Severity::error,
                 fmt::format("ptxas (the assembler that makes the GPU's machine code) failed: {}",
                             r.log.empty() ? std::string("no log") : r.log)});
  p.diagnostics.insert(p.diagnostics.end(), d.begin(), d.end());
}

Program compile_source(const std::string& source, const std::string& file,
                       const CompileOptions& opt) {
  Program p = compile_ptx(source, file, opt);
  assemble(p, opt);
  return p;
}

bool require_kernels(Program& p, const std::vector<std::string>& names) {
  // A file that did not compile has no PTX to look in; its own errors say why.
  if (!p.ok && p.ptx.empty()) return false;
  bool all = true;
  for (auto& name : names) {
    if (std::find(p.entries.begin(), p.entries.end(), name) != p.entries.end()) continue;
    all = false;
    std::string mangled = fmt::format("_Z{}{}", name.size(), name);
    auto it = std::find_if(p.entries.begin(), p.entries.end(),
                           [&](const std::string& e) { return e.rfind(mangled, 0) == 0; });
    Diagnostic d{p.file, 0, 0, Diagnostic::Severity::error, ""};
    if (it != p.entries.end()) {
      d.message = fmt::format("kernel '{}' is not declared extern \"C\", so NVRTC gave it the C++ "
                              "name '{}' and Warpbook "
                              "cannot find it: write `extern \"C\" __global__ void {}(...)`",
                              name, *it, name);
    } else if (p.ptx.find(fmt::format(".func {}", name)) != std::string::npos ||
               p.ptx.find(fmt::format(" {}(", mangled)) != std::string::npos ||
               p.ptx.find(mangled) != std::string::npos) {
      d.message = fmt::format("'{}' is a device function, not a kernel: declare it "
                              "`extern \"C\" __global__ void {}(...)`",
                              name, name);
    } else {
      std::string found;
      for (auto& e : p.entries) found += fmt::format("{}'{}'", found.empty() ? "" : ", ", e);
      d.message =
          found.empty()
              ? fmt::format("no kernel named '{}': the file defines no __global__ function", name)
              : fmt::format("no kernel named '{}' (the file defines {}); the puzzle calls `{}`",
                            name, found, name);
    }
    p.diagnostics.push_back(std::move(d));
  }
  if (!all) p.ok = false;
  return all;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return {};
  return fmt::format("{}.{}", major, minor);
}

bool uses_grid_sync(const std::string& ptx) {
  return ptx.find("%envreg1") != std::string::npos || ptx.find("%envreg2") != std::string::npos;
}

} // namespace wb
