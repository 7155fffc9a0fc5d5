// A 7-point stencil on a 3-D grid of blocks (8x8x4 threads): out = 6*c - neighbours, with
// clamped edges; exercises blockIdx.y/z and 3-D thread indices.
extern "C" __global__ void stencil3d(const float* in, float* out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  auto at = [&](int a, int b, int c) {
    a = min(max(a, 0), nx - 1);
    b = min(max(b, 0), ny - 1);
    c = min(max(c, 0), nz - 1);
    return in[(c * ny + b) * nx + a];
  };
  out[(z * ny + y) * nx + x] = 6.0f * at(x, y, z) - at(x - 1, y, z) - at(x + 1, y, z) -
                               at(x, y - 1, z) - at(x, y + 1, z) - at(x, y, z - 1) -
                               at(x, y, z + 1);
}
