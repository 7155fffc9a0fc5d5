#include "check.hpp"

#include "format_figure.hpp"

#include "parallel.hpp"
#include "perf/predict.hpp"
#include "roofline.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <future>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace wb {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

constexpr size_t kGuardBytes = 4096; // a multiple of 256, so every data pointer stays aligned
constexpr uint8_t kGuardByte = 0xcd;
constexpr size_t kFirstMismatches = 8;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string sizes_label(const Env& e) {
  std::string s;
  for (auto& [k, v] : e) s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
  return s;
}

std::string dim3_str(const Dim3& d) {
  return fmt::format("({},{},{})", d.x, d.y, d.z);
}

// The launch limits every CUDA GPU since compute capability 3.0 shares; checked here so that both
// backends give the same verdict.
std::string launch_problem(const Launch& l) {
  if (l.block.x == 0 || l.block.y == 0 || l.block.z == 0 || l.grid.x == 0 || l.grid.y == 0 ||
      l.grid.z == 0)
    return fmt::format("kernel '{}' launched with an empty grid {} or block {}", l.kernel,
                       dim3_str(l.grid), dim3_str(l.block));
  if (l.block.count() > 1024)
    return fmt::format("a block of {} threads {}: a block can have at most 1024 threads",
                       l.block.count(), dim3_str(l.block));
  if (l.block.z > 64) return fmt::format("block.z = {}: at most 64", l.block.z);
  if (l.grid.y > 65535 || l.grid.z > 65535)
    return fmt::format("grid {}: grid.y and grid.z can be at most 65535", dim3_str(l.grid));
  for (auto& a : l.args) // a map the tunables make invalid: the driver would refuse to encode it
    if (a.kind == KernelArg::Kind::tensor_map)
      if (auto why = tensor_map_problem(a.map); !why.empty()) return why;
  return {};
}

// Host memory: a case's buffers exist twice on the host (the learner's and the reference's
// images, guards included) and once more in the backend (the GPU's copy, or the simulator's).
// Refused before anything is allocated past WARPBOOK_HOST_MEMORY_LIMIT (bytes, with an optional
// K/M/G/T suffix) or, by default, 3/4 of this machine's memory.
uint64_t host_memory_limit(std::string* source = nullptr) {
  if (const char* env = std::getenv("WARPBOOK_HOST_MEMORY_LIMIT"); env && *env) {
    char* end = nullptr;
    double v = std::strtod(env, &end);
    int shift = 0;
    switch (end && *end ? std::toupper(static_cast<unsigned char>(*end)) : 0) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case 'T':
      shift = 40;
      break;
    default:
      break;
    }
    if (v > 0) {
      if (source) *source = "WARPBOOK_HOST_MEMORY_LIMIT";
      return uint64_t(std::ldexp(v, shift));
    }
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (source) *source = "3/4 of this machine's memory";
  if (pages <= 0 || page <= 0) return uint64_t(1) << 40;
  return uint64_t(pages) / 4 * 3 * uint64_t(page);
}

struct Prepared {
  std::vector<HostBuffer> buffers;
  std::vector<Launch> launches;
  std::vector<int64_t> counts;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<uint64_t> hashes; // content_hash of each input as generated
  std::string problem;          // a puzzle or launch problem found while preparing
  FaultKind problem_kind = FaultKind::none;
};

// Why a case cannot be prepared at these sizes (a negative count: launch_config; more memory than
// the host allows: memory_limit), or none. Sizes that do not evaluate are left to prepare().
Fault memory_problem(const Puzzle& p, const Env& learner_env, const Env& ref_env) {
  double need = 0;
  try {
    for (const Env* env : {&learner_env, &ref_env}) {
      double images = 0;
      for (auto& b : p.buffers) {
        int64_t n = b.count.eval(*env);
        if (n < 0)
          return {FaultKind::launch_config,
                  fmt::format("buffer {} has a negative count ({} = {}) at these sizes", b.name,
                              b.count.text(), n)};
        images += double(n) * double(dtype_size(b.type)) + 2.0 * double(kGuardBytes);
      }
      need +=
          env == &learner_env ? 2 * images : images; // the learner's images and the backend's copy
    }
  } catch (const ExprError&) {
    return {};
  }
  std::string source;
  double limit = double(host_memory_limit(&source));
  if (need <= limit) return {};
  auto gib = [](double b) { return fmt::format("{:.1f} GiB", b / double(1ull << 30)); };
  return {
      FaultKind::memory_limit,
      fmt::format(
          "the buffers of this case need {} of host memory (the learner's, the reference's and the "
          "backend's copies), more than the limit of {} ({}): refused before allocating anything",
          gib(need), gib(limit), source)};
}

Dim3 eval_dim(const std::array<Expr, 3>& d, const Env& env) {
  auto v = [&](int i) -> uint32_t {
    int64_t x = d[i].empty() ? 1 : d[i].eval(env);
    if (x < 0 || x > int64_t(UINT32_MAX))
      throw ExprError(fmt::format("dimension {} is out of range", x), 0);
    return uint32_t(x);
  };
  return {v(0), v(1), v(2)};
}

std::vector<Launch> make_launches(const Puzzle& p, const Env& env) {
  std::vector<Launch> out;
  for (auto& ld : p.launches) {
    Launch l;
    l.kernel = ld.kernel;
    l.grid = eval_dim(ld.grid, env);
    l.block = eval_dim(ld.block, env);
    l.shared_bytes = ld.shared_bytes.empty() ? 0 : uint32_t(ld.shared_bytes.eval(env));
    l.cooperative = ld.cooperative;
    for (auto& a : ld.args) {
      if (const TensorMapDecl* m = p.tensor_map(a)) {
        l.args.push_back(KernelArg::of_tensor_map(eval_tensor_map(p, *m, env)));
        continue;
      }
      KernelArg ka;
      ka.name = a;
      for (size_t i = 0; i < p.buffers.size(); ++i)
        if (p.buffers[i].name == a) ka.kind = KernelArg::Kind::buffer, ka.buffer = int(i);
      if (ka.kind == KernelArg::Kind::scalar) {
        const ScalarDecl* s = p.scalar(a);
        double v = s->number ? *s->number
                   : s->expr ? double(s->expr->eval(env))
                             : double(env.at(s->name));
        ka.size = uint32_t(dtype_size(s->type));
        if (!is_float(s->type)) {
          int64_t iv = s->expr ? s->expr->eval(env) : env.at(s->name);
          std::memcpy(ka.value.data(), &iv, ka.size); // little-endian: the low bytes
        } else {
          store_element(s->type, ka.value.data(), v);
        }
      }
      l.args.push_back(ka);
    }
    out.push_back(std::move(l));
  }
  return out;
}

// One buffer as a case starts it, with guard bands around it: an input from its generator (its
// content_hash goes to `hash`), an in/out output from its `init`, and an output or workspace
// poisoned, unless `poison` is false: the checker's runs set those on the device (Transfer::fill)
// and only need the image's memory.
HostBuffer make_buffer(const BufferDecl& b, const Case& c, const Env& env, uint64_t seed,
                       uint64_t case_index, bool poison = true, uint64_t* hash = nullptr) {
  HostBuffer hb;
  hb.name = b.name;
  hb.type = b.type;
  hb.data_bytes = size_t(b.count.eval(env)) * dtype_size(b.type);
  hb.guard_bytes = kGuardBytes;
  hb.image.resize(hb.data_bytes + 2 * kGuardBytes);
  std::memset(hb.image.data(), kGuardByte, kGuardBytes);
  std::memset(hb.data() + hb.data_bytes, kGuardByte, kGuardBytes);
  std::span<std::byte> data(hb.data(), hb.data_bytes);
  const Generator* gen = b.init ? &*b.init : nullptr;
  if (auto it = c.init.find(b.name); it != c.init.end()) gen = &it->second;
  if (gen && !b.scratch) {
    uint64_t h = gen->fill(b.type, data, seed, stream_id(b.name, case_index), env);
    if (hash) *hash = h;
  } else if (poison || b.is_input()) {
    parallel_chunks(
        int64_t(data.size()),
        [&](int, int64_t lo, int64_t hi) {
          std::memset(data.data() + lo, poison_byte(b.type), size_t(hi - lo));
        },
        1 << 22);
    if (hash) *hash = content_hash(data.data(), data.size());
  }
  return hb;
}

