// The machine a prediction is made for: what the performance model (app/core/perf/) needs to
// know about one GPU, beyond the roofline's ceilings. Every figure comes from a cited source:
// NVIDIA's programming guide and datasheets, microbenchmark papers, or `warpbook probe` on a GPU
// of that kind (docs/perf-model.md lists them). Nothing here is fitted to a kernel.
#pragma once
#include "core/roofline.hpp"

#include <string>
#include <vector>

namespace wb {
struct MeasuredCeiling;
}

namespace wb::perf {

// Issue pipes of an SM sub-partition (SMSP) and what is shared by the whole SM.
enum class Pipe : uint8_t {
  alu,    // integer add/logic/shift/compare, moves, predicates, branches (16 lanes/clk/SMSP)
  fma,    // FP32 add/mul/fma and integer multiply (32 lanes/clk/SMSP on 8.6+, 16 on 8.0)
  fp64,   // FP64 arithmetic
  fp16,   // packed half/bfloat arithmetic
  sfu,    // special functions (ex2, lg2, rsqrt, sin, cos, tanh) and popc/clz
  conv,   // conversions to/from 64-bit types, float <-> int
  mio,    // the SM's memory-instruction queue: loads, stores, atomics, shuffles
  tensor, // mma / wmma
  sync,   // barriers
  none,   // no pipe (labels, nops)
};
constexpr int kPipes = 10;
const char* pipe_name(Pipe p);

struct Machine {
  std::string key, name;
  int cc = 90; // compute capability x 10
  int sm_count = 132;
  double clock_ghz = 1.98; // SM clock under load

  // Residency (CUDA programming guide, "Technical specifications per compute capability").
  int max_threads_sm = 2048, max_warps_sm = 64, max_blocks_sm = 32;
  int regs_sm = 65536, reg_unit = 256, warp_gran = 4, max_regs_thread = 255;
  int smem_sm = 233472, smem_block_optin = 232448, smem_reserved = 1024, smem_unit = 128;
  int l1_shared_bytes = 262144; // unified L1 + shared memory per SM
  std::vector<int> carveouts_kb = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};

  // Issue: warp instructions per clock per SMSP, for each Pipe (mio and tensor: per SM).
  double rate[kPipes] = {0.5, 1.0, 0.5, 1.0, 0.125, 0.125, 1.0, 1.0, 0.25, 4.0};
  // Dependent-issue latency in clocks, per Pipe (mio: see the memory latencies below).
  double latency[kPipes] = {4, 4, 8, 8, 17, 12, 24, 24, 20, 1};
  double shfl_latency = 24;
  double tensor_flops_clk_sm = 2734; // mma.sync f16/bf16 FLOPs per clock per SM
  // mma.sync with e4m3/e5m2 inputs, FLOPs per clock per SM. 0: at the f16 rate (a native FP8
  // mma). Hopper has none: ptxas unpacks to f16, runs two HMMA into zeroed registers and adds the
  // result to the accumulator with 4 FADD, and the whole costs about twice the f16 mma's time.
  double fp8_mma_flops_clk_sm = 0;
  // wgmma.mma_async (sm_90a) with f16/bf16 inputs, FLOPs per clock per SM; FP8 (e4m3/e5m2) runs
  // at twice this (the datasheet's ratio). 0: no wgmma (charged at the mma.sync rate).
  double wgmma_flops_clk_sm = 0;

  // Memory. Latencies in ns (unloaded), bandwidths in GB/s (10^9 B/s).
  double lat_l1_ns = 17, lat_shared_ns = 11.6, lat_l2_ns = 146, lat_dram_ns = 330;
  double lat_atomic_ns = 250;
  double l1_bytes_clk = 128; // L1 / shared data path per SM per clock
  double l2_gbps = 8900;     // L2 read, all SMs
  // The L2's rate into shared memory through the copy engine (cp.async.bulk and TMA), where a
  // probe measured it (0: bulk copies at l2_gbps).
  double l2_bulk_gbps = 0;
  double l2_capacity = 30e6; // what a kernel can reuse (bytes)
  double dram_read_gbps = 4560, dram_write_gbps = 4280, dram_copy_gbps = 3980,
         dram_triad_gbps = 4300;          // streams
  double dram_sector_read_gbps = 1880;    // one 32 B sector per 128 B line (32 B counted)
  double dram_sector_read_64_gbps = 2230; // one sector per 64 B
  double dram_sector_write_gbps = 707;    // 4 B written per 128 B line (32 B counted)
  double dram_fetch_bytes = 64;           // the L2 fetches this much from DRAM per miss
  double sm_max_bytes_clk = 64;           // the most one SM moves to or from L2 per clock
  // Loaded latency: the DRAM read bandwidth the whole GPU reaches with a given number of bytes in
  // flight per SM (KiB, GB/s), a read stream with a known number of loads in flight. By Little's
  // law a read issued with Y bytes in flight GPU-wide takes about Y / BW(Y).
  std::vector<std::pair<double, double>> dram_mlp = {{2, 694},   {4, 1336},  {8, 2447},  {16, 3765},
                                                     {32, 4305}, {64, 4280}, {128, 4459}};
  double l2_sector_read_gops = 234.8; // 4-byte reads, one sector per lane (G sectors/s)
  double l2_sector_write_gops = 97.8; // 4-byte writes, one sector per lane (partial sectors)
  double l2_write_gbps = 4001;        // whole lines

