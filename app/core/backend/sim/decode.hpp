// PTX syntax tree -> Program. The decoder resolves every register to a dense row index, every
// immediate to a constant row, every symbol to an address, and picks a handler function for each
// instruction, so the interpreter never touches a string. Handler families (ops_*.cpp) each
// provide a decode_* function that binds the opcodes they implement.
#pragma once
#include "machine.hpp"
#include "ptx_parse.hpp"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wb::sim {

// An instruction the simulator recognises but does not implement (or malformed operands).
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A parsed opcode: "ld.global.nc.v4.f32" -> base "ld", mods {global, nc, v4, f32}, types {f32}.
struct Opc {
  std::string text;
  std::string base;
  std::vector<std::string> mods;
  std::vector<Ty> types;
  explicit Opc(const std::string& s);
  bool has(std::string_view m) const;
  // The first of `names` present, or "".
  std::string_view one_of(std::initializer_list<std::string_view> names) const;
  Rnd rnd() const;      // .rn .rz .rm .rp (and the integer .rni... forms), .rna
  bool int_rnd() const; // .rni/.rzi/.rmi/.rpi
  Space space() const;  // state space (generic if none)
  int vec() const;      // .v2 / .v4 / .v8 -> 2 / 4 / 8, else 1
  Ty type(size_t i = 0) const { return i < types.size() ? types[i] : Ty::none; }
  Ty last_type() const { return types.empty() ? Ty::none : types.back(); }
  // Throws Unsupported when a modifier other than the listed ones, the types and harmless hints
  // (cache policy, memory ordering, scope, .aligned, .sync, ...) is present.
  void only(std::initializer_list<std::string_view> allowed) const;
};

// A module's variables in the simulated address space.
struct ModuleVar {
  std::string name, pretty;
  std::string space; // "global", "const", "shared"
  uint64_t addr = 0; // global/const: simulated address
  uint64_t size = 0;
  uint32_t align = 1, elem = 1;
  bool is_extern = false;
  std::vector<std::byte> init;
};

struct ModuleImage {
  ptx::Module ast;
  std::vector<ModuleVar> vars;
  std::map<std::string, size_t> var_index;
  std::string error; // parse error, when the PTX could not be read
  int error_line = 0;
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Program>> programs;
};

// Parses and lays out a module. Never throws; sets `error` on failure.
std::unique_ptr<ModuleImage> load_module(const std::string& ptx);
// Decodes (once, cached) the program for `kernel`; nullptr with `why` when there is no such entry.
const Program* get_program(ModuleImage& m, const std::string& kernel, std::string& why);

// What family decoders see.
class Dec {
public:
  Program& P;
  ModuleImage& M;
  explicit Dec(Program& p, ModuleImage& m) : P(p), M(m) {}
  virtual ~Dec() = default;

  // A register or an immediate converted to type t (float literals become t's bits).
  virtual uint32_t row(const ptx::Operand& o, Ty t) = 0;
  // A register used as a destination (must be a register).
  virtual uint32_t dst(const ptx::Operand& o) = 0;
  virtual bool is_pred_reg(const ptx::Operand& o) = 0;
  // Bytes of the register `o` names (8 for .b64/.u64/.s64/.f64); 0 when it is not a register.
  virtual int reg_bytes(const ptx::Operand& o) = 0;
  // A predicate register; `xr` receives ~0 when written `!%p`.
  virtual int16_t pred(const ptx::Operand& o, uint32_t* xr = nullptr) = 0;
  virtual int16_t pred_name(const std::string& name) = 0;
  virtual uint32_t const_row(uint64_t v) = 0;
  virtual uint32_t special_row(Special s) = 0;
  // The rows of a {a, b, ...} vector (a single register counts as a 1-vector); sinks get a
  // scratch row. Stored in P.lists; returns the offset there.
  virtual uint32_t vec_rows(const ptx::Operand& o, Ty t, int expect) = 0;
  virtual uint32_t indirect_row() const = 0;
  virtual uint32_t indirect_sites() const = 0;
  struct Addr {
    Space space = Space::generic;
    uint32_t base = kNoRow; // register row; kNoRow for an absolute address
    int64_t disp = 0;
  };
  // An address operand for an access in `declared` space (param addresses are resolved to a
  // kernel-parameter offset or a frame-relative local address).
  virtual Addr addr(const ptx::Operand& o, Space declared) = 0;
  // A symbol's address as a value (mov %rd, sym): kind of space and value or frame row.
  virtual bool symbol_value(const ptx::Operand& o, uint32_t& base_row, int64_t& value,
                            Space& sp) = 0;
  virtual uint32_t label_pc(const std::string& name) = 0; // resolved later (fixup)
  virtual uint32_t call_site(const ptx::Instr& in) = 0;
  virtual uint32_t cur_func() const = 0;
  virtual void warn(const std::string& w) = 0;
};

// Families: each returns false if `o.base` is not one of its opcodes.
bool decode_int(Dec&, Inst&, InstInfo&, const Opc&, const ptx::Instr&);
bool decode_float(Dec&, Inst&, InstInfo&, const Opc&, const ptx::Instr&);
bool decode_cvt(Dec&, Inst&, InstInfo&, const Opc&, const ptx::Instr&);
bool decode_mem(Dec&, Inst&, InstInfo&, const Opc&, const ptx::Instr&);
bool decode_ctrl(Dec&, Inst&, InstInfo&, const Opc&, const ptx::Instr&);
bool decode_warp(Dec&, Inst&, InstInfo&, const Opc&, const ptx::Instr&);
bool decode_tensor(Dec&, Inst&, InstInfo&, const Opc&, const ptx::Instr&);
bool decode_sync(Dec&, Inst&, InstInfo&, const Opc&, const ptx::Instr&);

int h_nop(Exec&, Warp&, const Inst&, uint32_t);
int h_unsupported(Exec&, Warp&, const Inst&, uint32_t);

// Demangles the names NVRTC gives shared and global variables (_ZZ6kernelE4tile -> tile).
std::string pretty_symbol(const std::string& s);

} // namespace wb::sim
