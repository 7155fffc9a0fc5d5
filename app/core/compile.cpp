#include "compile.hpp"
#include "printf_guard.hpp"

#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <nvrtc.h>
#include <regex>
#include <sstream>

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

// Headers NVRTC cannot open (host C library ones), answered with what device code needs of them.
const std::pair<const char*, const char*> kShims[] = {
    {"cfloat", R"(#pragma once
#define FLT_MAX 3.402823466e+38f
#define FLT_MIN 1.175494351e-38f
#define FLT_EPSILON 1.192092896e-07f
#define DBL_MAX 1.7976931348623158e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-16
)"},
    {"climits", R"(#pragma once
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define SHRT_MIN (-32768)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-2147483647 - 1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295u
#define LLONG_MIN (-9223372036854775807LL - 1)
#define LLONG_MAX 9223372036854775807LL
#define ULLONG_MAX 18446744073709551615ULL
)"},
    {"cassert", "#pragma once\n"}, // NVRTC defines assert() itself
    {"cstdio", "#pragma once\n"},
    {"cuda_runtime.h", "#pragma once\n"},
    {"cmath", "#pragma once\n"},
    {"math.h", "#pragma once\n"},
};
const std::pair<const char*, const char*> kAliases[] = {
    {"float.h", "cfloat"}, {"limits.h", "climits"}, {"assert.h", "cassert"}, {"stdio.h", "cstdio"}};

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
  while (!r.log.empty() && r.log.back() == '\0') r.log.pop_back();
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
  for (auto& [n, src] : kShims) k += fmt::format("{} {}\n{}\n", n, std::string_view(src).size(), src);
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

NvrtcResult run_nvrtc(const std::string& text, const std::string& file,
                      const std::vector<std::string>& options, bool want_cubin) {
  const fs::path dir = compile_cache_dir();
  if (dir.empty()) return nvrtc_uncached(text, file, options, want_cubin);
  const std::string key = cache_key(text, options, want_cubin);
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
  NvrtcResult r = nvrtc_uncached(text, file, options, want_cubin);
  // Only what NVRTC decided from the input is kept (a failure to start it is not).
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
        out.push_back({a[1], std::stoll(a[2]), n});
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

Program compile_source(const std::string& source, const std::string& file,
                       const CompileOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  Program p;
  p.file = file;
  p.arch = opt.arch;
  std::vector<std::string> options = {"--gpu-architecture=" + opt.arch, "-lineinfo", "-std=c++17",
                                      "-DWARPBOOK=1"};
  for (auto& d : cuda_include_dirs()) options.push_back("-I" + d);
  for (auto& [k, v] : opt.defines) options.push_back(fmt::format("-D{}={}", k, v));
  for (auto& e : opt.extra) options.push_back(e);
  bool real_arch = opt.arch.rfind("sm_", 0) == 0;
  if (real_arch && opt.ptxas_report) options.push_back("--ptxas-options=-v");
  std::string text =
      fmt::format("{}{}#line 1 \"{}\"\n{}", kPrelude, printf_guard_source(), file, source);

  NvrtcResult r = run_nvrtc(text, file, options, real_arch);
  p.log = r.log;
  p.diagnostics = parse_nvrtc_log(r.log);
  // libcu++ (under NVRTC) defines INFINITY and NAN its own way over the prelude's: same values.
  std::erase_if(p.diagnostics, [](const Diagnostic& d) {
    return d.severity == Diagnostic::Severity::warning &&
           (d.message.rfind("incompatible redefinition of macro \"INFINITY\"", 0) == 0 ||
            d.message.rfind("incompatible redefinition of macro \"NAN\"", 0) == 0);
  });
  explain_missing_headers(p.diagnostics);
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
  if (real_arch && opt.ptxas_report) p.resources = parse_ptxas_report(r.log);
  // No GPU: build once more for the matching real arch just to read ptxas's resource report.
  if (p.ok && !real_arch && opt.ptxas_report) {
    std::vector<std::string> o2 = options;
    o2[0] = "--gpu-architecture=sm_" + opt.arch.substr(opt.arch.find('_') + 1);
    o2.push_back("--ptxas-options=-v");
    p.resources = parse_ptxas_report(run_nvrtc(text, file, o2, true).log);
  }
  p.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

bool require_kernels(Program& p, const std::vector<std::string>& names) {
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
