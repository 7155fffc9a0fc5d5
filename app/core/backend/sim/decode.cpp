// Module layout and the per-kernel decoder. See decode.hpp.
#include "decode.hpp"

#include "core/printf_guard.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

namespace wb::sim {

// ---- types ----

int ty_bytes(Ty t) {
  switch (t) {
  case Ty::b8:
  case Ty::u8:
  case Ty::s8:
  case Ty::e4m3:
  case Ty::e5m2:
    return 1;
  case Ty::b16:
  case Ty::u16:
  case Ty::s16:
  case Ty::f16:
  case Ty::bf16:
  case Ty::e4m3x2:
  case Ty::e5m2x2:
    return 2;
  case Ty::b32:
  case Ty::u32:
  case Ty::s32:
  case Ty::f32:
  case Ty::f16x2:
  case Ty::bf16x2:
  case Ty::tf32:
    return 4;
  case Ty::b64:
  case Ty::u64:
  case Ty::s64:
  case Ty::f64:
    return 8;
  case Ty::b128:
    return 16;
  case Ty::pred:
    return 1;
  default:
    return 0;
  }
}
bool ty_signed(Ty t) {
  return t == Ty::s8 || t == Ty::s16 || t == Ty::s32 || t == Ty::s64;
}
bool ty_float(Ty t) {
  return t == Ty::f16 || t == Ty::f16x2 || t == Ty::bf16 || t == Ty::bf16x2 || t == Ty::f32 ||
         t == Ty::f64 || t == Ty::tf32;
}
namespace {
constexpr std::pair<std::string_view, Ty> kTyNames[] = {
    {"b8", Ty::b8},         {"b16", Ty::b16},       {"b32", Ty::b32},       {"b64", Ty::b64},
    {"b128", Ty::b128},     {"u8", Ty::u8},         {"u16", Ty::u16},       {"u32", Ty::u32},
    {"u64", Ty::u64},       {"s8", Ty::s8},         {"s16", Ty::s16},       {"s32", Ty::s32},
    {"s64", Ty::s64},       {"f16", Ty::f16},       {"f16x2", Ty::f16x2},   {"bf16", Ty::bf16},
    {"bf16x2", Ty::bf16x2}, {"f32", Ty::f32},       {"f64", Ty::f64},       {"tf32", Ty::tf32},
    {"pred", Ty::pred},     {"e4m3x2", Ty::e4m3x2}, {"e5m2x2", Ty::e5m2x2}, {"e4m3", Ty::e4m3},
    {"e5m2", Ty::e5m2}};
} // namespace
Ty parse_ty(std::string_view s) {
  for (auto& [n, t] : kTyNames)
    if (n == s) return t;
  return Ty::none;
}
std::string_view ty_name(Ty t) {
  for (auto& [n, tt] : kTyNames)
    if (tt == t) return n;
  return "?";
}

// ---- opcode ----

Opc::Opc(const std::string& s) : text(s) {
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find('.', i);
    if (j == std::string::npos) j = s.size();
    std::string part = s.substr(i, j - i);
    if (i == 0)
      base = part;
    else if (!part.empty()) {
      mods.push_back(part);
      Ty t = parse_ty(part);
      if (t != Ty::none) types.push_back(t);
    }
    i = j + 1;
  }
}
bool Opc::has(std::string_view m) const {
  for (auto& x : mods)
    if (x == m) return true;
  return false;
}
std::string_view Opc::one_of(std::initializer_list<std::string_view> names) const {
  for (auto& x : mods)
    for (auto n : names)
      if (x == n) return n;
  return {};
}
Rnd Opc::rnd() const {
  for (auto& m : mods) {
    if (m == "rn" || m == "rni") return Rnd::rn;
    if (m == "rz" || m == "rzi") return Rnd::rz;
    if (m == "rm" || m == "rmi") return Rnd::rm;
    if (m == "rp" || m == "rpi") return Rnd::rp;
    if (m == "rna") return Rnd::rna;
  }
  return Rnd::none;
}
bool Opc::int_rnd() const {
  return has("rni") || has("rzi") || has("rmi") || has("rpi");
}
Space Opc::space() const {
  for (auto& m : mods) {
    if (m == "global") return Space::global;
    if (m == "shared" || m == "shared::cta") return Space::shared;
    if (m == "local") return Space::local;
    if (m == "param" || m == "param::func" || m == "param::entry") return Space::kparam;
    if (m == "const") return Space::konst;
  }
  return Space::generic;
}
int Opc::vec() const {
  if (has("v2")) return 2;
  if (has("v4")) return 4;
  if (has("v8")) return 8;
  return 1;
}
void Opc::only(std::initializer_list<std::string_view> allowed) const {
  static const std::set<std::string_view> hints = {"sync",
                                                   "aligned",
                                                   "uni",
                                                   "nc",
                                                   "ca",
                                                   "cg",
                                                   "cs",
                                                   "lu",
                                                   "cv",
                                                   "wb",
                                                   "wt",
                                                   "volatile",
                                                   "relaxed",
                                                   "acquire",
                                                   "release",
                                                   "acq_rel",
                                                   "sc",
                                                   "weak",
                                                   "cta",
                                                   "gpu",
                                                   "sys",
                                                   "cluster",
                                                   "L1::evict_normal",
                                                   "L1::evict_unchanged",
                                                   "L1::evict_first",
                                                   "L1::evict_last",
                                                   "L1::no_allocate",
                                                   "L2::evict_normal",
                                                   "L2::evict_first",
                                                   "L2::evict_last",
                                                   "L2::64B",
                                                   "L2::128B",
                                                   "L2::256B",
                                                   "L2::cache_hint",
                                                   "global",
                                                   "shared",
                                                   "shared::cta",
                                                   "local",
                                                   "param",
                                                   "const",
                                                   "param::func",
                                                   "param::entry"};
  for (auto& m : mods) {
    if (parse_ty(m) != Ty::none || hints.count(m)) continue;
    bool ok = false;
    for (auto a : allowed)
      if (a == m) ok = true;
    if (!ok) throw Unsupported("the modifier ." + m + " of " + base + " is not supported");
  }
}

