// TMA through tensor maps, by value and layout: loads (1-D, 2-D, 3-D, each swizzle mode, boxes
// over the tensor's edges) and stores (clipped to the tensor), each checked against the layout
// computed here on the host. Included by tests/sim/sim_tma_test.cpp (the simulator) and by
// tests/gpu/sim_parity_test.cpp, which defines TMA_SUITE_PREFIX and runs every plan on the
// simulator and the GPU, so the driver's encoding of the maps and the hardware's swizzle are
// held to the simulator's bit for bit.
#pragma once
#include "common/sim_plan.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#ifndef TMA_SUITE_PREFIX
#define TMA_SUITE_PREFIX ""
#endif

namespace tmasuite {

using namespace simtest;

bool has(const std::string& s, const std::string& w) {
  return s.find(w) != std::string::npos;
}

#define CHECK_HAS(msg, words)                                                                      \
  CHECK_MESSAGE(has(msg, words), "expected `" << (words) << "` in: " << (msg))

// One block: thread 0 starts a TMA load of one box into shared memory at OFFSET past a
// 1024-aligned buffer, every thread waits on the mbarrier, then the box's bytes are copied out raw
// (the swizzled layout, as shared memory holds it). MAP says how the map's address is given: 0
// `&tm` (a generic address), 1 the parameter-space address, 2 a global buffer (not a map).
// EXTRA: bytes the mbarrier expects beyond the box. NOWAIT: read without waiting.
const char* kLoad = R"(
#ifndef OFFSET
#define OFFSET 0
#endif
#ifndef MAP
#define MAP 0
#endif
#ifndef EXTRA
#define EXTRA 0
#endif
#ifndef NOWAIT
#define NOWAIT 0
#endif
struct __align__(64) TMap { unsigned long long v[16]; };
__device__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
extern "C" __global__ void tma_load(const __grid_constant__ TMap tm, unsigned* out, int c0, int c1,
                                    int c2) {
  __shared__ __align__(1024) unsigned char box[BOXBYTES + OFFSET];
  __shared__ __align__(8) unsigned long long bar;
  unsigned char* dst = box + OFFSET;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  unsigned long long map;
#if MAP == 0
  map = (unsigned long long)&tm;
#elif MAP == 1
  asm("mov.b64 %0, tma_load_param_0;" : "=l"(map));
#else
  map = (unsigned long long)out;
#endif
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar)),
                 "r"(BOXBYTES + EXTRA) : "memory");
#if RANK == 1
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2}], [%3];"
                 ::"r"(smem(dst)), "l"(map), "r"(c0), "r"(smem(&bar)) : "memory");
#elif RANK == 2
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(smem(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem(&bar)) : "memory");
#else
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];"
                 ::"r"(smem(dst)), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(smem(&bar)) : "memory");
#endif
  }
#if !NOWAIT
  unsigned ok = 0;
  while (!ok)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3; "
                 "selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(smem(&bar)), "r"(0), "r"(1000000)
                 : "memory");
#endif
  for (int i = threadIdx.x; i < BOXBYTES / 4; i += blockDim.x) out[i] = ((const unsigned*)dst)[i];
}
)";

// A global tensor of `es`-byte elements whose bytes are all distinct-ish and never zero, so a
// zero in the box can only be the out-of-bounds fill.
std::vector<uint8_t> pattern(size_t bytes) {
  std::vector<uint8_t> g(bytes);
  for (size_t i = 0; i < bytes; ++i) g[i] = uint8_t(1 + (i * 37 + i / 251) % 255);
  return g;
}

struct Map {
  int es = 4;
  std::vector<uint64_t> dims;   // innermost first
  std::vector<uint64_t> stride; // bytes, dims 1..
  std::vector<uint32_t> box;
  wb::TmSwizzle swz = wb::TmSwizzle::none;
  uint64_t box_bytes() const {
    uint64_t n = uint64_t(es);
    for (auto b : box) n *= b;
    return n;
  }
};

