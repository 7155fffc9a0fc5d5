// The PTX simulator's machine model: decoded instructions, the decoded kernel (Program), the
// simulated address space (Memory), and the run-time state of warps, blocks and worker threads.
//
// Execution model (see docs/simulator.md): a warp runs its lanes in lockstep. Every lane has its
// own pc; the warp executes the group of runnable lanes with the deepest call depth and, among
// those, the smallest pc ("min-pc" scheduling). Lanes that branch apart are parked and rejoin the
// group as soon as it reaches their pc, which reconverges if/else and loops with `break` at their
// join points for the code layouts NVRTC produces. Warp-synchronous instructions (shfl.sync,
// vote.sync, bar.warp.sync, ...) wait until every live lane of their mask has arrived.
#pragma once
#include "core/backend.hpp"
#include "core/printf_guard.hpp"
#include "fp.hpp"
#include "lazy_image.hpp"

#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace wb::sim {

constexpr int kWarpSize = 32;
constexpr uint32_t kFull = 0xffffffffu;
constexpr uint32_t kNoRow = 0xffffffffu;
// The value a function's name has in a register (a function pointer): this plus its index among
// the program's functions. No buffer lives up there, so a load through it is out of bounds.
constexpr uint64_t kFunctionAddress = 0xf00d000000000000ull;
constexpr uint32_t kNoPc = 0xffffffffu;

// Simulated address-space layout. Generic addresses in a window map to the block's shared memory
// or the thread's local memory; everything else is global.
constexpr uint64_t kSharedWindow = 0x00007e0000000000ull;
constexpr uint64_t kLocalWindow = 0x00007e1000000000ull;
constexpr uint64_t kWindowSize = 1ull << 32;
// Generic addresses of the kernel's parameters (cvta.param: &p of a __grid_constant__ p),
// read-only.
constexpr uint64_t kParamWindow = 0x00007e2000000000ull;
constexpr uint64_t kModuleVarBase = 0x00007f0000000000ull;
constexpr uint64_t kBufferBase = 0x00007f1000000000ull;
constexpr uint64_t kHeapBase = 0x00007f8000000000ull; // device malloc (DeviceHeap)
constexpr uint64_t kNullPage = 1ull << 16;            // addresses below this are "a null pointer"

enum class Ty : uint8_t {
  none,
  b8,
  b16,
  b32,
  b64,
  b128,
  u8,
  u16,
  u32,
  u64,
  s8,
  s16,
  s32,
  s64,
  f16,
  f16x2,
  bf16,
  bf16x2,
  f32,
  f64,
  tf32,
  pred,
  e4m3x2,
  e5m2x2,
  e4m3,
  e5m2
};
int ty_bytes(Ty t);
bool ty_signed(Ty t);
bool ty_float(Ty t);
Ty parse_ty(std::string_view s);
std::string_view ty_name(Ty t);

enum class Space : uint8_t { generic, global, shared, local, kparam, fparam, konst };

// What an instruction contributes to the counters, fixed at decode time.
enum class MemKind : uint8_t { none, load, store, atomic };
struct InstInfo {
  std::string opcode; // as written in the PTX
  int line = 0;       // learner's source line
  int ptx_line = 0;
  uint8_t flops = 0;                    // per active thread
  uint8_t flop_prec = 0;                // 0 none, 1 f32, 2 f16, 3 f64
  uint16_t tensor_flops_per_warp_k = 0; // tensor flops per warp instruction / 1024
  bool special = false; // special-function unit op (ex2, lg2, sin, cos, rsqrt, rcp.approx, tanh...)
  MemKind mem = MemKind::none;
  bool branch = false;
  bool nounroll = false;  // heads a loop marked `#pragma unroll 1` (ptxas keeps it rolled)
  bool pun = false;       // a mov between an integer and a float register (__int_as_float): no SASS
  uint8_t group_keep = 0; // wgmma.wait_group / cp.async.wait_group N: N (left in flight)
  uint32_t branch_target = 0; // a branch's target pc
  std::string note;           // why an instruction is unsupported
  // Registers written and read (register rows; predicates as kPredRow | index), for the
  // performance model's dependency tracking. The guard predicate is among the uses.
  std::vector<uint32_t> defs, uses;
  // A memory operand's base register row and displacement (kNoRow: none or absolute), so the
  // model can tell, as ptxas does, that [%r+4] and [%r+8] never overlap.
  uint32_t addr_base = kNoRow;
  int64_t addr_offset = 0;
  // The variable a memory access was addressed from, when the decoder could trace its address
  // back to one (mov %r, s; add %r2, %r, %off; st.shared [%r2]): an access outside it is named
  // even when it lands inside another variable. shared_sym indexes Program::shared_syms; a local
  // array is [local_lo, local_hi) of the frame whose address is in register row local_frame.
  int16_t shared_sym = -1;
  uint32_t local_lo = 0, local_hi = 0, local_frame = kNoRow;
};
constexpr uint32_t kPredRow = 0x80000000u;

