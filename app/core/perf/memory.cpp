// The memory analysis of a sampled launch (replay.hpp): how each pc's addresses move from a block
// to its neighbours, which data every block shares, and what a block brings into the L2 that its
// predecessor did not.
#include "replay.hpp"

#include "core/parallel.hpp"

#include <algorithm>
#include <thread>

namespace wb::perf {

namespace {

// The sectors one block touched, per pc (global loads, stores and atomics' words as sectors), or
// with `loads_only` those of its global loads and bulk copies (TMA) into shared memory.
using PcSectors = std::unordered_map<uint32_t, std::vector<uint64_t>>;

PcSectors sectors_by_pc(const sim::SampledLaunch& l, const sim::BlockTrace& b,
                        bool loads_only = false) {
  PcSectors out;
  // Loops read the same sectors again and again (a row walked a word at a time): a small table of
  // the (pc, sector) pairs seen last keeps those repeats out of the lists before the sort, which
  // would otherwise sort every repeat (tens of millions in an attention reference's trace).
  struct Seen {
    uint64_t id = ~0ull;
    uint32_t pc = ~0u;
  };
  std::vector<Seen> seen(size_t(1) << 12);
  for (auto& w : b.warps)
    for (auto& e : w.ev) {
      if (e.kind != sim::TraceKind::global && e.kind != sim::TraceKind::global_atomic &&
          e.kind != sim::TraceKind::bulk)
        continue;
      if (loads_only && e.kind != sim::TraceKind::bulk &&
          (e.kind != sim::TraceKind::global || l.code[e.pc].mem != sim::MemKind::load))
        continue;
      std::vector<uint64_t>* v = nullptr;
      for (uint32_t k = 0; k < e.sectors(); ++k) {
        uint64_t id = w.sec[e.first + k].id;
        if (e.kind == sim::TraceKind::global_atomic) id |= uint64_t(1) << 62;
        Seen& s = seen[((id * 0x9e3779b97f4a7c15ull) >> 52 ^ e.pc) & (seen.size() - 1)];
        if (s.id == id && s.pc == e.pc) continue;
        s = {id, e.pc};
        if (!v) v = &out[e.pc];
        v->push_back(id);
      }
    }
  for (auto& [pc, v] : out) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return out;
}

// The fraction of `a` found in `b` after adding `shift` to it (both sorted).
double overlap(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b, int64_t shift) {
  if (a.empty()) return 0;
  size_t hit = 0, j = 0;
  for (uint64_t x : a) {
    uint64_t y = x + uint64_t(shift);
    while (j < b.size() && b[j] < y) ++j;
    if (j < b.size() && b[j] == y) ++hit;
  }
  return double(hit) / double(a.size());
}

} // namespace

LaunchMemory analyse_memory(const sim::SampledLaunch& l, int anchor, const int neighbour[3]) {
  LaunchMemory m;
  m.anchor = anchor;
  m.shift.assign(l.code.size(), PcShift{});
  if (anchor < 0 || size_t(anchor) >= l.blocks.size()) return m;
  const sim::BlockTrace& A = l.blocks[size_t(anchor)];
  // The anchor's and its neighbours' sectors and every block's stores, each block on its own:
  // on both cores. (The other blocks' loads are read below, a block at a time.)
  const size_t nb = l.blocks.size();
  auto is_near = [&](size_t t) {
    return int(t) == anchor || int(t) == neighbour[0] || int(t) == neighbour[1] ||
           int(t) == neighbour[2];
  };
  // fn(block, worker) for every block, the workers taking blocks in turn (the near blocks, the
  // costly ones here, are the first few).
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  auto each_block = [&](auto&& fn) {
    parallel_chunks(
        int64_t(std::min<size_t>(workers, nb)),
        [&](int, int64_t begin, int64_t end) {
          for (int64_t k = begin; k < end; ++k)
            for (size_t b = size_t(k); b < nb; b += std::min<size_t>(workers, nb)) fn(b, size_t(k));
        },
        1);
  };
  std::vector<PcSectors> by_block(nb); // the near blocks' only
  m.stored.resize(nb);
  each_block([&](size_t b, size_t) {
    if (is_near(b)) by_block[b] = sectors_by_pc(l, l.blocks[b]);
    for (auto& w : l.blocks[b].warps)
      for (auto& e : w.ev)
        if (e.kind == sim::TraceKind::global && l.code[e.pc].mem == sim::MemKind::store)
          for (uint32_t k = 0; k < e.count; ++k)
            m.stored[b][w.sec[e.first + k].id] |= w.sec[e.first + k].mask;
  });
  const PcSectors& a = by_block[size_t(anchor)];
  for (auto& [pc, v] : a)
    for (uint64_t x : v)
      if (!(x >> 62)) m.anchor_footprint.insert(x);
  for (int d = 0; d < 3; ++d) {
    if (neighbour[d] < 0) continue;
    const PcSectors& n = by_block[size_t(neighbour[d])];
    for (auto& [pc, va] : a) {
      auto it = n.find(pc);
      if (it == n.end() || it->second.empty() || va.empty()) continue;
      const auto& vn = it->second;
      PcShift& s = m.shift[pc];
      // The same data (shared along d), or the same pattern moved by the difference of the first
      // sectors (tiles, rows, halos); anything else depends on the data.
      if (overlap(va, vn, 0) >= 0.9) {
        s.known[d] = true, s.delta[d] = 0;
      } else {
        int64_t delta = int64_t(vn.front()) - int64_t(va.front());
        if (overlap(va, vn, delta) >= 0.9) s.known[d] = true, s.delta[d] = delta;
      }
    }
  }
  // A load's shift found between the anchor and its neighbours must hold for the other sampled
  // blocks too (a grid-stride loop's does). Where it does not (a persistent kernel whose tile
  // scheduler decides which tile a block takes), the blocks' coordinates do not say where it reads.
  // (Each block on its own, on both cores; a pc is marked where any block contradicts it.)
  m.unrelated.assign(l.code.size(), 0);
  std::vector<std::vector<char>> marks(workers, std::vector<char>(l.code.size(), 0));
  each_block([&](size_t t, size_t worker) {
    std::vector<char>& mark = marks[worker];
    if (is_near(t)) return;
    const sim::BlockTrace& T = l.blocks[t];
    const int64_t db[3] = {int64_t(T.idx.x) - A.idx.x, int64_t(T.idx.y) - A.idx.y,
                           int64_t(T.idx.z) - A.idx.z};
    const PcSectors ts = sectors_by_pc(l, T, true);
    for (auto& [pc, vt] : ts) {
      auto it = a.find(pc);
      if (it == a.end() || it->second.empty() || vt.empty()) continue;
      const PcShift& s = m.shift[pc];
      int64_t off = 0;
      bool said = true;
      for (int d = 0; d < 3; ++d)
        if (db[d]) said = said && s.known[d], off += s.delta[d] * db[d];
      if (said && overlap(it->second, vt, off) < 0.9) mark[pc] = 1;
    }
  });
  for (const auto& mark : marks)
    for (size_t pc = 0; pc < mark.size(); ++pc) m.unrelated[pc] |= mark[pc];
  // What a block brings into the L2 that its predecessor along x did not: its footprint less the
  // sectors found in the predecessor's (the anchor's footprint moved back by each pc's x shift).
  double fresh = 0;
  for (auto& [pc, v] : a) {
    const PcShift& s = m.shift[pc];
    for (uint64_t x : v) {
      if (x >> 62) continue; // atomics' words
      bool old = s.known[0] && m.anchor_footprint.count(x + uint64_t(s.delta[0]));
      fresh += old ? 0 : 32;
    }
  }
  m.new_bytes_per_block = fresh;
  // Global atomics: lanes per word in the anchor, and whether the words are shared by all blocks.
  bool all_shared = true, any = false;
  for (auto& w : A.warps)
    for (auto& e : w.ev)
      if (e.kind == sim::TraceKind::global_atomic) {
        any = true;
        if (l.code[e.pc].opcode.find(".f") != std::string::npos) m.atomics_float = true;
        for (uint32_t k = 0; k < e.count; ++k)
          m.atomic_words[w.sec[e.first + k].id] += w.sec[e.first + k].mask;
        const PcShift& s = m.shift[e.pc];
        for (int d = 0; d < 3; ++d)
          if (neighbour[d] >= 0 && !(s.known[d] && s.delta[d] == 0)) all_shared = false;
      }
  m.atomics_shared = any && all_shared;
  return m;
}

std::vector<double> load_sharers(const sim::SampledLaunch& census) {
  std::vector<std::unordered_map<uint64_t, uint32_t>> blocks_of(census.code.size());
  for (auto& b : census.blocks)
    for (auto& [pc, v] : sectors_by_pc(census, b, true))
      for (uint64_t x : v) ++blocks_of[pc][x];
  std::vector<double> out(census.code.size(), 0);
  for (size_t pc = 0; pc < out.size(); ++pc) {
    if (blocks_of[pc].empty()) continue;
    double touches = 0;
    for (auto& [x, k] : blocks_of[pc]) touches += k;
    out[pc] = touches / double(blocks_of[pc].size());
  }
  return out;
}

} // namespace wb::perf
