#include "schedule.hpp"

#include "core/parallel.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

namespace wb::perf {

namespace {

constexpr size_t kMaxRun = 384;      // longer runs are scheduled in pieces
constexpr size_t kUnrollBudget = 96; // ptxas unrolls a loop body up to 4 times within this
constexpr size_t kMaxUnroll = 4;

// A conditional branch over a few instructions: ptxas turns the skipped block into predicated
// instructions (if-conversion), so it orders nothing.
constexpr uint32_t kIfConvert = 6;
bool short_forward_branch(const sim::InstInfo& in, uint32_t pc) {
  return in.branch && in.branch_target > pc + 1 && in.branch_target <= pc + 1 + kIfConvert &&
         in.opcode.rfind("bra", 0) == 0;
}

// Instructions nothing moves across (and that end a run).
bool fence(const sim::InstInfo& in, const OpCost& c, uint32_t pc) {
  if (short_forward_branch(in, pc)) return false;
  if (c.barrier || c.arrive || c.async_wait || in.branch) return true;
  if (in.mem == sim::MemKind::atomic) return true; // stores are ordered by may_alias instead
  const std::string& op = in.opcode;
  for (const char* f : {"call", "ret", "exit", "shfl", "vote", "match", "redux", "bar", "membar",
                        "fence", "trap", "cp.async", "wgmma"})
    if (op.rfind(f, 0) == 0) return true;
  return false;
}

// The list-scheduled order of a window of instructions given by pcs (with `deps[k]` the window
// positions k reads from): the latency-weighted longest path to the end first, ties in order.
std::vector<uint16_t> list_schedule(const std::vector<uint32_t>& pcs,
                                    const std::vector<std::vector<uint16_t>>& deps,
                                    const std::vector<OpCost>& cost, double load_latency) {
  const size_t n = pcs.size();
  std::vector<std::vector<uint16_t>> succs(n);
  for (size_t k = 0; k < n; ++k)
    for (uint16_t p : deps[k]) succs[p].push_back(uint16_t(k));
  std::vector<double> prio(n, 0);
  for (size_t k = n; k-- > 0;) {
    const OpCost& c = cost[pcs[k]];
    double lat = c.memory && c.returns ? load_latency : std::max(1.0f, c.latency);
    double tail = 0;
    for (uint16_t s : succs[k]) tail = std::max(tail, prio[s]);
    prio[k] = lat + tail;
  }
  std::vector<int> waiting(n);
  for (size_t k = 0; k < n; ++k) waiting[k] = int(deps[k].size());
  std::vector<uint16_t> ready, order;
  for (size_t k = 0; k < n; ++k)
    if (!waiting[k]) ready.push_back(uint16_t(k));
  while (!ready.empty()) {
    size_t best = 0;
    for (size_t i = 1; i < ready.size(); ++i)
      if (prio[ready[i]] > prio[ready[best]] ||
          (prio[ready[i]] == prio[ready[best]] && ready[i] < ready[best]))
        best = i;
    uint16_t k = ready[best];
    ready.erase(ready.begin() + long(best));
    order.push_back(k);
    for (uint16_t s : succs[k])
      if (--waiting[s] == 0) ready.push_back(s);
  }
  if (order.size() != n)
    for (size_t k = order.size(); k < n; ++k) order.push_back(uint16_t(k)); // cannot happen
  return order;
}

// ptxas unrolls a counted loop whose counter moves by a constant; a counter stepped by a register
// (a stride known only at run time, such as cooperative groups' block.size()) leaves the loop as
// it is (the H200: 123 us for such a row sum, 71 us with the stride a constant). The loop's body
// is `pcs`, its last instruction the back branch.
bool register_stride(const std::vector<sim::InstInfo>& code, const std::vector<uint32_t>& pcs) {
  const sim::InstInfo& br = code[pcs.back()];
  uint32_t pred = sim::kNoRow;
  for (uint32_t u : br.uses)
    if (u & sim::kPredRow) pred = u;
  if (pred == sim::kNoRow) return false;
  std::vector<uint32_t> bound; // what the branch's comparison reads
  for (uint32_t pc : pcs)
    if (code[pc].opcode.rfind("setp", 0) == 0 &&
        std::find(code[pc].defs.begin(), code[pc].defs.end(), pred) != code[pc].defs.end())
      bound = code[pc].uses;
  for (uint32_t pc : pcs) {
    const sim::InstInfo& in = code[pc];
    const bool int_add = (in.opcode.rfind("add.", 0) == 0 || in.opcode.rfind("sub.", 0) == 0) &&
                         in.opcode.find(".f") == std::string::npos;
    if (!int_add || in.defs.size() != 1 || in.uses.size() != 2) continue;
    const uint32_t d = in.defs[0];
    if (std::find(in.uses.begin(), in.uses.end(), d) != in.uses.end() &&
        std::find(bound.begin(), bound.end(), d) != bound.end())
      return true; // counter = counter + register
  }
  return false;
}

// The state space a memory opcode names ("shared", "global", "local", or "" for generic).
std::string_view space_of(const std::string& op) {
  for (const char* s : {".shared", ".global", ".local", ".const", ".param"})
    if (op.find(s) != std::string::npos) return s;
  return "";
}

} // namespace

void schedule_like_ptxas(sim::SampledLaunch& l, const std::vector<OpCost>& cost, const Machine& m,
                         const std::vector<size_t>& blocks) {
  const double load_latency = m.cycles(m.lat_l2_ns);
  const size_t ncode = l.code.size();
  std::vector<uint8_t> is_fence(ncode);
  for (size_t pc = 0; pc < ncode; ++pc) is_fence[pc] = fence(l.code[pc], cost[pc], uint32_t(pc));
  // Register rows to a dense index (predicates after the registers).
  uint32_t nreg = 0, npred = 0;
  for (auto& c : l.code)
    for (const auto* v : {&c.defs, &c.uses})
      for (uint32_t r : *v)
        (r & sim::kPredRow ? npred : nreg) =
            std::max(r & sim::kPredRow ? npred : nreg, (r & ~sim::kPredRow) + 1);
  auto reg = [&](uint32_t r) { return r & sim::kPredRow ? nreg + (r & ~sim::kPredRow) : r; };
  // The warps to order; each is ordered on its own, so the cores share them out.
  std::vector<sim::WarpTrace*> todo;
  for (size_t bi : blocks)
    if (bi < l.blocks.size())
      for (auto& w : l.blocks[bi].warps) todo.push_back(&w);
  parallel_chunks(
      int64_t(todo.size()),
      [&](int, int64_t begin, int64_t end) {
        // Cached orders: (first pc, run length, iterations) -> permutation of the window.
        std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint64_t>, std::vector<uint16_t>> cache;
        std::vector<int64_t> writer(size_t(nreg) + npred, -1);
        // Per warp, reused from one warp to the next (a warp's trace can be millions of events, and
        // fresh arrays for each would be paid again in page faults).
        std::vector<uint32_t> first, prod, order, where;
        std::vector<int64_t> base_writer; // who wrote a memory op's base register
        std::vector<sim::TraceEvent> old_ev;
        for (int64_t t = begin; t < end; ++t) {
          sim::WarpTrace& w = *todo[size_t(t)];
          auto& ev = w.ev;
          const size_t n = ev.size();
          // 1. What each event reads, in PTX order: the last earlier event that wrote each
          // register.
          first.assign(n + 1, 0);
          prod.clear();
          base_writer.assign(n, -1);
          std::fill(writer.begin(), writer.end(), -1);
          for (size_t k = 0; k < n; ++k) {
            first[k] = uint32_t(prod.size());
            const sim::InstInfo& in = l.code[ev[k].pc];
            if (in.addr_base != sim::kNoRow) base_writer[k] = writer[reg(in.addr_base)];
            for (uint32_t u : in.uses) {
              int64_t wpos = writer[reg(u)];
              if (wpos >= 0 &&
                  std::find(prod.begin() + first[k], prod.end(), uint32_t(wpos)) == prod.end())
                prod.push_back(uint32_t(wpos));
            }
            for (uint32_t d : in.defs) writer[reg(d)] = int64_t(k);
          }
          first[n] = uint32_t(prod.size());
          // 2. Windows: a run of consecutive pcs up to a fence; a loop whose body is one run is
          // taken up to 4 iterations at a time, as ptxas unrolls small loops (its back branches
          // then stop being fences).
          order.assign(n, 0); // new position -> old position
          size_t i = 0;
          while (i < n) {
            size_t j = i + 1;
            auto next_in_run = [&](size_t j) {
              const uint32_t p = ev[j - 1].pc, q = ev[j].pc;
              if (is_fence[p]) return false;
              return q == p + 1 ||
                     (short_forward_branch(l.code[p], p) && q == l.code[p].branch_target);
            };
            while (j < n && j - i < kMaxRun && next_in_run(j)) ++j;
            const size_t len = j - i;
            size_t iters = 1;
            const bool loop =
                len >= 2 && l.code[ev[j - 1].pc].branch && j < n && ev[j].pc == ev[i].pc;
            std::vector<uint32_t> body;
            if (loop)
              for (size_t k = i; k < j; ++k) body.push_back(ev[k].pc);
            if (loop && !l.code[ev[i].pc].nounroll && !register_stride(l.code, body)) {
              const size_t cap = std::min(kMaxUnroll, std::max<size_t>(1, kUnrollBudget / len));
              while (iters < cap) {
                size_t s = i + iters * len;
                if (s + len > n) break;
                bool same = true;
                for (size_t k = 0; k < len && same; ++k) same = ev[s + k].pc == ev[i + k].pc;
                if (!same) break;
                ++iters;
              }
            }
            const size_t w_end = i + iters * len;
            // The last event stays last when it is a fence.
            size_t wn = w_end - i;
            const bool keep_last = is_fence[ev[w_end - 1].pc];
            if (keep_last) --wn;
            if (wn >= 2) {
              // Branches inside a run make windows of one length differ: key on the pcs themselves.
              uint64_t h = 1469598103934665603ull;
              for (size_t k = i; k < i + wn; ++k) h = (h ^ ev[k].pc) * 1099511628211ull;
              auto key = std::tuple{ev[i].pc, uint32_t(len), uint32_t(iters), h};
              auto it = cache.find(key);
              if (it == cache.end()) {
                std::vector<uint32_t> pcs(wn);
                std::vector<std::vector<uint16_t>> deps(wn);
                for (size_t k = 0; k < wn; ++k) {
                  pcs[k] = ev[i + k].pc;
                  for (uint32_t q = first[i + k]; q < first[i + k + 1]; ++q)
                    if (prod[q] >= i && prod[q] < i + wn) deps[k].push_back(uint16_t(prod[q] - i));
                  // Memory order: a store stays after the loads and stores it may overlap, and a
                  // load after the stores it may overlap. Two accesses off one base register value
                  // with disjoint displacements never overlap (ptxas knows that much), nor do
                  // accesses to different state spaces.
                  const sim::InstInfo& a = l.code[pcs[k]];
                  const bool a_store = a.mem == sim::MemKind::store;
                  if (a.mem != sim::MemKind::load && !a_store) continue;
                  for (size_t j = 0; j < k; ++j) {
                    const sim::InstInfo& b = l.code[ev[i + j].pc];
                    const bool b_store = b.mem == sim::MemKind::store;
                    if (!(a_store || b_store) || (b.mem != sim::MemKind::load && !b_store))
                      continue;
                    const auto sa = space_of(a.opcode), sb = space_of(b.opcode);
                    if (!sa.empty() && !sb.empty() && sa != sb) continue;
                    if (a.addr_base != sim::kNoRow && a.addr_base == b.addr_base &&
                        base_writer[i + k] == base_writer[i + j]) {
                      // The trace knows each lane's access size.
                      const int64_t a0 = a.addr_offset, a1 = a0 + ev[i + k].bytes;
                      const int64_t b0 = b.addr_offset, b1 = b0 + ev[i + j].bytes;
                      if (a1 <= b0 || b1 <= a0) continue;
                    }
                    deps[k].push_back(uint16_t(j));
                  }
                }
                it = cache.emplace(key, list_schedule(pcs, deps, cost, load_latency)).first;
              }
              for (size_t k = 0; k < wn; ++k) order[i + k] = uint32_t(i + it->second[k]);
            } else {
              for (size_t k = 0; k < wn; ++k) order[i + k] = uint32_t(i + k);
            }
            if (keep_last) order[w_end - 1] = uint32_t(w_end - 1);
            i = w_end;
          }
          // 3. Reorder the events and express what each reads in the new positions.
          where.assign(n, 0);
          for (size_t k = 0; k < n; ++k) where[order[k]] = uint32_t(k);
          old_ev.assign(ev.begin(), ev.end());
          for (size_t k = 0; k < n; ++k) ev[k] = old_ev[order[k]];
          w.dep_first.assign(n + 1, 0);
          w.deps.clear();
          w.deps.reserve(prod.size());
          for (size_t k = 0; k < n; ++k) {
            w.dep_first[k] = uint32_t(w.deps.size());
            const uint32_t old = order[k];
            for (uint32_t q = first[old]; q < first[old + 1]; ++q) w.deps.push_back(where[prod[q]]);
          }
          w.dep_first[n] = uint32_t(w.deps.size());
        }
      },
      1);
}

} // namespace wb::perf
