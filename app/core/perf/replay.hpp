// The SM replay: the traces of a launch's sampled blocks played back on one SM of the machine,
// clock by clock where something happens (docs/perf-model.md, "The replay").
//
// The SM is the busiest one of the launch: it runs ceil(blocks / SMs) blocks, as many at a time as
// occupancy allows, each block a copy of a sampled block's trace moved to its own addresses. Its
// four schedulers issue one instruction a clock each from warps whose operands are ready, to
// pipes of the machine's rates; loads go through an L1 (LRU), a port to the L2, the L2 and DRAM,
// each a queue of the SM's share of its bandwidth, with the unloaded latency on top: so too few
// loads in flight give a latency-bound time and enough of them a bandwidth-bound one (Little's
// law), without a formula choosing between the two.
#pragma once
#include "core/backend/sim/sim.hpp"
#include "isa.hpp"
#include "machine.hpp"

#include <array>
#include <atomic>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace wb::perf {

// How the addresses of one pc move from block to block: along each grid dimension, the shift in
// sectors between a block and its neighbour (0: the same data, shared), or unknown (the addresses
// depend on the data, or nothing to compare).
struct PcShift {
  bool known[3] = {false, false, false};
  int64_t delta[3] = {0, 0, 0};
};

// What the sampled blocks say about a launch's memory, beyond each block on its own.
struct LaunchMemory {
  std::vector<PcShift> shift;                    // per pc
  std::unordered_set<uint64_t> anchor_footprint; // sectors the anchor block touched
  int anchor = -1;                               // index of the anchor among the sampled blocks
  // Sectors the anchor touched that its predecessor along a dimension touched too (so they are in
  // the L2 when it gets there, if the distance allows).
  double new_bytes_per_block = 0; // bytes a block brings into the L2 that its x-neighbour did not
  // Per global-atomic word: lanes per block (the anchor's), and whether every block hits it.
  std::unordered_map<uint64_t, uint64_t> atomic_words;
  bool atomics_shared = false;
  bool atomics_float = false; // some global atomic is a float one (applied a lane at a time)
  // Per sampled block: every global sector it stores to, with the bytes of it the block writes
  // (a sector not wholly written must be read from DRAM to be merged: read-modify-write).
  std::vector<std::unordered_map<uint64_t, uint32_t>> stored;
  // Per pc of a load: a shift above that another sampled block contradicts (its sectors are not
  // where the shift puts them).
  std::vector<char> unrelated;
  // Per pc, where counted by address (predict.cpp, a grid of one round): how many blocks read each
  // of its sectors, on average; 0 where not counted (the shifts above decide).
  std::vector<double> sharers;
};

// Sectors an earlier launch stored, still in the L2 (first..last inclusive), and the DRAM bytes
// moved since.
struct L2Range {
  uint64_t first = 0, last = 0;
  double since = 0;
};

struct ReplayBlock {
  int tmpl = 0; // which sampled block's trace
  Dim3 idx;     // the block it stands for
  uint64_t linear = 0;
  double busy_sms = 1; // SMs busy while it runs (its share of DRAM and L2)
};

struct ReplayInput {
  const Machine* m = nullptr;
  const sim::SampledLaunch* launch = nullptr;
  const std::vector<OpCost>* cost = nullptr;
  const LaunchMemory* mem = nullptr;
  int resident = 1;                // block slots on the SM (blocks at a time, at most)
  int warp_slots = 1 << 30;        // a block starts only when its warps fit beside the live ones
  uint64_t blocks_on_sm = 1;       // blocks the busiest SM runs in all
  std::vector<ReplayBlock> blocks; // the first ones it runs, in order (the rest extrapolated)
  double l1_bytes = 0;             // L1 left beside the shared-memory carveout
  double dram_mix_write = 0;       // the launch's share of DRAM bytes that are writes (0..1)
  size_t budget_events = 3'000'000;
  int thin = 1; // replay 1 of every `thin` chunks of long traces, times `thin`
  // Traces cut at the cap: the recorded part of the longest stands for `cut` times its time (each
  // warp's counts are weighed by its own cut).
  double cut = 1;
  // The work of the SM's blocks that are not replayed, per block, over the replayed ones' (from
  // the sample nearest each in the grid): 1 for a uniform grid; below 1 where the first blocks
  // are the longest (a causal grid scheduled longest first).
  double rest_work = 1.0;
  // Set from another thread when the prediction is no longer wanted: the replay ends early (its
  // result is then meaningless, and predict() discards it).
  const std::atomic<bool>* cancel = nullptr;
  // What earlier launches of the puzzle stored and the L2 still holds: loads there hit the L2.
  const std::vector<L2Range>* l2_resident = nullptr;
};

// Why a warp waited before issuing an instruction.
enum class Stall : uint8_t {
  dram,    // for a load that went to DRAM
  l2,      // for a load served by the L2
  l1,      // for an L1 hit
  shared,  // for shared memory
  atomic,  // for an atomic's return
  alu,     // for an arithmetic result (a dependency chain)
  pipe,    // its pipe was busy (issue rate)
  mio,     // the memory-instruction queue was full (too many requests, uncoalesced ones)
  store,   // stores backed up behind DRAM
  barrier, // at __syncthreads()
  issue,   // another warp of its scheduler issued (the scheduler was busy)
  count
};
constexpr int kStalls = int(Stall::count);
const char* stall_name(Stall s);

struct PcStats {
  double issued = 0;          // warp instructions (after thinning and extrapolation)
  double stall[kStalls] = {}; // warp-clocks spent waiting before it
  double lanes = 0;
};

struct ReplayResult {
  double cycles = 0;          // the SM's time for all its blocks
  double measured_cycles = 0; // of which replayed (before extrapolation)
  uint64_t blocks_replayed = 0;
  double scale = 1;              // replayed -> all (blocks and thinning)
  double issue_slots = 0;        // SASS issue slots used, all schedulers
  double pipe_busy[kPipes] = {}; // clocks each pipe was busy (per SMSP pipes: summed)
  double mio_busy = 0, port_busy = 0, l2_busy = 0, dram_busy = 0, atomic_busy = 0;
  double shared_wavefronts = 0, shared_conflict_wavefronts = 0;
  double l1_hits = 0, l1_misses = 0, l2_hits = 0, dram_granules = 0;
  double dram_read_bytes = 0, dram_write_bytes = 0, l2_bytes = 0;
  // This SM's part of its reads' DRAM traffic: a sector the blocks of a round share is streamed
  // once for all of them, and each pays its part (dram_read_bytes counts it whole).
  double dram_read_paid_bytes = 0;
  double bytes_in_flight = 0; // average DRAM+L2 bytes in flight on the SM
  double dispatch_wait = 0;   // clocks a free slot waited for the next block
  double tail_cycles = 0;     // clocks at the end with fewer blocks than slots
  double barrier_wait = 0;    // warp-clocks at barriers
  double warp_cycles = 0;     // warp-clocks resident
  std::vector<PcStats> pc;    // per pc
};

ReplayResult replay(const ReplayInput& in);

// The memory analysis of a sampled launch: per-pc shifts between neighbouring blocks.
LaunchMemory analyse_memory(const sim::SampledLaunch& l, int anchor, const int neighbour[3]);
// Per pc of a census run (every block of a launch, each stopped early): how many of its blocks
// read each sector that pc's loads or bulk copies read, on average over the sectors; 0 where none.
std::vector<double> load_sharers(const sim::SampledLaunch& census);

} // namespace wb::perf
