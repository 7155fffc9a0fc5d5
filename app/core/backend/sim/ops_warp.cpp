// Warp collectives: shfl.sync, vote.sync, match.sync, redux.sync, elect.sync, activemask and
// bar.warp.sync (__syncwarp). A .sync collective waits until every live lane named in its member
// mask has arrived at the same instruction (lanes parked elsewhere are run first); only when no
// such lane can arrive any more does it run with the lanes present, and warns once.
#include "ops_common.hpp"

#include <fmt/format.h>

namespace wb::sim {
namespace {

// Returns kNext when the collective may execute now; otherwise parks the group.
int sync_gate(Exec& x, Warp& w, const Inst& in, uint32_t member) {
  uint32_t missing = member & w.live & ~w.active;
  if (!missing) {
    w.force_partial = false;
    return kNext;
  }
  if (w.force_partial) {
    w.force_partial = false;
    if (!w.warned_partial) {
      w.warned_partial = true;
      const InstInfo& inf = info_of(x, in);
      x.warnings.push_back("warp " + std::to_string(w.index) + " of " + block_name(x) + " ran `" +
                           inf.opcode + "`" + at_line(inf.line) + " while lanes of its mask 0x" +
                           [&] {
                             char b[16];
                             std::snprintf(b, sizeof b, "%08x", member);
                             return std::string(b);
                           }() +
                           " were elsewhere (diverged or waiting at a barrier); their values are "
                           "undefined on a GPU");
    }
    return kNext;
  }
  for (uint32_t mm = w.active; mm; mm &= mm - 1) w.lane_pc[std::countr_zero(mm)] = w.pc;
  w.wsync |= w.active;
  w.run &= ~w.active;
  w.active = 0;
  if (!reschedule(x, w)) return kYield;
  return kJumped;
}

inline uint32_t member_mask(Warp& w, const Inst& in) {
  if (in.r[5] == kNoRow) return kFull;
  int l = w.active ? std::countr_zero(w.active) : 0;
  return uint32_t(w.row(in.r[5])[l]);
}

enum ShflMode : uint8_t { sup, sdown, sbfly, sidx };

int h_shfl(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  uint32_t member = member_mask(w, in);
  if (int g = sync_gate(x, w, in, member); g != kNext) return g;
  uint64_t src[kWarpSize];
  std::memcpy(src, w.row(in.r[1]), sizeof src);
  const uint64_t* bv = w.row(in.r[2]);
  const uint64_t* cv = w.row(in.r[3]);
  uint64_t* d = w.row(in.r[0]);
  uint32_t pv = 0;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int lane = std::countr_zero(mm);
    uint32_t b = uint32_t(bv[lane]) & 31, c = uint32_t(cv[lane]);
    uint32_t cval = c & 31, segmask = (c >> 8) & 31;
    uint32_t maxl = (uint32_t(lane) & segmask) | (cval & ~segmask);
    uint32_t minl = uint32_t(lane) & segmask;
    int32_t j;
    bool p;
    switch (ShflMode(in.sub)) {
    case sup:
      j = lane - int32_t(b);
      p = j >= int32_t(maxl);
      break;
    case sdown:
      j = lane + int32_t(b);
      p = j <= int32_t(maxl);
      break;
    case sbfly:
      j = lane ^ int32_t(b);
      p = j <= int32_t(maxl);
      break;
    default:
      j = int32_t(minl | (b & ~segmask));
      p = j <= int32_t(maxl);
      break;
    }
    if (!p) j = lane;
    d[lane] = src[j & 31] & 0xffffffffu;
    pv |= uint32_t(p) << lane;
  }
  set_pred(w, in.pd, m, pv);
  return kNext;
}

enum VoteMode : uint8_t { vall, vany, vuni, vballot };

int h_vote(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  uint32_t member = member_mask(w, in);
  if (int g = sync_gate(x, w, in, member); g != kNext) return g;
  uint32_t part = m & member;
  uint32_t p = (w.p[in.ps] ^ in.ps_xor) & part;
  switch (VoteMode(in.sub)) {
  case vall:
    set_pred(w, in.pd, m, p == part ? kFull : 0);
    break;
  case vany:
    set_pred(w, in.pd, m, p ? kFull : 0);
    break;
  case vuni:
    set_pred(w, in.pd, m, (p == part || p == 0) ? kFull : 0);
    break;
  case vballot: {
    uint64_t* d = w.row(in.r[0]);
    each_lane(m, [&](int l) { d[l] = p; });
    break;
  }
  }
  return kNext;
}

int h_activemask(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  uint32_t a = w.active;
  each_lane(m, [&](int l) { d[l] = a; });
  return kNext;
}

template <bool All> int h_match(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  uint32_t member = member_mask(w, in);
  if (int g = sync_gate(x, w, in, member); g != kNext) return g;
  uint32_t part = m & member;
  const uint64_t* a = w.row(in.r[1]);
  uint64_t* d = w.row(in.r[0]);
  uint64_t vmask = in.width == 8 ? ~0ull : 0xffffffffull;
  uint32_t pv = 0;
  if (All) {
    bool same = true;
    int f = part ? std::countr_zero(part) : 0;
    for (uint32_t mm = part; mm; mm &= mm - 1)
      if ((a[std::countr_zero(mm)] & vmask) != (a[f] & vmask)) same = false;
    each_lane(m, [&](int l) { d[l] = same ? part : 0; });
    pv = same ? kFull : 0;
  } else {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      int l = std::countr_zero(mm);
      uint32_t peers = 0;
      for (uint32_t nn = part; nn; nn &= nn - 1) {
        int k = std::countr_zero(nn);
        if ((a[k] & vmask) == (a[l] & vmask)) peers |= 1u << k;
      }
      d[l] = peers;
    }
  }
  if (All) set_pred(w, in.pd, m, pv);
  return kNext;
}