struct Exec;
struct Warp;
struct Inst;

// ---- traces (the performance model's sampled runs, trace.hpp) ----
// What one warp executed, instruction by instruction, with the memory each access touched.
enum class TraceKind : uint8_t {
  none,
  global,        // global memory (also generic pointers that land there): sectors
  local,         // local memory (spills, stack arrays), interleaved per lane as on a GPU: sectors
  shared,        // shared memory: `count` wavefronts
  global_atomic, // atomic or reduction on global memory: distinct words and lanes on each
  shared_atomic, // on shared memory: `count` = the most lanes on one word (they serialise),
                 // `first` = that word's shared offset / 4
  bulk,          // cp.async.bulk global -> shared: the sectors read, then one entry whose id is
                 // the shared offset of the mbarrier it completes on and whose mask holds the
                 // phase it completes (low 16 bits) and the copies it stands for (high 16 bits)
  mbar_wait,     // mbarrier.test_wait / try_wait: `first` is the mbarrier's shared offset,
                 // `count` the phase it waits for (low 16 bits), `bytes` the bulk copies that
                 // completed that phase (at most 255; 0 for a wait that found it incomplete)
};
struct TraceEvent {
  uint32_t pc = 0;
  uint32_t mask = 0;  // the lanes that executed it (guard applied)
  uint32_t first = 0; // memory: first entry in WarpTrace::sec
  uint16_t count = 0; // memory: entries in sec (global, local, atomics) or wavefronts (shared)
  TraceKind kind = TraceKind::none;
  uint8_t bytes = 0; // bytes per lane
  // The entries of sec that are memory sectors (a bulk copy's last entry is its mbarrier).
  uint32_t sectors() const { return kind == TraceKind::bulk ? count - 1u : count; }
};
// A 32-byte sector and the bytes of it the access touched (bit i: byte i); for atomics the word
// address / 4 and the number of lanes on it.
struct TraceSector {
  uint64_t id = 0;
  uint32_t mask = 0;
};
struct WarpTrace {
  std::vector<TraceEvent> ev;
  std::vector<TraceSector> sec;
  uint64_t dropped = 0; // events past the cap, not recorded
  // A block stopped by a sampled run's stop_after (its trace complete up to the stop): the
  // instructions this warp would still have run, estimated from the loops it is inside
  // (exec.cpp, extrapolate_stopped), and how many of those loops had no counter to read.
  uint64_t extrapolated = 0;
  uint32_t loops_uncounted = 0;
  // A loop around the stop that has completed no trip still holds loops past the stop, whose
  // trips the count could not see: `extrapolated` is then only a lower bound.
  bool extrapolated_partial = false;
  bool rec = false; // the instruction executing now was recorded (its event is ev.back())
  // Filled by the performance model (perf/schedule.cpp) after it reorders `ev`: for event k, the
  // events whose results it reads are deps[dep_first[k] .. dep_first[k + 1]).
  std::vector<uint32_t> dep_first, deps;
};
struct BlockTrace {
  uint64_t linear = 0;
  Dim3 idx;
  uint32_t nthreads = 0;
  std::vector<WarpTrace> warps;
  bool stopped = false; // a census stopped it (a warp reached its stop_after) before it finished
};
// A handler executes one instruction for the lanes in `mask` (active lanes whose guard holds).
// It returns what the warp loop does next.
using ExecFn = int (*)(Exec&, Warp&, const Inst&, uint32_t mask);
enum : int {
  kNext = 0,   // fall through to pc + 1
  kJumped = 1, // the handler set the warp's pc / group itself
  kYield = 2,  // the warp cannot go on now (barrier, all lanes exited)
  kStop = 3,   // a fault: stop the launch
};

