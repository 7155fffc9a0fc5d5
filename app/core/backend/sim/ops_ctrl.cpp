// Control flow: branches (with divergence), calls and returns (per-lane call stacks, frames in
// local memory), exit, trap, CTA barriers, and the builtins NVRTC calls: vprintf (printf) and
// __assertfail (assert).
#include "ops_common.hpp"

#include <cinttypes>
#include <cstdio>

namespace wb::sim {
namespace {

// Lanes that leave (exit, or return from the kernel).
void exit_lanes(Exec& x, Warp& w, uint32_t m) {
  w.live &= ~m;
  w.run &= ~m;
  w.active &= ~m;
  x.B->exited += lanes_in(m);
}

// After lanes changed state: continue with the remaining active lanes at pc + 1, or pick a new
// group. Returns the handler result.
int continue_or_reschedule(Exec& x, Warp& w) {
  if (w.active) {
    ++w.pc;
    if (w.pc >= w.resched_pc) {
      if (!reschedule(x, w)) return kYield;
    }
    return kJumped;
  }
  if (!reschedule(x, w)) return kYield;
  return kJumped;
}

// A group that jumps back this many times in a row, unchanged, while other lanes of its warp wait
// further on, lets them run (a spin lock whose holder is one of those lanes would never be freed).
constexpr uint32_t kSpinYield = 4096;

int h_bra(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  uint32_t act = w.active;
  uint32_t fall = act & ~m;
  if (!fall) {
    if (in.target <= w.pc && w.resched_pc != kNoPc) {
      if (w.spin_mask != act) {
        w.spin_mask = act;
        w.spin_count = 0;
      } else if (++w.spin_count >= kSpinYield) {
        w.spin_count = 0;
        w.yielded |= act;
        w.pc = in.target;
        if (!reschedule(x, w)) return kYield;
        return kJumped;
      }
    }
    w.pc = in.target;
    if (w.pc >= w.resched_pc && !reschedule(x, w)) return kYield;
    return kJumped;
  }
  if (!m) {
    ++w.pc;
    if (w.pc >= w.resched_pc && !reschedule(x, w)) return kYield;
    return kJumped;
  }
  if (x.count) ++x.ic[pc_of(x, in)].divergent;
  uint32_t next = w.pc + 1;
  for (uint32_t mm = act; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    w.lane_pc[l] = ((m >> l) & 1) ? in.target : next;
  }
  w.active = 0; // pcs are saved per lane
  if (!reschedule(x, w)) return kYield;
  return kJumped;
}

int h_exit(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  exit_lanes(x, w, m);
  if (check_barriers(x) != kNext) return kStop;
  return continue_or_reschedule(x, w);
}

int stack_overflow(Exec& x, Warp& w, const Inst& in, int lane) {
  const InstInfo& inf = info_of(x, in);
  return raise_fault(x, FaultKind::out_of_resources,
                     thread_name(x, w, lane) + " of " + block_name(x) +
                         " overflowed its stack: the calls nest deeper than " +
                         std::to_string(x.P->max_depth - 1) + " levels or use more than " +
                         std::to_string(x.P->local_per_thread) +
                         " bytes of stack (unbounded recursion?)" + at_line(inf.line),
                     inf.line);
}

// in.target: the call site; an indirect call (in.r[0] the pointer's register) has in.aux sites from
// in.target on, one per function it may reach, and each lane takes the one its pointer names.
int h_call(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  const Program& P = *x.P;
  const uint32_t lpt = P.local_per_thread;
  const int md = P.max_depth;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    uint32_t site = in.target;
    if (in.r[0] != kNoRow) {
      const uint64_t fp = w.row(in.r[0])[l];
      bool hit = false;
      for (uint32_t s = in.target; s < in.target + in.aux; ++s)
        if (fp == kFunctionAddress + P.calls[s].callee) hit = true, site = s;
      if (!hit) {
        const InstInfo& inf = info_of(x, in);
        char v[32];
        std::snprintf(v, sizeof v, "0x%" PRIx64, fp);
        return raise_fault(x, FaultKind::illegal_address,
                           thread_name(x, w, l) + " of " + block_name(x) +
                               " called through a function pointer that points to no function (" +
                               v + ")" + at_line(inf.line),
                           inf.line);
      }
    }
    const CallSite& cs = P.calls[site];
    const FuncInfo& callee = P.funcs[cs.callee];
    const FuncInfo& caller = P.funcs[cs.caller];
    uint64_t* cframe = w.row(caller.frame_row);
    int d = w.depth[l];
    uint64_t nf = cframe[l] + caller.frame_size;
    if (d + 1 >= md || nf + callee.frame_size > lpt) return stack_overflow(x, w, in, l);
    std::byte* lp = w.local + size_t(l) * lpt;
    if (callee.recursive) { // keep the activation that may be live below us
      std::byte* s = lp + nf + callee.save_offset;
      for (uint32_t r = callee.row_lo; r < callee.row_hi; ++r, s += 8)
        std::memcpy(s, &w.row(r)[l], 8);
      for (uint32_t p = callee.pred_lo; p < callee.pred_hi; ++p, ++s)
        *s = std::byte((w.p[p] >> l) & 1);
    }
    for (size_t i = 0; i < cs.arg_off.size() && i < callee.param_off.size(); ++i)
      std::memcpy(lp + nf + callee.param_off[i], lp + cframe[l] + cs.arg_off[i],
                  std::min(cs.arg_size[i], callee.param_size[i]));
    w.stack[size_t(l) * md + d] = {w.pc + 1, site, uint32_t(nf)};
    w.row(callee.frame_row)[l] = nf;
    w.depth[l] = uint16_t(d + 1);
    w.lane_pc[l] = callee.entry_pc;
  }
  uint32_t stay = w.active & ~m;
  for (uint32_t mm = stay; mm; mm &= mm - 1) w.lane_pc[std::countr_zero(mm)] = w.pc + 1;
  w.active = 0;
  if (!reschedule(x, w)) return kYield;
  return kJumped;
}

int h_ret(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  const Program& P = *x.P;
  const uint32_t lpt = P.local_per_thread;
  const int md = P.max_depth;
  uint32_t leave = 0;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    int d = w.depth[l];
    if (d == 0) {
      leave |= 1u << l;
      continue;
    }
    const CallFrame& f = w.stack[size_t(l) * md + d - 1];
    const CallSite& cs = P.calls[f.site];
    const FuncInfo& callee = P.funcs[cs.callee];
    const FuncInfo& caller = P.funcs[cs.caller];
    std::byte* lp = w.local + size_t(l) * lpt;
    // The callee's frame sits right above its caller's (the frame row may be shared when a
    // function calls itself, so the bases come from the call record).
    uint64_t mine = f.frame, theirs = f.frame - caller.frame_size;
    for (size_t i = 0; i < cs.ret_off.size() && i < callee.ret_off.size(); ++i)
      std::memcpy(lp + theirs + cs.ret_off[i], lp + mine + callee.ret_off[i],
                  std::min(cs.ret_size[i], callee.ret_size[i]));
    if (callee.recursive) {
      std::byte* s = lp + mine + callee.save_offset;
      for (uint32_t r = callee.row_lo; r < callee.row_hi; ++r, s += 8)
        std::memcpy(&w.row(r)[l], s, 8);
      for (uint32_t p = callee.pred_lo; p < callee.pred_hi; ++p, ++s)
        w.p[p] = (w.p[p] & ~(1u << l)) | (uint32_t(*s & std::byte(1)) << l);
    }
    w.depth[l] = uint16_t(d - 1);
    w.lane_pc[l] = f.ret_pc;
  }
  uint32_t returned = m & ~leave;
  uint32_t stay = w.active & ~m;
  for (uint32_t mm = stay; mm; mm &= mm - 1) w.lane_pc[std::countr_zero(mm)] = w.pc + 1;
  if (leave) exit_lanes(x, w, leave);
  (void)returned;
  w.active = 0;
  if (leave && check_barriers(x) != kNext) return kStop;
  if (!reschedule(x, w)) return kYield;
  return kJumped;
}

