// PTX lexer and recursive-descent parser. See ptx_parse.hpp.
#include "ptx_parse.hpp"

#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace wb::sim::ptx {
namespace {

struct Tok {
  enum class K : uint8_t { ident, number, string, punct, end } k;
  std::string s;
  int line;
};

bool ident_start(char c) {
  return std::isalpha((unsigned char)c) || c == '_' || c == '$' || c == '%' || c == '.';
}
bool ident_char(char c) {
  return std::isalnum((unsigned char)c) || c == '_' || c == '$' || c == '%' || c == '.';
}

std::vector<Tok> lex(const std::string& t) {
  std::vector<Tok> out;
  size_t i = 0, n = t.size();
  int line = 1;
  while (i < n) {
    char c = t[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace((unsigned char)c)) {
      ++i;
    } else if (c == '/' && i + 1 < n && t[i + 1] == '/') {
      while (i < n && t[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && t[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(t[i] == '*' && t[i + 1] == '/')) {
        if (t[i] == '\n') ++line;
        ++i;
      }
      i += 2;
    } else if (c == '"') {
      size_t j = i + 1;
      std::string s;
      while (j < n && t[j] != '"') {
        if (t[j] == '\\' && j + 1 < n) ++j;
        s += t[j++];
      }
      out.push_back({Tok::K::string, s, line});
      i = j + 1;
    } else if (std::isdigit((unsigned char)c)) {
      size_t j = i;
      while (j < n && (std::isalnum((unsigned char)t[j]) || t[j] == '.')) {
        // 1e-5: a sign right after an exponent marker of a decimal literal
        if ((t[j] == 'e' || t[j] == 'E') && j + 1 < n && (t[j + 1] == '-' || t[j + 1] == '+') &&
            t.compare(i, 2, "0x") != 0 && t.compare(i, 2, "0f") != 0 && t.compare(i, 2, "0d") != 0)
          j += 2;
        else
          ++j;
      }
      out.push_back({Tok::K::number, t.substr(i, j - i), line});
      i = j;
    } else if (ident_start(c)) {
      size_t j = i;
      while (j < n) {
        if (ident_char(t[j]))
          ++j;
        else if (t[j] == ':' && j + 1 < n && t[j + 1] == ':')
          j += 2; // .shared::cta, .L2::128B
        else
          break;
      }
      std::string id = t.substr(i, j - i);
      if (id[0] == '.' && id.find('.', 1) != std::string::npos) {
        // `.reg.b16` (inline asm writes directives without spaces): one token per part
        size_t a = 0;
        while (a < id.size()) {
          size_t b = id.find('.', a + 1);
          if (b == std::string::npos) b = id.size();
          out.push_back({Tok::K::ident, id.substr(a, b - a), line});
          a = b;
        }
      } else {
        out.push_back({Tok::K::ident, std::move(id), line});
      }
      i = j;
    } else {
      out.push_back({Tok::K::punct, std::string(1, c), line});
      ++i;
    }
  }
  out.push_back({Tok::K::end, "", line});
  return out;
}

struct Fail : std::runtime_error {
  int line;
  Fail(int l, const std::string& m) : std::runtime_error(m), line(l) {}
};

class Parser {
public:
  explicit Parser(std::vector<Tok> toks) : t_(std::move(toks)) {}

  void module(Module& m) {
    while (!at_end()) {
      const Tok& k = peek();
      if (k.k == Tok::K::punct && k.s == ";") {
        ++p_;
        continue;
      }
      if (k.k != Tok::K::ident) fail("unexpected `" + k.s + "` at module scope");
      if (k.s == ".version") {
        m.version = rest_of_line();
      } else if (k.s == ".target") {
        m.target = rest_of_line();
      } else if (k.s == ".address_size") {
        std::string v = rest_of_line();
        m.address_size = std::atoi(v.c_str());
      } else if (k.s == ".file") {
        int line = k.line;
        ++p_;
        int idx = std::atoi(take().s.c_str());
        std::string name = peek().k == Tok::K::string ? take().s : "";
        while (!at_end() && peek().line == line && !(peek().k == Tok::K::punct && peek().s == ";"))
          ++p_;
        m.files[idx] = name;
      } else if (k.s == ".section") {
        ++p_;
        while (!at_end() && !is_punct("{")) ++p_;
        skip_braces();
      } else if (k.s == ".pragma") {
        skip_to_semicolon();
      } else {
        top_level_decl(m);
      }
    }
  }

private:
  std::vector<Tok> t_;
  size_t p_ = 0;
  int cur_src_line_ = 0;
  // A line of another file (the printf guard, a header) -> the learner's line it was last inlined
  // into: a .loc names only the innermost inlined_at, so chains resolve through this.
  std::map<std::pair<int, int>, int> inlined_into_;
  bool nounroll_next_ = false;
  int operand_depth_ = 0;

  // p_ never reads past the final `end` token, even where a loop stepped over it (fuzzing).
  bool at_end() const { return p_ + 1 >= t_.size() || t_[p_].k == Tok::K::end; }
  const Tok& peek(size_t ahead = 0) const { return t_[std::min(p_ + ahead, t_.size() - 1)]; }
  const Tok& take() {
    const Tok& k = peek();
    if (!at_end()) ++p_;
    return k;
  }
  [[noreturn]] void fail(const std::string& msg) const { throw Fail(peek().line, msg); }
  bool is_punct(const char* s) const { return peek().k == Tok::K::punct && peek().s == s; }
  void expect(const char* s) {
    if (!is_punct(s)) fail(std::string("expected `") + s + "`, found `" + peek().s + "`");
    ++p_;
  }
  std::string rest_of_line() {
    int line = take().line;
    std::string s;
    while (!at_end() && peek().line == line) {
      if (!s.empty()) s += ' ';
      s += take().s;
    }
    return s;
  }
  void skip_to_semicolon() {
    while (!at_end() && !is_punct(";")) ++p_;
    if (!at_end()) ++p_;
  }
  void skip_braces() {
    int depth = 0;
    do {
      if (is_punct("{"))
        ++depth;
      else if (is_punct("}"))
        --depth;
      if (!at_end()) ++p_;
    } while (!at_end() && depth > 0);
  }

  static std::string strip_dot(const std::string& s) {
    return s.size() && s[0] == '.' ? s.substr(1) : s;
  }

  static bool is_type(const std::string& s) {
    static const char* types[] = {"b8",  "b16",  "b32",    "b64",  "b128", "u8",   "u16",   "u32",
                                  "u64", "s8",   "s16",    "s32",  "s64",  "f16",  "f16x2", "f32",
                                  "f64", "bf16", "bf16x2", "pred", "e4m3", "e5m2", "tf32"};
    for (auto* t : types)
      if (s == t) return true;
    return false;
  }

  // `.global .align 4 .b8 name[16] = {...};` and friends; `space` already known.
  VarDecl var_decl(const std::string& space, bool is_extern) {
    VarDecl v;
    v.space = space;
    v.is_extern = is_extern;
    v.ptx_line = peek().line;
    while (peek().k == Tok::K::ident && peek().s[0] == '.') {
      std::string d = strip_dot(take().s);
      if (d == "align")
        v.align = std::atoi(take().s.c_str());
      else if (d == "v2")
        v.vec = 2;
      else if (d == "v4")
        v.vec = 4;
      else if (d == "v8")
        v.vec = 8;
      else if (is_type(d))
        v.type = d;
      else if (d == "attribute" && is_punct("(")) { // .attribute(.managed)
        while (!at_end() && !is_punct(")")) ++p_;
        if (!at_end()) ++p_;
      } else if (d == "ptr" || d == "global" || d == "shared" || d == "const" || d == "local")
        ; // kernel pointer attributes: .ptr .global .align N
      else if (d == "texref" || d == "samplerref" || d == "surfref")
        v.type = d;
      else
        fail("unknown declaration modifier ." + d);
    }
    if (peek().k != Tok::K::ident) fail("expected a name in a ." + space + " declaration");
    v.name = take().s;
    if (is_punct("<")) { // .reg %r<10>
      ++p_;
      v.range = std::atoi(take().s.c_str());
      expect(">");
    }
    while (is_punct("[")) {
      ++p_;
      int64_t n = 0;
      if (!is_punct("]")) n = std::strtoll(take().s.c_str(), nullptr, 0);
      expect("]");
      v.count = v.count < 0 ? n : v.count * n;
    }
    if (is_punct("=")) {
      ++p_;
      init_values(v.init);
    }
    return v;
  }

  void init_values(std::vector<Operand>& out) {
    if (is_punct("{")) {
      ++p_;
      while (!is_punct("}")) {
        init_values(out);
        if (is_punct(",")) ++p_;
      }
      ++p_;
      return;
    }
    if (peek().k == Tok::K::ident && (peek().s == "generic" || peek().s == "mask")) {
      // generic(sym) -> the symbol's generic address
      ++p_;
      expect("(");
      Operand o = operand();
      expect(")");
      out.push_back(o);
      return;
    }
    out.push_back(operand());
  }

  void top_level_decl(Module& m) {
    bool is_extern = false, entry = false, func = false;
    std::string space;
    int line = peek().line;
    while (peek().k == Tok::K::ident && peek().s[0] == '.') {
      const std::string& s = peek().s;
      if (s == ".visible" || s == ".weak" || s == ".common")
        ++p_;
      else if (s == ".extern") {
        is_extern = true;
        ++p_;
      } else if (s == ".entry") {
        entry = true;
        ++p_;
        break;
      } else if (s == ".func") {
        func = true;
        ++p_;
        break;
      } else if (s == ".global" || s == ".const" || s == ".shared" || s == ".local") {
        space = strip_dot(take().s);
        break;
      } else {
        fail("unexpected directive " + s);
      }
    }
    if (!space.empty()) {
      VarDecl v = var_decl(space, is_extern);
      skip_to_semicolon();
      m.globals.push_back(std::move(v));
      return;
    }
    if (!entry && !func) fail("expected .entry, .func or a variable declaration");
    Function f;
    f.entry = entry;
    f.ptx_line = line;
    if (func && is_punct("(")) f.rets = param_list();
    f.name = take().s;
    if (is_punct("(")) f.params = param_list();
    // performance directives and .noreturn
    while (peek().k == Tok::K::ident && peek().s[0] == '.') {
      std::string d = strip_dot(take().s);
      int* dims = d == "reqntid" ? f.reqntid : d == "maxntid" ? f.maxntid : nullptr;
      int k = 0;
      while (peek().k == Tok::K::number || is_punct(",")) {
        if (is_punct(",")) {
          ++p_;
          continue;
        }
        int v = std::atoi(take().s.c_str());
        if (dims && k < 3) dims[k++] = v;
      }
    }
    if (is_punct(";")) {
      ++p_; // prototype only
    } else {
      f.has_body = true;
      body(f);
    }
    // A later definition replaces an earlier prototype.
    for (auto& g : m.funcs) {
      if (g.name == f.name) {
        if (f.has_body) g = std::move(f);
        return;
      }
    }
    m.funcs.push_back(std::move(f));
  }

  std::vector<VarDecl> param_list() {
    std::vector<VarDecl> ps;
    expect("(");
    while (!is_punct(")")) {
      if (peek().k != Tok::K::ident || (peek().s != ".param" && peek().s != ".reg"))
        fail("expected .param in a parameter list");
      std::string sp = strip_dot(take().s);
      ps.push_back(var_decl(sp, false));
      if (is_punct(",")) ++p_;
    }
    expect(")");
    return ps;
  }

  void loc_directive() {
    int line = take().line;
    std::vector<std::string> w;
    while (!at_end() && peek().line == line) w.push_back(take().s);
    // .loc FILE LINE COL [, function_name X, inlined_at FILE LINE COL]
    if (w.size() < 2) return;
    int file = std::atoi(w[0].c_str()), l = std::atoi(w[1].c_str());
    if (file == 1) {
      if (l > 0) cur_src_line_ = l;
      return;
    }
    for (size_t i = 0; i + 2 < w.size(); ++i) {
      if (w[i] != "inlined_at") continue;
      const int f = std::atoi(w[i + 1].c_str()), il = std::atoi(w[i + 2].c_str());
      if (f == 1) {
        if (il > 0) cur_src_line_ = il;
      } else if (auto it = inlined_into_.find({f, il}); it != inlined_into_.end()) {
        cur_src_line_ = it->second; // inlined into code that was itself inlined into the learner's
      } else {
        return;
      }
      inlined_into_[{file, l}] = cur_src_line_;
      return;
    }
  }

  void body(Function& f) {
    expect("{");
    f.body.push_back({Stmt::Kind::open, 0});
    int depth = 1;
    while (depth > 0) {
      if (at_end()) fail("unexpected end of file inside " + f.name);
      const Tok& k = peek();
      if (k.k == Tok::K::punct) {
        if (k.s == "{") {
          ++p_;
          ++depth;
          f.body.push_back({Stmt::Kind::open, 0});
          continue;
        }
        if (k.s == "}") {
          ++p_;
          --depth;
          f.body.push_back({Stmt::Kind::close, 0});
          continue;
        }
        if (k.s == ";") {
          ++p_;
          continue;
        }
        if (k.s == "@") {
          instruction(f);
          continue;
        }
        fail("unexpected `" + k.s + "`");
      }
      if (k.k != Tok::K::ident) fail("unexpected `" + k.s + "`");
      if (peek(1).k == Tok::K::punct && peek(1).s == ":" && k.s[0] != '.') {
        f.labels.push_back(k.s);
        f.body.push_back({Stmt::Kind::label, int(f.labels.size() - 1)});
        p_ += 2;
        continue;
      }
      if (k.s[0] == '.') {
        if (k.s == ".loc") {
          loc_directive();
        } else if (k.s == ".reg" || k.s == ".local" || k.s == ".shared" || k.s == ".param" ||
                   k.s == ".const" || k.s == ".global") {
          std::string sp = strip_dot(take().s);
          VarDecl v = var_decl(sp, false);
          // `.reg .f16 low, high;`: more names of the same type
          std::vector<VarDecl> more;
          while (is_punct(",")) {
            ++p_;
            VarDecl w = v;
            w.name = take().s;
            w.range = -1;
            if (is_punct("<")) {
              ++p_;
              w.range = std::atoi(take().s.c_str());
              expect(">");
            }
            more.push_back(w);
          }
          expect(";");
          f.decls.push_back(v);
          f.body.push_back({Stmt::Kind::decl, int(f.decls.size() - 1)});
          for (auto& w : more) {
            f.decls.push_back(w);
            f.body.push_back({Stmt::Kind::decl, int(f.decls.size() - 1)});
          }
        } else if (k.s == ".extern") { // .extern .shared .align 16 .b8 buf[];
          ++p_;
          std::string sp = strip_dot(take().s);
          VarDecl v = var_decl(sp, true);
          expect(";");
          f.decls.push_back(v);
          f.body.push_back({Stmt::Kind::decl, int(f.decls.size() - 1)});
        } else if (k.s == ".callprototype") { // the signature of an indirect call: see `call`
          skip_to_semicolon();
        } else if (k.s == ".pragma") {
          for (size_t q = p_; q < t_.size() && !(t_[q].k == Tok::K::punct && t_[q].s == ";"); ++q)
            if (t_[q].s.find("nounroll") != std::string::npos) nounroll_next_ = true;
          skip_to_semicolon();
        } else {
          fail("unknown directive " + k.s + " in a function body");
        }
        continue;
      }
      instruction(f);
    }
  }

  void instruction(Function& f) {
    Instr in;
    in.ptx_line = peek().line;
    in.src_line = cur_src_line_;
    in.nounroll = std::exchange(nounroll_next_, false);
    if (is_punct("@")) {
      ++p_;
      if (is_punct("!")) {
        ++p_;
        in.guard_neg = true;
      }
      in.guard = take().s;
    }
    if (peek().k != Tok::K::ident) fail("expected an opcode, found `" + peek().s + "`");
    in.opcode = take().s;
    while (!is_punct(";")) {
      if (at_end()) fail("missing `;` after " + in.opcode);
      in.ops.push_back(operand());
      if (is_punct(","))
        ++p_;
      else if (!is_punct(";"))
        fail("unexpected `" + peek().s + "` in the operands of " + in.opcode);
    }
    ++p_;
    f.instrs.push_back(std::move(in));
    f.body.push_back({Stmt::Kind::instr, int(f.instrs.size() - 1)});
  }

  Operand number(bool negate) {
    const Tok& k = take();
    Operand o;
    const std::string& s = k.s;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F')) {
      o.kind = Operand::Kind::f32bits;
      o.bits = std::strtoull(s.c_str() + 2, nullptr, 16);
      if (negate) o.bits ^= 0x80000000u;
    } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'd' || s[1] == 'D')) {
      o.kind = Operand::Kind::f64bits;
      o.bits = std::strtoull(s.c_str() + 2, nullptr, 16);
      if (negate) o.bits ^= 0x8000000000000000ull;
    } else if (s.find_first_of(".eE") != std::string::npos && s.compare(0, 2, "0x") != 0 &&
               s.compare(0, 2, "0X") != 0) {
      o.kind = Operand::Kind::decimal;
      o.dval = std::strtod(s.c_str(), nullptr);
      if (negate) o.dval = -o.dval;
    } else {
      o.kind = Operand::Kind::integer;
      uint64_t v;
      if (!parse_int_literal(s, v)) throw Fail(k.line, "bad number `" + s + "`");
      o.bits = negate ? uint64_t(0) - v : v;
    }
    return o;
  }

