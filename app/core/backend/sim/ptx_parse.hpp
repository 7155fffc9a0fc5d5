// PTX text -> a small syntax tree (module, functions, statements). Only syntax lives here; the
// meaning of opcodes and operands is decided once, in decode.cpp, so the interpreter never looks
// at a string. The grammar covered is what NVRTC emits (including inline-asm blocks and the
// debug sections that -lineinfo adds), plus the usual hand-written forms.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace wb::sim::ptx {

struct Operand {
  enum class Kind : uint8_t {
    ident,   // a register, special register, symbol or label: `name`
    integer, // an integer literal (already negated if written with '-')
    f32bits, // 0fXXXXXXXX
    f64bits, // 0dXXXXXXXXXXXXXXXX
    decimal, // a decimal floating literal such as 1.5
    addr,    // [name + offset] or [offset]; [name, {a, b}] keeps the vector in elems
    vec,     // {a, b, ...}
    list,    // (a, b, ...) in call
    sink,    // _
  };
  Kind kind = Kind::ident;
  bool neg = false;   // !%p (predicate negation)
  std::string name;   // ident: the name; addr: the base ("" for an absolute address)
  std::string name2;  // `%p|%q`: the second destination predicate
  int64_t offset = 0; // addr displacement; ident `sym+4`
  uint64_t bits = 0;  // integer / f32bits / f64bits value
  double dval = 0;    // decimal
  std::vector<Operand> elems;
};

struct Instr {
  std::string opcode; // "ld.global.nc.v4.f32"
  std::string guard;  // "%p1" or ""
  bool guard_neg = false;
  std::vector<Operand> ops;
  int ptx_line = 0;
  int src_line = 0;      // learner line from .loc (0 when unknown)
  bool nounroll = false; // after `.pragma "nounroll";`: the loop it heads stays rolled in SASS
};

struct VarDecl {
  std::string space; // "global", "const", "shared", "local", "param", "reg"
  std::string type;  // "b8", "u32", "f32", "pred", ...
  int align = 0;     // 0: natural
  int vec = 1;       // .v2 / .v4
  std::string name;
  int64_t count = -1; // array elements (product of dims); -1 scalar; 0 for `[]` (extern)
  int range = -1;     // .reg %r<N>: N names %r0..%r{N-1}
  bool is_extern = false;
  std::vector<Operand> init; // initialiser values, flattened
  int ptx_line = 0;
};

struct Stmt {
  enum class Kind : uint8_t { instr, label, decl, open, close } kind;
  int index = 0; // into Function::instrs / labels / decls
};

struct Function {
  std::string name;
  bool entry = false;
  bool has_body = false;
  std::vector<VarDecl> params;
  std::vector<VarDecl> rets;
  std::vector<Stmt> body;
  std::vector<Instr> instrs;
  std::vector<std::string> labels;
  std::vector<VarDecl> decls;
  int reqntid[3] = {0, 0, 0};
  int maxntid[3] = {0, 0, 0};
  int ptx_line = 0;
};

struct Module {
  std::string version, target;
  int address_size = 64;
  std::vector<VarDecl> globals; // .global / .const / .shared at module scope
  std::vector<Function> funcs;
  std::map<int, std::string> files;
};

struct ParseError {
  int line = 0;
  std::string message;
};

// Parses `text`. On failure returns false and fills `err` (line and message).
bool parse_module(const std::string& text, Module& out, ParseError& err);

// Parses one integer literal as PTX writes it (decimal, 0x hex, 0 octal, 0b binary, U suffix).
bool parse_int_literal(const std::string& s, uint64_t& v);

} // namespace wb::sim::ptx