Prepared prepare(const Puzzle& p, const Case& c, const Env& env, uint64_t seed, uint64_t case_index,
                 bool poison = true) {
  Prepared pr;
  pr.hashes.assign(p.buffers.size(), 0);
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferDecl& b = p.buffers[i];
    pr.counts.push_back(b.count.eval(env));
    std::vector<int64_t> shape;
    for (auto& s : b.shape) shape.push_back(s.eval(env));
    pr.shapes.push_back(shape);
    pr.buffers.push_back(make_buffer(b, c, env, seed, case_index, poison, &pr.hashes[i]));
  }
  pr.launches = make_launches(p, env);
  return pr;
}

// How each buffer travels for one of the checker's runs. Inputs go up once and stay on the device
// for the learner's run and the timing (`kept`); after the learner's run only their guard bands
// come back, and a hash says whether the kernel changed them. Outputs and workspaces start
// poisoned on the device; outputs come back whole, workspaces only as guard bands.
std::vector<Transfer> transfers(const Puzzle& p, bool inputs_on_device) {
  std::vector<Transfer> t(p.buffers.size());
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferDecl& d = p.buffers[i];
    Transfer& x = t[i];
    if (d.is_input()) {
      x.in = inputs_on_device ? Transfer::In::kept : Transfer::In::image;
      x.out = Transfer::Out::guards;
      x.hash = true;
    } else if (!(d.output && d.init)) {
      x.in = Transfer::In::fill;
      x.guard_fill = std::byte{kGuardByte};
      x.data_fill = std::byte{poison_byte(d.type)};
      x.out = d.output ? Transfer::Out::image : Transfer::Out::guards;
    }
  }
  return t;
}

std::vector<int64_t> unravel(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    int64_t d = std::max<int64_t>(1, shape[k]);
    c[k] = i % d;
    i /= d;
  }
  return c;
}

std::string coords_str(const std::vector<int64_t>& c) {
  std::string s;
  for (auto v : c) s += fmt::format("{}{}", s.empty() ? "" : ",", v);
  return s;
}

// A figure of a failure's text, as every figure reads (format_figure.hpp); the JSON report keeps
// the full values.
std::string fmt_value(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return sig3(v);
}

// Got and expected, with the digits that tell them apart.
std::pair<std::string, std::string> fmt_got_expected(double got, double expected) {
  auto p = sig3_pair(got, expected);
  if (std::isinf(got)) p.first = fmt_value(got);
  if (std::isinf(expected)) p.second = fmt_value(expected);
  return p;
}

// Compares one output and fills the report. Runs on every core: perf sizes have 2^26 elements.
void compare_output(BufferReport& br, const BufferDecl& decl, const HostBuffer& expected,
                    const HostBuffer& actual, int64_t count, const std::vector<int64_t>& shape,
                    double rtol, double atol, const Launch& launch,
                    const std::vector<Writer>* writers) {
  size_t es = dtype_size(decl.type);
  bool poisoned = !decl.init; // in/out buffers start with data, so "unwritten" means nothing there
  std::vector<std::byte> poison(es, std::byte{poison_byte(decl.type)});
  const bool f32 = decl.type == DType::f32;
  uint32_t poison32 = 0;
  if (f32) std::memcpy(&poison32, poison.data(), 4);
  int64_t rows = 1, cols = count;
  if (shape.size() >= 2) {
    cols = shape.back();
    rows = cols ? count / cols : 0;
  } else {
    cols = std::min<int64_t>(count, 64);
    rows = cols ? (count + cols - 1) / cols : 0;
  }
  br.heat_rows = int(std::min<int64_t>(rows, 64));
  br.heat_cols = int(std::min<int64_t>(cols, 64));
  size_t cells = size_t(br.heat_rows) * br.heat_cols;
  struct Part {
    int64_t wrong = 0, unwritten = 0, nan_wrong = 0;
    double max_abs = 0, max_rel = 0;
    std::vector<Mismatch> first;
    std::vector<float> heat_n, heat_tot;
  };
  std::vector<Part> parts(std::max(1u, std::thread::hardware_concurrency()));
  int used = parallel_chunks(count, [&](int t, int64_t begin, int64_t end) {
    Part& part = parts[t];
    part.heat_n.assign(cells, 0.f);
    part.heat_tot.assign(cells, 0.f);
    // The heat map cell of element i is (row cell, column cell); walking the elements in order
    // keeps the row and column in counters instead of dividing for every element.
    const int64_t ncols = std::max<int64_t>(1, cols), nrows = std::max<int64_t>(1, rows);
    std::vector<uint32_t> col_cell(cells ? size_t(std::min<int64_t>(ncols, 1 << 20)) : 0);
    for (size_t k = 0; k < col_cell.size(); ++k)
      col_cell[k] = uint32_t(int64_t(k) * br.heat_cols / ncols);
    int64_t r = begin / ncols, cc = begin % ncols;
    size_t row_base = cells ? size_t(r * br.heat_rows / nrows) * br.heat_cols : 0;
    for (int64_t i = begin; i < end; ++i) {
      const std::byte* pe = expected.data() + i * es;
      const std::byte* pa = actual.data() + i * es;
      size_t cell = 0;
      if (cells) {
        cell = row_base + (size_t(cc) < col_cell.size() ? col_cell[size_t(cc)]
                                                        : size_t(cc * br.heat_cols / ncols));
        part.heat_tot[cell] += 1;
        if (++cc == ncols) {
          cc = 0;
          ++r;
          row_base = size_t(r * br.heat_rows / nrows) * br.heat_cols;
        }
      }
      // Identical bits always pass (NaN where the reference has NaN, the same infinity), and are
      // nearly every element of a right answer: skip the arithmetic for them.
      if (f32) {
        uint32_t be, ba;
        std::memcpy(&be, pe, 4);
        std::memcpy(&ba, pa, 4);
        if (be == ba) continue;
      } else if (std::memcmp(pe, pa, es) == 0) {
        continue;
      }
      double e, a;
      bool unwritten;
      if (f32) { // the common case, without load_element's switch
        uint32_t be, ba;
        std::memcpy(&be, pe, 4);
        std::memcpy(&ba, pa, 4);
        float fe, fa;
        std::memcpy(&fe, pe, 4);
        std::memcpy(&fa, pa, 4);
        e = fe, a = fa;
        unwritten = poisoned && ba == poison32 && be != poison32;
      } else {
        e = load_element(decl.type, pe), a = load_element(decl.type, pa);
        unwritten = poisoned && std::memcmp(pa, poison.data(), es) == 0 &&
                    std::memcmp(pe, poison.data(), es) != 0;
      }
      bool ok = !unwritten && within_tolerance(e, a, rtol, atol);
      if (cells && !ok) part.heat_n[cell] += 1;
      if (ok) continue;
      ++part.wrong;
      if (unwritten)
        ++part.unwritten;
      else {
        if (!std::isfinite(a) && std::isfinite(e)) ++part.nan_wrong;
        double abs_err = std::fabs(a - e);
        if (std::isnan(abs_err)) abs_err = INFINITY;
        part.max_abs = std::max(part.max_abs, abs_err);
        part.max_rel = std::max(part.max_rel, e != 0 ? abs_err / std::fabs(e) : abs_err);
      }
      if (part.first.size() < kFirstMismatches) {
        Mismatch m;
        m.index = i;
        if (!shape.empty()) m.coords = unravel(i, shape);
        m.expected = e;
        m.actual = a;
        m.unwritten = unwritten;
        if (writers && size_t(i) < writers->size() && (*writers)[i].block.x != UINT32_MAX)
          m.owner = fmt::format("thread {} of block {}", dim3_str((*writers)[i].thread),
                                dim3_str((*writers)[i].block));
        else
          m.owner = owner_by_layout(i, shape, launch.grid, launch.block, count);
        part.first.push_back(std::move(m));
      }
    }
  });
  std::vector<float> heat_n(cells, 0.f), heat_tot(cells, 0.f);
  for (int t = 0; t < used; ++t) {
    Part& part = parts[t];
    br.wrong += part.wrong;
    br.unwritten += part.unwritten;
    br.nan_wrong += part.nan_wrong;
    br.max_abs_err = std::max(br.max_abs_err, part.max_abs);
    br.max_rel_err = std::max(br.max_rel_err, part.max_rel);
    for (auto& m : part.first)
      if (br.first.size() < kFirstMismatches) br.first.push_back(std::move(m));
    for (size_t k = 0; k < part.heat_n.size(); ++k)
      heat_n[k] += part.heat_n[k], heat_tot[k] += part.heat_tot[k];
  }
  br.heat.resize(cells);
  for (size_t k = 0; k < cells; ++k) br.heat[k] = heat_tot[k] > 0 ? heat_n[k] / heat_tot[k] : 0.f;
}