struct Inst {
  ExecFn fn = nullptr;
  uint32_t r[6] = {kNoRow, kNoRow, kNoRow, kNoRow, kNoRow, kNoRow}; // register rows
  int64_t imm = 0;     // address displacement, or a constant
  uint32_t target = 0; // branch target pc, callee index, side-table offset
  uint32_t aux = 0;    // family-specific
  int16_t guard = -1;  // guard predicate index
  int16_t pd = -1;     // destination predicate
  int16_t pd2 = -1;    // second destination predicate (setp p|q, shfl d|p)
  int16_t ps = -1;     // source predicate (selp, setp's combining predicate, vote)
  uint32_t guard_xor = 0;
  uint32_t ps_xor = 0;
  Ty ty = Ty::none, ty2 = Ty::none;
  Rnd rnd = Rnd::none;
  uint8_t sub = 0;   // comparison, mode, atomic op, ...
  uint8_t flags = 0; // kFtz, kSat, ...
  Space space = Space::generic;
  uint8_t width = 0; // bytes per element accessed
  uint8_t vec = 1;   // elements per access
};
enum : uint8_t {
  kFtz = 1,
  kSat = 2,
  kRelu = 4,
  kSatFinite = 8,
  kNaN = 16,
  kApprox = 32,
  kWide = 64
};

struct SharedSym {
  std::string name; // demangled for messages
  uint32_t offset = 0, size = 0;
  bool dynamic = false;
};

struct FuncInfo {
  std::string name;
  uint32_t entry_pc = 0, end_pc = 0;
  uint32_t frame_row = kNoRow;     // per-lane local address of this function's frame
  uint32_t frame_size = 0;         // bytes of local memory per activation
  uint32_t row_lo = 0, row_hi = 0; // the function's own register rows [lo, hi)
  uint32_t pred_lo = 0, pred_hi = 0;
  bool recursive = false;   // on a call cycle: registers are saved in the frame
  uint32_t save_offset = 0; // where in its frame the caller-visible registers are saved
  std::vector<uint32_t> param_off, param_size; // callee-side parameter slots in its frame
  std::vector<uint32_t> ret_off, ret_size;
  int builtin = 0; // 1 vprintf, 2 __assertfail, 3 malloc, 4 free, 5 the printf guard's rewrite,
                   // -1 undefined external
};

struct CallSite {
  uint32_t callee = 0;
  std::vector<uint32_t> arg_off, arg_size; // caller-side slots (in the caller's frame)
  std::vector<uint32_t> ret_off, ret_size;
  uint32_t caller = 0;
};

enum class Special : uint8_t {
  tid_x,
  tid_y,
  tid_z,
  ntid_x,
  ntid_y,
  ntid_z,
  ctaid_x,
  ctaid_y,
  ctaid_z,
  nctaid_x,
  nctaid_y,
  nctaid_z,
  laneid,
  warpid,
  nwarpid,
  smid,
  nsmid,
  gridid,
  lanemask_eq,
  lanemask_le,
  lanemask_lt,
  lanemask_ge,
  lanemask_gt,
  dynamic_smem_size,
  total_smem_size,
  envreg1, // the grid workspace's high 32 bits (a cooperative launch), else 0
  envreg2, // its low 32 bits
  zero
};

// A kernel decoded for execution.
struct Program {
  uint64_t uid = 0; // unique per decoded program (workers cache per-program state by it)
  std::string kernel;
  std::vector<Inst> code;
  std::vector<InstInfo> info;
  std::vector<uint32_t> lists; // vector operands: rows, referenced by Inst::target/aux
  std::vector<CallSite> calls;
  std::vector<FuncInfo> funcs; // [0] is the kernel
  uint32_t nrows = 0, npreds = 0;
  std::vector<std::pair<uint32_t, uint64_t>> consts; // constant rows: value broadcast to 32 lanes
  std::vector<int16_t> true_preds;                   // predicates that are constant true
  std::vector<std::pair<uint32_t, Special>> specials;
  std::vector<uint32_t> zero_rows; // rows that must start at zero (frame registers)
  uint32_t entry_pc = 0;
  struct Param {
    std::string name;
    uint32_t offset = 0, size = 0;
  };
  std::vector<Param> params;
  uint32_t param_bytes = 0;
  uint32_t static_shared = 0, dyn_shared_offset = 0, dyn_shared_align = 16;
  std::vector<SharedSym> shared_syms;
  uint32_t local_per_thread = 0; // bytes of local memory a thread needs (frames, call params)
  int max_depth = 1;
  bool uses_calls = false;
  int reqntid[3] = {0, 0, 0};
  int maxntid[3] = {0, 0, 0};
  std::vector<std::string> warnings; // found while decoding
};

