// The order a warp's instructions issue in. PTX is not scheduled: ptxas reorders each basic block
// so that loads start early and independent arithmetic fills the latency of dependent chains.
// The traces are in PTX order, so before the replay each run of straight-line code in them is
// reordered the way a list scheduler does it: by the longest latency-weighted path to the end of
// the run, loads counted at the L2's latency, dependencies (through registers) respected, and
// nothing moved across a branch, a barrier, a store or an atomic.
#pragma once
#include "core/backend/sim/sim.hpp"
#include "isa.hpp"

namespace wb::perf {

// Reorders the traces of the launch's sampled blocks listed in `blocks` (the templates the replay
// plays).
void schedule_like_ptxas(sim::SampledLaunch& l, const std::vector<OpCost>& cost, const Machine& m,
                         const std::vector<size_t>& blocks);

} // namespace wb::perf