// First damaged byte of a guard band, or -1.
int64_t guard_damage(const std::byte* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != std::byte{kGuardByte}) return int64_t(i);
  return -1;
}

// The relative size of one unit in the last place of a float dtype (0: not a float): how far apart
// two answers that differ only by rounding can be.
double ulp_of(const std::string& dtype) {
  return dtype == "f32"    ? 0x1p-24
         : dtype == "f64"  ? 0x1p-53
         : dtype == "f16"  ? 0x1p-11
         : dtype == "bf16" ? 0x1p-8
                           : 0;
}

// The largest finite |value| of a buffer's elements: what [check] rtol_of_max scales.
double max_abs_finite(DType t, const HostBuffer& b, int64_t count) {
  const size_t es = dtype_size(t);
  double m = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double v = std::fabs(load_element(t, b.data() + size_t(i) * es));
    if (std::isfinite(v)) m = std::max(m, v);
  }
  return m;
}

// Wrong only by rounding: every wrong element close to its value, finite and written, under a
// tolerance that allows some error. What a long sum in too narrow an accumulator produces.
bool near_miss(const BufferReport& br, double rtol, double atol) {
  if (br.unwritten || br.nan_wrong || (rtol == 0 && atol == 0) || br.first.empty()) return false;
  if (ulp_of(br.dtype) == 0) return false; // not a float
  const Mismatch& m = br.first.front();
  double tol = atol + rtol * std::fabs(m.expected);
  return br.max_rel_err <= 0.05 && br.max_abs_err <= 1000 * tol;
}

std::string mismatch_sentence(const BufferReport& br, double rtol, double atol) {
  const Mismatch& m = br.first.front();
  std::string where = m.coords.empty() ? fmt::format("{}[{}]", br.name, m.index)
                                       : fmt::format("{}[{}]", br.name, coords_str(m.coords));
  if (m.unwritten)
    return fmt::format("{} of {} elements of {} were never written (first: {}, {})", br.unwritten,
                       br.count, br.name, where, m.owner);
  const auto [got, want] = fmt_got_expected(m.actual, m.expected);
  if (near_miss(br, rtol, atol))
    return fmt::format(
        "{} of {} elements of {} are a near miss (first: {} = {}, expected {}, {}): the largest "
        "error is {} (relative {}) where the tolerance allows {} + {} x |expected|. Every wrong "
        "element is within {} of its value, so this is rounding, not a wrong formula: most "
        "often accumulated rounding along a long sum (each add rounds to the accumulator's "
        "precision: 24 bits in float, 11 in half, 8 in bfloat16), or an approximate intrinsic "
        "(__expf, __fdividef). The usual fixes: add in a tree (per-thread partial sums combined "
        "pairwise, as a block reduction does) or in a wider accumulator (float for half data; "
        "double or Kahan summation for float)",
        br.wrong, br.count, br.name, where, got, want, m.owner, fmt_value(br.max_abs_err),
        fmt_value(br.max_rel_err), fmt_value(atol), fmt_value(rtol),
        percent_text(std::max(br.max_rel_err, 1e-4)));
  const double ulp = ulp_of(br.dtype);
  if (rtol == 0 && atol == 0 && ulp > 0 && !br.unwritten && !br.nan_wrong &&
      br.max_rel_err <= 4 * ulp)
    return fmt::format(
        "{} of {} elements of {} differ from the exact answer in the last bits only (first: {} = "
        "{}, expected {}, {}; relative error at most {}). This puzzle is checked "
        "exactly: each element must be rounded as the reference rounds it, so use the plain "
        "operators in round-to-nearest (a + b, not __fadd_rz or __fadd_rd), no approximate "
        "intrinsics, and the reference's order of operations",
        br.wrong, br.count, br.name, where, got, want, m.owner, fmt_value(br.max_rel_err));
  std::string s = fmt::format(
      "{} of {} elements of {} are wrong (first: {} = {}, expected {}, {}; max abs error {}, max "
      "rel error {})",
      br.wrong, br.count, br.name, where, got, want, m.owner, fmt_value(br.max_abs_err),
      fmt_value(br.max_rel_err));
  if (br.nan_wrong)
    s += fmt::format(
        ". {} of them are NaN or Inf where the expected value is finite: most often a read of "
        "memory no thread wrote (the simulator fills unwritten shared memory with NaN; a GPU "
        "leaves "
        "whatever was there), a 0/0 or inf - inf, or an overflow such as exp of a large value",
        br.nan_wrong == br.wrong ? std::string("All") : std::to_string(br.nan_wrong));
  return s;
}

struct Programs {
  Program learner, reference;
  std::string learner_source;
};

// A trap at a line that has no __trap(), assert or asm was put there by the compiler: say what it
// most likely stands for rather than "__trap()", which the learner never wrote.
std::string explain_trap(const std::string& message, const std::string& source, int line) {
  if (line <= 0) return message;
  std::istringstream in(source);
  std::string text;
  for (int n = 1; n <= line; ++n)
    if (!std::getline(in, text)) return message;
  for (const char* own : {"trap", "assert", "asm"})
    if (text.find(own) != std::string::npos) return message;
  std::string m = message;
  if (auto at = m.find(" (__trap())"); at != std::string::npos) m.erase(at, 11);
  return m + fmt::format(
                 ": line {} has no __trap(), assert or asm, so the compiler put this trap there. "
                 "It does so where it can prove the code is undefined: most often a write or read "
                 "through a null (or otherwise invalid) pointer, such as `float* p = nullptr; *p = "
                 "1.0f;`. Check the pointers used on that line",
                 line);
}

// A run of the puzzle's reference: trusted with its inputs (no hashes) and with what it does (the
// simulator skips the learner's watches), its outputs wanted, no counters.
RunPlan reference_plan(const Puzzle& p, const Program& prog, std::vector<HostBuffer>& buffers,
                       std::vector<Launch> launches, bool keep, double timeout_s, uint64_t seed,
                       const std::atomic<bool>* cancel) {
  RunPlan rp;
  rp.program = &prog;
  rp.buffers = &buffers;
  rp.launches = std::move(launches);
  rp.transfers = transfers(p, false);
  for (auto& t : rp.transfers) t.hash = false;
  rp.keep = keep;
  rp.cancel = cancel;
  rp.timeout_s = timeout_s;
  rp.seed = seed;
  rp.counters = false;
  rp.trusted = true;
  return rp;
}

// The reference's outputs for one case, computed before the learner's run needs them (on the
// simulator, on another thread: see ReferenceAhead). `ran` is false when it was not computed
// (stopped, or a case the worker left to the inline path): the case then runs its reference itself.
struct ReferenceOutputs {
  bool ran = false;
  Fault fault;                      // the reference's own fault (a bug in the puzzle)
  std::vector<HostBuffer> expected; // by buffer index; only outputs are filled
};