// One allocation in the simulated global space: a plan buffer (guard + data + guard) or a
// module-scope variable (.global / .const).
struct Region {
  uint64_t base = 0, data_lo = 0, data_hi = 0, end = 0;
  std::byte* host = nullptr; // host copy of [base, end)
  int buffer = -1;           // plan buffer index; -1 for module variables
  std::string name;
  DType dtype = DType::u8;
  uint32_t elem = 1, elem_shift = 0; // element bytes (a power of two) and its log2
  bool readonly = false;
  uint64_t* writers = nullptr; // per element: (block << 11 | thread) + 1, 0 unwritten (atomic_ref)
  size_t nelem = 0;
  std::string freed_by; // device malloc: who freed it ("" while it is live)
  // A buffer made on first touch (LazyImage): `host` is its data mapping; the fast paths use its
  // writer mapping once lazy->ensure has filled the bytes they touch.
  LazyImage* lazy = nullptr;
};
// Where the fast paths read and write region r's bytes: the host copy, or a lazy buffer's writer
// mapping (its chunks filled first: fast_host, ensure_warp).
inline std::byte* fast_view(const Region* r) {
  return r->lazy ? r->lazy->writer() : r->host;
}
// Where a fast path reads and writes [a, a + n) of region r (inside it), filled first if lazy.
inline std::byte* fast_host(Region* r, uint64_t a, uint64_t n) {
  if (r->lazy) r->lazy->ensure(size_t(a - r->base), size_t(n));
  return fast_view(r) + (a - r->base);
}
// Fills the lazy chunks a whole warp's accesses of n bytes at addr[] touch, [lo, hi] the span of
// their addresses (often one chunk for the whole warp).
inline void ensure_warp(Region* r, uint64_t lo, uint64_t hi, const uint64_t* addr, uint32_t n) {
  if (!r->lazy) return;
  if ((lo - r->base) / LazyImage::kChunk == (hi + n - 1 - r->base) / LazyImage::kChunk)
    r->lazy->ensure(size_t(lo - r->base), 1);
  else
    for (int l = 0; l < kWarpSize; ++l) r->lazy->ensure(size_t(addr[l] - r->base), n);
}

// Device-side malloc/free for one launch: each allocation is a Region of its own with guard bands
// on both sides, so bounds, guard-band and element messages work as for buffers. A free empties
// the region's data range, so any later access takes the slow path and is named a use after free.
// The heap is CUDA's default, 8 MiB (kDeviceHeapBytes): past it malloc returns NULL, as on a GPU.
// A GPU runs many blocks at once, each holding its allocations, where the simulator runs a block
// or two: a malloc is refused when the bytes live now plus `sharers - 1` more blocks holding what
// this block holds would pass the limit (a block holds, per thread, the most that thread has had
// live at once).
class DeviceHeap {
public:
  static constexpr uint64_t kLimit = kDeviceHeapBytes, kGuard = 256;
  explicit DeviceHeap(uint64_t sharers = 1) : sharers_(std::max<uint64_t>(sharers, 1)) {}
  // What an allocation of `bytes` takes from the heap: the GPU hands out 16-byte granules.
  static uint64_t granule(uint64_t bytes) { return (std::max<uint64_t>(bytes, 1) + 15) / 16 * 16; }
  // The simulated address of `bytes` fresh bytes, or 0 when the heap is full; `block_holds` is
  // what the calling block holds once this succeeds.
  uint64_t allocate(uint64_t bytes, std::string owner, uint64_t block_holds = 0);
  // "" on success; else what is wrong with freeing `a` (never malloc'd, already freed). `bytes`
  // gets the heap bytes given back.
  std::string release(uint64_t a, const std::string& who, uint64_t* bytes = nullptr);
  Region* find(uint64_t a) const;
  // Allocations still live, for the leak warnings at the end of the launch.
  std::vector<std::string> leaks() const;
  // How many mallocs returned NULL because the heap was full (for the null-pointer fault).
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }
  uint64_t sharers() const { return sharers_; }

private:
  mutable std::mutex mu_;
  std::map<uint64_t, std::unique_ptr<Region>> regions_; // by base
  std::vector<std::unique_ptr<std::byte[]>> storage_;
  uint64_t next_ = kHeapBase, used_ = 0;
  uint64_t sharers_ = 1;
  std::atomic<uint64_t> refused_{0};
};