int h_trap(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const InstInfo& inf = info_of(x, in);
  int l = std::countr_zero(m);
  return raise_fault(x, FaultKind::trap,
                     thread_name(x, w, l) + " of " + block_name(x) + " executed a trap (__trap())" +
                         at_line(inf.line),
                     inf.line);
}

// A breakpoint with no debugger attached stops the kernel with an error on a GPU, as a trap does.
int h_brkpt(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const InstInfo& inf = info_of(x, in);
  int l = std::countr_zero(m);
  return raise_fault(x, FaultKind::trap,
                     thread_name(x, w, l) + " of " + block_name(x) +
                         " executed a breakpoint (brkpt), which with no debugger attached stops "
                         "the kernel with an error, as a trap does" +
                         at_line(inf.line),
                     inf.line);
}

// ---- barriers ----
// bar.sync / barrier.sync a{, b}; bar.arrive a, b; bar.red.{popc,and,or} d, a{, b}, {!}c.
// r[1]: barrier id row, r[2]: thread count row (or kNoRow); aux: 0 sync, 1 arrive, 2 red.popc,
// 3 red.and, 4 red.or; r[0]/pd: reduction destination; ps: reduction predicate.
int h_bar(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  int l0 = std::countr_zero(m);
  uint32_t id = uint32_t(w.row(in.r[1])[l0]) & 15;
  uint32_t count = in.r[2] != kNoRow ? uint32_t(w.row(in.r[2])[l0]) : 0;
  Block& B = *x.B;
  if (count) B.expected[id] = count;
  B.arrived[id] += lanes_in(m);
  if (in.aux >= 2) { // reduction contributions
    uint32_t p = (w.p[in.ps] ^ in.ps_xor) & m;
    B.red_popc[id] += lanes_in(p);
    if (p != m) B.red_all[id] = false;
    if (p) B.red_any[id] = true;
  }
  if (in.aux == 1) { // arrive: no wait
    if (check_barriers(x) != kNext) return kStop;
    ++w.pc;
    if (w.pc >= w.resched_pc && !reschedule(x, w)) return kYield;
    return kJumped;
  }
  if (m == w.active && !(w.run & ~m) && !w.wsync && !w.bar) {
    // The whole warp arrives together (the usual case): no per-lane bookkeeping.
    w.bar = m;
    w.run = 0;
    w.active = 0;
    w.bar_pc_all = w.pc;
    w.bar_id_all = uint8_t(id);
    if (check_barriers(x) != kNext) return kStop;
    return w.active ? kJumped : kYield; // the last to arrive is released at once
  }
  w.bar_pc_all = kNoPc;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    w.lane_pc[l] = w.pc;
    w.bar_id[l] = uint8_t(id);
  }
  w.bar |= m;
  w.run &= ~m;
  uint32_t stay = w.active & ~m;
  for (uint32_t mm = stay; mm; mm &= mm - 1) w.lane_pc[std::countr_zero(mm)] = w.pc + 1;
  w.active = 0;
  if (check_barriers(x) != kNext) return kStop;
  if (!reschedule(x, w)) return kYield;
  return kJumped;
}