// Runs the reference (unless `ahead` brings its outputs) and the learner on one case and judges
// the learner's outputs. `keep`, when given, receives the learner's buffers and launches: they
// stay on the device (RunPlan::keep) for the timing to take without another upload.
CaseReport run_case(const Puzzle& p, const Case& c, const Env& learner_env, const Env& ref_env,
                    Programs& progs, Backend& backend, uint64_t seed, uint64_t case_index,
                    const CheckOptions& opt, bool counters, Prepared* keep = nullptr,
                    ReferenceOutputs* ahead = nullptr) {
  if (ahead && !ahead->ran) ahead = nullptr;
  auto t0 = Clock::now();
  CaseReport cr;
  auto step_t = t0;
  auto step = [&](const char* name) { // where a case's time goes (it matters at perf sizes)
    auto now = Clock::now();
    cr.steps_ms.emplace_back(name, std::chrono::duration<double, std::milli>(now - step_t).count());
    step_t = now;
  };
  cr.sizes = c.sizes;
  cr.label = c.label.empty() ? sizes_label(c.sizes)
                             : fmt::format("{} ({})", c.label, sizes_label(c.sizes));
  auto fail = [&](Verdict v, const std::string& msg) {
    if (cr.verdict == Verdict::passed) cr.verdict = v, cr.message = msg;
    cr.problems.push_back(msg);
  };

  if (Fault why = memory_problem(p, learner_env, ref_env)) {
    cr.fault = why;
    fail(Verdict::runtime_fault, fmt::format("{}: {}", fault_name(why.kind), why.message));
    cr.ms = ms_since(t0);
    return cr;
  }
  // One set of buffers serves both runs: the reference runs first and its outputs are set aside
  // as the expected values; the learner then gets freshly poisoned outputs and the same inputs,
  // which never left the device. (At perf sizes every extra pass over the host images costs more
  // than both GPU runs.) When a buffer's size depends on a tunable (a workspace sized by BLOCK),
  // the reference, which runs with the puzzle's defaults, gets buffers of its own.
  Prepared learner, ref;
  std::vector<HostBuffer> expected(p.buffers.size());
  bool shared_buffers = !ahead; // outputs computed ahead: the learner's inputs go up on their own
  try {
    learner = prepare(p, c, learner_env, seed, case_index, /*poison=*/false);
    for (auto& b : p.buffers)
      shared_buffers = shared_buffers && b.count.eval(learner_env) == b.count.eval(ref_env);
    if (shared_buffers)
      ref.launches = make_launches(p, ref_env);
    else if (!ahead)
      ref = prepare(p, c, ref_env, seed, case_index, /*poison=*/false);
  } catch (const ExprError& e) {
    fail(Verdict::usage_error, fmt::format("the puzzle's sizes do not evaluate: {}", e.what()));
    return cr;
  }
  std::vector<HostBuffer>& ref_buffers = shared_buffers ? learner.buffers : ref.buffers;
  std::map<size_t, HostBuffer> initial; // in/out outputs as they start, for the learner's run
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (shared_buffers && p.buffers[i].output && p.buffers[i].init) initial[i] = learner.buffers[i];
  step("prepare");
  if (!learner.launches.empty())
    cr.grid = learner.launches[0].grid, cr.block = learner.launches[0].block;
  for (auto& l : learner.launches)
    if (auto why = launch_problem(l); !why.empty()) {
      cr.fault = {FaultKind::launch_config, why};
      fail(Verdict::runtime_fault, why);
      cr.ms = ms_since(t0);
      return cr;
    }

  // Its cancel flag, time limit and seed are the learner's run's too (lp copies rp).
  RunPlan rp = reference_plan(p, progs.reference, ref_buffers, ref.launches, shared_buffers,
                              opt.case_timeout_s, seed, opt.cancel);
  RunResult rr;
  if (ahead) {
    rr.fault = ahead->fault;
    step("reference (computed ahead)");
  } else {
    rr = backend.run(rp);
    if (rr.cancelled || cancel_requested(opt.cancel)) throw Cancelled();
    step("reference run");
  }
  if (rr.fault) {
    cr.fault = rr.fault;
    fail(Verdict::usage_error,
         fmt::format("the puzzle's reference kernel failed (a bug in the puzzle, not in your "
                     "code): {}: {}",
                     fault_name(rr.fault.kind), rr.fault.message));
    cr.ms = ms_since(t0);
    return cr;
  }
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferDecl& d = p.buffers[i];
    if (!d.output) continue;
    expected[i] = std::move(ahead ? ahead->expected[i] : ref_buffers[i]);
    if (!shared_buffers) continue;
    if (auto it = initial.find(i); it != initial.end())
      learner.buffers[i] = std::move(it->second);
    else
      learner.buffers[i] = make_buffer(d, c, learner_env, seed, case_index, /*poison=*/false);
  }
  step("set aside");

  RunPlan lp = rp;
  lp.program = &progs.learner;
  lp.buffers = &learner.buffers;
  lp.launches = learner.launches;
  lp.transfers = transfers(p, shared_buffers);
  lp.keep = true;     // for the timing, or to fetch an input the kernel changed
  lp.trusted = false; // the learner's kernel is watched for races and out-of-bounds variables
  lp.counters = counters;
  lp.shuffle_warps = opt.shuffle_warps;
  lp.heap_as_at_perf = p.sim_perf && &c == &*p.sim_perf;
  RunResult lr = backend.run(lp);
  if (lr.cancelled || cancel_requested(opt.cancel)) throw Cancelled();
  step("run");
  cr.counters = std::move(lr.counters);
  cr.printf_output = std::move(lr.printf_output);
  for (auto& w : lr.warnings) cr.problems.push_back(w);
  if (lr.fault) {
    cr.fault = lr.fault;
    // cooperative_groups' grid sync traps when the launch gave it no grid workspace (%envreg1/2).
    const int li = lr.fault.launch;
    if (lr.fault.kind == FaultKind::trap && li >= 0 && size_t(li) < lp.launches.size() &&
        !lp.launches[size_t(li)].cooperative && uses_grid_sync(progs.learner.ptx))
      cr.fault.message = fmt::format(
          "{} synchronises the whole grid (cooperative_groups::this_grid().sync()), which needs a "
          "cooperative launch, with every block resident at once; this puzzle launches it the "
          "ordinary way, so the grid barrier stops on a trap. Use a second launch for the second "
          "phase (as this puzzle's kernels are laid out), or a puzzle whose launch says "
          "cooperative = true",
          lp.launches[size_t(li)].kernel);
    else if (lr.fault.kind == FaultKind::trap)
      cr.fault.message = explain_trap(cr.fault.message, progs.learner_source, lr.fault.source_line);
    std::string where =
        cr.fault.source_line > 0 ? fmt::format(" (line {})", cr.fault.source_line) : "";
    fail(Verdict::runtime_fault,
         fmt::format("{}: {}{}", fault_name(cr.fault.kind), cr.fault.message,
                     cr.fault.message.find("line") == std::string::npos ? where : ""));
  }

  bool inputs_changed = false;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferDecl& d = p.buffers[i];
    const HostBuffer& got = learner.buffers[i];
    BufferReport br;
    br.name = d.name;
    br.dtype = std::string(dtype_name(d.type));
    br.count = learner.counts[i];
    br.shape = learner.shapes[i];
    // Guards: a write past either end of any buffer.
    int64_t before = guard_damage(got.image.data(), got.guard_bytes);
    int64_t after = guard_damage(got.data() + got.data_bytes, got.guard_bytes);
    if (before >= 0) {
      br.guard_before_damaged = true;
      br.guard_first_offset = int64_t(got.guard_bytes) - before;
      fail(Verdict::wrong_answer,
           fmt::format("something wrote before the start of {} ({} bytes before it)", d.name,
                       br.guard_first_offset));
    }
    if (after >= 0) {
      br.guard_after_damaged = true;
      br.guard_first_offset = after;
      fail(Verdict::wrong_answer,
           fmt::format("something wrote past the end of {} (element {}, {} bytes past its "
                       "end): check the bounds guard",
                       d.name, br.count + after / int64_t(dtype_size(d.type)), after));
    }
    if (d.is_input() && !lr.fault && i < lr.hashes.size() && lr.hashes[i] != learner.hashes[i]) {
      br.input_clobbered = true;
      inputs_changed = true;
    }
    if (d.output && !lr.fault) {
      auto [rt, at] = default_tolerance(d.type);
      double rtol = p.rtol.value_or(rt), atol = p.atol.value_or(at);
      if (p.rtol_of_max) atol += *p.rtol_of_max * max_abs_finite(d.type, expected[i], br.count);
      auto wit = lr.writers.find(int(i));
      compare_output(br, d, expected[i], got, br.count, br.shape, rtol, atol,
                     learner.launches.front(), wit == lr.writers.end() ? nullptr : &wit->second);
      if (br.wrong) fail(Verdict::wrong_answer, mismatch_sentence(br, rtol, atol));
    }
    cr.buffers.push_back(std::move(br));
  }
  if (inputs_changed) {
    // Only hashes came back: fetch the changed inputs, still on the device, to say where.
    RunPlan fetch = lp;
    fetch.launches.clear();
    fetch.keep = false;
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      Transfer& t = fetch.transfers[i];
      t.hash = false;
      if (t.in == Transfer::In::fill) t.in = Transfer::In::kept; // whatever the kernel left there
      t.out = cr.buffers[i].input_clobbered ? Transfer::Out::image : Transfer::Out::guards;
    }
    RunResult fr = backend.run(fetch);
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      BufferReport& br = cr.buffers[i];
      if (!br.input_clobbered) continue;
      const BufferDecl& d = p.buffers[i];
      // The generators are deterministic: make the original again to compare against.
      HostBuffer orig = make_buffer(d, c, learner_env, seed, case_index);
      const HostBuffer& got = learner.buffers[i];
      size_t es = dtype_size(d.type);
      int64_t k = 0;
      while (!fr.fault && k < br.count &&
             std::memcmp(orig.data() + k * es, got.data() + k * es, es) == 0)
        ++k;
      br.clobbered_index = k < br.count && !fr.fault ? k : -1;
      fail(Verdict::wrong_answer,
           br.clobbered_index >= 0
               ? fmt::format("the kernel changed its input {} (first at {}[{}]): inputs must stay "
                             "as they were",
                             d.name, d.name, k)
               : fmt::format("the kernel changed its input {}: inputs must stay as they were",
                             d.name));
    }
  }
  // Budgets (simulator counters).
  for (auto& [name, limit] : p.budget) {
    std::string counter = name == "global_loads_per_thread" ? "max_global_loads_per_thread"
                                                            : "max_global_stores_per_thread";
    auto it = cr.counters.total.find(counter);
    if (it != cr.counters.total.end() && it->second > double(limit))
      fail(Verdict::wrong_answer,
           fmt::format("over budget: a thread made {} global {} where the puzzle allows {}",
                       it->second, name == "global_loads_per_thread" ? "loads" : "stores", limit));
  }
  step("compare");
  if (keep) {
    keep->buffers = std::move(learner.buffers);
    keep->launches = std::move(learner.launches);
  }
  cr.ms = ms_since(t0);
  return cr;
}

} // namespace