class Memory {
public:
  std::vector<std::unique_ptr<Region>> regions; // sorted by base
  std::vector<std::unique_ptr<std::byte[], void (*)(void*)>> storage;
  std::vector<std::unique_ptr<LazyImage>> lazy;
  Region* add(uint64_t base, uint64_t data_off, uint64_t data_bytes, uint64_t image_bytes);
  // A region whose bytes are made on first touch (LazyImage).
  Region* add_lazy(uint64_t base, uint64_t data_off, uint64_t data_bytes, uint64_t image_bytes,
                   LazyImage::Fill fill);
  // Zeroed memory that lives as long as this Memory.
  void* alloc_zeroed(size_t bytes);
  void sort();
  // The region whose image contains [a, a+n), or nullptr.
  Region* find(uint64_t a) const;
  DeviceHeap* heap = nullptr; // the launch's device malloc heap, when its kernel calls malloc
  // The region nearest to `a` (for messages), or nullptr.
  Region* nearest(uint64_t a) const;
};

// Per-instruction counters, one array per worker thread, merged at the end of a launch.
struct HotCount {
  uint64_t warp = 0, lanes = 0; // counted for every instruction executed
};
struct InstCount {
  uint64_t warp = 0, lanes = 0; // merged from HotCount at the end of a launch
  uint64_t g_req = 0, g_sect = 0, g_ideal = 0, g_bytes = 0;
  uint64_t s_wave = 0, s_ideal = 0;
  uint64_t divergent = 0;
};

struct CallFrame {
  uint32_t ret_pc;
  uint32_t site;
  uint32_t frame; // this activation's frame base (local address)
};

struct Warp {
  uint64_t* r = nullptr; // [rows][32]
  uint32_t* p = nullptr; // [preds] lane masks
  std::vector<uint64_t> regs;
  std::vector<uint32_t> preds;
  uint32_t pc = 0;
  uint32_t active = 0; // lanes executing at pc now
  uint32_t resched_pc = kNoPc;
  uint32_t live = 0;  // lanes that exist and have not exited
  uint32_t run = 0;   // runnable lanes (includes `active`)
  uint32_t bar = 0;   // lanes waiting at a CTA barrier
  uint32_t wsync = 0; // lanes parked at a warp-synchronous instruction
  // Forward progress for spin loops (a lock held by another lane of the same warp): a group that
  // keeps jumping back while other lanes wait further on yields to them (`yielded` lanes run only
  // when no other lane can).
  uint32_t yielded = 0, spin_mask = 0, spin_count = 0;
  // cp.async copies issued and not yet landed (ops_mem.cpp): they reach shared memory when the
  // lane waits for their group (cp.async.wait_group / wait_all) or arrives on an mbarrier for
  // them, so a kernel that reads a tile before waiting for it reads what was there before, as on
  // a GPU.
  struct PendingCopy {
    uint32_t off; // shared-memory offset
    uint8_t lane, n;
    uint32_t group; // the lane's commit count when issued
    std::byte data[16];
  };
  std::vector<PendingCopy> cp_pending;
  uint32_t cp_groups[32] = {}; // per lane: groups committed so far
  // The warp's last turn ended in an mbarrier wait that failed (ops_sync.cpp), at this pc.
  bool mbar_waiting = false;
  uint32_t mbar_wait_pc = 0;
  bool force_partial = false;
  bool warned_partial = false;
  uint32_t lane_pc[kWarpSize] = {};
  uint16_t depth[kWarpSize] = {};
  uint8_t bar_id[kWarpSize] = {};
  uint32_t bar_pc_all = kNoPc; // when not kNoPc: every lane in `bar` waits here, on bar_id_all
  uint8_t bar_id_all = 0;
  uint32_t index = 0;    // warp index within the block
  uint32_t tid0 = 0;     // linear thread index of lane 0
  uint64_t executed = 0; // warp instructions executed (per-warp budget)
  uint32_t gloads[kWarpSize] = {}, gstores[kWarpSize] = {};
  // Full-warp accesses count here, once, instead of 32 increments; per-thread totals add these.
  uint32_t gloads_all = 0, gstores_all = 0;
  std::vector<CallFrame> stack; // [lane * max_depth + d]
  std::byte* local = nullptr;   // this warp's local memory: lane l at local + l * local_per_thread
  bool consts_ok = false;       // constant rows hold the current program's constants
  WarpTrace* trace = nullptr;   // a sampled run's trace of this warp, or nullptr
  uint64_t* row(uint32_t i) { return r + size_t(i) * kWarpSize; }
  uint64_t rv(uint32_t i, int lane) const { return r[size_t(i) * kWarpSize + lane]; }
};

// Shared-memory race tracking, one record per 4-byte word.
struct WordAccess {
  uint32_t w_epoch = 0, r_epoch = 0;
  uint32_t w_pc = 0, r_pc = 0;
  uint16_t w_warp = 0, r_warp = 0; // r_warp 0xffff: read by several warps this epoch
  uint8_t w_lane = 0, r_lane = 0;
};

