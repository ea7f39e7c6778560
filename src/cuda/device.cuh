/* Device-side types shared by the kernels (work items, points, kernel
 * arguments) and the exact double-precision helpers.
 * Part of the CUDA engine: included by entry.cu, which makes the engine
 * one nvcc translation unit (see ARCHITECTURE.md). */
#ifndef WT_CUDA_DEVICE_CUH
#define WT_CUDA_DEVICE_CUH

namespace {

/* work items (Item) and the fast table's cell slots (CellSlots, read here
 * as int2) come from plan.h */
static_assert(sizeof(wt_cuda::CellSlots) == sizeof(int2) &&
                  alignof(int2) % alignof(wt_cuda::CellSlots) == 0,
              "cell slots are copied to the device as int2");

/* a point in double, padded to 32 bytes */
struct __align__(32) DPt { double x, y, z, w; };

__device__ __forceinline__ DPt load_dpt(const DPt *p)
{
  const double2 *q = reinterpret_cast<const double2 *>(p);
  double2 a = __ldg(q), b = __ldg(q + 1);
  return DPt{a.x, a.y, b.x, b.y};
}

/* arguments of the fast kernel */
struct FastArgs {
  const float4 *fI, *fJ;       /* float coordinates (w unused) */
  const DPt *dI, *dJ;      /* double coordinates (w unused) */
  int nI, nJ;
  const Item *items;
  int n_items;
  int *counter;                /* next item (dynamic scheduling) */
  const float *thr;            /* fast table: threshold of each cell */
  const int2 *cmap;            /* slots of each cell: below, above */
  const double *upper;         /* exact edges, n_slots */
  int n_slots;
  unsigned long long *ghist;   /* 64-bit counts, n_out x n_slots */
  unsigned fixoff;             /* byte offset of the per-slot counters */
  int fix_shared;              /* 0: per-slot counts go straight to ghist */
  unsigned joff;               /* byte offset of the j tile in smem */
  unsigned qoff;               /* byte offset of the warps' queues */
  unsigned itemoff;            /* byte offset of the item slot in smem */
  unsigned capoff;             /* byte offset of bulk counting's caps */
  unsigned long long *gbulk;   /* pairs counted in bulk (one counter) */
  float onec;                  /* 1 + c */
  float margin;                /* M */
};

/* arguments of the exact kernel */
struct ExactArgs {
  const DPt *dI, *dJ;
  int nI, nJ;
  const Item *items;
  int n_items;
  int *counter;
  const double *upper;
  int n_slots;
  const uint16_t *btab;        /* core/bins.c table or NULL */
  int bshift;
  long long bbase;
  int bsize, bsteps;
  unsigned long long *ghist;   /* n_out x n_slots */
  double *gw;                  /* weight sums, n_out x n_slots; NULL: none */
  int rcols;                   /* R; 0: count straight into ghist */
  unsigned joff, itemoff, woff;  /* woff: R-column weight sums (double) */
};

/* the exact kernel's second argument: its angle sums (mean_theta), kept
 * out of ExactArgs so that the kernels without them compile as before */
struct AngleArgs {
  double *gt;                  /* angle sums, n_out x n_slots; NULL: none */
  unsigned toff;               /* byte offset of the R-column angle sums */
};

/* the exact kernel's third argument: PIP pair weights (wt.h, wt_pip), kept
 * out of ExactArgs as the angle sums are; n_words 0 and n_ang 0: none */
struct PipArgs {
  const uint32_t *bI, *bJ;     /* words of the resident chunks, word-major,
                                  word k of point r at [k * stride + r] */
  long long stride;
  int n_words;
  const double *by;            /* pair factor by popcount, 32 n_words + 1 */
  int n_ang;
  const double *ang_d2, *ang_w;  /* angular table in squared chords */
};

/* the float-decided weighted kernel's own arguments (kernel_weighted.cuh):
 * the fast kernel's table as {threshold, lowest slot} per cell and where
 * the block keeps it, the PIP factors and its j tile in shared memory */
struct WFastArgs {
  const float4 *fI, *fJ;       /* float coordinates (w unused) */
  const float2 *tab;           /* per cell: threshold, lowest slot (bits) */
  int n_cells;
  int shift;                   /* key * 8 = (bits(q) >> shift) & ~7 */
  unsigned tbase;              /* byte offset of the table minus key 0's */
  float onec, margin;          /* 1 + c and M of the fast table */
  unsigned taboff, byoff;      /* table and PIP factors in smem */
  unsigned jfoff, jwoff, jboff;  /* j tile: floats, weights, words */
};

/* ------------------------------------------------------------------ */
/* device code                                                          */
/* ------------------------------------------------------------------ */

__device__ __forceinline__ double exact_d2(DPt a, DPt b)
{
  double dx = __dsub_rn(a.x, b.x), dy = __dsub_rn(a.y, b.y),
         dz = __dsub_rn(a.z, b.z);
  double d2 = __dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy));
  return __dadd_rn(d2, __dmul_rn(dz, dz));
}