// ---- symbols ----

std::string pretty_symbol(const std::string& s) {
  auto read_names = [](const std::string& t, size_t i, std::vector<std::string>& out) {
    while (i < t.size() && std::isdigit((unsigned char)t[i])) {
      size_t j = i;
      while (j < t.size() && std::isdigit((unsigned char)t[j])) ++j;
      size_t n = std::stoul(t.substr(i, j - i));
      if (j + n > t.size()) break;
      out.push_back(t.substr(j, n));
      i = j + n;
    }
    return i;
  };
  if (s.rfind("_ZZ", 0) == 0) { // local static: _ZZ <function> E <name> [_N]
    size_t e = s.rfind('E');
    if (e != std::string::npos) {
      std::vector<std::string> names;
      read_names(s, e + 1, names);
      if (!names.empty()) return names.back();
    }
  }
  if (s.rfind("_ZN", 0) == 0) {
    std::vector<std::string> names;
    read_names(s, 3, names);
    std::string r;
    for (auto& n : names) r += (r.empty() ? "" : "::") + n;
    if (!r.empty()) return r;
  }
  if (s.rfind("_Z", 0) == 0) {
    std::vector<std::string> names;
    read_names(s, 2, names);
    if (!names.empty()) return names[0];
  }
  if (s.rfind("$str", 0) == 0) return "a string literal";
  return s;
}

namespace {

uint32_t decl_elem_bytes(const ptx::VarDecl& v) {
  Ty t = parse_ty(v.type);
  int b = ty_bytes(t);
  return uint32_t(std::max(1, b) * v.vec);
}
uint64_t decl_bytes(const ptx::VarDecl& v) {
  uint64_t e = decl_elem_bytes(v);
  return v.count < 0 ? e : e * uint64_t(v.count);
}
uint32_t decl_align(const ptx::VarDecl& v) {
  return v.align > 0 ? uint32_t(v.align) : std::max<uint32_t>(1, decl_elem_bytes(v));
}
uint64_t align_up(uint64_t x, uint64_t a) {
  return a ? (x + a - 1) / a * a : x;
}

// Initialiser values -> bytes, by the declared element type.
void init_bytes(const ptx::VarDecl& v, const std::map<std::string, uint64_t>& addrs,
                std::vector<std::byte>& out) {
  Ty t = parse_ty(v.type);
  int eb = std::max(1, ty_bytes(t));
  out.assign(decl_bytes(v), std::byte{0});
  size_t k = 0;
  for (auto& o : v.init) {
    if (size_t(k + 1) * eb > out.size()) break;
    uint64_t bitsv = 0;
    switch (o.kind) {
    case ptx::Operand::Kind::integer:
      bitsv = o.bits;
      if (t == Ty::f32)
        bitsv = bits(float(int64_t(o.bits)));
      else if (t == Ty::f64)
        bitsv = bits(double(int64_t(o.bits)));
      break;
    case ptx::Operand::Kind::f32bits:
      bitsv = t == Ty::f64 ? bits(double(f32(o.bits))) : o.bits;
      break;
    case ptx::Operand::Kind::f64bits:
      bitsv = t == Ty::f32 ? bits(float(f64(o.bits))) : o.bits;
      break;
    case ptx::Operand::Kind::decimal:
      bitsv = t == Ty::f32   ? bits(float(o.dval))
              : t == Ty::f64 ? bits(o.dval)
                             : uint64_t(int64_t(o.dval));
      break;
    case ptx::Operand::Kind::ident: {
      auto it = addrs.find(o.name);
      bitsv = (it != addrs.end() ? it->second : 0) + uint64_t(o.offset);
      break;
    }
    default:
      break;
    }
    std::memcpy(out.data() + k * eb, &bitsv, eb);
    ++k;
  }
}

} // namespace

std::unique_ptr<ModuleImage> load_module(const std::string& ptx) {
  auto m = std::make_unique<ModuleImage>();
  ptx::ParseError err;
  if (!ptx::parse_module(ptx, m->ast, err)) {
    m->error = err.message;
    m->error_line = err.line;
    return m;
  }
  // Module-scope .global/.const variables get fixed simulated addresses; shared variables (module
  // scope or demoted into a function) are laid out per kernel at decode time.
  uint64_t next = kModuleVarBase;
  std::map<std::string, uint64_t> addrs;
  auto add_var = [&](const ptx::VarDecl& v) {
    ModuleVar mv;
    mv.name = v.name;
    mv.pretty = pretty_symbol(v.name);
    mv.space = v.space;
    mv.size = decl_bytes(v);
    mv.align = decl_align(v);
    mv.elem = decl_elem_bytes(v);
    mv.is_extern = v.is_extern;
    if (v.space == "global" || v.space == "const") {
      next = align_up(next, 256);
      mv.addr = next;
      next += align_up(std::max<uint64_t>(mv.size, 1), 256) + 256;
      addrs[v.name] = mv.addr;
    }
    m->var_index[v.name] = m->vars.size();
    m->vars.push_back(std::move(mv));
  };
  for (auto& v : m->ast.globals) add_var(v);
  for (auto& f : m->ast.funcs)
    for (auto& d : f.decls)
      if (d.space == "shared" || d.space == "global" || d.space == "const")
        if (!m->var_index.count(d.name)) add_var(d);
  // Initialisers may take the address of other variables (generic(sym)).
  for (auto& v : m->ast.globals) {
    auto& mv = m->vars[m->var_index[v.name]];
    if (mv.space != "shared") init_bytes(v, addrs, mv.init);
  }
  for (auto& f : m->ast.funcs)
    for (auto& d : f.decls)
      if (d.space == "global" || d.space == "const")
        init_bytes(d, addrs, m->vars[m->var_index[d.name]].init);
  return m;
}

namespace {

struct Sym {
  enum class K { reg, pred, frame } k;
  uint32_t idx = 0;  // row / pred index / frame offset
  uint32_t size = 0; // frame symbols: bytes; registers: the register's width in bytes
  bool fp = false;   // registers: declared with a float type (.f16, .f32, .f64 ...)
};

class Decoder final : public Dec {
public:
  Decoder(Program& p, ModuleImage& m) : Dec(p, m) {}