CaseSetup prepare_case(const Puzzle& p, const Case& c, const Env& env, uint64_t seed,
                       uint64_t case_index) {
  Prepared pr = prepare(p, c, env, seed, case_index);
  return {std::move(pr.buffers), std::move(pr.launches)};
}

LazyCase prepare_lazy_case(const Puzzle& p, const Case& c, const Env& env, uint64_t seed,
                           uint64_t case_index) {
  LazyCase lc;
  lc.launches = make_launches(p, env);
  for (auto& b : p.buffers) {
    HostBuffer hb;
    hb.name = b.name;
    hb.type = b.type;
    hb.data_bytes = size_t(b.count.eval(env)) * dtype_size(b.type);
    hb.guard_bytes = kGuardBytes;
    const Generator* gen = b.init ? &*b.init : nullptr;
    if (auto it = c.init.find(b.name); it != c.init.end()) gen = &it->second;
    std::optional<ResolvedGenerator> rg;
    if (gen && !b.scratch) rg = gen->resolve(b.type, seed, stream_id(b.name, case_index), env);
    const size_t guard = kGuardBytes, data = hb.data_bytes, es = dtype_size(b.type);
    const std::byte poison{poison_byte(b.type)};
    Transfer t;
    // Runs in a signal handler (LazyImage): arithmetic and memset only.
    t.lazy = [rg, guard, data, es, poison](uint64_t off, std::byte* dst, size_t n) {
      // [off, off + n) of the image: head guard, then data, then tail guard.
      const uint64_t end = off + n;
      const uint64_t d0 = std::clamp<uint64_t>(guard, off, end);
      const uint64_t d1 = std::clamp<uint64_t>(guard + data, d0, end);
      std::memset(dst, kGuardByte, size_t(d0 - off));
      if (d1 > d0) {
        std::byte* p = dst + (d0 - off);
        const uint64_t lo = std::max(off, d0), hi = d1;
        if (rg) {
          const uint64_t e0 = (lo - guard) / es, e1 = (hi - guard + es - 1) / es;
          rg->fill(p, e0, size_t(e1 - e0));
        } else {
          std::memset(p, int(poison), size_t(hi - lo));
        }
      }
      std::memset(dst + (d1 - off), kGuardByte, size_t(end - d1));
    };
    lc.buffers.push_back(std::move(hb));
    lc.transfers.push_back(std::move(t));
  }
  return lc;
}

bool within_tolerance(double e, double a, double rtol, double atol) {
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
  if (std::isinf(e) || std::isinf(a)) return e == a;
  return std::fabs(a - e) <= atol + rtol * std::fabs(e);
}

std::string owner_by_layout(int64_t index, const std::vector<int64_t>& shape, const Dim3& grid,
                            const Dim3& block, int64_t count) {
  if (shape.size() == 2 && grid.y > 1) {
    int64_t r = index / std::max<int64_t>(1, shape[1]), c = index % std::max<int64_t>(1, shape[1]);
    return fmt::format("thread ({},{},0) of block ({},{},0) by layout", c % block.x, r % block.y,
                       c / block.x, r / block.y);
  }
  if (int64_t(grid.x) == count && grid.y == 1)
    return fmt::format("block ({},0,0) by layout", index);
  if (shape.size() == 2 && int64_t(grid.x) == shape[0])
    return fmt::format("block ({},0,0) by layout", index / std::max<int64_t>(1, shape[1]));
  int64_t b = index / std::max<uint32_t>(1, block.x);
  if (b >= int64_t(grid.x)) return "a grid-stride iteration (by layout)";
  return fmt::format("thread ({},0,0) of block ({},0,0) by layout", index % block.x, b);
}

namespace {

// Prediction threads still running (a cancelled check returns without waiting for the NVRTC
// compile inside one): see wait_for_predictions.
struct LivePredictions {
  std::mutex mu;
  std::condition_variable done;
  int running = 0;
};
LivePredictions& live_predictions() {
  static LivePredictions live;
  return live;
}

// On the simulator the reference's outputs do not depend on the learner's file, so while NVRTC
// compiles that file (one core, a second or more for a tensor-core kernel) a thread of their own
// computes them on the other core, case by case in the order the check needs them. Once the file
// has compiled the worker finishes the run it is in and starts no other: from there the cases run
// their references inline on every core, as they would without it, and the learner's runs do not
// share the cores with reference runs of cases further on. A case it did not compute (not reached,
// a memory limit, a timeout on a busy core) runs its reference inline.
class ReferenceAhead {
public:
  struct Job {
    const Case* c;
    uint64_t index; // the case's index (its inputs' seed stream)
  };
  ReferenceAhead(const Puzzle& p, std::map<std::string, int64_t> ref_tune, uint64_t seed,
                 double timeout_s, std::shared_future<Program> compiled, std::vector<Job> jobs)
      : jobs_(std::move(jobs)), done_(jobs_.size()) {
    for (auto& d : done_) results_.push_back(d.get_future());
    worker_ = std::async(std::launch::async, [this, &p, ref_tune, seed, timeout_s, compiled] {
      size_t k = 0;
      try {
        const Program& prog = compiled.get();
        std::string why;
        // One thread: the other core is NVRTC's, compiling the learner's file meanwhile.
        std::unique_ptr<Backend> sim = prog.ok ? make_sim_backend(why, 1) : nullptr;
        for (; k < jobs_.size(); ++k) {
          ReferenceOutputs out;
          if (sim && !stop_.load() && !no_new_.load())
            out = run(p, *jobs_[k].c, jobs_[k].index, ref_tune, seed, timeout_s, prog, *sim);
          done_[k].set_value(std::move(out));
        }
      } catch (...) { // left to the inline path
        for (; k < jobs_.size(); ++k) done_[k].set_value(ReferenceOutputs{});
      }
    });
  }
  ~ReferenceAhead() {
    stop();
    worker_.wait();
  }
  // The check ends: the run in progress stops too.
  void stop() { stop_.store(true); }
  // The learner's file has compiled: no further run starts here.
  void learner_compiled() { no_new_.store(true); }
  // The outputs of case `index` (ran = false when the worker did not compute them), waited for in
  // short steps so that a cancel ends the wait.
  ReferenceOutputs take(uint64_t index, const std::atomic<bool>* cancel) {
    for (size_t k = 0; k < jobs_.size(); ++k) {
      if (jobs_[k].index != index || !results_[k].valid()) continue;
      while (results_[k].wait_for(std::chrono::milliseconds(20)) != std::future_status::ready)
        if (cancel_requested(cancel)) {
          stop();
          throw Cancelled();
        }
      return results_[k].get();
    }
    return {};
  }

private:
  ReferenceOutputs run(const Puzzle& p, const Case& c, uint64_t index,
                       const std::map<std::string, int64_t>& ref_tune, uint64_t seed,
                       double timeout_s, const Program& prog, Backend& sim) {
    const Env env = p.env(c, ref_tune);
    if (memory_problem(p, env, env)) return {};
    Prepared pr = prepare(p, c, env, seed, index, /*poison=*/false);
    RunResult rr =
        sim.run(reference_plan(p, prog, pr.buffers, pr.launches, false, timeout_s, seed, &stop_));
    // A timeout here may be this busy core's, not the reference's: the inline run decides.
    if (rr.cancelled || rr.fault.kind == FaultKind::timeout) return {};
    ReferenceOutputs out;
    out.ran = true;
    out.fault = rr.fault;
    out.expected.resize(p.buffers.size());
    for (size_t i = 0; i < p.buffers.size(); ++i)
      if (p.buffers[i].output && !rr.fault) out.expected[i] = std::move(pr.buffers[i]);
    return out;
  }