// ---- builtins ----

uint64_t read_frame_u64(Warp& w, const Program& P, int l, uint64_t frame, uint32_t off,
                        uint32_t size) {
  uint64_t v = 0;
  std::memcpy(&v, w.local + size_t(l) * P.local_per_thread + frame + off,
              std::min<uint32_t>(size, 8));
  return v;
}

// Reads the string printf's %s (or its format) points at: at most `max` bytes, stopping at a NUL.
// An address that is not readable is the fault any read there would be, naming the call's line.
// The host bytes of [a, a + n) when they all lie in the thread's local memory, or (to read) in one
// global region's data: the guard's copy and job, a format string. Else nullptr, and the caller
// goes byte by byte, where a bad byte raises its fault (and a global write is checked and noted).
std::byte* span_ptr(Exec& x, Warp& w, int l, uint64_t a, uint64_t n, bool write) {
  if (a - kLocalWindow < kWindowSize) {
    const uint64_t o = a - kLocalWindow, size = x.P->local_per_thread;
    return o <= size && n <= size - o ? w.local + size_t(l) * size + o : nullptr;
  }
  if (write || a - kSharedWindow < kWindowSize) return nullptr;
  Region* r = x.L->mem->find(a);
  if (!r || a < r->data_lo || a > r->data_hi || n > r->data_hi - a) return nullptr;
  return r->host + (a - r->base);
}

