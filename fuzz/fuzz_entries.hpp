// The fuzz targets' entry points, shared by the libFuzzer executables (fuzz_*.cpp, clang only,
// -DWARPBOOK_FUZZ=ON) and by the corpus replay test (tests/unit/fuzz_replay_test.cpp, any
// compiler), so CI replays every corpus file through exactly the code the fuzzers ran.
//
// Each entry point must return normally for every input: a parse error is an answer, not a
// failure. A crash, a sanitizer report, an uncaught exception or a hang is a bug to fix.
#pragma once
#include "core/backend/sim/ptx_parse.hpp"
#include "core/catalog.hpp"
#include "core/expr.hpp"
#include "core/generate.hpp"
#include "core/puzzle.hpp"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

namespace wb::fuzz {

// PTX text -> syntax tree (the simulator's parser, app/core/backend/sim/ptx_parse.cpp).
inline int ptx(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  sim::ptx::Module m;
  sim::ptx::ParseError err;
  if (!sim::ptx::parse_module(text, m, err) && err.line < 0) std::abort();
  for (auto& f : m.funcs)
    if (f.instrs.size() > f.body.size()) std::abort(); // every instruction is a statement
  return 0;
}

// A size expression: parse, list its names, evaluate with the names bound to awkward values
// (0, -1, 1, INT64_MAX, INT64_MIN by a hash of the name); also the generator grammar around it.
inline int expr(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    Expr e = Expr::parse(text);
    Env env;
    static const int64_t vals[] = {0, -1, 1, 7, 1 << 20, INT64_MAX, INT64_MIN, 256};
    for (auto& n : e.names()) env[n] = vals[std::hash<std::string>{}(n) % 8];
    try {
      (void)e.eval(env);
    } catch (const ExprError&) {
    }
    env.clear();
    for (auto& n : e.names()) env[n] = 3;
    try {
      (void)e.eval(env);
    } catch (const ExprError&) {
    }
  } catch (const ExprError& e) {
    if (e.column < 0) std::abort();
  }
  try {
    (void)Generator::parse(text);
  } catch (const ExprError&) {
  }
  return 0;
}

// A puzzle folder holding `data` as puzzle.toml (with the four files it names present), loaded
// and validated; the same text is also loaded as a lesson.md (front matter + Markdown).
inline int puzzle(const uint8_t* data, size_t size) {
  static fs::path root = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/warpbook-fuzz-XXXXXX";
    if (!mkdtemp(tmpl.data())) std::abort();
    fs::path r = tmpl;
    fs::create_directories(r / "puzzles" / "01-fuzz");
    fs::create_directories(r / "lessons" / "0001-fuzz");
    for (auto f : {"README.md", "starter.cu", "reference.cu", "hints.md"})
      std::ofstream(r / "puzzles" / "01-fuzz" / f) << "x\n";
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(root, ec);
    });
    return r;
  }();
  {
    std::ofstream(root / "puzzles" / "01-fuzz" / "puzzle.toml", std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), std::streamsize(size));
    std::ofstream(root / "lessons" / "0001-fuzz" / "lesson.md", std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  }
  std::vector<LoadError> errors;
  auto p = load_puzzle(root / "puzzles" / "01-fuzz", root / "solutions", errors);
  if (p) {
    // What the checker does first with a loaded puzzle: sizes of every case.
    for (auto& c : p->cases) {
      Env env = p->env(c);
      for (auto& b : p->buffers) try {
          (void)b.count.eval(env);
        } catch (const ExprError&) {
        }
    }
  } else if (errors.empty()) {
    std::abort(); // refused without saying why
  }
  for (auto& e : errors) (void)e.str();
  errors.clear();
  auto l = load_lesson(root / "lessons" / "0001-fuzz", errors);
  if (!l && errors.empty()) std::abort();
  return 0;
}

} // namespace wb::fuzz
