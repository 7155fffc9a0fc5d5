// Size expressions: 64-bit integer arithmetic over names, as puzzle.toml writes them
// ("cdiv(n, BLOCK)", "rows * cols + 1"). Operators + - * / % (C semantics), unary minus,
// parentheses, and the functions cdiv(a, b), min(a, b), max(a, b).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

using Env = std::map<std::string, int64_t, std::less<>>;

// A parse or evaluation error; `column` is 1-based within the expression text (0 when unknown).
struct ExprError : std::runtime_error {
  int column = 0;
  ExprError(const std::string& what, int col) : std::runtime_error(what), column(col) {}
};

class Expr {
public:
  Expr() = default;
  static Expr parse(std::string_view text); // throws ExprError
  static Expr constant(int64_t v);
  // Throws ExprError on an unknown name, division by zero or 64-bit overflow.
  int64_t eval(const Env& env) const;
  std::vector<std::string> names() const; // every name it refers to, sorted, unique
  const std::string& text() const { return text_; }
  bool empty() const { return !root_; }

  struct Node;

private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

} // namespace wb
