/* Spatial order inside a chunk, computed on the device: Hilbert keys, the
 * radix sort, and the packing of float and double copies.
 * Part of the CUDA engine: included by entry.cu, which makes the engine
 * one nvcc translation unit (see ARCHITECTURE.md). */
#ifndef WT_CUDA_ORDER_CUH
#define WT_CUDA_ORDER_CUH

namespace {

/* ---- spatial order inside a chunk (computed on the device) ---- */
#ifndef WT_CUDA_NOSORT

/* position of cell (x, y) along a Hilbert curve over 1024 x 1024 cells */
__host__ __device__ inline uint32_t hilbert10(uint32_t x, uint32_t y)
{
  const uint32_t n = 1024;
  uint32_t d = 0;
  for (uint32_t s = n / 2; s > 0; s /= 2) {
    uint32_t rx = (x & s) ? 1u : 0u, ry = (y & s) ? 1u : 0u;
    d += s * s * ((3u * rx) ^ ry);
    if (ry == 0) {
      if (rx == 1) {
        x = n - 1 - x;
        y = n - 1 - y;
      }
      uint32_t t = x;
      x = y;
      y = t;
    }
  }
  return d;
}

/* cube face and Hilbert cell of a point: a 23-bit key */
__host__ __device__ inline uint32_t cell_key(double x, double y, double z)
{
  double ax = fabs(x), ay = fabs(y), az = fabs(z);
  uint32_t face;
  double m, u, v;
  if (ax >= ay && ax >= az) { face = x >= 0 ? 0u : 1u; m = ax; u = y; v = z; }
  else if (ay >= az) { face = y >= 0 ? 2u : 3u; m = ay; u = x; v = z; }
  else { face = z >= 0 ? 4u : 5u; m = az; u = x; v = y; }
  double fu = m > 0 ? (u / m + 1.0) * 512.0 : 0.0;
  double fv = m > 0 ? (v / m + 1.0) * 512.0 : 0.0;
  if (!(fu >= 0.0)) fu = 0.0;
  if (!(fv >= 0.0)) fv = 0.0;
  uint32_t iu = fu > 1023.0 ? 1023u : (uint32_t)fu;
  uint32_t iv = fv > 1023.0 ? 1023u : (uint32_t)fv;
  return (face << 20) | hilbert10(iu, iv);
}
constexpr int KEY_BITS = 23;

/* sort keys of a chunk's raw coordinates, and the identity permutation.
 * The high bits of a key are the segment of the point: the number of task
 * boundaries (sorted, in bnd[0 .. nb)) at or below its index in the
 * catalog, so that points move only inside the ranges of the tasks. */
__global__ void wt_key_kernel(const double *__restrict__ x,
                              const double *__restrict__ y,
                              const double *__restrict__ z, int n,
                              long long start,
                              const long long *__restrict__ bnd, int nb,
                              unsigned long long *__restrict__ key,
                              uint32_t *__restrict__ idx)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const long long g = start + i;
  int lo = 0, hi = nb;            /* first bound > g */
  while (lo < hi) {
    int mid = (lo + hi) >> 1;
    if (bnd[mid] <= g) lo = mid + 1; else hi = mid;
  }
  key[i] = ((unsigned long long)lo << KEY_BITS) | cell_key(x[i], y[i], z[i]);
  idx[i] = (uint32_t)i;
}
#endif

/* float and double copies of a chunk in cell order (order == NULL: as
 * given): the 32 lanes of a warp then hold close points and see similar
 * pair separations, which keeps shared-memory bank conflicts low. The
 * float copy is the round-to-nearest of the double, as on the host. */
__global__ void wt_pack_kernel(const double *__restrict__ x,
                               const double *__restrict__ y,
                               const double *__restrict__ z,
                               const double *__restrict__ w,
                               const uint32_t *__restrict__ order, int n,
                               float4 *__restrict__ f, DPt *__restrict__ d)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  const int s = order ? (int)order[r] : r;
  const double a = x[s], b = y[s], c = z[s];
  if (f)
    f[r] = make_float4(__double2float_rn(a), __double2float_rn(b),
                       __double2float_rn(c), 0.0f);
  d[r] = DPt{a, b, c, w ? w[s] : 0.0};
}

/* a chunk's bitwise words (PIP) in the order of its packed points: word k
 * of packed point r from the raw upload's point order[r]; both word-major
 * with stride `stride` */
__global__ void wt_pack_bits_kernel(const uint32_t *__restrict__ raw,
                                    const uint32_t *__restrict__ order, int n,
                                    int n_words, long long stride,
                                    uint32_t *__restrict__ out)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  const int s = order ? (int)order[r] : r;
  for (int k = 0; k < n_words; k++)
    out[(long long)k * stride + r] = raw[(long long)k * stride + s];
}

}  // namespace

#endif
