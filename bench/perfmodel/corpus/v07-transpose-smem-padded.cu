// Corpus · v07-transpose-smem-padded · designed limiter: dram
//
// What: the same shared-memory tile transpose as v07-transpose-smem-nopad (32 x 32 tiles, 32 x 8
// threads, scalar coalesced loads and stores), with the tile padded to tile[32][33].
// Run:  warpbook check 07-transpose bench/perfmodel/corpus/v07-transpose-smem-padded.cu
//
// Why: with 33 words per row, tile[tx][j] for tx = 0..31 falls in banks (33 tx + j) % 32 =
// (tx + j) % 32, all different: no conflicts (sim: shared_bank_conflicts = 0). Every global access
// is a full 128-byte line, 4.2 KB of shared memory per block, 256 threads: 8 blocks and 2048
// threads per SM, each thread 4 loads in flight (16 KB per SM) before the barrier. 8 bytes of DRAM
// traffic per element, ~4 instructions of shared and global memory per element. Expected: a plain
// scalar copy's rate, ~70-80% of the 4.8 TB/s datasheet (the float4 solution gets 82%).
// @tune TILE=32
// @tune ROWS=8

extern "C" __global__ void transpose(const float* __restrict__ input, float* __restrict__ output,
                                     int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1]; // the pad puts a tile column in 32 different banks
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long r0 = (long long)blockIdx.y * TILE, c0 = (long long)blockIdx.x * TILE;
  for (int j = ty; j < TILE; j += ROWS) {
    const long long r = r0 + j, c = c0 + tx;
    if (r < rows && c < cols) tile[j][tx] = input[r * cols + c];
  }
  __syncthreads();
  for (int j = ty; j < TILE; j += ROWS) {
    const long long oc = c0 + j, orow = r0 + tx;
    if (oc < cols && orow < rows) output[oc * rows + orow] = tile[tx][j];
  }
}