  // Atomics (GOP/s: lane operations per second, whole GPU).
  double atomic_spread_gops = 117, atomic_warp_gops = 56.8, atomic_one_gops = 0.57;
  // u32 adds on one address, counted per lane, from whole warps on a warp-uniform address: the
  // compiler aggregates each warp into one RED (NVIDIA, "Optimized Filtering with Warp-Aggregated
  // Atomics"), so 32 / this is what one integer add at one word costs the L2 (0.73 ns on an H100,
  // against 1.76 ns for a float add: atomic_one_gops, per lane whether one lane or 32 send it).
  double atomic_one_u32_gops = 43.6;
  // Float adds, measured only where a profile's probe has them (0: not measured, and the model
  // charges float lanes as integer ones): every lane of a warp on its warp's own word, and every
  // thread of a block on its block's word (words side by side, as a row sum's outputs).
  double atomic_warp_f32_gops = 0, atomic_row_f32_gops = 0;
  double shared_atomic_one_gops = 20.1; // f32, one address per block, all SMs
  // The words the probe above had on each SM: one per resident 256-thread block.
  double shared_atomic_one_words_sm = 8;
  double shared_atomic_f32_warp_gops = 0; // f32, one word per warp (0: not measured)
  double shared_atomic_u32_one_gops = 260.8, shared_atomic_u32_spread_gops = 8325; // integer
  bool atomic_one_per_warp = false; // the serialisation at one address is per warp instruction

  // Launches.
  double launch_us = 3.2;         // one launch between events, nothing in it
  double block_ns = 78.6;         // an SM starts at most one block this often (small blocks)
  double block_ns_per_warp = 3.5; // ... and no faster than this per warp of the block
  double block_turnover_ns = 161; // a slot's next block starts this long after one ends (H200)

  std::string source;    // where the figures come from, one line
  bool measured = false; // figures of `warpbook probe` on this very GPU are in

  double cycles(double ns) const { return ns * clock_ghz; }
  // The loaded latency (ns) of a DRAM read with `gpu_bytes` in flight on the whole GPU.
  double dram_loaded_ns(double gpu_bytes) const;
  double ns(double cycles) const { return cycles / clock_ghz; }
};

// Where a profile's figures come from, by group of parameters, and how far the model is from
// times measured on a GPU: the one table (machine.cpp) that `warpbook devices`, `warpbook
// predict` and the window show. Each group's origin is one of kOrigins.
struct ParameterGroup {
  std::string name;   // "DRAM bandwidth"
  std::string origin; // "measured", "measured on the H200", "datasheet", "paper", "scaled", ...
  std::string source; // the probe, document or paper, in a few words
};
struct ProfileEvidence {
  std::string key; // the profile's
  std::vector<ParameterGroup> groups;
  bool validated = false; // the model was checked against times measured on this GPU
  std::string accuracy;   // how far it was, or for a GPU not validated, what to expect
};
// The evidence of a profile key (gpu_profiles()); an unknown key gets the H200's figures'
// evidence with `validated` false.
const ProfileEvidence& profile_evidence(const std::string& key);
// "measured: DRAM bandwidth, ...; datasheet: ...": the groups by origin, in one line.
std::string origins_text(const ProfileEvidence& e);

// The model's figures for a profile of the table (roofline.hpp's gpu_profiles()), from cited
// sources; `measured` (what `warpbook probe` stored for a GPU of this kind) replaces them.
Machine machine_for(const GpuProfile& p, const std::vector<MeasuredCeiling>& measured = {});

} // namespace wb::perf
