#include "expr.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <limits>

namespace wb {

struct Expr::Node {
  enum class Kind { number, name, neg, add, sub, mul, div, mod, cdiv, min, max } kind;
  int64_t value = 0;
  std::string name;
  int column = 0;
  std::shared_ptr<const Node> a, b;
};

namespace {

using NodeP = std::shared_ptr<const Expr::Node>;
using K = Expr::Node::Kind;

class Parser {
public:
  explicit Parser(std::string_view s) : s_(s) {}

  NodeP parse() {
    NodeP n = sum();
    skip();
    if (i_ < s_.size()) fail(fmt::format("unexpected '{}'", s_[i_]));
    return n;
  }

private:
  std::string_view s_;
  size_t i_ = 0;
  int depth_ = 0;

  [[noreturn]] void fail(const std::string& msg) const {
    throw ExprError(fmt::format("{} at column {} of \"{}\"", msg, i_ + 1, s_), int(i_ + 1));
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  static NodeP make(K k, NodeP a, NodeP b, int col) {
    auto n = std::make_shared<Expr::Node>();
    n->kind = k;
    n->a = std::move(a);
    n->b = std::move(b);
    n->column = col;
    return n;
  }
  NodeP sum() {
    NodeP l = product();
    for (;;) {
      skip();
      int col = int(i_ + 1);
      if (eat('+'))
        l = make(K::add, l, product(), col);
      else if (eat('-'))
        l = make(K::sub, l, product(), col);
      else
        return l;
    }
  }
  NodeP product() {
    NodeP l = unary();
    for (;;) {
      skip();
      int col = int(i_ + 1);
      if (eat('*'))
        l = make(K::mul, l, unary(), col);
      else if (eat('/'))
        l = make(K::div, l, unary(), col);
      else if (eat('%'))
        l = make(K::mod, l, unary(), col);
      else
        return l;
    }
  }
  NodeP unary() {
    skip();
    int col = int(i_ + 1);
    // "- - - ... 1" recurses here, not through primary(): count it too (it overflowed the stack;
    // fuzz/corpus/expr/regress-unary-minus-chain keeps the input).
    if (++depth_ > 200) fail("expression nested too deeply");
    struct Depth {
      int& d;
      ~Depth() { --d; }
    } guard{depth_};
    if (eat('-')) return make(K::neg, unary(), nullptr, col);
    if (eat('+')) return unary();
    return primary();
  }
  NodeP primary() {
    skip();
    if (++depth_ > 200) fail("expression nested too deeply");
    struct Depth {
      int& d;
      ~Depth() { --d; }
    } guard{depth_};
    if (i_ >= s_.size()) fail("expected a number, a name or '('");
    int col = int(i_ + 1);
    char c = s_[i_];
    if (c == '(') {
      ++i_;
      NodeP n = sum();
      if (!eat(')')) fail("expected ')'");
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (i_ < s_.size() &&
             (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) {
        if (s_[i_] != '_') {
          int d = s_[i_] - '0';
          if (v > (std::numeric_limits<int64_t>::max() - d) / 10)
            fail("number too large for 64 bits");
          v = v * 10 + d;
        }
        ++i_;
      }
      if (i_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.'))
        fail(fmt::format("unexpected '{}' after a number (sizes are integers)", s_[i_]));
      auto n = std::make_shared<Expr::Node>();
      n->kind = K::number;
      n->value = v;
      n->column = col;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
        ++i_;
      std::string name(s_.substr(start, i_ - start));
      skip();
      if (i_ < s_.size() && s_[i_] == '(') {
        K k;
        if (name == "cdiv")
          k = K::cdiv;
        else if (name == "min")
          k = K::min;
        else if (name == "max")
          k = K::max;
        else {
          i_ = start;
          fail(fmt::format("unknown function '{}' (there are cdiv, min and max)", name));
        }
        ++i_;
        NodeP a = sum();
        if (!eat(',')) fail(fmt::format("{} takes two arguments: expected ','", name));
        NodeP b = sum();
        if (!eat(')')) fail(fmt::format("{} takes two arguments: expected ')'", name));
        return make(k, a, b, col);
      }
      auto n = std::make_shared<Expr::Node>();
      n->kind = K::name;
      n->name = std::move(name);
      n->column = col;
      return n;
    }
    fail(fmt::format("unexpected '{}'", c));
  }
};

int64_t eval_node(const Expr::Node& n, const Env& env, const std::string& text) {
  auto err = [&](const std::string& m) -> ExprError {
    return ExprError(fmt::format("{} in \"{}\"", m, text), n.column);
  };
  int64_t r = 0;
  auto checked = [&](bool overflow) {
    if (overflow) throw err("64-bit overflow");
    return r;
  };
  switch (n.kind) {
  case K::number:
    return n.value;
  case K::name: {
    auto it = env.find(n.name);
    if (it == env.end()) throw err(fmt::format("unknown size '{}'", n.name));
    return it->second;
  }
  case K::neg: {
    int64_t a = eval_node(*n.a, env, text);
    return checked(__builtin_sub_overflow(int64_t(0), a, &r));
  }
  default:
    break;
  }
  int64_t a = eval_node(*n.a, env, text), b = eval_node(*n.b, env, text);
  switch (n.kind) {
  case K::add:
    return checked(__builtin_add_overflow(a, b, &r));
  case K::sub:
    return checked(__builtin_sub_overflow(a, b, &r));
  case K::mul:
    return checked(__builtin_mul_overflow(a, b, &r));
  case K::div:
  case K::mod:
  case K::cdiv:
    if (b == 0) throw err("division by zero");
    if (a == std::numeric_limits<int64_t>::min() && b == -1) throw err("64-bit overflow");
    if (n.kind == K::div) return a / b;
    if (n.kind == K::mod) return a % b;
    {
      // Ceiling division, right for every sign.
      int64_t q = a / b;
      if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
      return q;
    }
  case K::min:
    return std::min(a, b);
  case K::max:
    return std::max(a, b);
  default:
    throw err("bad expression node");
  }
}

void collect(const Expr::Node& n, std::vector<std::string>& out) {
  if (n.kind == K::name) out.push_back(n.name);
  if (n.a) collect(*n.a, out);
  if (n.b) collect(*n.b, out);
}

} // namespace

// Evaluation, names() and the tree's destructor recurse over the tree: a bounded text bounds the
// depth of "1 + 1 + ... + 1" as well as of nesting.
constexpr size_t kMaxExprLength = 4096;

Expr Expr::parse(std::string_view text) {
  if (text.size() > kMaxExprLength)
    throw ExprError(fmt::format("size expression is {} characters long: at most {}", text.size(),
                                kMaxExprLength),
                    1);
  Expr e;
  e.text_ = std::string(text);
  e.root_ = Parser(text).parse();
  return e;
}

Expr Expr::constant(int64_t v) {
  Expr e;
  e.text_ = std::to_string(v);
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::number;
  n->value = v;
  e.root_ = n;
  return e;
}

int64_t Expr::eval(const Env& env) const {
  if (!root_) throw ExprError("empty expression", 0);
  return eval_node(*root_, env, text_);
}

std::vector<std::string> Expr::names() const {
  std::vector<std::string> out;
  if (root_) collect(*root_, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace wb