// The box as shared memory holds it, computed the way the CUDA programming guide describes TMA:
// rows of box[0] elements one after another, elements outside the tensor zero, and under an N-byte
// swizzle the 16-byte chunk c of each 128-byte line L stored at chunk c ^ (L mod N/16).
std::vector<uint8_t> expected_box(const Map& m, const std::vector<uint8_t>& g,
                                  const std::vector<int>& c) {
  const size_t rank = m.dims.size();
  const uint64_t row = uint64_t(m.box[0]) * uint64_t(m.es);
  std::vector<uint8_t> logical(m.box_bytes(), 0);
  uint64_t rows = 1;
  for (size_t i = 1; i < rank; ++i) rows *= m.box[i];
  for (uint64_t r = 0; r < rows; ++r) {
    uint64_t rest = r, base = 0;
    bool in = true;
    for (size_t i = 1; i < rank; ++i) {
      int64_t gi = c[i] + int64_t(rest % m.box[i]);
      rest /= m.box[i];
      in = in && gi >= 0 && gi < int64_t(m.dims[i]);
      base += uint64_t(gi) * m.stride[i - 1];
    }
    for (uint32_t k = 0; k < m.box[0]; ++k) {
      int64_t g0 = c[0] + int64_t(k);
      if (!in || g0 < 0 || g0 >= int64_t(m.dims[0])) continue;
      for (int b = 0; b < m.es; ++b)
        logical[r * row + k * uint64_t(m.es) + uint64_t(b)] =
            g[base + uint64_t(g0) * uint64_t(m.es) + uint64_t(b)];
    }
  }
  const int span = wb::swizzle_bytes(m.swz);
  if (!span) return logical;
  std::vector<uint8_t> phys(logical.size());
  for (uint64_t o = 0; o < logical.size(); o += 16) {
    const uint64_t line = o / 128, chunk = (o % 128) / 16;
    const uint64_t to = line * 128 + (chunk ^ (line % uint64_t(span / 16))) * 16;
    std::memcpy(&phys[to], &logical[o], 16);
  }
  return phys;
}

struct Load {
  Plan p;
  int O = -1;
  std::vector<uint8_t> g;
  wb::RunResult run(const Map& m, std::vector<int> c, const std::string& defs = "") {
    const size_t rank = m.dims.size();
    std::string src = "#define RANK " + std::to_string(rank) + "\n#define BOXBYTES " +
                      std::to_string(m.box_bytes()) + "\n" + defs + kLoad;
    p.program = program_from(src, "tma_load.cu", "compute_90");
    uint64_t bytes = uint64_t(m.es) * m.dims[0];
    if (rank > 1) bytes = m.stride[rank - 2] * m.dims[rank - 1];
    g = pattern(bytes);
    int G = p.buffer("tensor", g);
    p.buffers[size_t(G)].type = m.es == 1   ? wb::DType::u8
                                : m.es == 2 ? wb::DType::bf16
                                            : wb::DType::u32;
    O = p.buffer("out", std::vector<uint32_t>(m.box_bytes() / 4, 0xdeadbeefu));
    std::vector<uint64_t> dims(m.dims), strides(m.stride);
    auto arg = p.tensor_map(G, dims, m.box, m.swz, strides);
    while (c.size() < 3) c.push_back(0);
    p.launch("tma_load", {1, 1, 1}, {128, 1, 1},
             {arg, Plan::buf(O), Plan::val(c[0]), Plan::val(c[1]), Plan::val(c[2])});
    return p.run();
  }
  std::vector<uint8_t> out() const {
    auto w = p.get<uint32_t>(O);
    std::vector<uint8_t> b(w.size() * 4);
    std::memcpy(b.data(), w.data(), b.size());
    return b;
  }
};

