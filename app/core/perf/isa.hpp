// What each PTX instruction costs an SM: the pipe it issues to, for how many clocks it holds the
// pipe, and when its result is ready. PTX is not what runs (ptxas turns it into SASS), so a few
// PTX instructions that ptxas expands into sequences (IEEE division and square root, integer
// division, 64-bit integer arithmetic) are charged as the sequence they become.
#pragma once
#include "core/backend/sim/machine.hpp"
#include "machine.hpp"

#include <vector>

namespace wb::perf {

struct OpCost {
  Pipe pipe = Pipe::alu;
  float issue = 1;       // clocks the pipe is busy (per SMSP; per SM for mio and tensor)
  float latency = 4;     // clocks until the result can be used (memory: set by the memory model)
  float sass = 1;        // SASS instructions it stands for (issue slots)
  bool memory = false;   // a load, store or atomic (its trace event says which space)
  bool l1_cached = true; // a global load that allocates in L1 (not .cg / .cv / .volatile)
  bool returns = true;   // a load or an atomic with a destination (red and st do not)
  bool barrier = false;  // bar.sync / barrier.sync: waits for the block
  bool arrive = false;   // bar.arrive: counts toward a barrier without waiting
  // cp.async: commit_group closes the warp's open group of copies; wait_group N waits until all
  // but the newest N committed groups have landed; wait_all (async_all) for every copy.
  bool async_commit = false, async_wait = false, async_all = false;
  uint8_t async_keep = 0; // wait_group's N
  // wgmma (sm_90a): an asynchronous warpgroup MMA, whose completion (issue + pipe time + latency)
  // joins the warp's open group; commit_group closes it; wait_group N waits until all but the
  // newest N committed groups are complete.
  bool wgmma = false, wgmma_commit = false, wgmma_wait = false;
  uint8_t wgmma_keep = 0; // wait_group's N
  bool free = false;      // costs no issue slot (kernel parameters, labels, folded moves)
  // An integer add, shift or move that ptxas puts on whichever of the ALU and the FMA pipe is
  // less busy (IADD3 or IMAD.IADD, SHF or IMAD.SHL, MOV or IMAD.MOV): the replay picks.
  bool flex = false;
  // atom.shared.add of a constant: ptxas emits ATOMS.POPC.INC, which adds a warp's lanes on one
  // word in a single operation (a histogram's hot bin costs one, not 32).
  bool aggregated = false;
};

// Clocks an SMSP's pipe is busy with `sass` integer instructions (ALU, or IMAD on the FMA pipe's
// heavy half: both at the integer rate).
float integer_issue(const Machine& m, float sass);

// One entry per pc of the decoded kernel.
std::vector<OpCost> cost_table(const std::vector<sim::InstInfo>& code, const Machine& m);

} // namespace wb::perf
