// The simulator as a Backend: lays out the plan's buffers in the simulated address space, checks
// each launch's configuration, runs it (exec.cpp), and turns the per-instruction counts into the
// named counters, per launch total and per learner source line.
#include "decode.hpp"
#include "exec.hpp"
#include "sim.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <chrono>
#include <functional>
#include <list>
#include <thread>

namespace wb {
namespace sim {
namespace {

size_t dtype_bytes(DType t) {
  switch (t) {
  case DType::f64:
  case DType::i64:
    return 8;
  case DType::f32:
  case DType::i32:
  case DType::u32:
    return 4;
  case DType::f16:
  case DType::bf16:
  case DType::i16:
    return 2;
  default:
    return 1;
  }
}

Fault launch_fault(FaultKind k, std::string msg, int launch) {
  Fault f;
  f.kind = k;
  f.message = std::move(msg);
  f.launch = launch;
  return f;
}

enum Ctr : int {
  cWarp,
  cThread,
  cDivergent,
  cLdReq,
  cStReq,
  cLdSect,
  cLdIdeal,
  cStSect,
  cStIdeal,
  cWave,
  cConflict,
  cF32,
  cF16,
  cF64,
  cTensor,
  cSpecial,
  cBytesLd,
  cBytesSt,
  cAtomics,
  kNumCounters
};
const char* const kCounterNames[kNumCounters] = {"warp_instructions",
                                                 "thread_instructions",
                                                 "divergent_branches",
                                                 "global_load_requests",
                                                 "global_store_requests",
                                                 "global_load_sectors",
                                                 "global_load_ideal_sectors",
                                                 "global_store_sectors",
                                                 "global_store_ideal_sectors",
                                                 "shared_wavefronts",
                                                 "shared_bank_conflicts",
                                                 "flops_f32",
                                                 "flops_f16",
                                                 "flops_f64",
                                                 "flops_tensor",
                                                 "special_ops",
                                                 "bytes_loaded",
                                                 "bytes_stored",
                                                 "atomics"};

std::string dims(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

} // namespace

struct Simulator::Impl {
  explicit Impl(unsigned workers, int nice)
      : pool(workers ? workers - 1 : std::max(1u, std::thread::hardware_concurrency()) - 1, nice) {}
  Pool pool;
  std::mutex mu, run_mu;
  // A few recently used modules, by PTX text: decoding happens once per module and kernel.
  std::list<std::pair<std::string, std::shared_ptr<ModuleImage>>> cache;
  std::shared_ptr<ModuleImage> module(const std::string& ptx) {
    std::lock_guard lk(mu);
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (it->first == ptx) {
        cache.splice(cache.begin(), cache, it);
        return cache.front().second;
      }
    }
    std::shared_ptr<ModuleImage> m(load_module(ptx).release());
    cache.emplace_front(ptx, m);
    if (cache.size() > 8) cache.pop_back();
    return m;
  }
};

Simulator::Simulator(SimOptions o) : opt_(o), impl_(std::make_unique<Impl>(o.workers, o.nice)) {}
Simulator::~Simulator() = default;

RunResult Simulator::run(const RunPlan& plan) {
  // One run at a time: the worker pool and its states are shared.
  std::lock_guard run_lock(impl_->run_mu);
  try {
    return run_locked(plan);
  } catch (const std::bad_alloc&) {
    RunResult r;
    r.fault = launch_fault(FaultKind::memory_limit,
                           "the simulator ran out of host memory for this plan's buffers", -1);
    return r;
  } catch (const std::exception& e) {
    RunResult r;
    r.fault =
        launch_fault(FaultKind::internal,
                     std::string("the simulator failed (a bug in Warpbook): ") + e.what(), -1);
    return r;
  }
}

SampledRun Simulator::run_sampled(const RunPlan& plan,
                                  const std::vector<std::vector<uint64_t>>& blocks,
                                  size_t trace_cap, size_t stop_after,
                                  const std::vector<size_t>& launch_stop) {
  std::lock_guard run_lock(impl_->run_mu);
  SampledRun out;
  Sampling s{&blocks, trace_cap, &out, stop_after, &launch_stop};
  const bool writers = opt_.track_writers;
  opt_.track_writers = false;
  try {
    RunResult r = run_locked(plan, &s);
    out.fault = r.fault;
    out.warnings = std::move(r.warnings);
    out.run_ms = r.run_ms;
  } catch (const std::bad_alloc&) {
    out.fault = launch_fault(FaultKind::memory_limit,
                             "the simulator ran out of host memory for this plan's buffers", -1);
  } catch (const std::exception& e) {
    out.fault =
        launch_fault(FaultKind::internal,
                     std::string("the simulator failed (a bug in Warpbook): ") + e.what(), -1);
  }
  opt_.track_writers = writers;
  return out;
}

// Whether the kernel's blocks can exchange anything during a launch: an atomic or reduction, a
// fence, or a volatile or ordered (acquire, release, relaxed) access. Without one, a block that
// read another's writes would be a data race, so blocks are independent. What stays inside the
// block does not count: shared-memory atomics and accesses, anything scoped to the CTA (an
// mbarrier's acquire, membar.cta), fence.proxy, which orders one thread's own generic and
// async-proxy accesses (a wgmma GEMM's fence after its cp.async writes), and
// fence.mbarrier_init, which orders only the thread's mbarrier.init of its own block's shared
// memory (a TMA pipeline's setup; an arrival on another block's mbarrier is an instruction of
// its own, with its own scope).
namespace {
bool blocks_may_talk(const Program& P) {
  for (const InstInfo& inf : P.info) {
    const std::string& op = inf.opcode;
    const std::string_view first = std::string_view(op).substr(0, op.find('.'));
    bool within_block = false, orders = false;
    for (size_t a = op.find('.'); a != std::string::npos;) {
      const size_t b = op.find('.', a + 1);
      const std::string_view tok = std::string_view(op).substr(a + 1, b - a - 1);
      if (tok == "cta" || tok == "shared::cta" || tok == "proxy" || tok == "mbarrier_init" ||
          (tok == "shared" && op.find("cluster") == std::string::npos))
        within_block = true;
      if (tok == "volatile" || tok == "acquire" || tok == "release" || tok == "relaxed" ||
          tok == "mmio" || tok == "sc")
        orders = true;
      a = b;
    }
    if (within_block) continue;
    if (orders || first == "atom" || first == "red" || first == "membar" || first == "fence" ||
        first == "nanosleep")
      return true;
  }
  return false;
}
} // namespace

RunResult Simulator::run_locked(const RunPlan& plan, const Sampling* sampling) {
  auto t0 = std::chrono::steady_clock::now();
  RunResult res;
  PrintfSink printed; // every launch's printf output, in launch and block order
  auto done = [&]() -> RunResult& {
    res.printf_output = printed.finish();
    res.printf_truncated = printed.dropped() > 0;
    res.run_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return res;
  };
  if (!plan.program || plan.program->ptx.empty()) {
    res.fault = launch_fault(FaultKind::internal, "the simulator was given no PTX to run", -1);
    done();
    return res;
  }
  std::shared_ptr<ModuleImage> mod = impl_->module(plan.program->ptx);
  if (!mod->error.empty()) {
    res.fault = launch_fault(FaultKind::unsupported,
                             "the simulator could not read the PTX (PTX line " +
                                 std::to_string(mod->error_line) + "): " + mod->error,
                             -1);
    done();
    return res;
  }

  // ---- memory: module variables and the plan's buffers ----
  Memory mem;
  // A device heap per launch that mallocs; mem.heap points at the current launch's.
  std::vector<std::unique_ptr<DeviceHeap>> heaps;
  for (auto& v : mod->vars) {
    if (v.space != "global" && v.space != "const") continue;
    Region* r = mem.add(v.addr, 0, v.size, std::max<uint64_t>(v.size, 1));
    r->name = v.pretty;
    r->elem = std::max<uint32_t>(1, v.elem);
    r->elem_shift = uint32_t(std::countr_zero(r->elem));
    r->readonly = v.space == "const";
    if (!v.init.empty())
      std::memcpy(r->host, v.init.data(), std::min<size_t>(v.init.size(), v.size));
  }
  std::vector<HostBuffer>* bufs = plan.buffers;
  std::vector<Region*> buf_region;
  uint64_t next = kBufferBase;
  if (bufs) {
    for (size_t i = 0; i < bufs->size(); ++i) {
      HostBuffer& hb = (*bufs)[i];
      // Transfer::In::kept: the simulator keeps nothing between runs, so the image it is.
      const Transfer* tr = i < plan.transfers.size() ? &plan.transfers[i] : nullptr;
      const bool lazy = tr && tr->lazy;
      size_t guard = hb.guard_bytes;
      // A lazy image is both guard bands and the data; a given one may be short (tolerated).
      size_t img =
          lazy ? guard + hb.data_bytes + guard : std::max(hb.image.size(), guard + hb.data_bytes);
      uint64_t data_addr = (next + guard + 255) / 256 * 256;
      uint64_t base = data_addr - guard;
      Region* r = lazy ? mem.add_lazy(base, guard, hb.data_bytes, img, tr->lazy)
                       : mem.add(base, guard, hb.data_bytes, img);
      r->buffer = int(i);
      r->name = hb.name.empty() ? "buffer " + std::to_string(i) : hb.name;
      r->dtype = hb.type;
      r->elem = uint32_t(dtype_bytes(hb.type));
      r->elem_shift = uint32_t(std::countr_zero(r->elem));
      if (lazy) {
        r->nelem = hb.data_bytes / r->elem;
        buf_region.push_back(r);
        next = (base + img + 65536 + 255) / 256 * 256;
        continue;
      }
      if (tr && tr->in == Transfer::In::fill) {
        std::memset(r->host, int(tr->guard_fill), size_t(r->end - r->base));
        std::memset(r->host + guard, int(tr->data_fill), hb.data_bytes);
      } else if (!hb.image.empty()) {
        std::memcpy(r->host, hb.image.data(), hb.image.size());
      }
      r->nelem = hb.data_bytes / r->elem;
      if (opt_.track_writers && !plan.trusted && r->nelem)
        r->writers = static_cast<uint64_t*>(mem.alloc_zeroed(r->nelem * 8));
      buf_region.push_back(r);
      next = (base + img + 65536 + 255) / 256 * 256; // a gap so stray addresses are "outside"
    }
  }
  mem.sort();

  auto deadline =
      t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(plan.timeout_s > 0 ? plan.timeout_s : 10.0));
  std::map<std::string, double>& tot = res.counters.total;
  uint32_t max_loads = 0, max_stores = 0;
  std::map<int, std::array<double, kNumCounters>> lines; // summed over the plan's launches

