#include "printf_guard.hpp"

#include <fmt/format.h>

namespace wb {

namespace {

// Device code; @FIELD@, @STRING@ are replaced by the bounds. Its own #line file name keeps the
// learner's line numbers: the simulator takes a line from the learner's file, or from the
// `inlined_at` of guard code inlined into it, so a fault inside the printf call names the line
// of the call. It must compile under NVRTC with no host header, with or without -default-device;
// __host__ __device__ lets printf stay callable from a learner's (or a library's) __host__
// __device__ functions (NVRTC compiles only their device side).
constexpr const char* kGuard = R"guard(#line 1 "warpbook-printf-guard"
namespace wb_printf_guard {
enum : int { kField = @FIELD@, kString = @STRING@, kFormat = 512 };

// Per argument index (below 64): a '*' width or precision to cut to kField, a '*' precision of a
// %s to cut to kString, a %n's pointer (passed as 0 to a conversion that prints nothing), and a
// %s's pointer (NULL is passed as "(null)", which both backends then print alike).
struct Masks {
  unsigned long long field, string, zero, str;
};

__host__ __device__ __forceinline__ bool is_flag(char c) {
  return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0';
}
__host__ __device__ __forceinline__ bool is_length(char c) {
  return c == 'h' || c == 'l' || c == 'L' || c == 'q' || c == 'j' || c == 'z' || c == 't';
}
__host__ __device__ __forceinline__ bool is_digit(char c) { return c >= '0' && c <= '9'; }
__host__ __device__ __forceinline__ void mark(unsigned long long& m, int arg) {
  if (arg >= 0 && arg < 64) m |= 1ull << arg;
}

struct Out {
  char* b;
  int n;
  bool ok;
  __host__ __device__ __forceinline__ void put(char c) {
    if (n < kFormat - 1) b[n++] = c;
    else ok = false;
  }
  __host__ __device__ __forceinline__ void num(int v) {
    char d[12];
    int k = 0;
    do {
      d[k++] = char('0' + v % 10);
      v /= 10;
    } while (v);
    while (k) put(d[--k]);
  }
};

// Reads a decimal field, saturating; moves i past it.
__host__ __device__ __forceinline__ int digits(const char* f, int& i) {
  int v = 0;
  while (is_digit(f[i])) {
    v = v > 100000000 ? 1000000000 : v * 10 + (f[i] - '0');
    ++i;
  }
  return v;
}

// One rewrite: its format and buffer in, its masks and whether the buffer differs from the format
// out. One pointer argument keeps the function's signature as written, whatever the optimiser
// does: the simulator runs it natively by name (kPrintfGuardRewrite) and reads this layout.
struct Job {
  const char* f; // offset 0
  char* b;       // 8: kFormat bytes
  Masks m;       // 16: field, string, zero, str
  int changed;   // 48
};

// Copies format f into b, bounded; sets the masks. A format too long for b is cut before the spec
// that does not fit. If nothing changed, f itself is used.
__host__ __device__ __noinline__ void rewrite(Job* job) {
  const char* f = job->f;
  char* b = job->b;
  Masks* m = &job->m;
  Out o{b, 0, true};
  bool changed = false;
  int arg = 0;
  int cut = -1; // where the first unit that did not fit began: the copy ends there
  for (int i = 0; f[i];) {
    const int unit = o.n;
    if (f[i] != '%') {
      o.put(f[i++]);
      if (!o.ok && cut < 0) cut = unit;
      continue;
    }
    ++i;
    if (f[i] == '%') {
      o.put('%');
      o.put('%');
      ++i;
      if (!o.ok && cut < 0) cut = unit;
      continue;
    }
    const int flags = i;
    while (is_flag(f[i])) ++i;
    const int flags_end = i;
    bool wstar = false, has_prec = false, pstar = false;
    int width = -1, prec = -1, wstar_arg = -1, pstar_arg = -1;
    if (f[i] == '*') {
      wstar = true;
      wstar_arg = arg++;
      ++i;
    } else if (is_digit(f[i])) {
      width = digits(f, i);
    }
    if (f[i] == '.') {
      has_prec = true;
      ++i;
      if (f[i] == '*') {
        pstar = true;
        pstar_arg = arg++;
        ++i;
      } else {
        prec = digits(f, i);
      }
    }
    const int len = i;
    while (is_length(f[i])) ++i;
    const int len_end = i;
    const char conv = f[i];
    if (!conv) break;
    ++i;
    const int conv_arg = arg++;
    o.put('%');
    if (conv == 'n') { // prints nothing: the pointer (and any '*' value) become 0
      changed = true;
      if (wstar) {
        o.put('*');
        mark(m->zero, wstar_arg);
      }
      o.put('.');
      if (pstar) {
        o.put('*');
        mark(m->zero, pstar_arg);
      } else {
        o.put('0');
      }
      o.put('l');
      o.put('l');
      o.put('x');
      mark(m->zero, conv_arg);
    } else {
      const int pbound = conv == 's' ? kString : kField;
      for (int k = flags; k < flags_end; ++k) o.put(f[k]);
      if (wstar) {
        o.put('*');
        mark(m->field, wstar_arg);
      } else if (width >= 0) {
        if (width > kField) changed = true;
        o.num(width > kField ? kField : width);
      }
      if (has_prec) {
        o.put('.');
        if (pstar) {
          o.put('*');
          mark(conv == 's' ? m->string : m->field, pstar_arg);
        } else {
          if (prec > pbound) changed = true;
          o.num(prec > pbound ? pbound : prec);
        }
      } else if (conv == 's') { // a string is read to the bound, no further
        changed = true;
        o.put('.');
        o.num(kString);
      }
      for (int k = len; k < len_end; ++k) o.put(f[k]);
      o.put(conv);
      if (conv == 's') mark(m->str, conv_arg);
    }
    if (!o.ok && cut < 0) cut = unit;
  }
  // The scan goes on past a cut, for the masks and for whether anything needs changing: a long
  // format that needs nothing is used whole.
  b[cut >= 0 ? cut : o.n] = 0;
  job->changed = changed;
}

// 1: a signed integer, 2: an unsigned one, 3: a pointer, 0: anything else.
template <class T> struct kind { enum { v = 0 }; };
template <class T> struct kind<T*> { enum { v = 3 }; };
template <> struct kind<signed char> { enum { v = 1 }; };
template <> struct kind<short> { enum { v = 1 }; };
template <> struct kind<int> { enum { v = 1 }; };
template <> struct kind<long> { enum { v = 1 }; };
template <> struct kind<long long> { enum { v = 1 }; };
template <> struct kind<unsigned char> { enum { v = 2 }; };
template <> struct kind<unsigned short> { enum { v = 2 }; };
template <> struct kind<unsigned> { enum { v = 2 }; };
template <> struct kind<unsigned long> { enum { v = 2 }; };
template <> struct kind<unsigned long long> { enum { v = 2 }; };

template <class T> __host__ __device__ __forceinline__ T fix(T v, int i, const Masks& m) {
  if (i >= 64) return v;
  const unsigned long long bit = 1ull << i;
  if constexpr (kind<T>::v != 0) {
    if (m.zero & bit) return T(0);
  }
  if constexpr (kind<T>::v == 3) {
    if ((m.str & bit) && !v) return (T)(const void*)"(null)";
  }
  if constexpr (kind<T>::v == 1 || kind<T>::v == 2) {
    if ((m.field | m.string) & bit) {
      const T b = T(m.field & bit ? kField : kString);
      if (v > b) return b;
      if constexpr (kind<T>::v == 1) {
        if (v < -b) return -b;
      }
    }
  }
  return v;
}

template <int... I> struct seq {};
template <int N, int... I> struct make_seq : make_seq<N - 1, N - 1, I...> {};
template <int... I> struct make_seq<0, I...> {
  typedef seq<I...> type;
};

template <int... I, class... A>
__host__ __device__ __forceinline__ int call(const char* f, const Masks& m, seq<I...>, A... a) {
  return printf(f, fix(a, I, m)...);
}

template <class... A> __host__ __device__ __forceinline__ int bounded(const char* f, A... a) {
  char b[kFormat];
  Job job{f, b, {0, 0, 0, 0}, 0};
  rewrite(&job);
  return call(job.changed ? b : f, job.m, typename make_seq<sizeof...(A)>::type(), a...);
}
} // namespace wb_printf_guard

template <class... A> __host__ __device__ __forceinline__ int wb_printf_bounded(const char* f, A... a) {
  return wb_printf_guard::bounded(f, a...);
}
namespace std {
using ::wb_printf_bounded;
}
#define printf(...) wb_printf_bounded(__VA_ARGS__)
)guard";

} // namespace