bool read_printf_string(Exec& x, Warp& w, const Inst& in, int l, uint64_t p, size_t max,
                        const char* what, std::string& s) {
  s.clear();
  // Fast path: the whole string, NUL included, inside one region.
  if (Region* r = p - kLocalWindow < kWindowSize || p - kSharedWindow < kWindowSize
                      ? nullptr
                      : x.L->mem->find(p);
      r && p >= r->data_lo && p < r->data_hi) {
    const char* h = reinterpret_cast<const char*>(r->host + (p - r->base));
    const size_t room = size_t(r->data_hi - p);
    const void* nul = std::memchr(h, 0, std::min(room, max));
    if (nul || room >= max) {
      s.assign(h, nul ? size_t(static_cast<const char*>(nul) - h) : max);
      return true;
    }
  }
  for (size_t i = 0; i < max; ++i) {
    Space sp;
    const std::byte* h = generic_ptr(x, w, in, l, p + i, 1, false, sp);
    if (!h) {
      std::lock_guard lk(x.L->mu);
      if (x.L->fault_block == x.B->linear) x.L->fault.message += std::string(", reading ") + what;
      return false;
    }
    if (*h == std::byte(0)) break;
    s += char(*h);
  }
  return true;
}

// Formats one printf call into `out`. Arguments sit in a local buffer, each aligned to its size;
// floats were promoted to double. Widths and precisions are cut to kPrintfFieldBound (a %s's
// precision to kPrintfStringBound) so that no field costs more than that to format; `more` gets
// the bytes the uncut fields would have printed beyond what `out` holds. False after a fault.
bool format_printf(Exec& x, Warp& w, const Inst& in, int l, const std::string& fmt, uint64_t args,
                   std::string& out, uint64_t& more) {
  uint64_t off = 0;
  auto arg = [&](uint32_t size) -> uint64_t {
    off = (off + size - 1) / size * size;
    uint64_t a = args + off;
    off += size;
    uint64_t v = 0;
    if (a - kLocalWindow < kWindowSize) {
      uint64_t o = a - kLocalWindow;
      if (o + size <= x.P->local_per_thread)
        std::memcpy(&v, w.local + size_t(l) * x.P->local_per_thread + o, size);
    } else if (Region* r = x.L->mem->find(a)) {
      if (a + size <= r->end) std::memcpy(&v, r->host + (a - r->base), size);
    }
    return v;
  };
  // Room for the widest field: a %f of 1e308 (309 digits) with the largest precision, or a
  // string at its bound, padded.
  char buf[2 * kPrintfStringBound];
  std::string str;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c != '%') {
      out += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    std::string flags;
    size_t j = i + 1;
    while (j < fmt.size() && std::strchr("-+ #0", fmt[j])) flags += fmt[j++];
    // -1: none given. '*' takes an int argument; a negative width is a '-' flag.
    auto field = [&](bool precision) -> int64_t {
      if (j < fmt.size() && fmt[j] == '*') {
        ++j;
        int64_t v = int32_t(arg(4));
        if (v < 0 && !precision) {
          flags += '-';
          v = -v;
        }
        return v < 0 ? -1 : v;
      }
      if (j >= fmt.size() || !std::isdigit((unsigned char)fmt[j])) return precision ? 0 : -1;
      int64_t v = 0;
      while (j < fmt.size() && std::isdigit((unsigned char)fmt[j]))
        v = std::min<int64_t>(v * 10 + (fmt[j++] - '0'), int64_t(1) << 40);
      return v;
    };
    const int64_t width = field(false);
    int64_t prec = -1;
    if (j < fmt.size() && fmt[j] == '.') {
      ++j;
      prec = field(true);
    }
    int longs = 0;
    while (j < fmt.size() && std::strchr("hlLqjzt", fmt[j])) {
      if (fmt[j] == 'l' || fmt[j] == 'L' || fmt[j] == 'q' || fmt[j] == 'j' || fmt[j] == 'z' ||
          fmt[j] == 't')
        ++longs;
      ++j;
    }
    if (j >= fmt.size()) break;
    const char conv = fmt[j];
    i = j;
    const int64_t pbound = conv == 's' ? kPrintfStringBound : kPrintfFieldBound;
    const int64_t w_cut = std::min<int64_t>(width, kPrintfFieldBound);
    const int64_t p_cut = std::min(prec, pbound);
    std::string spec = "%" + flags;
    if (w_cut >= 0) spec += std::to_string(w_cut);
    if (p_cut >= 0) spec += "." + std::to_string(p_cut);
    int n = -1;
    switch (conv) {
    case 'd':
    case 'i': {
      int64_t v = longs ? int64_t(arg(8)) : int64_t(int32_t(arg(4)));
      n = std::snprintf(buf, sizeof buf, (spec + "lld").c_str(), (long long)v);
      break;
    }
    case 'u':
    case 'x':
    case 'X':
    case 'o':
    case 'c': {
      uint64_t v = longs ? arg(8) : uint32_t(arg(4));
      if (conv == 'c')
        n = std::snprintf(buf, sizeof buf, (spec + "c").c_str(), int(uint8_t(v)));
      else
        n = std::snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(), (unsigned long long)v);
      break;
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A': {
      double v = f64(arg(8));
      n = std::snprintf(buf, sizeof buf, (spec + conv).c_str(), v);
      break;
    }
    case 's': {
      uint64_t p = arg(8);
      const size_t max = size_t(p_cut >= 0 ? p_cut : kPrintfStringBound);
      if (!p)
        str = "(null)";
      else if (!read_printf_string(x, w, in, l, p, max, "printf's %s argument", str))
        return false;
      n = std::snprintf(buf, sizeof buf, (spec + "s").c_str(), str.c_str());
      break;
    }
    case 'p': {
      n = std::snprintf(buf, sizeof buf, "0x%" PRIx64, arg(8));
      break;
    }
    case 'n': // writes nothing here (the guard passes it 0): never a store through the pointer
      arg(8);
      break;
    default:
      out += spec + conv;
      break;
    }
    if (n < 0) continue;
    out.append(buf, std::min<size_t>(size_t(n), sizeof buf - 1));
    // What the uncut field would have added: the digits past the cut precision, then the padding
    // past the cut width.
    uint64_t full = uint64_t(n);
    if (prec > p_cut && conv != 's' && conv != 'c' && conv != 'p') full += uint64_t(prec - p_cut);
    if (width > w_cut && uint64_t(width) > full) full = uint64_t(width);
    more += full - std::min<uint64_t>(full, std::min<size_t>(size_t(n), sizeof buf - 1));
  }
  return true;
}

