// library: CUB (cub::BlockLoad, cub::BlockReduce, cub::BlockScan, cub::BlockStore)
// puzzle: 11-inclusive-scan
// like: solutions/11-inclusive-scan.cu
//
// The three-pass scan with CUB's block primitives: scan_reduce sums each tile (BlockLoad in the
// warp-transposed order, then BlockReduce), scan_sums turns the tiles' sums into their exclusive
// prefixes with BlockScan (a running total carried from one chunk of BLOCK tiles to the next), and
// scan_final scans each tile with BlockScan, starting from its prefix.
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
// @tune BLOCK=256
// @tune ITEMS=4

using Load = cub::BlockLoad<float, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using Store = cub::BlockStore<float, BLOCK, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
using Reduce = cub::BlockReduce<float, BLOCK>;
using Scan = cub::BlockScan<float, BLOCK>;

// The block's tile: where it starts, and how many of its elements lie before n.
__device__ long long tile_base() {
  return (long long)blockIdx.x * BLOCK * ITEMS;
}
__device__ int tile_valid(int n) {
  return (int)min((long long)BLOCK * ITEMS, n - tile_base());
}

// The block's tile of x (zeros past n), ITEMS per thread; the block may reuse `tmp` after it.
__device__ void load_tile(const float* x, int n, float (&v)[ITEMS],
                          typename Load::TempStorage& tmp) {
  Load(tmp).Load(x + tile_base(), v, tile_valid(n), 0.0f);
  __syncthreads();
}

extern "C" __global__ void scan_reduce(const float* x, float* sums, int n) {
  __shared__ union {
    typename Load::TempStorage load;
    typename Reduce::TempStorage reduce;
  } tmp;
  float v[ITEMS];
  load_tile(x, n, v, tmp.load);
  float t = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) t += v[k];
  t = Reduce(tmp.reduce).Sum(t);
  if (threadIdx.x == 0) sums[blockIdx.x] = t;
}

// The running total of the chunks before this one, handed to BlockScan as the prefix.
struct Carry {
  float total;
  __device__ float operator()(float chunk) {
    const float before = total;
    total += chunk;
    return before;
  }
};

extern "C" __global__ void scan_sums(float* sums, int tiles) {
  __shared__ typename Scan::TempStorage tmp;
  Carry carry{0.0f};
  for (int k0 = 0; k0 < tiles; k0 += BLOCK) {
    const int k = k0 + threadIdx.x;
    float v = k < tiles ? sums[k] : 0.0f;
    Scan(tmp).ExclusiveSum(v, v, carry);
    __syncthreads();
    if (k < tiles) sums[k] = v;
  }
}

extern "C" __global__ void scan_final(const float* x, float* y, float* sums, int n) {
  __shared__ union {
    typename Load::TempStorage load;
    typename Scan::TempStorage scan;
    typename Store::TempStorage store;
  } tmp;
  float v[ITEMS];
  load_tile(x, n, v, tmp.load);
  const float prefix = sums[blockIdx.x];
  Scan(tmp.scan).InclusiveSum(v, v);
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) v[k] += prefix;
  __syncthreads();
  Store(tmp.store).Store(y + tile_base(), v, tile_valid(n));
}