const std::string& printf_guard_source() {
  static const std::string s = [] {
    std::string t = kGuard;
    auto put = [&](std::string_view key, int v) {
      for (size_t p; (p = t.find(key)) != std::string::npos;)
        t.replace(p, key.size(), std::to_string(v));
    };
    put("@FIELD@", kPrintfFieldBound);
    put("@STRING@", kPrintfStringBound);
    return t;
  }();
  return s;
}

// The device rewrite above, line for line (the simulator runs this one natively).
bool printf_guard_rewrite(std::string_view f, std::string& out, PrintfGuardMasks& m) {
  constexpr int kField = kPrintfFieldBound, kString = kPrintfStringBound, kFormat = 512;
  const auto at = [&](size_t i) { return i < f.size() ? f[i] : '\0'; };
  const auto is_flag = [](char c) {
    return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0';
  };
  const auto is_length = [](char c) {
    return c == 'h' || c == 'l' || c == 'L' || c == 'q' || c == 'j' || c == 'z' || c == 't';
  };
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto mark = [](uint64_t& mask, int arg) {
    if (arg >= 0 && arg < 64) mask |= 1ull << arg;
  };
  bool ok = true;
  const auto put = [&](char c) {
    if (out.size() < size_t(kFormat - 1))
      out += c;
    else
      ok = false;
  };
  const auto num = [&](int v) {
    for (char c : std::to_string(v)) put(c);
  };
  const auto digits = [&](size_t& i) {
    int v = 0;
    while (is_digit(at(i))) {
      v = v > 100000000 ? 1000000000 : v * 10 + (at(i) - '0');
      ++i;
    }
    return v;
  };
  out.clear();
  bool changed = false;
  int arg = 0;
  size_t cut = std::string::npos;
  for (size_t i = 0; at(i);) {
    const size_t unit = out.size();
    if (at(i) != '%') {
      put(at(i++));
      if (!ok && cut == std::string::npos) cut = unit;
      continue;
    }
    ++i;
    if (at(i) == '%') {
      put('%');
      put('%');
      ++i;
      if (!ok && cut == std::string::npos) cut = unit;
      continue;
    }
    const size_t flags = i;
    while (is_flag(at(i))) ++i;
    const size_t flags_end = i;
    bool wstar = false, has_prec = false, pstar = false;
    int width = -1, prec = -1, wstar_arg = -1, pstar_arg = -1;
    if (at(i) == '*') {
      wstar = true;
      wstar_arg = arg++;
      ++i;
    } else if (is_digit(at(i))) {
      width = digits(i);
    }
    if (at(i) == '.') {
      has_prec = true;
      ++i;
      if (at(i) == '*') {
        pstar = true;
        pstar_arg = arg++;
        ++i;
      } else {
        prec = digits(i);
      }
    }
    const size_t len = i;
    while (is_length(at(i))) ++i;
    const size_t len_end = i;
    const char conv = at(i);
    if (!conv) break;
    ++i;
    const int conv_arg = arg++;
    put('%');
    if (conv == 'n') {
      changed = true;
      if (wstar) {
        put('*');
        mark(m.zero, wstar_arg);
      }
      put('.');
      if (pstar) {
        put('*');
        mark(m.zero, pstar_arg);
      } else {
        put('0');
      }
      put('l');
      put('l');
      put('x');
      mark(m.zero, conv_arg);
    } else {
      const int pbound = conv == 's' ? kString : kField;
      for (size_t k = flags; k < flags_end; ++k) put(at(k));
      if (wstar) {
        put('*');
        mark(m.field, wstar_arg);
      } else if (width >= 0) {
        if (width > kField) changed = true;
        num(width > kField ? kField : width);
      }
      if (has_prec) {
        put('.');
        if (pstar) {
          put('*');
          mark(conv == 's' ? m.string : m.field, pstar_arg);
        } else {
          if (prec > pbound) changed = true;
          num(prec > pbound ? pbound : prec);
        }
      } else if (conv == 's') {
        changed = true;
        put('.');
        num(kString);
      }
      for (size_t k = len; k < len_end; ++k) put(at(k));
      put(conv);
      if (conv == 's') mark(m.str, conv_arg);
    }
    if (!ok && cut == std::string::npos) cut = unit;
  }
  if (cut != std::string::npos) out.resize(cut);
  return changed;
}