int h_vprintf(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  const Program& P = *x.P;
  const CallSite& cs = P.calls[in.target];
  const FuncInfo& caller = P.funcs[cs.caller];
  const uint64_t* cframe = w.row(caller.frame_row);
  std::string f, s;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    if (cs.arg_off.size() < 2) break;
    if (const uint64_t calls = x.L->printf_calls.fetch_add(1, std::memory_order_relaxed) + 1;
        calls > kPrintfCallBound) {
      const InstInfo& inf = info_of(x, in);
      return raise_fault(
          x, FaultKind::timeout,
          "the kernel called printf more than " + std::to_string(kPrintfCallBound) +
              " times in one launch: a GPU's printf goes through one buffer that the driver "
              "empties on the host, and a flood like this runs past the time limit there. Print "
              "from one thread, or a few" +
              at_line(inf.line),
          inf.line);
    }
    uint64_t fmt = read_frame_u64(w, P, l, cframe[l], cs.arg_off[0], cs.arg_size[0]);
    uint64_t args = read_frame_u64(w, P, l, cframe[l], cs.arg_off[1], cs.arg_size[1]);
    if (!read_printf_string(x, w, in, l, fmt, 4096, "printf's format", f)) return kStop;
    s.clear();
    uint64_t more = 0;
    if (!format_printf(x, w, in, l, f, args, s, more)) return kStop;
    x.B->printf_out.add(s); // escaped to valid UTF-8, kept to the bound, the rest counted
    x.B->printf_out.drop(more);
    if (!cs.ret_off.empty()) {
      int32_t n = int32_t(s.size());
      std::memcpy(w.local + size_t(l) * P.local_per_thread + cframe[l] + cs.ret_off[0], &n,
                  std::min<uint32_t>(cs.ret_size[0], 4));
    }
  }
  return kNext;
}