struct LaunchCtx;

struct Block {
  Dim3 idx;
  uint64_t linear = 0;
  std::vector<Warp>* warps = nullptr;
  uint32_t nwarps = 0, nthreads = 0;
  std::byte* shared = nullptr;
  uint32_t shared_size = 0;
  uint32_t exited = 0;
  uint32_t arrived[16] = {};
  uint32_t expected[16] = {}; // 0: all non-exited threads
  uint32_t epoch = 0;
  uint64_t mbar_changes = 0; // mbarrier inits, arrivals and transactions so far
  // cp.async.bulk copies on their way: they land (and complete their bytes on the mbarrier) when
  // a thread first waits on that mbarrier, so a read before the wait sees what was there before.
  struct PendingBulk {
    uint32_t mbar, dst; // shared offsets
    std::vector<std::byte> data;
    uint32_t tx; // the bytes it completes on the mbarrier (a TMA box: the whole box)
  };
  std::vector<PendingBulk> bulk_pending;
  // Per mbarrier (shared offset): the transaction bytes its current phase expects and those that
  // arrived so far, for the deadlock report.
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> mbar_bytes;
  // Per mbarrier: the phases it completed so far, and the bulk copies that landed on its current
  // phase and on the last one it completed. A trace names the phase each copy completes and each
  // wait waits for, so that the performance model's replay waits for that phase's copies alone,
  // not for copies a producer already issued for later phases.
  struct MbarPhases {
    uint32_t completed = 0, copies_now = 0, copies_last = 0;
  };
  std::unordered_map<uint32_t, MbarPhases> mbar_phases;
  // TMA stores (shared -> global) whose box a GPU may still be reading: until the issuing
  // thread's cp.async.bulk.wait_group.read lets one go, a write into its box is a race.
  struct PendingStore {
    uint32_t lo, hi; // shared bytes [lo, hi)
    uint32_t thread; // linear index in the block of the thread that started it
    uint32_t pc;
    uint32_t group; // the thread's bulk group once committed (0: not yet)
  };
  std::vector<PendingStore> tma_stores;
  std::map<uint32_t, uint32_t> bulk_groups; // per thread: the bulk groups it has committed
  uint32_t red_popc[16] = {};
  bool red_all[16] = {true, true, true, true, true, true, true, true,
                      true, true, true, true, true, true, true, true};
  bool red_any[16] = {};
  PrintfSink printf_out; // this block's printf output, bounded
  // Device heap bytes per thread: live now, and the most live at once; their sum is what the
  // block holds (DeviceHeap's model of many blocks at once).
  std::vector<uint64_t> heap_live, heap_peak;
  uint64_t heap_holds = 0;
  bool census_stopped = false; // LaunchCtx::stop_after ended it early
};

// A worker thread's state: reused across the blocks it runs.
struct Exec {
  LaunchCtx* L = nullptr;
  const Program* P = nullptr;
  uint64_t prog_uid = 0;
  const Inst* code = nullptr;
  Block* B = nullptr;
  std::vector<Warp> warps;
  std::vector<std::byte> shared_mem;
  std::vector<WordAccess> shared_meta;
  std::vector<std::byte> local_mem;
  std::vector<InstCount> ic;
  std::vector<HotCount> hot;
  bool count = true;
  bool track_races = true;
  Region* last = nullptr;      // the last region hit (fast path)
  std::vector<Region*> rcache; // per instruction: the region it hit last time
  // Per shared word: lanes of the current atomic on it (0 between instructions; trace only).
  std::vector<uint8_t> word_lanes;
  uint32_t epoch_base = 0;
  uint64_t executed = 0;
  uint32_t max_gloads = 0, max_gstores = 0;
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  std::vector<std::string> warnings;
  // wgmma's B operand widened to double, keyed by its raw bytes: the four warps of a warpgroup
  // (and the next warpgroup, often) multiply the same B tile, so three of four widenings are
  // saved. Eight entries, replaced in turn: a warp may issue several wgmma on different tiles (a
  // k-step's four, a tile's two halves) before the next warp of its warpgroup issues the same ones.
  struct WidenedOperand {
    std::vector<std::byte> raw;
    std::vector<double> wide;
    uint32_t key = 0; // rows, K and type; 0: empty
  };
  WidenedOperand wg_b[8];
  uint32_t wg_b_victim = 0;
  uint64_t next_rand() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  }
};

