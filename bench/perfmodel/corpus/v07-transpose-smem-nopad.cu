// Corpus · v07-transpose-smem-nopad · designed limiter: bank_conflicts
//
// What: the classic shared-memory tile transpose WITHOUT padding. A block of 32 x 8 threads moves
// a 32 x 32 tile: it reads the tile row by row (coalesced, 128 B per warp load) into
// tile[32][32], and after one barrier writes it out row by row (coalesced), each thread reading
// the tile down a column: tile[tx][j].
// Run:  warpbook check 07-transpose bench/perfmodel/corpus/v07-transpose-smem-nopad.cu
//
// Why it is slow: tile[tx][j] for tx = 0..31 are 32 words 32 words apart, all in bank j % 32: a
// 32-way bank conflict, so each warp's shared load takes 32 wavefronts instead of 1 (sim:
// shared_bank_conflicts = 31 per column read). That is one shared-memory cycle per element
// transposed: 2^26 elements / 132 SMs ~ 0.51 M cycles per SM ~ 257 us at 1.98 GHz, against ~120-135
// us for the 537 MB of DRAM traffic. Expected: about half the padded version's rate, with the
// shared-memory pipe (MIO/LSU wavefronts) saturated and DRAM half idle.
// @tune TILE=32
// @tune ROWS=8

extern "C" __global__ void transpose(const float* __restrict__ input, float* __restrict__ output,
                                     int rows, int cols) {
  __shared__ float tile[TILE][TILE]; // no padding: a column of the tile is one bank
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long r0 = (long long)blockIdx.y * TILE, c0 = (long long)blockIdx.x * TILE;
  for (int j = ty; j < TILE; j += ROWS) {
    const long long r = r0 + j, c = c0 + tx;
    if (r < rows && c < cols) tile[j][tx] = input[r * cols + c];
  }
  __syncthreads();
  // Output row c0 + j holds input column c0 + j; its element r0 + tx is tile[tx][j].
  for (int j = ty; j < TILE; j += ROWS) {
    const long long oc = c0 + j, orow = r0 + tx;
    if (oc < cols && orow < rows) output[oc * rows + orow] = tile[tx][j];
  }
}