  bool run(const std::string& kernel, std::string& why) {
    const ptx::Function* entry = nullptr;
    for (auto& f : M.ast.funcs)
      if (f.entry && f.name == kernel) entry = &f;
    if (!entry) {
      why = "no kernel named `" + kernel + "` in the PTX";
      return false;
    }
    P.kernel = kernel;
    for (int i = 0; i < 3; ++i) {
      P.reqntid[i] = entry->reqntid[i];
      P.maxntid[i] = entry->maxntid[i];
    }
    collect(entry);
    layout_shared();
    // Kernel parameters.
    uint32_t off = 0;
    for (auto& pd : entry->params) {
      uint32_t a = decl_align(pd);
      off = uint32_t(align_up(off, a));
      P.params.push_back({pd.name, off, uint32_t(decl_bytes(pd))});
      kparams_[pd.name] = off;
      off += uint32_t(decl_bytes(pd));
    }
    P.param_bytes = off;
    scratch_row_ = new_row();
    zero_row_ = const_row(0);
    // Decode every reachable function into one code array.
    local_starts_.resize(order_.size());
    for (size_t i = 0; i < order_.size(); ++i) decode_function(uint32_t(i));
    finish_local_arrays();
    finish_frames();
    return true;
  }

  // ---- Dec interface ----
  uint32_t row(const ptx::Operand& o, Ty t) override {
    using K = ptx::Operand::Kind;
    switch (o.kind) {
    case K::ident: {
      if (auto* s = lookup(o.name)) {
        if (s->k == Sym::K::reg) return s->idx;
        if (s->k == Sym::K::pred) throw Unsupported("a predicate used as a value: " + o.name);
      }
      if (o.name.size() > 1 && o.name[0] == '%') {
        auto sp = special_of(o.name);
        if (sp) return special_row(*sp);
      }
      // A symbol used as a value: its address (mov %rd, sym is handled by the caller; here only
      // for constant-foldable symbols such as module variables and shared offsets).
      uint32_t base;
      int64_t v;
      Space s;
      if (symbol_value(o, base, v, s) && base == kNoRow) return const_row(uint64_t(v));
      // A function's name as a value: the pointer an indirect call takes.
      if (auto f = fidx_.find(o.name); f != fidx_.end())
        return const_row(kFunctionAddress + f->second);
      throw Unsupported("unknown register or symbol `" + o.name + "`");
    }
    case K::integer: {
      uint64_t v = o.bits;
      if (t == Ty::f32)
        v = bits(float(int64_t(o.bits)));
      else if (t == Ty::f64)
        v = bits(double(int64_t(o.bits)));
      return const_row(truncate(v, t));
    }
    case K::f32bits:
      if (t == Ty::f64) return const_row(bits(double(f32(o.bits))));
      return const_row(o.bits & 0xffffffffu);
    case K::f64bits:
      if (t == Ty::f32) return const_row(bits(float(f64(o.bits))));
      return const_row(o.bits);
    case K::decimal:
      if (t == Ty::f32) return const_row(bits(float(o.dval)));
      if (t == Ty::f64) return const_row(bits(o.dval));
      return const_row(truncate(uint64_t(int64_t(o.dval)), t));
    case K::sink:
      return scratch_row_;
    default:
      throw Unsupported("an operand of this kind cannot be used as a value here");
    }
  }
  uint32_t dst(const ptx::Operand& o) override {
    if (o.kind == ptx::Operand::Kind::sink) return scratch_row_;
    if (o.kind == ptx::Operand::Kind::ident)
      if (auto* s = lookup(o.name); s && s->k == Sym::K::reg) return s->idx;
    throw Unsupported("expected a destination register, found `" + o.name + "`");
  }
  int reg_bytes(const ptx::Operand& o) override {
    if (o.kind != ptx::Operand::Kind::ident) return 0;
    auto* s = lookup(o.name);
    return s && s->k == Sym::K::reg ? int(s->size) : 0;
  }
  bool is_pred_reg(const ptx::Operand& o) override {
    if (o.kind != ptx::Operand::Kind::ident) return false;
    auto* s = lookup(o.name);
    return s && s->k == Sym::K::pred;
  }
  int16_t pred(const ptx::Operand& o, uint32_t* xr) override {
    if (xr) *xr = o.neg ? kFull : 0;
    if (o.kind == ptx::Operand::Kind::sink) return scratch_pred();
    if (o.kind == ptx::Operand::Kind::integer) { // a constant predicate
      return o.bits ? const_pred(true) : const_pred(false);
    }
    return pred_name(o.name);
  }
  int16_t pred_name(const std::string& name) override {
    if (name == "_") return scratch_pred();
    if (name == "%__cc") { // the carry flag of add.cc / addc
      if (cc_pred_ < 0) cc_pred_ = new_pred();
      return cc_pred_;
    }
    auto* s = lookup(name);
    if (!s || s->k != Sym::K::pred)
      throw Unsupported("expected a predicate register, found `" + name + "`");
    return int16_t(s->idx);
  }
  uint32_t const_row(uint64_t v) override {
    auto it = consts_.find(v);
    if (it != consts_.end()) return it->second;
    uint32_t r = new_row();
    consts_[v] = r;
    P.consts.push_back({r, v});
    return r;
  }
  uint32_t special_row(Special s) override {
    auto it = specials_.find(s);
    if (it != specials_.end()) return it->second;
    uint32_t r = new_row();
    specials_[s] = r;
    P.specials.push_back({r, s});
    return r;
  }
  uint32_t vec_rows(const ptx::Operand& o, Ty t, int expect) override {
    uint32_t off = uint32_t(P.lists.size());
    if (o.kind == ptx::Operand::Kind::vec) {
      if (expect > 0 && int(o.elems.size()) != expect)
        throw Unsupported("expected a vector of " + std::to_string(expect) + " registers");
      for (auto& e : o.elems)
        P.lists.push_back(e.kind == ptx::Operand::Kind::sink ? scratch_row_ : row(e, t));
    } else {
      if (expect > 1) throw Unsupported("expected a vector operand");
      P.lists.push_back(row(o, t));
    }
    return off;
  }
  Addr addr(const ptx::Operand& o, Space declared) override {
    Addr a;
    a.space = declared;
    a.disp = o.offset;
    if (o.kind == ptx::Operand::Kind::ident) { // a bare register used as an address (rare)
      a.base = row(o, Ty::u64);
      return a;
    }
    if (o.kind != ptx::Operand::Kind::addr) throw Unsupported("expected an address operand");
    if (o.name.empty()) {
      a.base = kNoRow;
      return a;
    }
    if (auto* s = lookup(o.name)) {
      if (s->k == Sym::K::reg) {
        a.base = s->idx;
        if (declared == Space::kparam) a.space = Space::kparam; // ld.param [%rd]: kernel params
        return a;
      }
      if (s->k == Sym::K::frame) { // a .local variable or a call parameter: frame-relative local
        a.space = declared == Space::generic ? Space::generic : Space::local;
        a.base = funcs_[cur_].frame_row;
        a.disp += s->idx;
        if (declared == Space::generic) throw Unsupported("generic access to a frame symbol");
        return a;
      }
    }
    if (auto it = kparams_.find(o.name); it != kparams_.end() && cur_ == 0) {
      a.space = Space::kparam;
      a.base = kNoRow;
      a.disp += it->second;
      return a;
    }
    if (auto it = M.var_index.find(o.name); it != M.var_index.end()) {
      auto& v = M.vars[it->second];
      a.base = kNoRow;
      if (v.space == "shared") {
        a.disp += shared_offset(o.name);
        if (declared == Space::generic) a.disp += int64_t(kSharedWindow);
      } else {
        a.disp += int64_t(v.addr);
      }
      return a;
    }
    throw Unsupported("unknown symbol `" + o.name + "` in an address");
  }
  bool symbol_value(const ptx::Operand& o, uint32_t& base_row, int64_t& value, Space& sp) override {
    if (o.kind != ptx::Operand::Kind::ident) return false;
    base_row = kNoRow;
    value = o.offset;
    if (auto* s = lookup(o.name)) {
      if (s->k != Sym::K::frame) return false;
      base_row = funcs_[cur_].frame_row;
      value += s->idx;
      sp = Space::local;
      return true;
    }
    if (auto it = M.var_index.find(o.name); it != M.var_index.end()) {
      auto& v = M.vars[it->second];
      if (v.space == "shared") {
        value += shared_offset(o.name);
        sp = Space::shared;
      } else {
        value += int64_t(v.addr);
        sp = Space::global;
      }
      return true;
    }
    if (auto it = kparams_.find(o.name); it != kparams_.end()) {
      value += it->second;
      sp = Space::kparam;
      return true;
    }
    return false;
  }
  uint32_t label_pc(const std::string& name) override {
    fixups_.push_back({uint32_t(P.code.size()), name});
    return 0;
  }
  uint32_t call_site(const ptx::Instr& in) override;
  // After call_site: the register an indirect call reads its target from (kNoRow for a direct
  // call), and how many consecutive sites it made (one per function it may reach).
  uint32_t indirect_row() const override { return indirect_row_; }
  uint32_t indirect_sites() const override { return indirect_sites_; }
  uint32_t cur_func() const override { return cur_; }
  void warn(const std::string& w) override { // once per program, however many instructions
    if (std::find(P.warnings.begin(), P.warnings.end(), w) == P.warnings.end())
      P.warnings.push_back(w);
  }

private:
  std::vector<const ptx::Function*> order_; // reachable functions, [0] = kernel
  std::map<std::string, uint32_t> fidx_;
  std::vector<FuncInfo>& funcs_ = P.funcs;
  std::set<std::string> shared_used_;
  std::map<std::string, uint32_t> shared_off_;
  std::map<std::string, uint32_t> kparams_;
  std::vector<std::map<std::string, Sym>> scopes_;
  std::map<uint64_t, uint32_t> consts_;
  std::map<Special, uint32_t> specials_;
  std::vector<std::pair<uint32_t, std::string>> fixups_;
  std::map<std::string, uint32_t> labels_;
  uint32_t cur_ = 0;
  uint32_t scratch_row_ = kNoRow, zero_row_ = kNoRow;
  uint32_t indirect_row_ = kNoRow, indirect_sites_ = 1;
  int16_t scratch_pred_ = -1, true_pred_ = -1, false_pred_ = -1, cc_pred_ = -1;
  std::vector<std::vector<uint32_t>> callees_;
  std::set<uint32_t> address_taken_;    // functions named as values (function pointers)
  std::set<uint32_t> indirect_callers_; // functions that call through a pointer
  // Which variable a register's value is the address of, traced through mov/cvta/add/sub/mad/cvt
  // (InstInfo::shared_sym, local_lo/hi). A register defined once from a variable and once from
  // anything else is `mixed` and never named.
  struct Prov {
    enum class K : uint8_t { none, shared, frame, local_array, mixed } k = K::none;
    uint32_t lo = 0, hi = 0; // shared: the symbol's index; frame/local_array: frame offsets
    bool operator==(const Prov&) const = default;
  };
  std::unordered_map<uint32_t, Prov> prov_;
  std::map<std::string, int> shared_index_;
  std::vector<std::set<uint32_t>> local_starts_; // per function: where its local arrays start

