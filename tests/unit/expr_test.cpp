#include "core/expr.hpp"

#include <doctest/doctest.h>

using namespace wb;

TEST_CASE("size expressions evaluate with C integer semantics") {
  Env env{{"n", 65537}, {"BLOCK", 256}, {"rows", 3}, {"cols", -7}};
  CHECK(Expr::parse("cdiv(n, BLOCK)").eval(env) == 257);
  CHECK(Expr::parse("n / BLOCK").eval(env) == 256);
  CHECK(Expr::parse("n % BLOCK").eval(env) == 1);
  CHECK(Expr::parse("12 * n").eval(env) == 786444);
  CHECK(Expr::parse("-rows + 2 * (rows - 1)").eval(env) == 1);
  CHECK(Expr::parse("min(rows, cols)").eval(env) == -7);
  CHECK(Expr::parse("max(rows, cols)").eval(env) == 3);
  CHECK(Expr::parse("cdiv(cols, 2)").eval(env) == -3); // ceiling of -3.5
  CHECK(Expr::parse("cdiv(7, 2)").eval(env) == 4);
  CHECK(Expr::parse("cdiv(8, 2)").eval(env) == 4);
  CHECK(Expr::parse("1_000_000").eval(env) == 1000000);
  CHECK(Expr::parse("2 + 3 * 4").eval(env) == 14);
  CHECK(Expr::parse("(2 + 3) * 4").eval(env) == 20);
  CHECK(Expr::parse("4294967296 * 4").eval(env) == 17179869184LL); // 64-bit, no wrap at 2^32
  CHECK(Expr::parse("rows*cols").names() == std::vector<std::string>{"cols", "rows"});
}

TEST_CASE("bad size expressions fail with a column") {
  auto col = [](const char* s) {
    try {
      Expr::parse(s);
    } catch (const ExprError& e) {
      return e.column;
    }
    return -1;
  };
  CHECK(col("n +") == 4);
  CHECK(col("cdiv(n)") > 0);
  CHECK(col("foo(n, 2)") == 1);
  CHECK(col("(n") == 3);
  CHECK(col("n $ 2") == 3);
  CHECK(col("1.5 * n") > 0);
  CHECK(col("99999999999999999999") > 0);
  CHECK(col("") == 1);
  CHECK(col(std::string(500, '(').c_str()) > 0); // nesting bound, no stack overflow
}

TEST_CASE("evaluation errors: unknown names, division by zero, overflow") {
  Env env{{"n", 4}, {"z", 0}};
  CHECK_THROWS_WITH_AS(Expr::parse("m * 2").eval(env), doctest::Contains("unknown size 'm'"),
                       ExprError);
  CHECK_THROWS_WITH_AS(Expr::parse("n / z").eval(env), doctest::Contains("division by zero"),
                       ExprError);
  CHECK_THROWS_WITH_AS(Expr::parse("cdiv(n, z)").eval(env), doctest::Contains("division by zero"),
                       ExprError);
  CHECK_THROWS_WITH_AS(Expr::parse("n % z").eval(env), doctest::Contains("division by zero"),
                       ExprError);
  CHECK_THROWS_WITH_AS(Expr::parse("9223372036854775807 + n").eval(env),
                       doctest::Contains("overflow"), ExprError);
  CHECK_THROWS_WITH_AS(Expr::parse("4294967296 * 4294967296").eval(env),
                       doctest::Contains("overflow"), ExprError);
}