void check_load(const Map& m, std::vector<int> c, const std::string& defs = "") {
  Load L;
  auto r = L.run(m, c, defs);
  INFO("element size " << m.es << ", dims[0] " << m.dims[0] << ", box[0] " << m.box[0]
                       << ", swizzle " << int(m.swz) << ", box at " << c[0] << ", "
                       << (c.size() > 1 ? c[1] : 0) << " " << defs);
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  while (c.size() < 3) c.push_back(0);
  auto want = expected_box(m, L.g, c);
  auto got = L.out();
  REQUIRE(got.size() == want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && bad++ == 0) first = i;
  INFO("first differing byte " << first << ": got " << int(got[first]) << ", want "
                               << int(want[first]));
  CHECK(bad == 0);
}

} // namespace tmasuite

using namespace tmasuite;

TEST_CASE(TMA_SUITE_PREFIX "TMA load: a 2-D f32 box inside the tensor") {
  Map m{4, {40, 24}, {160}, {16, 8}};
  check_load(m, {8, 5});
}

// Rows padded to 160 bytes; 37 x 19 elements. A box's innermost coordinate is on 16 bytes (a
// multiple of 4 floats): anywhere else the GPU traps (sim_tma_test.cpp).
TEST_CASE(TMA_SUITE_PREFIX "TMA load: a box past the right and bottom edges is zero-filled there") {
  check_load(Map{4, {37, 19}, {160}, {16, 8}}, {28, 15});
}

TEST_CASE(TMA_SUITE_PREFIX "TMA load: a box before the left and top edges is zero-filled there") {
  check_load(Map{4, {37, 19}, {160}, {16, 8}}, {-4, -3});
}

TEST_CASE(TMA_SUITE_PREFIX "TMA load: a box wholly outside the tensor is all zeros") {
  Map m{4, {37, 19}, {160}, {16, 8}};
  check_load(m, {40, 0}); // the bytes still complete the barrier
  Load L;
  auto r = L.run(m, {40, 0});
  bool warned = false;
  for (auto& w : r.warnings) warned = warned || has(w, "wholly outside tensor map");
  CHECK(warned);
}

TEST_CASE(TMA_SUITE_PREFIX
          "TMA load: 128B, 64B and 32B swizzles place each 16-byte chunk as the hardware does") {
  Map m128{2, {150, 40}, {320}, {64, 16}, wb::TmSwizzle::b128};
  check_load(m128, {0, 0});
  check_load(m128, {96, 30}); // ragged: the fill is swizzled too
  Map m64{2, {150, 40}, {320}, {32, 16}, wb::TmSwizzle::b64};
  check_load(m64, {8, 3});
  Map m32{2, {150, 40}, {320}, {16, 16}, wb::TmSwizzle::b32};
  check_load(m32, {24, 7});
}

TEST_CASE(TMA_SUITE_PREFIX "TMA load: 1-D and 3-D boxes") {
  Map m1{4, {1000}, {}, {64}};
  check_load(m1, {960}); // the last 24 elements are outside
  Map m3{2, {24, 10, 6}, {48, 480}, {8, 4, 3}};
  check_load(m3, {16, 8, 4});
  Map m3s{1, {200, 9, 5}, {208, 208 * 9}, {128, 4, 2}, wb::TmSwizzle::b128};
  check_load(m3s, {96, 7, 4});
}

namespace tmasuite {

// Thread 0 stores a box from shared memory (filled from `in`, raw: the swizzled image) to the
// tensor at (c0, c1), then waits for the bulk group. REUSE 1: every thread then writes the box
// again without that wait; 2: after it.
const char* kStore = R"(
#ifndef REUSE
#define REUSE 0
#endif
struct __align__(64) TMap { unsigned long long v[16]; };
__device__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
extern "C" __global__ void tma_store(const __grid_constant__ TMap tm, const unsigned* in, int c0,
                                     int c1) {
  __shared__ __align__(1024) unsigned box[BOXBYTES / 4];
  for (int i = threadIdx.x; i < BOXBYTES / 4; i += blockDim.x) box[i] = in[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"((unsigned long long)&tm), "r"(c0), "r"(c1), "r"(smem(box)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#if REUSE != 1
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
#endif
  }
#if REUSE
  __syncthreads(); // orders the threads, not the copy's reads of the box
  for (int i = threadIdx.x; i < BOXBYTES / 4; i += blockDim.x) box[i] = 0;
#endif
}
)";

} // namespace tmasuite