  uint32_t new_row() { return P.nrows++; }
  int16_t new_pred() { return int16_t(P.npreds++); }
  int16_t scratch_pred() {
    if (scratch_pred_ < 0) scratch_pred_ = new_pred();
    return scratch_pred_;
  }
  int16_t const_pred(bool v) {
    // Constant predicates are ordinary predicates set once at warp start.
    int16_t& p = v ? true_pred_ : false_pred_;
    if (p < 0) {
      p = new_pred();
      if (v) P.true_preds.push_back(p);
    }
    return p;
  }
  static uint64_t truncate(uint64_t v, Ty t) {
    int b = ty_bytes(t);
    if (b >= 8 || b == 0 || ty_float(t)) return v;
    return v & ((1ull << (8 * b)) - 1);
  }
  const Sym* lookup(const std::string& n) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(n);
      if (f != it->end()) return &f->second;
    }
    return nullptr;
  }
  static std::optional<Special> special_of(const std::string& n) {
    static const std::map<std::string, Special> m = {
        {"%tid.x", Special::tid_x},
        {"%tid.y", Special::tid_y},
        {"%tid.z", Special::tid_z},
        {"%ntid.x", Special::ntid_x},
        {"%ntid.y", Special::ntid_y},
        {"%ntid.z", Special::ntid_z},
        {"%ctaid.x", Special::ctaid_x},
        {"%ctaid.y", Special::ctaid_y},
        {"%ctaid.z", Special::ctaid_z},
        {"%nctaid.x", Special::nctaid_x},
        {"%nctaid.y", Special::nctaid_y},
        {"%nctaid.z", Special::nctaid_z},
        {"%laneid", Special::laneid},
        {"%warpid", Special::warpid},
        {"%nwarpid", Special::nwarpid},
        {"%smid", Special::smid},
        {"%nsmid", Special::nsmid},
        {"%gridid", Special::gridid},
        {"%lanemask_eq", Special::lanemask_eq},
        {"%lanemask_le", Special::lanemask_le},
        {"%lanemask_lt", Special::lanemask_lt},
        {"%lanemask_ge", Special::lanemask_ge},
        {"%lanemask_gt", Special::lanemask_gt},
        {"%dynamic_smem_size", Special::dynamic_smem_size},
        {"%total_smem_size", Special::total_smem_size},
        {"%envreg1", Special::envreg1},
        {"%envreg2", Special::envreg2}};
    auto it = m.find(n);
    if (it == m.end() && n.rfind("%envreg", 0) == 0) return Special::zero; // driver-set: unused
    if (it == m.end()) return std::nullopt;
    return it->second;
  }
  uint32_t shared_offset(const std::string& name) {
    auto it = shared_off_.find(name);
    if (it == shared_off_.end())
      throw Unsupported("shared variable `" + name + "` was not laid out");
    return it->second;
  }

  // Reachable functions (call graph from the kernel) and the shared variables they use.
  void collect(const ptx::Function* entry) {
    std::vector<const ptx::Function*> stack{entry};
    auto add = [&](const ptx::Function* f) {
      if (fidx_.count(f->name)) return fidx_[f->name];
      uint32_t i = uint32_t(order_.size());
      fidx_[f->name] = i;
      order_.push_back(f);
      FuncInfo fi;
      fi.name = f->name;
      if (!f->has_body) {
        if (f->name == "vprintf")
          fi.builtin = 1;
        else if (f->name == "__assertfail")
          fi.builtin = 2;
        else if (f->name == "malloc")
          fi.builtin = 3;
        else if (f->name == "free")
          fi.builtin = 4;
        else
          fi.builtin = -1;
      } else if (f->name == kPrintfGuardRewrite && f->params.size() == 1 && f->rets.empty()) {
        fi.builtin = 5; // the printf guard's format rewrite: run natively (printf_guard.hpp)
      }
      funcs_.push_back(fi);
      callees_.emplace_back();
      return i;
    };
    add(entry);
    for (size_t i = 0; i < order_.size(); ++i) {
      const ptx::Function* f = order_[i];
      auto note = [&](const std::string& n) {
        auto it = M.var_index.find(n);
        if (it != M.var_index.end() && M.vars[it->second].space == "shared") shared_used_.insert(n);
      };
      for (auto& in : f->instrs) {
        bool is_call = in.opcode.rfind("call", 0) == 0;
        for (size_t k = 0; k < in.ops.size(); ++k) {
          auto& o = in.ops[k];
          note(o.name);
          for (auto& e : o.elems) note(e.name);
          if (o.kind != ptx::Operand::Kind::ident) continue;
          for (auto& g : M.ast.funcs) {
            if (g.name != o.name) continue;
            uint32_t c = add(&g);
            if (is_call)
              callees_[i].push_back(c);
            else if (g.has_body) // its address is taken: an indirect call may reach it
              address_taken_.insert(c);
          }
        }
        // call (ret), %rd, (args), prototype: through a pointer (a register, not a function)
        if (is_call && !in.ops.empty()) {
          size_t k = in.ops[0].kind == ptx::Operand::Kind::list ? 1 : 0;
          if (k < in.ops.size() && in.ops[k].kind == ptx::Operand::Kind::ident &&
              std::none_of(M.ast.funcs.begin(), M.ast.funcs.end(),
                           [&](auto& g) { return g.name == in.ops[k].name; }))
            indirect_callers_.insert(uint32_t(i));
        }
      }
      for (auto& d : f->decls)
        if (d.space == "shared") note(d.name);
    }
    // An indirect call may reach any function whose address was taken.
    for (uint32_t c : indirect_callers_)
      for (uint32_t t : address_taken_) callees_[c].push_back(t);
    // Recursion: functions on a cycle of the call graph.
    size_t n = order_.size();
    for (size_t s = 0; s < n; ++s) {
      std::vector<char> seen(n, 0);
      std::vector<uint32_t> st(callees_[s].begin(), callees_[s].end());
      while (!st.empty()) {
        uint32_t c = st.back();
        st.pop_back();
        if (c == s) {
          funcs_[s].recursive = true;
          break;
        }
        if (seen[c]) continue;
        seen[c] = 1;
        for (auto d : callees_[c]) st.push_back(d);
      }
    }
  }

  void layout_shared() {
    uint32_t off = 0;
    uint32_t dyn_align = 16;
    std::vector<std::string> dyn;
    for (auto& name : shared_used_) {
      auto& v = M.vars[M.var_index[name]];
      if (v.is_extern || v.size == 0) {
        dyn.push_back(name);
        dyn_align = std::max(dyn_align, v.align);
        continue;
      }
      off = uint32_t(align_up(off, v.align));
      shared_off_[name] = off;
      shared_index_[name] = int(P.shared_syms.size());
      P.shared_syms.push_back({v.pretty, off, uint32_t(v.size), false});
      off += uint32_t(v.size);
    }
    P.static_shared = off;
    P.dyn_shared_align = dyn_align;
    P.dyn_shared_offset = uint32_t(align_up(off, dyn_align));
    for (auto& name : dyn) {
      shared_off_[name] = P.dyn_shared_offset;
      P.shared_syms.push_back({M.vars[M.var_index[name]].pretty, P.dyn_shared_offset, 0, true});
    }
  }

  uint32_t frame_alloc(uint32_t bytes, uint32_t align) {
    auto& f = funcs_[cur_];
    f.frame_size = uint32_t(align_up(f.frame_size, std::max(1u, align)));
    uint32_t off = f.frame_size;
    f.frame_size += bytes;
    return off;
  }

  void decode_function(uint32_t fi);
  void decode_instr(const ptx::Instr& in);
  void note_registers(const ptx::Instr& in, const Opc& o, InstInfo& info);
  void note_provenance(const ptx::Instr& in, const Opc& o, InstInfo& info);
  void finish_local_arrays();
  void finish_frames();
};