enum ReduxOp : uint8_t { radd, rmin, rmax, rand, ror, rxor };

template <bool Signed> int h_redux(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  uint32_t member = member_mask(w, in);
  if (int g = sync_gate(x, w, in, member); g != kNext) return g;
  uint32_t part = m & member;
  const uint64_t* a = w.row(in.r[1]);
  int64_t acc = 0;
  bool first = true;
  for (uint32_t mm = part; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    int64_t v = Signed ? int64_t(int32_t(a[l])) : int64_t(uint32_t(a[l]));
    if (first) {
      acc = v;
      first = false;
      continue;
    }
    switch (ReduxOp(in.sub)) {
    case radd:
      acc += v;
      break;
    case rmin:
      acc = std::min(acc, v);
      break;
    case rmax:
      acc = std::max(acc, v);
      break;
    case rand:
      acc &= v;
      break;
    case ror:
      acc |= v;
      break;
    case rxor:
      acc ^= v;
      break;
    }
  }
  uint64_t* d = w.row(in.r[0]);
  each_lane(m, [&](int l) { d[l] = uint32_t(acc); });
  return kNext;
}

int h_elect(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  uint32_t member = member_mask(w, in);
  if (int g = sync_gate(x, w, in, member); g != kNext) return g;
  uint32_t part = m & member;
  int leader = part ? std::countr_zero(part) : 0;
  if (in.r[0] != kNoRow) {
    uint64_t* d = w.row(in.r[0]);
    each_lane(m, [&](int l) { d[l] = uint32_t(leader); });
  }
  set_pred(w, in.pd, m, part ? (1u << leader) : 0);
  return kNext;
}

// setmaxnreg.{inc,dec}.sync.aligned.u32 N: moves registers between a block's warpgroups on a GPU.
// Values do not change, so the simulator checks the rules and goes on: N a multiple of 8 in
// 24..256, every lane of the warp there at once (.sync.aligned), and a block of whole warpgroups.
int h_setmaxnreg(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  (void)m;
  const InstInfo& inf = info_of(x, in);
  const int64_t n = in.imm;
  if (n < 24 || n > 256 || n % 8)
    return raise_fault(x, FaultKind::trap,
                       fmt::format("{} ran setmaxnreg with {} registers{}: the count must be a "
                                   "multiple of 8 from 24 to 256",
                                   thread_name(x, w, std::countr_zero(w.active)), n,
                                   at_line(inf.line)),
                       inf.line);
  const uint64_t threads = uint64_t(x.L->block.x) * x.L->block.y * x.L->block.z;
  if (threads % 128)
    return raise_fault(x, FaultKind::trap,
                       fmt::format("setmaxnreg{} in a block of {} threads: it acts on whole "
                                   "warpgroups (128 threads each), so the block must be a "
                                   "multiple of 128 threads",
                                   at_line(inf.line), threads),
                       inf.line);
  if (uint32_t missing = w.live & ~w.active; missing)
    return raise_fault(x, FaultKind::trap,
                       fmt::format("warp {} of {} ran setmaxnreg{} with only lanes {:#010x} of "
                                   "its live lanes {:#010x}: .sync.aligned needs every thread of "
                                   "the warpgroup to run it together, outside divergent code",
                                   w.index, block_name(x), at_line(inf.line), w.active, w.live),
                       inf.line);
  return kNext;
}