  std::vector<Job> jobs_;
  std::vector<std::promise<ReferenceOutputs>> done_;
  std::vector<std::future<ReferenceOutputs>> results_;
  std::atomic<bool> stop_{false}, no_new_{false};
  std::future<void> worker_;
};

CheckReport check_impl(const Puzzle& p, const std::string& source, const std::string& file,
                       Backend& backend, const CheckOptions& opt, const Env* run_sizes) {
  auto t_start = Clock::now();
  CheckReport rep;
  rep.puzzle = p.id;
  rep.file = file;
  rep.device = backend.info();
  rep.seed = opt.seed ? opt.seed : fresh_seed();
  auto progress = [&](const std::string& s, int k, int n) {
    if (opt.progress) opt.progress(s, k, n);
  };
  auto finish = [&]() {
    rep.total_ms = ms_since(t_start);
    return rep;
  };

  // Tunables: the puzzle's defaults, overridden by the learner's @tune lines.
  progress("compiling", 0, 1);
  auto t0 = Clock::now();
  const std::map<std::string, int64_t> tune = resolve_tunables(p, source, file, rep.diagnostics);
  // The reference always runs at the puzzle's defaults.
  const std::map<std::string, int64_t> ref_tune = resolve_tunables(p, "", file, rep.diagnostics);
  rep.tunables = tune;

  // The performance model predicts the perf size meanwhile (its own simulator, on the CPU): on
  // the simulator it gives the time; on a GPU it stands beside the measurement. It starts at
  // once, so that its own compile (for the predicted GPU's architecture) runs beside the learner's
  // and the reference's instead of after them; a file that does not compile fails there too.
  // It runs on a thread of its own that owns what it reads (a copy of the puzzle, the source),
  // so that a cancelled check returns without waiting for it: an NVRTC compile inside cannot be
  // interrupted. `job->stop` ends it early: when the check is cancelled or leaves by any other
  // way (the guard; a normal return still waits for the thread, which stops within milliseconds
  // of its compile), and when a case fails on the simulator (a wrong kernel gets no predicted
  // time, as a GPU does not time one).
  struct PredictionJob {
    Puzzle puzzle;
    std::string source, file;
    std::map<std::string, int64_t> tune;
    perf::Machine machine;
    uint64_t seed = 0;
    std::atomic<bool> stop{false};
  };
  auto job = std::make_shared<PredictionJob>();
  std::future<perf::Prediction> prediction;
  struct StopOnExit {
    PredictionJob& job;
    std::future<perf::Prediction>& f;
    int unwinding = std::uncaught_exceptions();
    ~StopOnExit() {
      job.stop.store(true);
      if (!f.valid()) return;
      if (std::uncaught_exceptions() == unwinding)
        f.wait();
      else // cancelled: a stopped sampled run ends in milliseconds; only NVRTC is left behind
        f.wait_for(std::chrono::milliseconds(100));
    }
  } stop_on_exit{*job, prediction};
  std::atomic<bool>& stop_prediction = job->stop;
  perf::Machine& machine = job->machine;
  if (opt.predict && p.perf && !run_sizes) {
    job->puzzle = p;
    job->source = source;
    job->file = file;
    job->tune = tune;
    job->machine = perf::machine_for_check(rep.device, opt.model_gpu, opt.data_dir);
    job->seed = rep.seed;
    std::promise<perf::Prediction> promise;
    prediction = promise.get_future();
    LivePredictions& live = live_predictions();
    {
      std::lock_guard lk(live.mu);
      ++live.running;
    }
    std::thread([job, &live, promise = std::move(promise)]() mutable {
      lower_thread_priority(perf::kPredictionNice); // this thread runs blocks too
      perf::PredictOptions po;
      po.seed = job->seed;
      po.cancel = &job->stop;
      try {
        promise.set_value(
            perf::predict(job->puzzle, job->source, job->file, job->tune, job->machine, po));
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
      std::lock_guard lk(live.mu);
      --live.running;
      live.done.notify_all();
    }).detach();
  }

  Programs progs;
  CompileOptions co = backend.compile_options();
  // The simulator stands in for the GPU the model predicts: it compiles for that GPU's
  // architecture, as the GPU backend would on it (and as the prediction does, so that the two
  // share one compile).
  if (rep.device.backend != "cuda") {
    const perf::Machine m = perf::machine_for_check(rep.device, opt.model_gpu, opt.data_dir);
    co.arch = perf::arch_for(m);
  }
  co.defines = tune;
  // The reference compiles on another thread meanwhile (NVRTC programs are independent).
  CompileOptions rco = co;
  rco.defines = ref_tune;
  // On the simulator the reference's PTX is all that runs: it needs no cubin.
  const bool is_gpu = rep.device.backend == "cuda";
  std::shared_future<Program> reference =
      std::async(std::launch::async, [&] {
        const std::string ref = read_file(p.reference), name = p.reference.filename().string();
        return is_gpu ? compile_source(ref, name, rco) : compile_ptx(ref, name, rco);
      }).share();

  std::vector<Case> cases;
  if (run_sizes) {
    Case c;
    c.sizes = *run_sizes;
    // At the timed size (or the simulator's counter size) the inputs are the ones timed there
    // (decode attention's full-length sequences, for one): a run there measures the same thing.
    for (const std::optional<Case>* named : {&p.perf, &p.sim_perf})
      if (*named && (*named)->sizes == c.sizes) c.init = (*named)->init;
    cases.push_back(c);
  } else {
    cases = p.cases;
    if (opt.perf_case && is_gpu && p.perf) cases.push_back(*p.perf);
  }
  const bool count_sim_perf = !is_gpu && !run_sizes && opt.perf_case && p.sim_perf;
  std::optional<ReferenceAhead> ahead;
  if (!is_gpu) {
    std::vector<ReferenceAhead::Job> jobs;
    for (size_t i = 0; i < cases.size(); ++i)
      if (!opt.only_case || i == *opt.only_case) jobs.push_back({&cases[i], i});
    if (count_sim_perf) jobs.push_back({&*p.sim_perf, cases.size()});
    ahead.emplace(p, ref_tune, rep.seed, opt.case_timeout_s, reference, std::move(jobs));
  }

  progs.learner = compile_ptx(source, file, co);
  progs.learner_source = source;
  if (cancel_requested(opt.cancel)) throw Cancelled(); // NVRTC itself cannot be interrupted
  // ptxas makes the cubin on a thread of its own (owning its copy of the program, as the
  // prediction's does) while the simulator's cases run the PTX.
  std::shared_future<Program> assembled;
  const size_t front_diagnostics = progs.learner.diagnostics.size();
  if (progs.learner.ptxas_pending) {
    std::promise<Program> promise;
    assembled = promise.get_future().share();
    std::thread([prog = progs.learner, co, promise = std::move(promise)]() mutable {
      try {
        assemble(prog, co);
        promise.set_value(std::move(prog));
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
    }).detach();
  }
  require_kernels(progs.learner, p.kernel_names());
  for (auto& d : progs.learner.diagnostics) rep.diagnostics.push_back(d);
  rep.phases_ms.emplace_back("compile", ms_since(t0));
  auto compile_error = [&]() {
    rep.verdict = Verdict::compile_error;
    for (auto& d : rep.diagnostics)
      if (d.severity == Diagnostic::Severity::error) {
        rep.summary = d.str();
        break;
      }
    return finish();
  };
  // Waits for ptxas (in short steps, so that a cancel ends the wait) and takes its cubin,
  // resources and errors. False when ptxas refused the PTX.
  bool have_resources = false;
  auto assembly_ok = [&]() {
    if (have_resources) return true;
    have_resources = true;
    // The reference's worker goes on while ptxas has a core: the prediction waits for the cubin.
    if (ahead) ahead->learner_compiled();
    if (assembled.valid()) {
      auto t_wait = Clock::now();
      while (assembled.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready)
        if (cancel_requested(opt.cancel)) throw Cancelled();
      const Program whole = assembled.get();
      assembled = {};
      rep.phases_ms.emplace_back("ptxas (waited)", ms_since(t_wait));
      progs.learner.cubin = whole.cubin;
      progs.learner.resources = whole.resources;
      progs.learner.ok = progs.learner.ok && whole.ok;
      for (size_t k = front_diagnostics; k < whole.diagnostics.size(); ++k) {
        progs.learner.diagnostics.push_back(whole.diagnostics[k]);
        rep.diagnostics.push_back(whole.diagnostics[k]);
      }
    }
    rep.resources =
        progs.learner.ok ? backend.kernel_resources(progs.learner) : progs.learner.resources;
    return progs.learner.ok;
  };
  bool errors = std::any_of(rep.diagnostics.begin(), rep.diagnostics.end(),
                            [](auto& d) { return d.severity == Diagnostic::Severity::error; });
  if (errors || !progs.learner.ok) return compile_error();
  // A GPU loads the cubin.
  if (is_gpu && !assembly_ok()) return compile_error();

  t0 = Clock::now();
  progs.reference = reference.get();
  if (cancel_requested(opt.cancel)) throw Cancelled();
  require_kernels(progs.reference, p.kernel_names());
  rep.phases_ms.emplace_back("compile reference (waited)", ms_since(t0));
  if (!progs.reference.ok) {
    rep.verdict = Verdict::usage_error;
    rep.summary = fmt::format("the puzzle's reference.cu does not compile: {}",
                              progs.reference.diagnostics.empty()
                                  ? progs.reference.log
                                  : progs.reference.diagnostics.front().str());
    return finish();
  }

  Prepared last_buffers; // the last case's inputs, timed below when it is the timed size
  // A GPU's first failing case runs again on the simulator meanwhile, same inputs (same seed and
  // case index): its finding explains the failure.
  std::future<CheckReport> on_sim;
  size_t on_sim_case = 0;
  auto explain_on_sim = [&](size_t i) {
    on_sim_case = i;
    CheckOptions so;
    so.seed = rep.seed;
    so.time = so.perf_case = so.predict = so.explain_on_sim = false;
    so.only_case = i;
    so.data_dir = opt.data_dir;
    so.cancel = opt.cancel;
    on_sim = std::async(std::launch::async, [&p, &source, &file, so] {
      std::string why;
      auto sim = make_sim_backend(why);
      if (!sim) {
        CheckReport r;
        r.verdict = Verdict::usage_error;
        r.summary = why;
        return r;
      }
      return check_puzzle(p, source, file, *sim, so);
    });
  };
  // Hands a case's verdict on. True when no further case runs.
  auto hand_over = [&](CaseReport cr, size_t i) {
    rep.phases_ms.emplace_back(fmt::format("case {}", cr.label), cr.ms);
    // A note the simulator gives on every case (say, about FP8 wgmma's precision) is said once.
    std::erase_if(cr.problems, [&](const std::string& m) {
      return std::any_of(rep.cases.begin(), rep.cases.end(), [&](const CaseReport& e) {
        return std::find(e.problems.begin(), e.problems.end(), m) != e.problems.end();
      });
    });
    rep.cases.push_back(std::move(cr));
    const CaseReport& last = rep.cases.back();
    if (opt.on_case) opt.on_case(last, i, cases.size());
    if (last.verdict == Verdict::passed) return false;
    if (!is_gpu && !opt.time_wrong_answers) stop_prediction.store(true);
    if (is_gpu && opt.explain_on_sim && !run_sizes && !on_sim.valid() && i < p.cases.size())
      explain_on_sim(i);
    if (rep.verdict == Verdict::passed) {
      rep.verdict = last.verdict;
      rep.summary = fmt::format("case {}: {}", last.label, last.message);
    }
    return opt.stop_at_first_failure || last.fault.sticky || !backend.usable();
  };
  // Cases run while ptxas works are held until it has finished: a kernel ptxas refuses gets its
  // compile error and no case verdict. One that ran a launch the driver would refuse by ptxas's
  // registers or local memory runs again, to fail there.
  std::vector<std::pair<size_t, CaseReport>> held;
  bool no_more = false;
  auto hand_over_held = [&]() {
    if (!assembly_ok()) return false;
    for (auto& [k, cr] : held) {
      if (no_more) break;
      bool refused = false;
      try {
        for (const Launch& l : make_launches(p, p.env(cases[k], tune)))
          refused = refused ||
                    !resource_refusal(progs.learner.resources, l.kernel, l.block.count()).empty();
      } catch (const ExprError&) {
      }
      if (refused)
        cr = run_case(p, cases[k], p.env(cases[k], tune), p.env(cases[k], ref_tune), progs, backend,
                      rep.seed, k, opt, !is_gpu);
      no_more = hand_over(std::move(cr), k);
    }
    held.clear();
    return true;
  };
  for (size_t i = 0; i < cases.size() && !no_more; ++i) {
    if (opt.only_case && i != *opt.only_case) continue;
    // A kernel already wrong is not run again at the perf size (unless its time is wanted): that
    // run says nothing new, and a slow wrong kernel there (a naive attention at 8192 tokens) can
    // take the whole case time limit and end the runner.
    if (is_gpu && !run_sizes && i == p.cases.size() && rep.verdict != Verdict::passed &&
        !opt.time_wrong_answers)
      break;
    progress(fmt::format("case {} of {}", i + 1, cases.size()), int(i), int(cases.size()));
    bool last_case = i + 1 == cases.size();
    auto t_wait = Clock::now();
    ReferenceOutputs expected = ahead ? ahead->take(i, opt.cancel) : ReferenceOutputs{};
    double wait_ms = ms_since(t_wait);
    CaseReport cr = run_case(p, cases[i], p.env(cases[i], tune), p.env(cases[i], ref_tune), progs,
                             backend, rep.seed, i, opt, !is_gpu,
                             last_case && is_gpu ? &last_buffers : nullptr, &expected);
    if (expected.ran) {
      cr.steps_ms.insert(cr.steps_ms.begin(), {"waiting for the reference", wait_ms});
      cr.ms += wait_ms;
    }
    cr.perf = p.perf && !run_sizes && i == p.cases.size();
    const bool passed = cr.verdict == Verdict::passed;
    held.emplace_back(i, std::move(cr));
    // A failing case waits for ptxas at once: it ends the check, or at least the prediction.
    if (passed && assembled.valid() &&
        assembled.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      continue;
    if (!hand_over_held()) return compile_error();
  }
  if (!hand_over_held()) return compile_error();

  if (on_sim.valid() && on_sim_case < rep.cases.size()) {
    progress("explaining on the simulator", 0, 1);
    const CheckReport r = on_sim.get();
    CaseReport& gc = rep.cases[on_sim_case];
    if (r.cases.empty()) {
      gc.sim_explanation = "the simulator could not run this case: " + r.summary;
    } else if (const CaseReport& sc = r.cases.front();
               sc.verdict == Verdict::passed && (gc.fault.kind == FaultKind::launch_config ||
                                                 gc.fault.kind == FaultKind::out_of_resources ||
                                                 gc.fault.kind == FaultKind::memory_limit)) {
      // The driver refused the launch or ran out of something: the GPU's own message names the
      // limit; the simulator's run says nothing about the kernel's code.
      gc.sim_explanation = "the GPU refused or could not run this launch, for the reason above; "
                           "the simulator does not enforce that limit and ran the case, so the "
                           "cause is the limit, not the kernel's indexing or timing";
    } else if (sc.verdict == Verdict::passed) {
      gc.sim_explanation =
          "the simulator passes this case with the same inputs, so the cause is not an index, a "
          "bound or a barrier it can see: most likely timing (a race the GPU's schedule exposes "
          "and the simulator's does not, a flag or spin loop between blocks) or the GPU's "
          "arithmetic (fast-math functions, contracted multiply-adds) against a tight tolerance";
    } else {
      gc.sim_explanation = fmt::format("the simulator, same case and inputs: {}: {}",
                                       verdict_name(sc.verdict), sc.message);
      for (size_t k = 0; k < sc.problems.size() && k < 2; ++k)
        if (sc.problems[k] != sc.message) gc.sim_explanation += "; " + sc.problems[k];
      gc.sim_line = sc.fault.source_line;
    }
  }

  // The simulator's counters at the [sim_perf] size (a correctness run too).
  if (count_sim_perf && rep.verdict == Verdict::passed) {
    progress("counting", 0, 1);
    ReferenceOutputs expected = ahead ? ahead->take(cases.size(), opt.cancel) : ReferenceOutputs{};
    CaseReport cr = run_case(p, *p.sim_perf, p.env(*p.sim_perf, tune), p.env(*p.sim_perf, ref_tune),
                             progs, backend, rep.seed, cases.size(), opt, true, nullptr, &expected);
    cr.label = "sim_perf " + cr.label;
    rep.phases_ms.emplace_back(cr.label, cr.ms);
    if (cr.verdict != Verdict::passed && rep.verdict == Verdict::passed) {
      rep.verdict = cr.verdict;
      rep.summary = fmt::format("case {}: {}", cr.label, cr.message);
    }
    rep.sim_perf = std::move(cr);
  }

  // Timing on the GPU: the perf size, or the run's own size.
  const Case* timed = run_sizes ? &cases[0] : p.perf ? &*p.perf : nullptr;
  const bool judged_ok = rep.verdict == Verdict::passed ||
                         (opt.time_wrong_answers && rep.verdict == Verdict::wrong_answer);
  if (is_gpu && opt.time && timed && judged_ok && backend.usable()) {
    progress("timing", 0, 1);
    t0 = Clock::now();
    Env env = p.env(*timed, tune);
    // The perf case's buffers are still here: time those instead of generating them again.
    bool reuse = !last_buffers.buffers.empty() && cases.back().sizes == timed->sizes;
    Prepared pr = reuse ? std::move(last_buffers) : prepare(p, *timed, env, rep.seed, 1000);
    RunPlan tp;
    tp.program = &progs.learner;
    tp.buffers = &pr.buffers;
    tp.launches = pr.launches;
    tp.timeout_s = opt.case_timeout_s;
    tp.cancel = opt.cancel;
    // Still on the device from the perf case: the inputs as generated (their hashes said so), the
    // outputs as the learner left them (the kernels overwrite them anyway).
    if (reuse) tp.transfers.assign(pr.buffers.size(), Transfer{Transfer::In::kept});
    PerfReport perf;
    perf.sizes = timed->sizes;
    TimingOptions topt = opt.timing;
    if (reuse)
      topt.min_warmup_ms =
          std::min(topt.min_warmup_ms, 5.0); // the perf case just ran: clocks are up
    perf.timing = backend.time(tp, topt);
    if (cancel_requested(opt.cancel)) throw Cancelled();
    score_perf(perf, p, device_ceilings(rep.device, p.cost_precision, opt.data_dir));
    if (rep.verdict != Verdict::passed) perf.medal.clear(); // timed only for the chart
    rep.phases_ms.emplace_back("timing", ms_since(t0));
    if (perf.timing.fault) {
      rep.verdict = Verdict::runtime_fault;
      rep.summary = fmt::format("timing: {}: {}", fault_name(perf.timing.fault.kind),
                                perf.timing.fault.message);
    }
    rep.perf = std::move(perf);
  }

  if (prediction.valid() && !stop_prediction.load()) {
    t0 = Clock::now();
    // Waited for in short steps, so that a cancel meanwhile stops the prediction too.
    while (prediction.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready)
      if (cancel_requested(opt.cancel)) {
        stop_prediction.store(true);
        throw Cancelled();
      }
    rep.prediction = prediction.get();
    rep.phases_ms.emplace_back("prediction (waited)", ms_since(t0));
    // On the simulator the prediction is the perf figure, marked predicted.
    if (!is_gpu && rep.verdict == Verdict::passed && rep.prediction->ok)
      rep.perf = perf::predicted_perf(p, *rep.prediction, machine);
  }

  if (rep.verdict == Verdict::passed) {
    rep.summary =
        fmt::format("passed {} case{}", rep.cases.size(), rep.cases.size() == 1 ? "" : "s");
    if (rep.perf && rep.perf->timing.ok)
      rep.summary +=
          fmt::format("; {}{}, {}, {} of speed of light{}{}",
                      rep.perf->predicted ? "predicted on the " + machine.name + ": " : "",
                      time_text(rep.perf->timing.median_us), bandwidth_text(rep.perf->gbps),
                      percent_text(rep.perf->speed_of_light),
                      rep.perf->medal.empty() ? "" : ", " + rep.perf->medal,
                      rep.perf->predicted && !rep.perf->medal.empty() ? " (predicted)" : "");
  }
  return finish();
}

} // namespace

bool wait_for_predictions(double seconds) {
  LivePredictions& live = live_predictions();
  std::unique_lock lk(live.mu);
  return live.done.wait_for(lk, std::chrono::duration<double>(seconds),
                            [&] { return live.running == 0; });
}

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) | rd();
}

std::map<std::string, int64_t> resolve_tunables(const Puzzle& p, const std::string& source,
                                                const std::string& file,
                                                std::vector<Diagnostic>& diagnostics) {
  std::map<std::string, int64_t> tune;
  for (auto& t : p.tunables) tune[t.name] = t.default_value;
  for (auto& t : parse_tune_lines(source, file, diagnostics)) {
    const Tunable* decl = p.tunable(t.name);
    if (!decl) {
      std::string known;
      for (auto& k : p.tunables) known += fmt::format("{}{}", known.empty() ? "" : ", ", k.name);
      diagnostics.push_back(
          {file, t.line, 1, Diagnostic::Severity::error,
           fmt::format("@tune {}: this puzzle has no tunable '{}'{}", t.name, t.name,
                       known.empty() ? " (it has none)" : fmt::format(" (it has {})", known))});
    } else if (auto why = decl->reject_reason(t.value); !why.empty()) {
      diagnostics.push_back({file, t.line, 1, Diagnostic::Severity::error, "@tune " + why});
    } else {
      tune[t.name] = t.value;
    }
  }
  return tune;
}

CheckReport check_puzzle(const Puzzle& p, const std::string& source, const std::string& file,
                         Backend& backend, const CheckOptions& opt) {
  return check_impl(p, source, file, backend, opt, nullptr);
}

CheckReport run_puzzle(const Puzzle& p, const std::string& source, const std::string& file,
                       Backend& backend, const Env& sizes, const CheckOptions& opt) {
  return check_impl(p, source, file, backend, opt, &sizes);
}

} // namespace wb