uint32_t Decoder::call_site(const ptx::Instr& in) {
  // call{.uni} (ret, ...), func, (arg, ...) [, prototype];   or   call func, (args);
  CallSite cs;
  cs.caller = cur_;
  size_t k = 0;
  std::vector<const ptx::Operand*> rets, args;
  if (k < in.ops.size() && in.ops[k].kind == ptx::Operand::Kind::list) {
    for (auto& e : in.ops[k].elems) rets.push_back(&e);
    ++k;
  }
  if (k >= in.ops.size() || in.ops[k].kind != ptx::Operand::Kind::ident)
    throw Unsupported("a call without a function name");
  const std::string& fname = in.ops[k].name;
  std::vector<uint32_t> callees;
  if (const Sym* s = lookup(fname)) { // through a pointer: one call site per possible callee
    if (s->k != Sym::K::reg) throw Unsupported("a call through `" + fname + "`");
    indirect_row_ = s->idx;
    callees.assign(address_taken_.begin(), address_taken_.end());
    if (callees.empty())
      throw Unsupported("a call through a pointer no function's address reaches");
  } else {
    auto it = fidx_.find(fname);
    if (it == fidx_.end()) throw Unsupported("call of an unknown function `" + fname + "`");
    callees.push_back(it->second);
    indirect_row_ = kNoRow;
  }
  ++k;
  if (k < in.ops.size() && in.ops[k].kind == ptx::Operand::Kind::list)
    for (auto& e : in.ops[k].elems) args.push_back(&e);
  auto slot = [&](const ptx::Operand* o, std::vector<uint32_t>& off, std::vector<uint32_t>& size) {
    auto* s = lookup(o->name);
    if (!s || s->k != Sym::K::frame)
      throw Unsupported("call argument `" + o->name + "` is not a .param");
    off.push_back(s->idx);
    size.push_back(s->size);
  };
  for (auto* r : rets) slot(r, cs.ret_off, cs.ret_size);
  for (auto* a : args) slot(a, cs.arg_off, cs.arg_size);
  const uint32_t first = uint32_t(P.calls.size());
  for (uint32_t c : callees) {
    cs.callee = c;
    P.calls.push_back(cs);
  }
  indirect_sites_ = uint32_t(callees.size());
  P.uses_calls = true;
  return first;
}