int h_warpsync(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  uint32_t member = member_mask(w, in);
  return sync_gate(x, w, in, member);
}

} // namespace

bool decode_warp(Dec& D, Inst& I, InstInfo& info, const Opc& o, const ptx::Instr& in) {
  const std::string& b = o.base;
  auto member = [&](size_t i) {
    if (i < in.ops.size()) I.r[5] = D.row(op(in, i), Ty::b32);
  };
  if (b == "shfl") {
    o.only({"up", "down", "bfly", "idx"});
    if (!o.has("sync")) throw Unsupported("shfl without .sync (removed after sm_6x)");
    I.sub = o.has("up") ? sup : o.has("down") ? sdown : o.has("bfly") ? sbfly : sidx;
    need_ops(in, 5);
    const auto& d = op(in, 0);
    I.r[0] = D.dst(d);
    if (!d.name2.empty()) I.pd = D.pred_name(d.name2);
    I.r[1] = D.row(op(in, 1), Ty::b32);
    I.r[2] = D.row(op(in, 2), Ty::b32);
    I.r[3] = D.row(op(in, 3), Ty::b32);
    member(4);
    I.fn = h_shfl;
    return true;
  }
  if (b == "vote") {
    o.only({"all", "any", "uni", "ballot"});
    if (!o.has("sync")) throw Unsupported("vote without .sync (removed after sm_6x)");
    need_ops(in, 3);
    if (o.has("ballot")) {
      I.sub = vballot;
      I.r[0] = D.dst(op(in, 0));
    } else {
      I.sub = o.has("all") ? vall : o.has("any") ? vany : vuni;
      I.pd = D.pred(op(in, 0));
    }
    I.ps = D.pred(op(in, 1), &I.ps_xor);
    member(2);
    I.fn = h_vote;
    return true;
  }
  if (b == "activemask") {
    need_ops(in, 1);
    I.r[0] = D.dst(op(in, 0));
    I.fn = h_activemask;
    return true;
  }
  if (b == "match") {
    o.only({"any", "all"});
    need_ops(in, 3);
    const auto& d = op(in, 0);
    I.r[0] = D.dst(d);
    if (!d.name2.empty()) I.pd = D.pred_name(d.name2);
    I.width = uint8_t(ty_bytes(o.last_type()));
    I.r[1] = D.row(op(in, 1), o.last_type());
    member(2);
    I.fn = o.has("all") ? h_match<true> : h_match<false>;
    return true;
  }
  if (b == "redux") {
    o.only({"add", "min", "max", "and", "or", "xor"});
    need_ops(in, 3);
    Ty t = o.last_type();
    if (t == Ty::f32) throw Unsupported("redux.sync on floats");
    I.sub = o.has("add")   ? radd
            : o.has("min") ? rmin
            : o.has("max") ? rmax
            : o.has("and") ? rand
            : o.has("or")  ? ror
                           : rxor;
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), t);
    member(2);
    I.fn = t == Ty::s32 ? h_redux<true> : h_redux<false>;
    return true;
  }
  if (b == "elect") {
    need_ops(in, 2);
    const auto& d = op(in, 0);
    if (d.kind != ptx::Operand::Kind::sink) I.r[0] = D.dst(d);
    if (!d.name2.empty()) I.pd = D.pred_name(d.name2);
    member(1);
    I.fn = h_elect;
    return true;
  }
  if (b == "setmaxnreg") {
    need_ops(in, 1);
    if (op(in, 0).kind != ptx::Operand::Kind::integer)
      throw Unsupported("setmaxnreg needs a constant register count");
    I.imm = int64_t(op(in, 0).bits);
    I.fn = h_setmaxnreg;
    return true;
  }
  if ((b == "bar" || b == "barrier") && o.has("warp")) {
    member(0);
    I.fn = h_warpsync;
    return true;
  }
  (void)info;
  return false;
}

} // namespace wb::sim