  const size_t nlaunch =
      sampling ? std::min(plan.launches.size(), sampling->blocks->size()) : plan.launches.size();
  for (size_t li = 0; li < nlaunch; ++li) {
    const Launch& la = plan.launches[li];
    int launch = int(li);
    std::string why;
    const Program* P = get_program(*mod, la.kernel, why);
    if (!P) {
      res.fault = launch_fault(FaultKind::launch_config, why, launch);
      break;
    }
    for (auto& w : P->warnings) res.warnings.push_back(w);
    // ---- launch configuration ----
    const Dim3& g = la.grid;
    const Dim3& b = la.block;
    std::string bad;
    if (b.x == 0 || b.y == 0 || b.z == 0 || g.x == 0 || g.y == 0 || g.z == 0)
      bad = "a grid or block dimension is 0 (grid " + dims(g) + ", block " + dims(b) + ")";
    else if (b.count() > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64)
      bad = "a block has at most 1024 threads (x, y <= 1024, z <= 64); this launch asks for " +
            dims(b);
    else if (g.x > 2147483647u || g.y > 65535 || g.z > 65535)
      bad = "the grid " + dims(g) + " is larger than the GPU allows (x < 2^31, y and z <= 65535)";
    else if (P->reqntid[0] &&
             (b.x != uint32_t(P->reqntid[0]) || b.y != uint32_t(std::max(1, P->reqntid[1])) ||
              b.z != uint32_t(std::max(1, P->reqntid[2]))))
      bad = "the kernel requires blocks of exactly (" + std::to_string(P->reqntid[0]) + "," +
            std::to_string(std::max(1, P->reqntid[1])) + "," +
            std::to_string(std::max(1, P->reqntid[2])) + ") threads";
    else if (P->maxntid[0] && b.count() > uint64_t(P->maxntid[0]) * std::max(1, P->maxntid[1]) *
                                              std::max(1, P->maxntid[2]))
      bad = "the kernel was compiled for at most " +
            std::to_string(uint64_t(P->maxntid[0]) * std::max(1, P->maxntid[1]) *
                           std::max(1, P->maxntid[2])) +
            " threads per block (__launch_bounds__)";
    // What ptxas said of the kernel (the compile for the modelled GPU): the driver's limits on
    // registers per block and local memory per thread.
    if (bad.empty()) bad = resource_refusal(plan.program->resources, la.kernel, b.count());
    uint64_t smem =
        uint64_t(la.shared_bytes ? P->dyn_shared_offset : P->static_shared) + la.shared_bytes;
    if (bad.empty() && smem > opt_.max_shared_bytes)
      bad = "the block needs " + std::to_string(smem) + " bytes of shared memory (" +
            std::to_string(P->static_shared) + " static + " + std::to_string(la.shared_bytes) +
            " dynamic), more than the " + std::to_string(opt_.max_shared_bytes) +
            " a block can have";
    if (!bad.empty()) {
      res.fault = launch_fault(FaultKind::launch_config,
                               "launch " + std::to_string(li + 1) + " of " + la.kernel + ": " + bad,
                               launch);
      break;
    }
    // ---- parameters ----
    if (la.args.size() != P->params.size()) {
      res.fault =
          launch_fault(FaultKind::launch_config,
                       la.kernel + " takes " + std::to_string(P->params.size()) +
                           " arguments, the launch passes " + std::to_string(la.args.size()),
                       launch);
      break;
    }
    LaunchCtx L;
    L.P = P;
    L.mem = &mem;
    L.grid = g;
    L.block = b;
    L.dyn_shared = la.shared_bytes;
    L.launch_index = launch;
    L.count = plan.counters;
    L.shuffle = plan.shuffle_warps;
    L.trusted = plan.trusted;
    L.seed = plan.seed;
    L.buffers = bufs;
    L.deadline = deadline;
    L.cancel = plan.cancel;
    uint64_t warps = g.count() * ((b.count() + 31) / 32);
    L.budget =
        plan.instruction_budget ? plan.instruction_budget : 400'000'000ull + 4'000'000ull * warps;
    L.warp_budget = plan.instruction_budget ? plan.instruction_budget : 100'000'000ull;
    L.params.assign(P->param_bytes, std::byte{0});
    std::string argerr;
    for (size_t k = 0; k < la.args.size(); ++k) {
      const KernelArg& a = la.args[k];
      const Program::Param& p = P->params[k];
      uint64_t v = 0;
      uint32_t size = 8;
      if (a.kind == KernelArg::Kind::buffer) {
        if (!bufs || a.buffer < 0 || size_t(a.buffer) >= buf_region.size()) {
          argerr = "argument " + std::to_string(k + 1) + " names a buffer that does not exist";
          break;
        }
        v = buf_region[size_t(a.buffer)]->data_lo;
      } else if (a.kind == KernelArg::Kind::tensor_map) {
        if (!bufs || a.map.buffer < 0 || size_t(a.map.buffer) >= buf_region.size()) {
          argerr = "tensor map " + a.name + " names a buffer that does not exist";
          break;
        }
        if (std::string why = tensor_map_problem(a.map); !why.empty()) {
          argerr = why;
          break;
        }
        if (p.size != kTensorMapBytes) {
          argerr = "argument " + std::to_string(k + 1) + " (" + a.name +
                   ") is a tensor map, passed as 128 bytes, but the kernel's parameter " +
                   std::to_string(k + 1) + " has " + std::to_string(p.size) +
                   " (declare it `const __grid_constant__ CUtensorMap " + a.name + "`)";
          break;
        }
        encode_sim_tensor_map(a.map, buf_region[size_t(a.map.buffer)]->data_lo,
                              L.params.data() + p.offset);
        continue;
      } else {
        size = a.size ? a.size : p.size;
        std::memcpy(&v, a.value.data(), std::min<size_t>(8, size));
      }
      if (p.size != size && !(a.kind == KernelArg::Kind::scalar && size < p.size)) {
        argerr = "argument " + std::to_string(k + 1) + (a.name.empty() ? "" : " (" + a.name + ")") +
                 " has " + std::to_string(size) + " bytes but the kernel's parameter " +
                 std::to_string(k + 1) + " has " + std::to_string(p.size);
        break;
      }
      std::memcpy(L.params.data() + p.offset, &v, std::min<size_t>(p.size, 8));
    }
    if (!argerr.empty()) {
      res.fault = launch_fault(FaultKind::launch_config, la.kernel + ": " + argerr, launch);
      break;
    }

    std::vector<uint64_t> sample;
    SampledLaunch* traced = nullptr;
    if (sampling) {
      for (uint64_t b : (*sampling->blocks)[li])
        if (b < g.count()) sample.push_back(b);
      sampling->out->launches.push_back(SampledLaunch{});
      traced = &sampling->out->launches.back();
      traced->launch = la;
      traced->code = P->info;
      traced->static_shared = P->static_shared;
      traced->local_per_thread = P->local_per_thread;
      L.sample = &sample;
      L.traces = &traced->blocks;
      L.trace_cap = sampling->trace_cap;
      L.stop_after = sampling->stop_after;
      if (li < sampling->launch_stop->size() && (*sampling->launch_stop)[li])
        L.stop_after = (*sampling->launch_stop)[li];
      L.count = true; // the traces take shared-memory wavefronts from the counting code
    }

    if (la.cooperative) {
      // As on an H200 (132 SMs, 2048 threads and 32 blocks each): a cooperative grid must be
      // resident at once, and the simulator runs it so.
      const uint64_t per_sm = std::min<uint64_t>(32, 2048 / std::max<uint64_t>(1, b.count())),
                     most = 132 * per_sm;
      if (g.count() > most) {
        res.fault = launch_fault(
            FaultKind::launch_config,
            fmt::format("{}: a cooperative launch needs all {} blocks resident at once; an H200 "
                        "holds at most {} blocks of {} threads ({} per SM on 132 SMs): make the "
                        "grid smaller, and let each block loop over more of the work",
                        la.kernel, g.count(), most, b.count(), per_sm),
            launch);
        break;
      }
      L.cooperative = true;
      constexpr uint64_t kWorkspace = kHeapBase - 0x10000;
      if (!mem.find(kWorkspace)) {
        Region* r = mem.add(kWorkspace, 0, 64, 64);
        r->name = "the grid workspace";
        mem.sort();
      }
      std::memset(mem.find(kWorkspace)->host, 0, 64);
      L.grid_workspace = kWorkspace;
    }
    // A heap of its own for a launch whose kernel calls malloc or free.
    DeviceHeap* heap = nullptr;
    if (std::any_of(P->funcs.begin(), P->funcs.end(),
                    [](const FuncInfo& f) { return f.builtin == 3 || f.builtin == 4; })) {
      // The blocks a GPU (an H200: 132 SMs, up to 2048 threads and 32 blocks each) runs at once,
      // all holding their allocations: this launch's, or as many as fit at the [perf] size.
      const uint64_t resident =
          132 * std::min<uint64_t>(32, 2048 / std::max<uint64_t>(1, b.count()));
      const uint64_t sharers = plan.heap_as_at_perf ? resident : std::min(g.count(), resident);
      heap = heaps.emplace_back(std::make_unique<DeviceHeap>(sharers)).get();
    }
    mem.heap = heap;

    LaunchTotals T;
    // A sampled run of a kernel whose blocks may talk to each other runs its blocks on one
    // thread, in the sample's order: atomics (a permute's counts, a scan's tile tickets) then land
    // in one order, a block that waits on another's flag finds it set or not the same way every
    // time, and the prediction is the same every time. (On two threads, puzzle 11's look-back scan
    // was put anywhere from 284 to 8874 us: how long a sampled block spun on its predecessor's
    // flag depended on which thread got there first.) Blocks that cannot talk (no atomic, fence,
    // volatile or ordered access anywhere in the kernel) give the same traces in any order, so
    // they run on every worker.
    run_launch(L, impl_->pool, sampling && blocks_may_talk(*P) ? 1u : opt_.workers, T);
    if (cancel_requested(plan.cancel)) { // whatever the launch left is not an answer
      res.cancelled = true;
      res.fault = launch_fault(FaultKind::timeout, "cancelled", launch);
      break;
    }
    if (heap && !L.fault) {
      const auto leaks = heap->leaks();
      for (size_t i = 0; i < leaks.size() && i < 3; ++i)
        L.warnings.push_back(leaks[i] + " were never freed: device malloc memory stays taken "
                                        "until the program ends (free it in the kernel)");
      if (leaks.size() > 3)
        L.warnings.push_back(std::to_string(leaks.size() - 3) +
                             " more malloc'd blocks were never freed");
    }

    // ---- results of the launch ----
    for (auto& [blk, s] : L.printf_by_block) printed.add(s);
    printed.drop(L.printf_dropped);
    for (auto& w : L.warnings)
      if (res.warnings.size() < 50) res.warnings.push_back(w);
    if (plan.counters) {
      // Sum per line into fixed arrays first; names are attached once at the end.
      for (size_t i = 0; i < T.ic.size(); ++i) {
        const InstCount& c = T.ic[i];
        if (!c.warp) continue;
        const InstInfo& inf = P->info[i];
        auto& v = lines[inf.line];
        v[cWarp] += double(c.warp);
        v[cThread] += double(c.lanes);
        v[cDivergent] += double(c.divergent);
        if (inf.flops)
          v[inf.flop_prec == 1   ? cF32
            : inf.flop_prec == 3 ? cF64
                                 : cF16] += double(c.lanes) * inf.flops;
        if (inf.tensor_flops_per_warp_k)
          v[cTensor] += double(c.warp) * inf.tensor_flops_per_warp_k * 1024.0;
        if (inf.special) v[cSpecial] += double(c.lanes);
        if (inf.mem == MemKind::load) {
          v[cLdReq] += double(c.g_req);
          v[cLdSect] += double(c.g_sect);
          v[cLdIdeal] += double(c.g_ideal);
          v[cBytesLd] += double(c.g_bytes);
        } else if (inf.mem == MemKind::store) {
          v[cStReq] += double(c.g_req);
          v[cStSect] += double(c.g_sect);
          v[cStIdeal] += double(c.g_ideal);
          v[cBytesSt] += double(c.g_bytes);
        } else if (inf.mem == MemKind::atomic) {
          v[cAtomics] += double(c.lanes);
        }
        v[cWave] += double(c.s_wave);
        v[cConflict] += double(c.s_wave - std::min(c.s_wave, c.s_ideal));
      }
      max_loads = std::max(max_loads, T.max_gloads);
      max_stores = std::max(max_stores, T.max_gstores);
    }
    if (L.fault) {
      res.fault = L.fault;
      res.fault.launch = launch;
      break;
    }
  }
  if (plan.counters) {
    std::array<double, kNumCounters> sum{};
    for (auto& [line, v] : lines) {
      auto& m = res.counters.by_line[line];
      for (int k = 0; k < kNumCounters; ++k) {
        sum[size_t(k)] += v[size_t(k)];
        if (v[size_t(k)] != 0) m[kCounterNames[k]] = v[size_t(k)];
      }
      if (v[cWarp] > 0) m["active_lane_efficiency"] = v[cThread] / (32.0 * v[cWarp]);
    }
    // Every name is present in the totals, so consumers can rely on it.
    for (int k = 0; k < kNumCounters; ++k) tot[kCounterNames[k]] = sum[size_t(k)];
    tot["active_lane_efficiency"] = sum[cWarp] > 0 ? sum[cThread] / (32.0 * sum[cWarp]) : 0.0;
    tot["max_global_loads_per_thread"] = max_loads;
    tot["max_global_stores_per_thread"] = max_stores;
  }