/* the angle of a pair in radians from its squared chord: 2 asin(d / 2),
 * d / 2 taken as 1 when rounding puts it above (cpu/engine.h pair_angle) */
__device__ __forceinline__ double exact_angle(double d2)
{
  const double h = __dmul_rn(__dsqrt_rn(d2), 0.5);
  return __dmul_rn(2.0, asin(h < 1.0 ? h : 1.0));
}

/* smallest slot s with d2 < upper[s] (wt_slot_of) */
__device__ __forceinline__ int slot_search(const double *upper, int n_slots,
                                           double d2)
{
  int lo = 0, hi = n_slots - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (d2 < __ldg(upper + mid)) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/* the CPU engine's lookup, step for step (floor/slots.h slot_of) */
__device__ __forceinline__ int cpu_slot(const ExactArgs &a, double d2)
{
  if (a.btab == nullptr) return slot_search(a.upper, a.n_slots, d2);
  unsigned long long bits = (unsigned long long)__double_as_longlong(d2);
  long long key = (long long)(bits >> a.bshift) - a.bbase;
  if (key < 0) key = 0;
  if (key >= a.bsize) key = a.bsize - 1;
  int s = __ldg(a.btab + key);
  for (int r = 0; r < a.bsteps; r++)   /* the guard only stops reads past
                                          the end for d2 = +inf */
    if (s < a.n_slots - 1) s += d2 >= __ldg(a.upper + s);
  return s;
}

/* The work loop both kernels share. Blocks pull the launch's items one at
 * a time (an atomic counter: a block that finishes early takes the next
 * one, so blocks end together). A block's counters in shared memory are
 * 32-bit and belong to one histogram: before the block moves to an item
 * of another histogram, or to one whose pairs could make a counter wrap
 * (more than `wrap_guard` pairs since the last flush), turn(from, to)
 * flushes them into histogram `from` (-1: none yet; the block synchronises
 * after a flush, before any thread counts on) and makes `to` the current
 * one. count(item, out) counts one item into the block's counters of
 * histogram out. Returns the histogram the counters hold at the end (-1:
 * the block had no item), which the kernel flushes. Forced inline, with
 * the lambdas, so that each kernel compiles as if the loop were written
 * out in it: the machine code of both kernels is byte-identical to the
 * two loops this replaced (bench/kernel/kernel-notes.md, "Issue 18"). */
template <class Turn, class Count>
__device__ __forceinline__ int for_each_item(const Item *items, int n_items,
                                             int *counter, int *s_item,
                                             unsigned long long wrap_guard,
                                             Turn &&turn, Count &&count)
{
  unsigned long long since_flush = 0;
  int cur_out = -1;
  for (;;) {
    __syncthreads();
    if (threadIdx.x == 0) *s_item = atomicAdd(counter, 1);
    __syncthreads();
    const int it = *s_item;
    if (it >= n_items) break;
    const Item item = items[it];
    const unsigned long long n_pairs =
        (unsigned long long)(item.i1 - item.i0) *
        (unsigned)(item.j1 - item.j0);
    if (item.out != cur_out || since_flush + n_pairs > wrap_guard) {
      turn(cur_out, item.out);
      since_flush = 0;
      cur_out = item.out;
    }
    since_flush += n_pairs;
    count(item, cur_out);
  }
  return cur_out;
}

/* the PIP factor of the pair (gi, gj) of the resident chunks at squared
 * chord d2: by[popcount(b_i & b_j)] times the angular weight, the CPU
 * engine's arithmetic (kernels_pip.c) with no fused multiply-add */
__device__ __forceinline__ double pip_factor(const PipArgs &p, int gi, int gj,
                                             double d2)
{
  double f = 1.0;
  if (p.n_words > 0) {
    int c = 0;
    for (int k = 0; k < p.n_words; k++)
      c += __popc(__ldg(p.bI + (long long)k * p.stride + gi) &
                  __ldg(p.bJ + (long long)k * p.stride + gj));
    f = __ldg(p.by + c);
  }
  const int n = p.n_ang;
  if (n > 0) {
    const double *x = p.ang_d2, *y = p.ang_w;
    double a = 1.0;
    if (n == 1) {
      if (d2 == x[0]) a = y[0];
    } else if (d2 >= x[0] && d2 <= x[n - 1]) {
      int lo = 0, hi = n - 1;
      while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (x[mid] <= d2) lo = mid; else hi = mid;
      }
      const double t = __ddiv_rn(__dsub_rn(d2, x[lo]),
                                 __dsub_rn(x[lo + 1], x[lo]));
      a = __dadd_rn(y[lo], __dmul_rn(t, __dsub_rn(y[lo + 1], y[lo])));
    }
    f = __dmul_rn(f, a);
  }
  return f;
}

}  // namespace

#endif