TEST_CASE(TMA_SUITE_PREFIX "TMA store: a swizzled box lands in the tensor, clipped at its edges "
                          "to 16 bytes") {
  // Rows of 100 elements padded to 104 (208 bytes) and to 128 (256 bytes).
  for (auto [swz, pitch] :
       {std::pair{wb::TmSwizzle::none, 208u}, std::pair{wb::TmSwizzle::b128, 208u},
        std::pair{wb::TmSwizzle::none, 256u}}) {
    Map m{2, {100, 30}, {pitch}, {64, 16}, swz};
    for (std::vector<int> c : {std::vector<int>{8, 2}, std::vector<int>{72, 20}}) {
      Plan p;
      p.program = program_from("#define BOXBYTES " + std::to_string(m.box_bytes()) + "\n" + kStore,
                               "tma_store.cu", "compute_90");
      const uint64_t bytes = m.stride[0] * m.dims[1];
      std::vector<uint8_t> before(bytes, 0x77);
      int G = p.buffer("tensor", before);
      p.buffers[size_t(G)].type = wb::DType::bf16;
      // The box's logical content, then its image in shared memory.
      Map flat = m;
      flat.dims = {uint64_t(m.box[0]), uint64_t(m.box[1])};
      flat.stride = {uint64_t(m.box[0]) * 2};
      std::vector<uint8_t> logical = pattern(m.box_bytes());
      std::vector<uint8_t> image = expected_box(flat, logical, {0, 0, 0});
      std::vector<uint32_t> in(image.size() / 4);
      std::memcpy(in.data(), image.data(), image.size());
      int I = p.buffer("in", in);
      p.launch("tma_store", {1, 1, 1}, {128, 1, 1},
               {p.tensor_map(G, m.dims, m.box, m.swz, m.stride), Plan::buf(I), Plan::val(c[0]),
                Plan::val(c[1])});
      INFO("pitch " << pitch << ", swizzle " << int(swz) << ", box at " << c[0] << ", " << c[1]);
      auto r = p.run();
      INFO(r.fault.message);
      REQUIRE(!r.fault);
      auto after = p.get<uint8_t>(G);
      size_t bad = 0;
      std::pair<int64_t, int64_t> first{-1, -1}; // (element, row) of the first wrong byte
      for (uint64_t y = 0; y < m.dims[1]; ++y)
        for (uint64_t x = 0; x < m.stride[0]; ++x) {
          // The 100-element rows end inside a 16-byte piece: elements 100-103, the rest of it,
          // are written too, from the box, where the box reaches them.
          const int64_t bx = int64_t(x / 2) - c[0], by = int64_t(y) - c[1];
          const bool inside = x / 2 < (m.dims[0] * 2 + 15) / 16 * 8 && bx >= 0 &&
                              bx < int64_t(m.box[0]) && by >= 0 && by < int64_t(m.box[1]);
          const uint8_t want =
              inside ? logical[uint64_t(by) * m.box[0] * 2 + uint64_t(bx) * 2 + x % 2] : 0x77;
          if (after[y * m.stride[0] + x] != want && bad++ == 0)
            first = {int64_t(x / 2), int64_t(y)};
        }
      INFO("first wrong byte at element " << first.first << " of row " << first.second);
      CHECK(bad == 0);
      CHECK(p.guards_intact(G));
    }
  }
}