std::string printf_cut_note(uint64_t bytes) {
  return fmt::format("\xE2\x80\xA6 {} more bytes not shown\n", bytes);
}

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0 when the byte there starts none.
size_t utf8_length(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return k < s.size() ? uint8_t(s[k]) : 0; };
  const uint8_t c = at(i);
  const auto cont = [&](size_t k, uint8_t lo = 0x80, uint8_t hi = 0xBF) {
    const uint8_t b = at(k); // 0 past the end: never a continuation byte
    return b >= lo && b <= hi;
  };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const uint8_t lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

void append_escape(std::string& out, uint8_t c) {
  static const char* hex = "0123456789abcdef";
  out += "\\x";
  out += hex[c >> 4];
  out += hex[c & 15];
}

} // namespace

std::string utf8_escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n) {
      out.append(s, i, n);
      i += n;
    } else {
      append_escape(out, uint8_t(s[i++]));
    }
  }
  return out;
}

void PrintfSink::add(std::string_view printed) {
  if (cut_) {
    dropped_ += printed.size();
    return;
  }
  for (size_t i = 0; i < printed.size();) {
    const size_t n = utf8_length(printed, i);
    const size_t shown = n ? n : 4;
    if (text_.size() + shown > bound_) { // whole characters only: the cut stays valid UTF-8
      dropped_ += printed.size() - i;
      cut_ = true;
      return;
    }
    if (n)
      text_.append(printed, i, n);
    else
      append_escape(text_, uint8_t(printed[i]));
    i += n ? n : 1;
  }
}

std::string PrintfSink::finish() const {
  if (!dropped_) return text_;
  std::string out = text_;
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out + printf_cut_note(dropped_);
}

} // namespace wb
