#include "machine.hpp"

#include "core/store.hpp"

#include <algorithm>
#include <cmath>

namespace wb::perf {

const char* pipe_name(Pipe p) {
  switch (p) {
  case Pipe::alu:
    return "integer ALU";
  case Pipe::fma:
    return "FMA (FP32 and integer multiply)";
  case Pipe::fp64:
    return "FP64";
  case Pipe::fp16:
    return "FP16";
  case Pipe::sfu:
    return "special functions";
  case Pipe::conv:
    return "conversions";
  case Pipe::mio:
    return "load/store";
  case Pipe::tensor:
    return "tensor cores";
  case Pipe::sync:
    return "barriers";
  default:
    return "none";
  }
}

namespace {

// Per compute capability: residency and issue (CUDA C++ Programming Guide, "Compute
// Capabilities": technical specifications and the arithmetic-throughput table; per-SMSP rates are
// the per-SM results per clock / 4 / 32).
void set_cc(Machine& m, int cc) {
  m.cc = cc;
  auto rates = [&](double alu, double fma, double fp64, double fp16, double sfu, double conv) {
    m.rate[int(Pipe::alu)] = alu;
    m.rate[int(Pipe::fma)] = fma;
    m.rate[int(Pipe::fp64)] = fp64;
    m.rate[int(Pipe::fp16)] = fp16;
    m.rate[int(Pipe::sfu)] = sfu;
    m.rate[int(Pipe::conv)] = conv;
    m.rate[int(Pipe::mio)] = 1.0;    // one memory instruction per clock per SM (32 lanes)
    m.rate[int(Pipe::sync)] = 0.125; // 16 barrier operations per clock per SM: per warp, /4 SMSPs
  };
  switch (cc) {
  case 90:
    m.max_threads_sm = 2048, m.max_warps_sm = 64, m.max_blocks_sm = 32;
    m.smem_sm = 228 * 1024, m.smem_block_optin = 227 * 1024, m.l1_shared_bytes = 256 * 1024;
    m.carveouts_kb = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
    rates(0.5, 1.0, 0.5, 1.0, 0.125, 0.125);
    break;
  case 80:
    m.max_threads_sm = 2048, m.max_warps_sm = 64, m.max_blocks_sm = 32;
    m.smem_sm = 164 * 1024, m.smem_block_optin = 163 * 1024, m.l1_shared_bytes = 192 * 1024;
    m.carveouts_kb = {0, 8, 16, 32, 64, 100, 132, 164};
    rates(0.5, 0.5, 0.25, 1.0, 0.125, 0.125);
    break;
  case 86:
  case 89:
    m.max_threads_sm = 1536, m.max_warps_sm = 48, m.max_blocks_sm = cc == 89 ? 24 : 16;
    m.smem_sm = 100 * 1024, m.smem_block_optin = 99 * 1024, m.l1_shared_bytes = 128 * 1024;
    m.carveouts_kb = {0, 8, 16, 32, 64, 100};
    rates(0.5, 1.0, 1.0 / 64, 0.5, 0.125, 0.125);
    break;
  case 75:
    m.max_threads_sm = 1024, m.max_warps_sm = 32, m.max_blocks_sm = 16;
    m.smem_sm = 64 * 1024, m.smem_block_optin = 64 * 1024, m.l1_shared_bytes = 96 * 1024;
    m.smem_reserved = 0, m.smem_unit = 256;
    m.carveouts_kb = {32, 64};
    rates(0.5, 0.5, 1.0 / 64, 1.0, 0.125, 0.125);
    break;
  }
}

void set_latency(Machine& m, double alu, double fma, double fp64, double fp16, double sfu,
                 double conv, double shfl, double mma) {
  m.latency[int(Pipe::alu)] = alu;
  m.latency[int(Pipe::fma)] = fma;
  m.latency[int(Pipe::fp64)] = fp64;
  m.latency[int(Pipe::fp16)] = fp16;
  m.latency[int(Pipe::sfu)] = sfu;
  m.latency[int(Pipe::conv)] = conv;
  m.latency[int(Pipe::tensor)] = mma;
  m.latency[int(Pipe::mio)] = shfl; // register-to-register MIO work (shuffles)
  m.latency[int(Pipe::sync)] = 20;
  m.shfl_latency = shfl;
}

// DRAM figures a profile has only a datasheet number for: the fractions our H200 measured (read
// 95%, write 89%, copy 83%, triad 90% of 4.8 TB/s; isolated sectors and partial writes as below).
void set_dram_from_datasheet(Machine& m, double gbps) {
  m.dram_read_gbps = 0.950 * gbps;
  m.dram_write_gbps = 0.892 * gbps;
  m.dram_copy_gbps = 0.829 * gbps;
  m.dram_triad_gbps = 0.896 * gbps;
  m.dram_sector_read_gbps = 0.392 * gbps;
  m.dram_sector_read_64_gbps = 0.465 * gbps;
  m.dram_sector_write_gbps = 0.147 * gbps;
}

Machine base(const GpuProfile& p) {
  Machine m;
  m.key = p.key;
  m.name = p.name;
  m.sm_count = p.sm_count;
  m.clock_ghz = p.boost_mhz / 1000.0;
  set_dram_from_datasheet(m, p.dram_gbps);
  if (p.key == "h200" || p.key == "h100-sxm") {
    set_cc(m, 90);
    // Latencies measured on an H100 SXM and an H200 (dependent chains, one warp; cycles at
    // 1980 MHz); memory latencies from `warpbook probe` (pointer chases) on our H200.
    set_latency(m, 4.1, 4.1, 8.05, 8.1, 17, 12, 24, 24.3);
    m.tensor_flops_clk_sm = 2734;  // mma.sync reaches 67% of the wgmma peak on Hopper
    m.fp8_mma_flops_clk_sm = 1343; // `warpbook probe` on our H200: 351 TFLOP/s
    // wgmma m64n256k16 f16, per clock at 1980 MHz on 132 SMs: `warpbook probe` on our H200
    // with random tiles, 895 TFLOP/s (966 with near-constant tiles: the clock falls with the bits
    // switched); on an H100 SXM 969 TFLOP/s, measured with near-constant tiles only.
    m.wgmma_flops_clk_sm = p.key == "h200" ? 895281.0 / (132 * 1.98) : 969009.0 / (132 * 1.98);
    m.lat_l1_ns = 20.1, m.lat_shared_ns = 14.2, m.lat_l2_ns = 146, m.lat_dram_ns = 343,
    m.lat_atomic_ns = 200;
    m.l1_bytes_clk = 128;
    m.launch_us = 2.62, m.block_ns = 79.5, m.block_ns_per_warp = 3.46;
    m.atomic_spread_gops = 115.9, m.atomic_warp_gops = 58.7, m.atomic_one_gops = 0.569,
    m.shared_atomic_one_gops = 20.18;
    // `warpbook probe` on an H100 SXM (bench/perfmodel/data/h100-first-attempts); the H200 has
    // the same die and L2, and the same one-address float figure as the H100.
    m.atomic_one_u32_gops = 43.6;
    // Float adds on many words, `warpbook probe` on an H100 SXM: 46.4 G lanes/s with a word per
    // warp a sector apart, 7.61 with a word per block side by side (a block's warps on one word).
    m.atomic_warp_f32_gops = 46.4, m.atomic_row_f32_gops = 7.61;
    if (p.key == "h200") {
      m.l2_gbps = 8821, m.l2_capacity = 33.75 * 1048576;
      m.dram_read_gbps = 4558, m.dram_write_gbps = 4285, m.dram_copy_gbps = 3988,
      m.dram_triad_gbps = 4306, m.dram_sector_read_gbps = 1878, m.dram_sector_read_64_gbps = 2257,
      m.dram_sector_write_gbps = 704;
      m.source = "NVIDIA H200 datasheet; CUDA programming guide (compute capability 9.0); "
                 "instruction latencies measured on an H100 SXM and an H200; memory, atomics and "
                 "launches measured by `warpbook probe` on an H200 (driver 580.159)";
    } else {
      // H100 SXM: the same SM; its own memory (3.35 TB/s HBM3, 50 MiB of L2). DRAM streams
      // measured on an H100 SXM (read 3101, copy 2826, write 3088 GB/s); sector costs scaled from
      // the H200's by the read streams' ratio. The L2: `warpbook probe` on four H100 SXMs read
      // half of it at 7.36-7.54 TB/s (the copy engine 7.53) and kept 28.1 MiB of a warm chase.
      m.l2_gbps = 7500, m.l2_capacity = 28.125 * 1048576;
      const double r = 3101.0 / 4560.0;
      m.dram_read_gbps = 3101, m.dram_write_gbps = 3088, m.dram_copy_gbps = 2826,
      m.dram_triad_gbps = 4300 * r, m.dram_sector_read_gbps = 1880 * r,
      m.dram_sector_read_64_gbps = 2230 * r, m.dram_sector_write_gbps = 707 * r;
      m.lat_l2_ns = 139, m.lat_dram_ns = 340;
      m.source = "NVIDIA H100 datasheet; CUDA programming guide (compute capability 9.0); "
                 "latencies and DRAM streams measured on an H100 SXM; atomics and launches as "
                 "measured on the H200 (the same GH100 chip)";
    }
    if (p.key == "h100-sxm") {
      // The H200's curve measured in flight per SM: the same SMs; the bandwidths scaled.
      for (auto& [kb, gbps] : m.dram_mlp) gbps *= 3101.0 / 4459.0;
      m.l2_sector_read_gops *= 7500.0 / 8900, m.l2_sector_write_gops *= 7500.0 / 8900,
          m.l2_write_gbps *= 7500.0 / 8900;
    }
  } else if (p.key.rfind("a100", 0) == 0) {
    set_cc(m, 80);
    // Abdelkhalik et al. 2022 and Luo et al. 2025 (A100): FMA 4, L1 33, shared 23, L2 200,
    // DRAM 566 cycles at 1410 MHz; Accel-Sim's A100 configuration for SFU (23) and mma (25).
    set_latency(m, 4, 4, 6, 6, 23, 12, 25, 25);
    m.tensor_flops_clk_sm = 2048;
    m.lat_l1_ns = 33 / 1.41, m.lat_shared_ns = 23 / 1.41, m.lat_l2_ns = 200 / 1.41,
    m.lat_dram_ns = 401, m.lat_atomic_ns = 240;
    m.l2_gbps = 4400, m.l2_capacity = 20.0 * 1048576; // a partition's worth, as on GH100
    m.launch_us = 2.3, m.block_ns = 78.6 * 1.98 / 1.41;
    const double s = 4400.0 / 8900.0; // atomics scale with the L2
    m.atomic_spread_gops = 117 * s, m.atomic_warp_gops = 56.8 * s,
    m.atomic_one_gops = 0.57 * 1.41 / 1.98, m.atomic_one_u32_gops = 43.6 * 1.41 / 1.98,
    m.shared_atomic_one_gops = 20.1 * 108 * 1.41 / (132 * 1.98);
    m.source = "NVIDIA A100 datasheet; CUDA programming guide (compute capability 8.0); "
               "latencies from Abdelkhalik et al. 2022 and Luo et al. 2025; DRAM efficiencies, "
               "atomics and launches scaled from our H200's measurements";
  } else {
    const bool turing = p.key == "t4";
    const bool ada = p.key == "l40s" || p.key == "rtx4090" || p.key == "l4";
    set_cc(m, turing ? 75 : ada ? 89 : 86);
    // Luo et al. (RTX 4090: L1 43, shared 30, L2 273, DRAM 541 cycles); Accel-Sim's RTX 4060 and
    // RTX 3070 configurations for the rest.
    set_latency(m, 4, 4, 16, 6, 21, 12, 25, 33);
    m.tensor_flops_clk_sm = p.fp16_tc_gflops * 1e9 / (p.sm_count * p.boost_mhz * 1e6);
    const double ghz = m.clock_ghz;
    m.lat_l1_ns = 43 / ghz, m.lat_shared_ns = 30 / ghz, m.lat_l2_ns = 273 / ghz,
    m.lat_dram_ns = 541 / ghz, m.lat_atomic_ns = 300;
    m.l2_capacity = p.l2_mib * 1048576 * 0.5;
    m.l2_gbps = p.key == "rtx4090"   ? 5000
                : p.key == "l40s"    ? 5500
                : p.key == "rtx3090" ? 2500
                : p.key == "l4"      ? 2000
                                     : 1200;
    m.launch_us = 3.0, m.block_ns = 78.6 * 1.98 / ghz;
    const double s = m.l2_gbps / 8900.0;
    m.atomic_spread_gops = 117 * s, m.atomic_warp_gops = 56.8 * s,
    m.atomic_one_gops = 0.57 * ghz / 1.98, m.atomic_one_u32_gops = 43.6 * ghz / 1.98,
    m.shared_atomic_one_gops = 20.1 * p.sm_count * ghz / (132 * 1.98);
    m.source = std::string(p.name) + " datasheet; CUDA programming guide (compute capability " +
               (turing ? "7.5"
                : ada  ? "8.9"
                       : "8.6") +
               "); latencies from Luo et al. and Accel-Sim's configurations; DRAM efficiencies, "
               "atomics and launches scaled from our H200's measurements";
  }
  if (p.key != "h200" && p.key != "h100-sxm") {
    // GPUs not measured here: the H200's shape of loaded latency, scaled to this GPU's read
    // stream and unloaded latency (the bytes in flight that saturate scale with both).
    const double bw = m.dram_read_gbps / 4459.0, lat = m.lat_dram_ns / 390.0;
    const double per_sm = 132.0 / m.sm_count;
    for (auto& [kb, gbps] : m.dram_mlp) kb *= bw * lat * per_sm, gbps *= bw;
    const double l2 = m.l2_gbps / 8821.0;
    m.l2_sector_read_gops *= l2, m.l2_sector_write_gops *= l2, m.l2_write_gbps *= l2;
    const double sm_clk = m.sm_count * m.clock_ghz / (132 * 1.98);
    m.shared_atomic_u32_one_gops *= sm_clk, m.shared_atomic_u32_spread_gops *= sm_clk;
  }
  // The shared float probe's grid fills every SM with its 256-thread blocks, each on its own word.
  m.shared_atomic_one_words_sm = m.max_threads_sm / 256.0;
  return m;
}

} // namespace

namespace {

// The origin of each group of base()'s figures, per profile. Origins: "measured" (by `warpbook
// probe` or a microbenchmark on a GPU of this kind), "measured on the H200" (the same chip),
// "documented" (NVIDIA's programming guide), "datasheet", "paper" (published microbenchmarks),
// "scaled" (an H200 measurement scaled by a datasheet ratio: bandwidth, SMs, clock), "estimate"
// (no source measures it).
const std::vector<ProfileEvidence>& evidence_table() {
  const std::string guide = "CUDA C++ programming guide, compute capability tables";
  const std::string validated_gpus =
      "Not validated: no time has been measured on this GPU. On the GPUs the model was "
      "validated on it is within 1.5x of 95% of 85 kernels (worst 1.66x on the H100, 2.53x on the "
      "H200; solutions within 1.30x on the H100); here expect more, by as much as the datasheet, "
      "scaled and estimated figures are off";
  auto hopper = [&](const std::string& key) {
    const bool h200 = key == "h200";
    ProfileEvidence e;
    e.key = key;
    e.validated = true;
    e.groups = {
        {"SM limits and issue rates", "documented", guide},
        {"instruction latencies", "measured", "dependent chains on an H100 SXM and an H200"},
        {"DRAM bandwidth", "measured",
         h200 ? "`warpbook probe` streams and scattered sectors on an H200"
              : "read, copy and write streams on an H100 SXM; scattered sectors scaled from the "
                "H200's by the read streams' ratio"},
        {"DRAM latency under load", h200 ? "measured" : "scaled",
         h200 ? "`warpbook probe`: bandwidth against bytes in flight per SM"
              : "the H200's curve, bandwidths scaled by the read streams' ratio"},
        {"L1, shared, L2 and DRAM latencies", "measured",
         h200 ? "`warpbook probe` pointer chases on an H200"
              : "pointer chases on an H100 SXM (L2, DRAM); L1 and shared as the H200's"},
        {"L2 bandwidth and capacity", "measured",
         h200 ? "`warpbook probe` on an H200"
              : "`warpbook probe` on H100 SXMs: 7.5 TB/s read, 28.1 MiB kept"},
        {"atomics", h200 ? "measured" : "measured on the H200",
         "`warpbook probe`; u32 adds on one word on an H100 SXM"},
        {"launches and block dispatch", h200 ? "measured" : "measured on the H200",
         "`warpbook probe`"},
        {"tensor cores", "measured",
         h200 ? "`warpbook probe`: mma.sync, FP8 and wgmma on an H200"
              : "wgmma on an H100 SXM; mma.sync as the H200's"},
    };
    e.accuracy = h200 ? "Validated on an H200: 85 corpus kernels (solutions, references, "
                        "variants) 95% within 1.5x, 84 within 2x, worst 2.53x, Spearman 0.987; "
                        "16 held-out kernels all within 1.5x"
                      : "Validated on an H100 SXM: the 85 corpus kernels 95% within 1.5x, all "
                        "within 2x, worst 1.66x, Spearman 0.985; the solutions within 1.30x, mean "
                        "error 6.7%";
    return e;
  };
  auto other = [&](const std::string& key, const std::string& latencies) {
    ProfileEvidence e;
    e.key = key;
    e.groups = {
        {"SM limits and issue rates", "documented", guide},
        {"instruction latencies", "paper", latencies},
        {"DRAM bandwidth", "scaled", "the datasheet's peak times the H200's measured efficiencies"},
        {"DRAM latency under load", "scaled",
         "the H200's curve scaled to this GPU's bandwidth, SMs and unloaded latency"},
        {"L1, shared, L2 and DRAM latencies", "paper", latencies},
        {"L2 bandwidth and capacity", "estimate",
         "bandwidth not measured; capacity half the datasheet's L2, as reusable on the H200"},
        {"atomics", "scaled", "the H200's, scaled by L2 bandwidth, SMs and clock"},
        {"launches and block dispatch", "scaled", "the H200's, scaled by the clock"},
        {"tensor cores", "datasheet", "dense FP16 peak with FP32 accumulation"},
    };
    e.accuracy = validated_gpus;
    return e;
  };
  const std::string a100 = "Abdelkhalik et al. 2022, Luo et al. 2025, Accel-Sim's A100 config";
  const std::string luo = "Luo et al. (RTX 4090), Accel-Sim's RTX 4060 and 3070 configs";
  static const std::vector<ProfileEvidence> t = {
      hopper("h200"),           hopper("h100-sxm"), other("a100-80gb", a100),
      other("a100-40gb", a100), other("l40s", luo), other("rtx4090", luo),
      other("rtx3090", luo),    other("l4", luo),   other("t4", luo),
  };
  return t;
}

} // namespace

const ProfileEvidence& profile_evidence(const std::string& key) {
  for (auto& e : evidence_table())
    if (e.key == key) return e;
  static const ProfileEvidence unknown = [] {
    ProfileEvidence e = evidence_table().front();
    e.key.clear();
    e.validated = false;
    e.accuracy = "A GPU with no profile: its own SM count and clock, the H200's figures otherwise; "
                 "not validated";
    return e;
  }();
  return unknown;
}

std::string origins_text(const ProfileEvidence& e) {
  std::vector<std::pair<std::string, std::string>> by; // origin -> group names
  for (auto& g : e.groups) {
    auto it = std::find_if(by.begin(), by.end(), [&](auto& b) { return b.first == g.origin; });
    if (it == by.end())
      by.push_back({g.origin, g.name});
    else
      it->second += ", " + g.name;
  }
  std::string s;
  for (auto& [origin, names] : by) s += (s.empty() ? "" : "; ") + origin + ": " + names;
  return s;
}

double Machine::dram_loaded_ns(double gpu_bytes) const {
  if (dram_mlp.empty()) return lat_dram_ns;
  // The curve as latency against GPU-wide bytes in flight, interpolated in log space; below the
  // first point the first point's latency, past the last the queue grows at the last bandwidth.
  auto point = [&](size_t i) {
    double y = dram_mlp[i].first * 1024.0 * sm_count;
    return std::pair{y, y / (dram_mlp[i].second * 1e9) * 1e9}; // (bytes, ns)
  };
  auto [y0, l0] = point(0);
  if (gpu_bytes <= y0) return l0;
  for (size_t i = 1; i < dram_mlp.size(); ++i) {
    auto [y1, l1] = point(i);
    if (gpu_bytes <= y1) {
      double f = std::log(gpu_bytes / y0) / std::log(y1 / y0);
      return l0 * std::pow(l1 / l0, f);
    }
    y0 = y1, l0 = l1;
  }
  return l0 * gpu_bytes / y0;
}

Machine machine_for(const GpuProfile& p, const std::vector<MeasuredCeiling>& measured) {
  Machine m = base(p);
  auto take = [&](const char* metric, double& field, double scale = 1.0) {
    for (auto& c : measured)
      if (c.metric == metric && c.value > 0 && std::isfinite(c.value)) {
        field = c.value * scale;
        m.measured = true;
      }
  };
  take(metric::dram_read, m.dram_read_gbps);
  take(metric::dram_copy, m.dram_copy_gbps);
  take(metric::dram_triad, m.dram_triad_gbps);
  take(metric::dram_write, m.dram_write_gbps);
  take(metric::dram_sector_read, m.dram_sector_read_gbps);
  take(metric::dram_sector_read_64, m.dram_sector_read_64_gbps);
  take(metric::dram_sector_write, m.dram_sector_write_gbps);
  take(metric::l2, m.l2_gbps);
  take(metric::l2_bulk, m.l2_bulk_gbps);
  take(metric::l1_latency, m.lat_l1_ns);
  take(metric::l2_latency, m.lat_l2_ns);
  take(metric::dram_latency, m.lat_dram_ns);
  take(metric::shared_latency, m.lat_shared_ns);
  take(metric::atomic_latency, m.lat_atomic_ns);
  take(metric::l2_capacity, m.l2_capacity, 1048576.0);
  take(metric::atomic_one, m.atomic_one_gops);
  take(metric::atomic_one_u32, m.atomic_one_u32_gops);
  take(metric::atomic_warp, m.atomic_warp_gops);
  take(metric::atomic_spread, m.atomic_spread_gops);
  take(metric::atomic_shared_one, m.shared_atomic_one_gops);
  take(metric::atomic_warp_f32, m.atomic_warp_f32_gops);
  take(metric::atomic_row_f32, m.atomic_row_f32_gops);
  take(metric::atomic_shared_f32_warp, m.shared_atomic_f32_warp_gops);
  take(metric::launch, m.launch_us);
  take(metric::l2_sector_read, m.l2_sector_read_gops);
  take(metric::l2_sector_write, m.l2_sector_write_gops);
  take(metric::l2_write, m.l2_write_gbps);
  take(metric::atomic_shared_u32_one, m.shared_atomic_u32_one_gops);
  take(metric::atomic_shared_u32_spread, m.shared_atomic_u32_spread_gops);
  {
    const std::pair<const char*, double> mlp[] = {
        {metric::dram_mlp_2k, 2},    {metric::dram_mlp_4k, 4},   {metric::dram_mlp_8k, 8},
        {metric::dram_mlp_16k, 16},  {metric::dram_mlp_32k, 32}, {metric::dram_mlp_64k, 64},
        {metric::dram_mlp_128k, 128}};
    std::vector<std::pair<double, double>> curve;
    for (auto [name, kb] : mlp) {
      double v = 0;
      take(name, v);
      if (v > 0) curve.push_back({kb, v});
    }
    if (curve.size() >= 3) m.dram_mlp = curve;
  }
  double rate = 0;
  take(metric::block_rate_256, rate);
  if (rate > 0) m.block_ns = m.sm_count * 1e3 / rate;
  double rate1024 = 0;
  take(metric::block_rate_1024, rate1024);
  if (rate1024 > 0) m.block_ns_per_warp = m.sm_count * 1e3 / rate1024 / 32;
  take(metric::block_turnover, m.block_turnover_ns);
  double mma = 0;
  take(metric::mma_f16, mma);
  if (mma > 0) m.tensor_flops_clk_sm = mma / (m.sm_count * m.clock_ghz);
  double wg = 0;
  take(metric::wgmma_f16, wg);
  if (wg > 0) m.wgmma_flops_clk_sm = wg / (m.sm_count * m.clock_ghz);
  double fp8 = 0;
  take(metric::mma_e4m3, fp8);
  if (fp8 > 0) m.fp8_mma_flops_clk_sm = fp8 / (m.sm_count * m.clock_ghz);
  if (m.measured) m.source += "; this GPU's own figures from `warpbook probe`";
  return m;
}

} // namespace wb::perf