// Shared by all workers of a launch.
struct LaunchCtx {
  const Program* P = nullptr;
  Memory* mem = nullptr;
  Dim3 grid, block;
  uint32_t dyn_shared = 0;
  std::vector<std::byte> params;
  int launch_index = 0;
  bool count = true;
  bool shuffle = false;
  bool trusted = false; // RunPlan::trusted: no race or variable-bounds tracking
  uint64_t seed = 0;
  uint64_t budget = 0;      // warp instructions for the launch
  uint64_t warp_budget = 0; // warp instructions for any one warp
  std::chrono::steady_clock::time_point deadline;
  std::atomic<uint64_t> executed{0};
  std::atomic<bool> stop{false};
  const std::atomic<bool>* cancel = nullptr; // RunPlan::cancel: stops the launch with no fault
  std::atomic<uint64_t> next_block{0};
  std::mutex mu;
  Fault fault;
  uint64_t fault_block = ~0ull;
  std::vector<std::string> warnings;
  // printf output by block (merged in block order at the end), kept up to kPrintfOutputBound in
  // all; printf_bytes is what is kept so far, printf_dropped what was counted and not kept.
  std::map<uint64_t, std::string> printf_by_block;
  size_t printf_bytes = 0;
  uint64_t printf_dropped = 0;
  std::atomic<uint64_t> printf_calls{0}; // against kPrintfCallBound
  const std::vector<HostBuffer>* buffers = nullptr;
  // A sampled run: only these blocks (linear indices) run, each traced into `traces` (same order).
  const std::vector<uint64_t>* sample = nullptr;
  std::vector<BlockTrace>* traces = nullptr;
  size_t trace_cap = 0; // events kept per warp
  // The most events a warp of a finished block of this launch recorded (0: none finished yet):
  // later blocks reserve room for about that many (a grid of thousands of blocks that run a few
  // instructions each would otherwise map and clear a cap's worth of pages per warp).
  std::atomic<size_t> trace_most{0};
  // A census (the performance model asking which blocks exit at once): a block stops, with no
  // fault, once one of its warps has run this many instructions. 0: blocks run to the end.
  size_t stop_after = 0;
  // A cooperative launch: every block runs at once, on a thread of its own, and the kernel sees
  // the address of a zeroed global workspace in %envreg1:%envreg2 (cooperative groups' grid
  // barrier counts arrivals there).
  bool cooperative = false;
  uint64_t grid_workspace = 0;
  std::atomic<bool> warned_exited_barrier{false}; // said once per launch (exec.cpp)
};

// ---- helpers shared by the handler files ----