void Decoder::decode_function(uint32_t fi) {
  cur_ = fi;
  const ptx::Function* f = order_[fi];
  FuncInfo& F = funcs_[fi];
  if (F.builtin != 0) {
    F.entry_pc = kNoPc;
    return;
  }
  F.row_lo = P.nrows;
  F.pred_lo = uint32_t(P.npreds);
  F.frame_row = new_row();
  if (fi == 0) P.zero_rows.push_back(F.frame_row);
  scopes_.clear();
  scopes_.emplace_back();
  if (fi != 0) {
    for (auto& pd : f->params) {
      uint32_t sz = uint32_t(decl_bytes(pd)), off = frame_alloc(sz, decl_align(pd));
      scopes_[0][pd.name] = {Sym::K::frame, off, sz};
      funcs_[fi].param_off.push_back(off);
      funcs_[fi].param_size.push_back(sz);
    }
    for (auto& pd : f->rets) {
      uint32_t sz = uint32_t(decl_bytes(pd)), off = frame_alloc(sz, decl_align(pd));
      scopes_[0][pd.name] = {Sym::K::frame, off, sz};
      funcs_[fi].ret_off.push_back(off);
      funcs_[fi].ret_size.push_back(sz);
    }
  }
  funcs_[fi].entry_pc = uint32_t(P.code.size());
  if (fi == 0) P.entry_pc = funcs_[fi].entry_pc;
  labels_.clear();
  fixups_.clear();
  int last_line = 0, last_ptx = f->ptx_line;
  for (auto& st : f->body) {
    switch (st.kind) {
    case ptx::Stmt::Kind::open:
      scopes_.emplace_back();
      break;
    case ptx::Stmt::Kind::close:
      if (scopes_.size() > 1) scopes_.pop_back();
      break;
    case ptx::Stmt::Kind::label:
      labels_[f->labels[st.index]] = uint32_t(P.code.size());
      break;
    case ptx::Stmt::Kind::decl: {
      const ptx::VarDecl& d = f->decls[st.index];
      auto& sc = scopes_.back();
      if (d.space == "reg") {
        bool is_pred = d.type == "pred";
        bool wide = d.type.size() >= 2 && d.type.compare(d.type.size() - 2, 2, "64") == 0;
        auto one = [&](const std::string& n) {
          if (is_pred)
            sc[n] = {Sym::K::pred, uint32_t(new_pred()), 0};
          else
            sc[n] = {Sym::K::reg, new_row(), wide ? 8u : 4u, d.type.rfind('f', 0) == 0};
        };
        if (d.range >= 0)
          for (int i = 0; i < d.range; ++i) one(d.name + std::to_string(i));
        else
          one(d.name);
      } else if (d.space == "local" || d.space == "param") {
        uint32_t sz = uint32_t(std::max<uint64_t>(decl_bytes(d), 1));
        sc[d.name] = {Sym::K::frame, frame_alloc(sz, decl_align(d)), sz};
      }
      break;
    }
    case ptx::Stmt::Kind::instr: {
      const ptx::Instr& in = f->instrs[st.index];
      decode_instr(in);
      last_line = in.src_line;
      last_ptx = in.ptx_line;
      break;
    }
    }
  }
  // Falling off the end of a function returns (PTX requires a ret; this keeps pcs in range).
  {
    ptx::Instr r;
    r.opcode = "ret";
    r.src_line = last_line;
    r.ptx_line = last_ptx;
    decode_instr(r);
  }
  for (auto& [pc, name] : fixups_) {
    auto it = labels_.find(name);
    if (it == labels_.end()) {
      P.code[pc].fn = h_unsupported;
      P.info[pc].note = "branch to an unknown label " + name;
    } else {
      P.code[pc].target = it->second;
      P.info[pc].branch_target = it->second;
    }
  }
  funcs_[fi].end_pc = uint32_t(P.code.size());
  funcs_[fi].row_hi = P.nrows;
  funcs_[fi].pred_hi = uint32_t(P.npreds);
}