  if (sampling) { // nothing comes back from a sampled run but its traces
    for (auto& l : mem.lazy) sampling->out->lazy_bytes += l->touched_bytes();
    done();
    return res;
  }

  // ---- copy every image back (guard bands included) ----
  if (bufs) {
    for (size_t i = 0; i < bufs->size(); ++i) {
      HostBuffer& hb = (*bufs)[i];
      Region* r = buf_region[i];
      // Transfer::Out::guards: the whole image costs no more here than its guard bands.
      size_t n = std::min<size_t>(hb.image.size(), r->end - r->base);
      if (n) std::memcpy(hb.image.data(), r->host, n);
      if (i < plan.transfers.size() && plan.transfers[i].hash) {
        res.hashes.resize(bufs->size(), 0);
        res.hashes[i] = content_hash(r->host + hb.guard_bytes, hb.data_bytes);
      }
      if (r->writers) {
        bool any = false;
        for (size_t k = 0; k < r->nelem && !any; ++k) any = r->writers[k] != 0;
        if (!any) continue;
        std::vector<Writer> wv(r->nelem);
        const Launch* last = plan.launches.empty() ? nullptr : &plan.launches.back();
        // The last launch that wrote decides the geometry; launches of a plan usually share it.
        const Dim3 gd = last ? last->grid : Dim3{};
        const Dim3 bd = last ? last->block : Dim3{};
        uint64_t last_blk = ~0ull;
        Dim3 blk_dim{};
        for (size_t k = 0; k < r->nelem; ++k) {
          uint64_t v = r->writers[k];
          if (!v) {
            wv[k].block = Dim3{0, 0, 0}; // never written
            wv[k].thread = Dim3{0, 0, 0};
            continue;
          }
          --v;
          uint64_t blk = v >> 11;
          uint32_t t = uint32_t(v & 2047);
          if (blk != last_blk) { // neighbouring elements usually come from one block
            last_blk = blk;
            blk_dim = Dim3{uint32_t(blk % gd.x), uint32_t((blk / gd.x) % gd.y),
                           uint32_t(blk / (uint64_t(gd.x) * gd.y))};
          }
          wv[k].block = blk_dim;
          if (bd.y == 1 && bd.z == 1)
            wv[k].thread = Dim3{t, 0, 0};
          else
            wv[k].thread = Dim3{t % bd.x, (t / bd.x) % bd.y, t / (bd.x * bd.y)};
        }
        res.writers[int(i)] = std::move(wv);
      }
    }
  }
  done();
  return res; // named: moved out, not copied (done() returns a reference)
}

namespace {

class SimBackend final : public Backend {
public:
  explicit SimBackend(unsigned workers) : sim_(SimOptions{.workers = workers}) {
    info_.backend = "sim";
    info_.name = "PTX simulator";
    info_.driver = "";
    // The GPU the simulator stands in for (the performance model's H200 or H100): compiled for
    // as the GPU backend compiles for it, so that both give the same compile verdict.
    info_.cc_major = 9;
    info_.cc_minor = 0;
    info_.sm_count = int(std::max(1u, std::thread::hardware_concurrency()));
    info_.max_shared_per_block_optin = int(sim_.options().max_shared_bytes);
  }
  const DeviceInfo& info() const override { return info_; }
  CompileOptions compile_options() const override {
    CompileOptions o;
    // sm_90a, as the CUDA backend on a 9.0 GPU: ptxas runs here too (no GPU needed), so its errors
    // are compile errors and its register, stack and shared-memory figures are the real ones.
    o.arch = "sm_90a";
    o.ptxas_report = true;
    return o;
  }
  RunResult run(const RunPlan& plan) override { return sim_.run(plan); }

private:
  DeviceInfo info_;
  Simulator sim_;
};

} // namespace
} // namespace sim

std::unique_ptr<Backend> make_sim_backend(std::string& why, unsigned workers) {
  (void)why;
  return std::make_unique<sim::SimBackend>(workers);
}

} // namespace wb