// Lane count of a mask. Inline bit arithmetic: without -mpopcnt, std::popcount is a library call,
// and this runs once per warp instruction.
inline uint32_t lanes_in(uint32_t m) {
  if (m == kFull) return 32;
  m = m - ((m >> 1) & 0x55555555u);
  m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
  return (((m + (m >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

template <class F> inline void each_lane(uint32_t m, F&& f) {
  if (m == kFull) {
    for (int l = 0; l < kWarpSize; ++l) f(l);
  } else {
    while (m) {
      int l = std::countr_zero(m);
      m &= m - 1;
      f(l);
    }
  }
}

// Like each_lane, for element-wise work only (lane l reads only slot l of each row and writes slot
// l): the full-warp loop carries no dependence between lanes even when the destination row is a
// source row, which `ivdep` tells the compiler, so it vectorises at -O2 without alias checks.
template <class F> inline void each_lane_ew(uint32_t m, F&& f) {
  if (m == kFull) {
#pragma GCC ivdep
    for (int l = 0; l < kWarpSize; ++l) f(l);
  } else {
    while (m) {
      int l = std::countr_zero(m);
      m &= m - 1;
      f(l);
    }
  }
}

// Like each_lane, stopping (and returning false) as soon as f returns false.
template <class F> inline bool each_lane_while(uint32_t m, F&& f) {
  if (m == kFull) {
    for (int l = 0; l < kWarpSize; ++l)
      if (!f(l)) return false;
    return true;
  }
  for (; m; m &= m - 1)
    if (!f(std::countr_zero(m))) return false;
  return true;
}

// Thread / block coordinates for messages.
std::string thread_name(const Exec& x, const Warp& w, int lane);
std::string block_name(const Exec& x);
// Records a fault for the launch (the first one, by block order, wins) and asks every worker to
// stop.
int raise_fault(Exec& x, FaultKind k, std::string msg, int line);
// "at line N" / "" when unknown.
std::string at_line(int line);
const InstInfo& info_of(const Exec& x, const Inst& in);
// The instruction's index (inline: handlers call it on every access they count).
inline uint32_t pc_of(const Exec& x, const Inst& in) {
  return uint32_t(&in - x.code);
}

// Scheduling (exec.cpp): recompute the warp's active group; false when no lane can run now.
bool reschedule(Exec& x, Warp& w);
// A barrier completed or a thread exited: release what can be released (exec.cpp).
int check_barriers(Exec& x);
// Lands the pending cp.async copies of `lanes`: all of them, or all but those of each lane's
// newest `newest_kept` committed groups and its open one (ops_mem.cpp).
void land_copies(Exec& x, Warp& w, uint32_t lanes, uint32_t newest_kept, bool all);
// The shared variable at offset `off` and its element for an `n`-byte access ("s[3]", "bar"),
// for messages (exec.cpp).
// The shared variable that holds byte `off` of the block's shared memory (nullptr: padding).
const SharedSym* shared_sym_at(const Exec& x, uint64_t off);
std::string shared_elem_name(const Exec& x, uint64_t off, uint32_t n);
// Every live warp waits on an mbarrier that nothing can complete: the fault (ops_sync.cpp).
int report_mbarrier_deadlock(Exec& x);
// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes (ops_sync.cpp).
int h_cp_async_bulk(Exec& x, Warp& w, const Inst& in, uint32_t m);
// cp.async.bulk.tensor global -> shared (a box through a tensor map, completing on an mbarrier)
// and shared -> global (.bulk_group) (ops_sync.cpp).
int h_tma_load(Exec& x, Warp& w, const Inst& in, uint32_t m);
int h_tma_store(Exec& x, Warp& w, const Inst& in, uint32_t m);
// A write of n shared bytes at a into the box of a TMA store still in flight: the race fault
// (ops_sync.cpp; shared_race_check calls it while any is in flight).
int tma_store_race(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n);

// Memory access (memory.cpp). Each returns a host pointer, or nullptr after raising a fault.
std::byte* global_ptr(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n,
                      bool write);
std::byte* shared_ptr(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n,
                      bool write);
std::byte* local_ptr(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n,
                     bool write);
// Generic address: sets `space` to where it went.
std::byte* generic_ptr(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n,
                       bool write, Space& space);
// Reads a NUL-terminated string at a generic address (printf, assert), bounded.
std::string read_cstring(Exec& x, Warp& w, int lane, uint64_t generic, size_t max = 4096);
void note_writer(Exec& x, Warp& w, int lane, Region* r, uint64_t a);
inline void store_writer(uint64_t* slot, uint64_t v) {
  std::atomic_ref<uint64_t>(*slot).store(v, std::memory_order_relaxed);
}
// Trace recording (trace.cpp), called by the memory handlers when w.trace is set: fills the
// payload of the warp's last event. `addr` holds `n` addresses (global: simulated addresses;
// local: the lanes' offsets in their frames; shared: offsets in the block's shared memory).
void trace_global(Warp& w, const uint64_t* addr, int n, uint32_t bytes, TraceKind kind);
void trace_local(const Exec& x, Warp& w, const uint64_t* off, const int* lanes, int n,
                 uint32_t bytes);
void trace_shared(Warp& w, uint32_t wavefronts, uint32_t bytes);
// A cp.async.bulk of n bytes from global address a, completing on the mbarrier at shared offset
// `mbar` (TraceKind::bulk).
// `copies`: the bulk copies this call starts (a TMA box traces each of its rows, one copy).
void trace_bulk(Warp& w, uint64_t a, uint32_t n, uint32_t mbar, uint32_t phase, uint32_t copies);
void trace_atomic(Warp& w, const uint64_t* addr, int n, uint32_t bytes, bool shared);
// A shared atomic already counted: `most` lanes on the shared word `hot` (offset / 4), the word
// trace_atomic would name.
void trace_shared_atomic(Warp& w, uint32_t most, uint32_t hot, uint32_t bytes);

// Race check for one shared access of `n` bytes at offset `a` (exec.cpp).
// An access outside the shared or local variable its address was traced to (InstInfo::shared_sym,
// local_lo/hi): a fault naming the variable and what it hit. Correctness runs only.
int variable_check(Exec& x, Warp& w, const Inst& in, int lane, Space sp, uint64_t off, uint32_t n,
                   bool write);
int shared_race_check(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n,
                      bool write, const std::byte* newval);

} // namespace wb::sim