// The registers an instruction writes and reads (InstInfo::defs, uses). PTX writes its
// destination first, except for the instructions that have none (stores, reductions, barriers,
// branches ...), where every operand is read.
void Decoder::note_registers(const ptx::Instr& in, const Opc& o, InstInfo& info) {
  auto add = [&](std::vector<uint32_t>& v, const std::string& name) {
    if (const Sym* s = lookup(name)) {
      if (s->k == Sym::K::reg)
        v.push_back(s->idx);
      else if (s->k == Sym::K::pred)
        v.push_back(kPredRow | s->idx);
    }
  };
  auto walk = [&](auto& self, const ptx::Operand& op, std::vector<uint32_t>& v) -> void {
    using K = ptx::Operand::Kind;
    if (op.kind == K::ident) {
      add(v, op.name);
      if (!op.name2.empty()) add(v, op.name2);
    } else if (op.kind == K::addr) {
      if (!op.name.empty()) add(v, op.name);
      if (info.addr_base == kNoRow && !op.name.empty())
        if (const Sym* s = lookup(op.name); s && s->k == Sym::K::reg) {
          info.addr_base = s->idx;
          info.addr_offset = op.offset;
        }
    } else if (op.kind == K::vec || op.kind == K::list) {
      for (auto& e : op.elems) self(self, e, v);
    }
  };
  static const char* const kNoDest[] = {
      "st",      "red",       "bar",       "barrier",  "bra",           "ret", "exit",
      "trap",    "prefetch",  "prefetchu", "membar",   "fence",         "cp",  "call",
      "pmevent", "nanosleep", "brkpt",     "stmatrix", "griddepcontrol"};
  bool dest = true;
  for (const char* b : kNoDest)
    if (o.base == b) dest = false;
  if (o.base == "wmma" && o.has("store")) dest = false;
  if (o.base == "mbarrier" && (o.has("init") || o.has("inval") || o.has("complete_tx") ||
                               (o.has("expect_tx") && !o.has("arrive"))))
    dest = false;
  if (!in.guard.empty()) add(info.uses, in.guard);
  for (size_t i = 0; i < in.ops.size(); ++i)
    walk(walk, in.ops[i], i == 0 && dest ? info.defs : info.uses);
}

void Decoder::decode_instr(const ptx::Instr& in) {
  Inst I;
  InstInfo info;
  info.opcode = in.opcode;
  info.line = in.src_line;
  info.ptx_line = in.ptx_line;
  info.nounroll = in.nounroll;
  try {
    if (!in.guard.empty()) {
      I.guard = pred_name(in.guard);
      I.guard_xor = in.guard_neg ? kFull : 0;
    }
    Opc o(in.opcode);
    bool ok = decode_int(*this, I, info, o, in) || decode_float(*this, I, info, o, in) ||
              decode_cvt(*this, I, info, o, in) || decode_sync(*this, I, info, o, in) ||
              decode_mem(*this, I, info, o, in) || decode_ctrl(*this, I, info, o, in) ||
              decode_warp(*this, I, info, o, in) || decode_tensor(*this, I, info, o, in);
    if (!ok) throw Unsupported("the simulator does not implement `" + o.base + "`");
    if (!I.fn) throw Unsupported("no handler");
    note_registers(in, o, info);
    note_provenance(in, o, info);
    // mov.b32 %f1, %r1 and the like only rename bits (registers have no type in SASS): nvcc
    // writes one per __int_as_float, and ptxas drops them all.
    if (o.base == "mov" && in.ops.size() == 2 && in.ops[0].kind == ptx::Operand::Kind::ident &&
        in.ops[1].kind == ptx::Operand::Kind::ident && in.ops[0].name2.empty() &&
        in.ops[1].name2.empty()) {
      const Sym* d = lookup(in.ops[0].name);
      const Sym* s = lookup(in.ops[1].name);
      info.pun = d && s && d->k == Sym::K::reg && s->k == Sym::K::reg && d->fp != s->fp;
    }
  } catch (const Unsupported& e) {
    int16_t g = I.guard;
    uint32_t gx = I.guard_xor;
    I = Inst{};
    I.guard = g;
    I.guard_xor = gx;
    I.fn = h_unsupported;
    info.note = e.what();
  }
  P.code.push_back(I);
  P.info.push_back(std::move(info));
}