// wb_printf_guard::rewrite(Job* job) of the compile prelude, natively: the same result
// (printf_guard_rewrite) for a fraction of the cost of simulating its byte loop. Job: the format
// pointer at 0, the buffer pointer at 8, four masks at 16, `changed` at 48.
int h_printf_guard_rewrite(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  const Program& P = *x.P;
  const CallSite& cs = P.calls[in.target];
  const FuncInfo& caller = P.funcs[cs.caller];
  const uint64_t* cframe = w.row(caller.frame_row);
  std::string f, out;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const int l = std::countr_zero(mm);
    if (cs.arg_off.empty()) break;
    const uint64_t job = read_frame_u64(w, P, l, cframe[l], cs.arg_off[0], cs.arg_size[0]);
    Space sp;
    const auto load = [&](uint64_t a, void* dst, size_t n) {
      if (const std::byte* h = span_ptr(x, w, l, a, n, false)) return std::memcpy(dst, h, n), true;
      for (size_t k = 0; k < n; ++k) {
        const std::byte* h = generic_ptr(x, w, in, l, a + k, 1, false, sp);
        if (!h) return false;
        static_cast<std::byte*>(dst)[k] = *h;
      }
      return true;
    };
    const auto store = [&](uint64_t a, const void* src, size_t n) {
      if (std::byte* h = span_ptr(x, w, l, a, n, true)) return std::memcpy(h, src, n), true;
      for (size_t k = 0; k < n; ++k) {
        std::byte* h = generic_ptr(x, w, in, l, a + k, 1, true, sp);
        if (!h) return false;
        *h = static_cast<const std::byte*>(src)[k];
      }
      return true;
    };
    uint64_t ptrs[2];
    if (!load(job, ptrs, sizeof ptrs)) return kStop;
    if (!read_printf_string(x, w, in, l, ptrs[0], 4096, "printf's format", f)) return kStop;
    PrintfGuardMasks masks;
    const int32_t changed = printf_guard_rewrite(f, out, masks) ? 1 : 0;
    // The copy is read only when it differs from the format; masks are ORed in, as the device
    // code marks them, and zero masks change nothing.
    if (changed) {
      out += '\0';
      if (!store(ptrs[1], out.data(), out.size())) return kStop;
    }
    if (masks.field | masks.string | masks.zero | masks.str) {
      uint64_t mk[4];
      if (!load(job + 16, mk, sizeof mk)) return kStop;
      mk[0] |= masks.field;
      mk[1] |= masks.string;
      mk[2] |= masks.zero;
      mk[3] |= masks.str;
      if (!store(job + 16, mk, sizeof mk)) return kStop;
    }
    if (!store(job + 48, &changed, sizeof changed)) return kStop;
  }
  return kNext;
}