  Operand operand() {
    // `{{{{...` and `!!!!...` recurse here: bound the depth (fuzzing overflowed the stack).
    if (++operand_depth_ > 64) fail("operand nested too deeply");
    struct Depth {
      int& d;
      ~Depth() { --d; }
    } guard{operand_depth_};
    Operand o;
    if (is_punct("!")) {
      ++p_;
      o = operand();
      o.neg = !o.neg;
      return o;
    }
    if (is_punct("-")) {
      ++p_;
      return number(true);
    }
    if (peek().k == Tok::K::number) return number(false);
    if (is_punct("{") || is_punct("(")) {
      bool brace = is_punct("{");
      ++p_;
      o.kind = brace ? Operand::Kind::vec : Operand::Kind::list;
      while (!is_punct(brace ? "}" : ")")) {
        o.elems.push_back(operand());
        if (is_punct(",")) ++p_;
      }
      ++p_;
      return o;
    }
    if (is_punct("[")) {
      ++p_;
      o.kind = Operand::Kind::addr;
      if (peek().k == Tok::K::ident) o.name = take().s;
      if (is_punct(",")) { // [tensorMap, {c0, c1, ...}]: TMA's map and coordinates
        ++p_;
        o.elems.push_back(operand());
        if (!is_punct("]")) fail("expected `]` after a tensor's coordinates");
      }
      while (!is_punct("]")) {
        bool minus = false;
        if (is_punct("+")) ++p_;
        if (is_punct("-")) {
          ++p_;
          minus = true;
        }
        if (peek().k != Tok::K::number) fail("bad address expression");
        Operand n = number(minus);
        o.offset += int64_t(n.bits);
      }
      ++p_;
      return o;
    }
    if (peek().k == Tok::K::ident) {
      o.kind = Operand::Kind::ident;
      o.name = take().s;
      if (o.name == "_") o.kind = Operand::Kind::sink;
      if (is_punct("|")) { // setp d|p
        ++p_;
        o.name2 = take().s;
      }
      if (is_punct("+") && peek(1).k == Tok::K::number) { // sym+4
        ++p_;
        o.offset = int64_t(number(false).bits);
      }
      return o;
    }
    fail("unexpected `" + peek().s + "` in an operand");
  }
};

} // namespace

bool parse_int_literal(const std::string& s0, uint64_t& v) {
  std::string s = s0;
  while (!s.empty() && (s.back() == 'U' || s.back() == 'u')) s.pop_back();
  if (s.empty()) return false;
  char* end = nullptr;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
    v = std::strtoull(s.c_str() + 2, &end, 2);
  else
    v = std::strtoull(s.c_str(), &end, 0); // 0x hex, 0 octal, decimal
  return end && *end == 0;
}

bool parse_module(const std::string& text, Module& out, ParseError& err) {
  try {
    Parser p(lex(text));
    p.module(out);
    return true;
  } catch (const Fail& f) {
    err.line = f.line;
    err.message = f.what();
    return false;
  }
}

} // namespace wb::sim::ptx