void Decoder::note_provenance(const ptx::Instr& in, const Opc& o, InstInfo& info) {
  using K = ptx::Operand::Kind;
  auto of_name = [&](const std::string& name) -> std::optional<Prov> {
    if (auto it = shared_index_.find(name); it != shared_index_.end())
      return Prov{Prov::K::shared, uint32_t(it->second), 0};
    if (const Sym* s = lookup(name)) {
      if (s->k == Sym::K::frame) return Prov{Prov::K::frame, s->idx, s->idx + s->size};
      if (s->k == Sym::K::reg) {
        auto it = prov_.find(s->idx);
        if (it != prov_.end() && it->second.k != Prov::K::none && it->second.k != Prov::K::mixed)
          return it->second;
      }
    }
    return std::nullopt;
  };
  // A memory access: name the variable its address came from.
  for (auto& op : in.ops) {
    if (op.kind != K::addr || op.name.empty()) continue;
    if (auto p = of_name(op.name)) {
      if (p->k == Prov::K::shared) {
        info.shared_sym = int16_t(p->lo);
      } else if (p->k == Prov::K::local_array) {
        info.local_lo = p->lo;
        info.local_hi = p->hi;
        info.local_frame = funcs_[cur_].frame_row;
      }
    }
    break;
  }
  if (info.defs.empty() || (info.defs[0] & kPredRow)) return;
  // The value written: the address of a variable, when every traced source agrees.
  static const char* const kKeeps[] = {"mov", "cvta", "add", "sub", "mad", "cvt"};
  bool keeps = false;
  for (const char* b : kKeeps) keeps |= o.base == b;
  Prov out;
  if (keeps) {
    std::optional<Prov> src;
    bool clash = false;
    int64_t imm = 0;
    bool has_imm = false, has_reg = false;
    for (size_t i = 1; i < in.ops.size(); ++i) {
      const ptx::Operand& op = in.ops[i];
      if (op.kind == K::integer) {
        imm = int64_t(op.bits), has_imm = true;
        continue;
      }
      if (op.kind != K::ident) continue;
      auto p = of_name(op.name);
      if (!p) {
        has_reg = true;
        continue;
      }
      if (p->k == Prov::K::frame && op.offset) p->lo += uint32_t(op.offset);
      if (src && !(*src == *p)) clash = true;
      src = p;
    }
    if (src && !clash) {
      out = *src;
      if (out.k == Prov::K::frame) {
        // The frame's address (mov %SPL, __local_depot) plus a constant is where one of its
        // local arrays starts (add.u64 %rd, %SPL, 128); anything else loses the trail.
        if (o.base == "add" && has_imm && !has_reg)
          out.k = Prov::K::local_array, out.lo += uint32_t(imm);
        else if (o.base == "mov" || o.base == "cvta")
          out.k = Prov::K::frame;
        else
          out = Prov{};
        if (out.k == Prov::K::local_array) local_starts_[cur_].insert(out.lo);
      } else if (out.k == Prov::K::shared && P.shared_syms[out.lo].dynamic) {
        out = Prov{}; // extern __shared__: the launch sets its size, checked against that
      }
    }
  }
  auto [it, fresh] = prov_.try_emplace(info.defs[0], out);
  if (!fresh && !(it->second == out)) it->second.k = Prov::K::mixed;
}

// A local array runs from where it starts to where the next one in its frame does.
void Decoder::finish_local_arrays() {
  for (size_t f = 0; f < funcs_.size(); ++f) {
    if (funcs_[f].entry_pc == kNoPc) continue;
    for (uint32_t pc = funcs_[f].entry_pc; pc < funcs_[f].end_pc; ++pc) {
      InstInfo& info = P.info[pc];
      if (info.local_frame == kNoRow) continue;
      auto next = local_starts_[f].upper_bound(info.local_lo);
      if (next != local_starts_[f].end()) info.local_hi = std::min(info.local_hi, *next);
    }
  }
}

void Decoder::finish_frames() {
  bool any_rec = false;
  for (auto& f : funcs_) {
    if (f.recursive) {
      any_rec = true;
      f.frame_size = uint32_t(align_up(f.frame_size, 8));
      f.save_offset = f.frame_size;
      f.frame_size += (f.row_hi - f.row_lo) * 8 + (f.pred_hi - f.pred_lo);
    }
    f.frame_size = uint32_t(align_up(std::max(f.frame_size, 0u), 16));
  }
  // Stack need along the deepest acyclic call chain.
  std::vector<int> state(funcs_.size(), 0);
  std::vector<uint64_t> need(funcs_.size(), 0);
  std::vector<int> depth(funcs_.size(), 1);
  std::function<void(uint32_t)> dfs = [&](uint32_t f) {
    if (state[f]) return;
    state[f] = 1;
    uint64_t best = 0;
    int bd = 0;
    for (auto c : callees_[f]) {
      if (state[c] == 1) continue; // a cycle: handled by the recursion allowance
      dfs(c);
      best = std::max(best, need[c]);
      bd = std::max(bd, depth[c]);
    }
    need[f] = funcs_[f].frame_size + best;
    depth[f] = 1 + bd;
    state[f] = 2;
  };
  dfs(0);
  P.local_per_thread = uint32_t(align_up(std::max<uint64_t>(need[0], 16), 16));
  P.max_depth = depth[0] + 1;
  if (any_rec) {
    P.local_per_thread = std::max<uint32_t>(P.local_per_thread, 8192);
    P.max_depth = 256;
  }
}

} // namespace

const Program* get_program(ModuleImage& m, const std::string& kernel, std::string& why) {
  std::lock_guard lk(m.mu);
  if (!m.error.empty()) {
    why = "the simulator could not read the PTX (line " + std::to_string(m.error_line) +
          "): " + m.error;
    return nullptr;
  }
  auto it = m.programs.find(kernel);
  if (it != m.programs.end()) return it->second.get();
  static std::atomic<uint64_t> next_uid{1};
  auto p = std::make_unique<Program>();
  p->uid = next_uid.fetch_add(1);
  try {
    Decoder d(*p, m);
    if (!d.run(kernel, why)) return nullptr;
  } catch (const std::exception& e) {
    why = std::string("the simulator could not decode kernel ") + kernel + ": " + e.what();
    return nullptr;
  }
  const Program* r = p.get();
  m.programs[kernel] = std::move(p);
  return r;
}

} // namespace wb::sim