int h_assertfail(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const Program& P = *x.P;
  const CallSite& cs = P.calls[in.target];
  const FuncInfo& caller = P.funcs[cs.caller];
  int l = std::countr_zero(m);
  uint64_t fr = w.row(caller.frame_row)[l];
  auto argv = [&](size_t i) {
    return i < cs.arg_off.size() ? read_frame_u64(w, P, l, fr, cs.arg_off[i], cs.arg_size[i]) : 0;
  };
  std::string msg = read_cstring(x, w, l, argv(0), 1024);
  std::string func = read_cstring(x, w, l, argv(3), 256);
  const InstInfo& inf = info_of(x, in);
  int line = inf.line > 0 ? inf.line : int(uint32_t(argv(2)));
  std::string where = func.empty() ? "" : " in " + func;
  return raise_fault(x, FaultKind::assertion,
                     "assertion `" + msg + "` failed" + where + ": " + thread_name(x, w, l) +
                         " of " + block_name(x) + at_line(line),
                     line);
}

// Device malloc/free (DeviceHeap): each lane's call on its own, in lane order. The block's
// per-thread holdings feed the heap's model of many blocks at once.
int h_malloc_free(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  const Program& P = *x.P;
  const CallSite& cs = P.calls[in.target];
  const FuncInfo& caller = P.funcs[cs.caller];
  const bool is_malloc = P.funcs[cs.callee].builtin == 3;
  const uint64_t* cframe = w.row(caller.frame_row);
  const InstInfo& inf = info_of(x, in);
  DeviceHeap* heap = x.L->mem->heap;
  Block& B = *x.B;
  if (heap && B.heap_live.size() < B.nthreads) {
    B.heap_live.resize(B.nthreads);
    B.heap_peak.resize(B.nthreads);
  }
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const int l = std::countr_zero(mm);
    if (cs.arg_off.empty() || !heap) break;
    const uint64_t arg = read_frame_u64(w, P, l, cframe[l], cs.arg_off[0], cs.arg_size[0]);
    const std::string who = thread_name(x, w, l) + " of " + block_name(x) + at_line(inf.line);
    const size_t t = std::min<size_t>(w.tid0 + uint32_t(l), B.nthreads - 1);
    if (is_malloc) {
      const uint64_t live = B.heap_live[t] + DeviceHeap::granule(arg);
      const uint64_t holds = B.heap_holds + (live > B.heap_peak[t] ? live - B.heap_peak[t] : 0);
      const uint64_t a =
          heap->allocate(arg, "the " + std::to_string(arg) + " bytes malloc'd by " + who, holds);
      if (a) {
        B.heap_live[t] = live;
        B.heap_peak[t] = std::max(B.heap_peak[t], live);
        B.heap_holds = holds;
      }
      if (!cs.ret_off.empty())
        std::memcpy(w.local + size_t(l) * P.local_per_thread + cframe[l] + cs.ret_off[0], &a,
                    std::min<uint32_t>(cs.ret_size[0], 8));
      continue;
    }
    if (!arg) continue; // free(NULL) does nothing
    uint64_t bytes = 0;
    const std::string why = heap->release(arg, who, &bytes);
    if (!why.empty() && why.rfind("the ", 0) == 0) // freed before: the GPU's allocator traps
      return raise_fault(x, FaultKind::out_of_bounds,
                         thread_name(x, w, l) + " called free" + at_line(inf.line) + " on " + why +
                             " (a double free)",
                         inf.line);
    if (!why.empty()) { // not from malloc: the GPU's allocator ignores it, so the run goes on
      std::lock_guard lk(x.L->mu);
      const std::string note = "free" + at_line(inf.line) + " was given " + why +
                               ": the GPU ignores such a call, and nothing is freed";
      if (std::find(x.L->warnings.begin(), x.L->warnings.end(), note) == x.L->warnings.end())
        x.L->warnings.push_back(note);
      continue;
    }
    B.heap_live[t] -= std::min(B.heap_live[t], bytes);
  }
  return kNext;
}

