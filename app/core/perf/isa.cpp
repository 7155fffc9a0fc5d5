#include "isa.hpp"

#include <string_view>

namespace wb::perf {

namespace {

bool has(std::string_view op, std::string_view part) {
  // `part` as a whole dot-separated component of the opcode.
  size_t pos = 0;
  while ((pos = op.find(part, pos)) != std::string_view::npos) {
    bool left = pos == 0 || op[pos - 1] == '.';
    bool right = pos + part.size() == op.size() || op[pos + part.size()] == '.';
    if (left && right) return true;
    pos += part.size();
  }
  return false;
}

std::string_view base_of(std::string_view op) {
  size_t d = op.find('.');
  return d == std::string_view::npos ? op : op.substr(0, d);
}

bool type_f64(std::string_view op) {
  return has(op, "f64");
}
bool type_f32(std::string_view op) {
  return has(op, "f32") || (has(op, "ftz") && !type_f64(op));
}
bool type_half(std::string_view op) {
  return has(op, "f16") || has(op, "f16x2") || has(op, "bf16") || has(op, "bf16x2");
}
bool type_64bit_int(std::string_view op) {
  return has(op, "s64") || has(op, "u64") || has(op, "b64");
}

// The pc of the instruction that last wrote `row` before `pc`, within a few instructions back
// (a straight-line neighbour, as ptxas's peephole sees it), or -1.
int defined_near(const std::vector<sim::InstInfo>& code, size_t pc, uint32_t row) {
  for (size_t k = pc; k-- > 0 && pc - k <= 8;) {
    for (uint32_t d : code[k].defs)
      if (d == row) return int(k);
    if (code[k].branch) break;
  }
  return -1;
}

// ptxas folds it into another instruction, or drops it: no issue slot, no latency.
void make_free(OpCost& c) {
  c.free = true, c.flex = false;
  c.sass = 0, c.issue = 0, c.latency = 0;
}

} // namespace

float integer_issue(const Machine& m, float sass) {
  return float(sass / m.rate[int(Pipe::alu)]);
}

std::vector<OpCost> cost_table(const std::vector<sim::InstInfo>& code, const Machine& m) {
  std::vector<OpCost> out(code.size());
  auto lat = [&](Pipe p) { return float(m.latency[int(p)]); };
  auto issue = [&](Pipe p) { return float(1.0 / m.rate[int(p)]); };
  for (size_t pc = 0; pc < code.size(); ++pc) {
    const sim::InstInfo& in = code[pc];
    std::string_view op = in.opcode;
    std::string_view b = base_of(op);
    OpCost c;
    auto set = [&](Pipe p, float sass = 1, float extra_latency = 0) {
      c.pipe = p;
      c.sass = sass;
      c.issue = issue(p) * sass;
      c.latency = lat(p) + extra_latency;
    };
    set(Pipe::alu);
    if (b == "ld" || b == "ldu" || b == "st" || b == "atom" || b == "red" ||
        (b == "cp" && has(op, "async") && !has(op, "commit_group") && !has(op, "wait_group") &&
         !has(op, "wait_all")) ||
        b == "ldmatrix" || b == "stmatrix" ||
        (b == "wmma" && (has(op, "load") || has(op, "store")))) {
      if ((b == "ld" || b == "ldu") && has(op, "param")) {
        make_free(c); // kernel parameters are constant-bank operands in SASS
      } else if ((b == "ld" || b == "ldu") && has(op, "const")) {
        set(Pipe::alu, 1, 8); // the constant cache
      } else {
        set(Pipe::mio);
        c.memory = true;
        c.returns = !(b == "st" || b == "red" || b == "stmatrix" || (b == "cp") ||
                      (b == "wmma" && has(op, "store")));
        if (b == "atom" && has(op, "shared") && has(op, "add") &&
            (has(op, "u32") || has(op, "s32"))) {
          bool value_in_register = false;
          for (uint32_t u : in.uses)
            if (!(u & sim::kPredRow) && u != in.addr_base) value_in_register = true;
          c.aggregated = !value_in_register;
        }
        c.l1_cached = !(has(op, "cg") || has(op, "cv") || has(op, "volatile") || has(op, "bulk") ||
                        has(op, "L1::no_allocate") || has(op, "cs") || b == "atom" || b == "red");
      }
    } else if (b == "cp" || b == "cp.async") {
      c.async_commit = has(op, "commit_group");
      c.async_wait = has(op, "wait_group") || has(op, "wait_all");
      c.async_all = has(op, "wait_all");
      c.async_keep = in.group_keep;
      set(Pipe::alu);
    } else if (b == "bar" || b == "barrier") {
      if (has(op, "warp")) {
        set(Pipe::alu);
      } else {
        set(Pipe::sync);
        c.arrive = has(op, "arrive");
        c.barrier = !c.arrive;
      }
    } else if (b == "mma" || (b == "wmma" && has(op, "mma")) ||
               (b == "wgmma" && has(op, "mma_async"))) {
      // A wgmma is this warp's quarter of the warpgroup's MMA on its SMSP's share of the tensor
      // cores: the four warps of a warpgroup sit on the four SMSPs, so the group runs at the SM's
      // rate. FP8 mma.sync runs at its own (on Hopper, emulated) rate; FP8 wgmma at twice f16's.
      set(Pipe::tensor);
      const double flops = double(in.tensor_flops_per_warp_k) * 1024.0;
      const bool fp8 = has(op, "e4m3") || has(op, "e5m2");
      const bool wg = b == "wgmma";
      const double mma_rate =
          fp8 && m.fp8_mma_flops_clk_sm > 0 ? m.fp8_mma_flops_clk_sm : m.tensor_flops_clk_sm;
      const double rate =
          wg && m.wgmma_flops_clk_sm > 0 ? m.wgmma_flops_clk_sm * (fp8 ? 2 : 1) : mma_rate;
      c.issue = float(flops / std::max(1.0, rate / 4)); // per SMSP
      c.wgmma = wg;
    } else if (b == "wgmma") {
      set(Pipe::alu); // fence, commit_group, wait_group: bookkeeping (the wait is modelled)
      c.wgmma_commit = has(op, "commit_group");
      c.wgmma_wait = has(op, "wait_group");
      c.wgmma_keep = in.group_keep;
    } else if (b == "shfl" || b == "match" || b == "redux") {
      set(Pipe::mio);
      c.latency = float(m.shfl_latency);
    } else if (b == "membar" || b == "fence") {
      set(Pipe::mio, 1, 200);
    } else if (b == "div" || b == "rem") {
      if (type_f64(op))
        set(Pipe::fp64, 12, 90); // MUFU.RCP64H and Newton steps in DFMA
      else if (type_f32(op))
        set(has(op, "approx") || has(op, "full") ? Pipe::sfu : Pipe::fma,
            has(op, "approx") || has(op, "full") ? 1 : 10, 30);
      else
        set(Pipe::alu, type_64bit_int(op) ? 70 : 20, type_64bit_int(op) ? 200 : 60);
    } else if (b == "sqrt" || b == "rcp" || b == "rsqrt") {
      if (has(op, "approx")) {
        set(Pipe::sfu);
      } else if (type_f64(op)) {
        set(Pipe::fp64, 12, 90);
      } else {
        set(Pipe::fma, 8, 26); // MUFU plus FFMA refinement
      }
    } else if (b == "ex2" || b == "lg2" || b == "sin" || b == "cos" || b == "tanh") {
      set(type_half(op) && has(op, "x2") ? Pipe::sfu : Pipe::sfu, has(op, "x2") ? 2 : 1);
    } else if (b == "popc" || b == "clz" || b == "bfind" || b == "brev") {
      set(Pipe::sfu);
    } else if (b == "cvt") {
      // cvt.dst.src: conversions between float and integer, or to/from 64-bit floats, go to the
      // conversion unit; between integer types or float widths of 32 bits and less, ALU.
      std::string_view rest = op.substr(4);
      bool f64 = type_f64(rest);
      bool fl = f64 || has(rest, "f32") || type_half(rest);
      bool ints = has(rest, "s8") || has(rest, "u8") || has(rest, "s16") || has(rest, "u16") ||
                  has(rest, "s32") || has(rest, "u32") || has(rest, "s64") || has(rest, "u64");
      if (f64 || (fl && ints) || has(rest, "rni") || has(rest, "rzi") || has(rest, "rmi") ||
          has(rest, "rpi")) {
        set(Pipe::conv);
      } else if (rest.starts_with("u64.u32") || rest.starts_with("s64.u32") ||
                 rest.starts_with("u32.u64") || rest.starts_with("s32.s64") ||
                 rest.starts_with("u32.s64") || rest.starts_with("s32.u64")) {
        make_free(c); // zero extension (the high word is RZ), truncation (the low register)
      } else {
        set(Pipe::alu);
      }
    } else if (type_f64(op) && (b == "add" || b == "sub" || b == "mul" || b == "fma" ||
                                b == "mad" || b == "min" || b == "max" || b == "setp" ||
                                b == "neg" || b == "abs" || b == "testp" || b == "copysign")) {
      set(Pipe::fp64);
    } else if (type_half(op) && (b == "add" || b == "sub" || b == "mul" || b == "fma" ||
                                 b == "min" || b == "max" || b == "neg" || b == "abs")) {
      set(Pipe::fp16);
    } else if ((b == "add" || b == "sub" || b == "mul" || b == "fma" || b == "mad") &&
               type_f32(op)) {
      set(Pipe::fma);
    } else if ((b == "mul" || b == "mad") && !type_f32(op)) {
      // Integer multiplies run on the FMA pipe as IMAD, at the integer rate (the heavy half of
      // the FP32 lanes); 64-bit ones take several.
      bool wide = has(op, "wide");
      set(Pipe::fma, type_64bit_int(op) && !wide ? 3 : 1);
      c.issue = integer_issue(m, c.sass);
    } else if (b == "dp4a" || b == "dp2a") {
      set(Pipe::fma);
    } else if (b == "cvta" && has(op, "to") && has(op, "global")) {
      make_free(c); // generic and global addresses are the same numbers
    } else if (b == "mov" && in.pun) {
      make_free(c); // bits renamed from an integer to a float register or back: no instruction
    } else if (b == "mov") {
      // A MOV or IMAD.MOV (SASS keeps most moves: copies across loop iterations, constants).
      set(Pipe::alu);
      c.flex = true;
    } else if (b == "isspacep") {
      set(Pipe::alu);
    } else if (b == "bra" || b == "call" || b == "ret" || b == "exit" || b == "trap" ||
               b == "brkpt") {
      set(Pipe::alu, 1, -2);
    } else if (b == "nanosleep" || b == "pmevent" || b == "prefetch" || b == "prefetchu" ||
               b == "createpolicy") {
      set(Pipe::alu);
    } else {
      // Integer arithmetic, logic, shifts, compares, selects, predicates, vote, activemask...
      bool wide64 = type_64bit_int(op) && (b == "add" || b == "sub" || b == "shl" || b == "shr" ||
                                           b == "setp" || b == "min" || b == "max");
      set(Pipe::alu, wide64 ? 2 : 1);
      c.flex = b == "add" || b == "sub" || (b == "shl" && !wide64);
    }
    // Special registers (%tid, %ctaid ...) are read with S2R: a slower path than an ALU move.
    if (b == "mov" && in.uses.empty() && !in.defs.empty() &&
        op.find("u32") != std::string_view::npos)
      c.latency = std::max(c.latency, 10.0f);
    out[pc] = c;
  }
  // 64-bit address arithmetic: base + mul.wide(i, size) is one IMAD.WIDE, so the add vanishes;
  // base + (i << k) is a LEA pair, the add's two instructions, so the shift vanishes.
  for (size_t pc = 0; pc < code.size(); ++pc) {
    std::string_view op = code[pc].opcode;
    if (base_of(op) != "add" || !type_64bit_int(op)) continue;
    for (uint32_t u : code[pc].uses) {
      const int d = defined_near(code, pc, u);
      if (d < 0) continue;
      const sim::InstInfo& src = code[size_t(d)];
      if (base_of(src.opcode) == "mul" && has(src.opcode, "wide")) {
        make_free(out[pc]);
        break;
      }
      if (base_of(src.opcode) == "shl" && type_64bit_int(src.opcode) && src.uses.size() == 1) {
        make_free(out[size_t(d)]);
        break;
      }
    }
  }
  return out;
}

} // namespace wb::perf