int h_call_unsupported(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const Program& P = *x.P;
  const CallSite& cs = P.calls[in.target];
  const FuncInfo& callee = P.funcs[cs.callee];
  const InstInfo& inf = info_of(x, in);
  std::string what = "the external function " + callee.name;
  return raise_fault(x, FaultKind::unsupported,
                     "the simulator does not support " + what + " (PTX line " +
                         std::to_string(inf.ptx_line) + ")" + at_line(inf.line),
                     inf.line);
}

} // namespace

bool decode_ctrl(Dec& D, Inst& I, InstInfo& info, const Opc& o, const ptx::Instr& in) {
  const std::string& b = o.base;
  if (b == "bra") {
    o.only({"uni"});
    need_ops(in, 1);
    if (op(in, 0).kind != ptx::Operand::Kind::ident) throw Unsupported("bra needs a label");
    I.target = D.label_pc(op(in, 0).name);
    I.fn = h_bra;
    info.branch = true;
    return true;
  }
  if (b == "exit") {
    I.fn = h_exit;
    return true;
  }
  if (b == "ret") {
    I.fn = h_ret;
    return true;
  }
  if (b == "trap") {
    I.fn = h_trap;
    return true;
  }
  if (b == "brkpt") {
    I.fn = h_brkpt;
    return true;
  }
  if (b == "nanosleep" || b == "pmevent") {
    I.fn = h_nop;
    return true;
  }
  if (b == "call") {
    o.only({"uni"});
    I.target = D.call_site(in);
    if (D.indirect_row() != kNoRow) { // through a function pointer
      I.r[0] = D.indirect_row();
      I.aux = D.indirect_sites();
      I.fn = h_call;
      return true;
    }
    const FuncInfo& f = D.P.funcs[D.P.calls[I.target].callee];
    switch (f.builtin) {
    case 0:
      I.fn = h_call;
      break;
    case 1:
      I.fn = h_vprintf;
      break;
    case 2:
      I.fn = h_assertfail;
      break;
    case 3:
    case 4:
      I.fn = h_malloc_free;
      break;
    case 5:
      I.fn = h_printf_guard_rewrite;
      break;
    default:
      I.fn = h_call_unsupported;
      break;
    }
    return true;
  }
  if (b == "bar" || b == "barrier") {
    // bar.sync / bar.cta.sync / barrier.sync{.aligned} / bar.arrive / bar.red.{popc,and,or}
    if (o.has("warp")) return false; // bar.warp.sync: a warp collective (ops_warp.cpp)
    o.only({"sync", "arrive", "red", "popc", "and", "or", "cta", "aligned"});
    bool red = o.has("red");
    size_t k = 0;
    if (red) {
      if (o.has("popc")) {
        I.aux = 2;
        I.r[0] = D.dst(op(in, k++));
      } else {
        I.aux = o.has("and") ? 3 : 4;
        I.pd = D.pred(op(in, k++));
      }
    } else if (o.has("arrive")) {
      I.aux = 1;
    }
    I.r[1] = D.row(op(in, k++), Ty::u32);
    size_t rest = in.ops.size() - k;
    if (red) {
      if (rest == 2) I.r[2] = D.row(op(in, k++), Ty::u32);
      I.ps = D.pred(op(in, k++), &I.ps_xor);
    } else if (rest == 1) {
      I.r[2] = D.row(op(in, k++), Ty::u32);
    }
    if (k != in.ops.size()) throw Unsupported(b + " has the wrong number of operands");
    I.fn = h_bar;
    return true;
  }
  return false;
}

} // namespace wb::sim
