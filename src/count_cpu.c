/* The CPU engine: OpenMP over blocks of rows, per-thread histograms.
 *
 * The work is cut into tiles: WT_ROWS rows of the first catalog against up to
 * WT_TILE columns of the second. Each tile is done in two passes:
 *
 *  1. the slot pass computes every pair's squared chord in double exactly as
 *     wt.h states (separate multiplies and adds, no FMA) and turns it into a
 *     histogram index, written to a small per-thread buffer. The slot comes
 *     from a table lookup on the high bits of d2 followed by exact compares
 *     of d2 against the double edges, so it is the double-precision answer
 *     with no acos and no bin search. On x86-64 this pass is vectorised with
 *     AVX-512 or AVX2 gathers (chosen at run time); a plain-C version runs
 *     everywhere else and handles the ragged edges of tiles.
 *  2. the histogram pass increments the counters named in the buffer. Each
 *     thread keeps WT_COPIES interleaved copies of its histogram and
 *     consecutive pairs go to different copies, so runs of pairs in one bin
 *     (the catalogs are spatially sorted) do not serialise on
 *     store-to-load forwarding.
 *
 * No R API is used here. */
#include <stdlib.h>
#include <string.h>
#include "wt.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#define WT_X86 1
#include <immintrin.h>
#endif

#define WT_ROWS 4                 /* rows of the first catalog per block */
#define WT_TILE 512               /* columns per tile; a multiple of 8 */
#define WT_COPIES 8               /* histogram copies; a power of two */
#define WT_FLUSH (1u << 30)       /* flush 32-bit counters before this */

/* The empty asm pins a product in a register, so the compiler cannot fuse it
 * with the following add into an FMA (GCC fuses across statements whenever
 * the target has FMA, as AVX-512 targets do). It emits no instruction. */
#if defined(__GNUC__) && defined(__x86_64__)
#define WT_UNFUSED(v) __asm__("" : "+x"(v))
#elif defined(__GNUC__) && defined(__aarch64__)
#define WT_UNFUSED(v) __asm__("" : "+w"(v))
#else
#define WT_UNFUSED(v) ((void)0)
#endif

typedef struct wt_ctx wt_ctx;

/* A vectorised slot pass: rows [i0, i0 + nr) (nr is 1 or WT_ROWS) against
 * columns [j0, j0 + nj) of b, as far as whole vectors go; writes the indices
 * column group by column group to buf and returns the columns done. */
typedef int64_t (*wt_vec_fn)(const wt_ctx *c, const wt_points *a, int64_t i0,
                             int nr, const wt_points *b, int64_t j0,
                             int64_t nj, int32_t *buf);

struct wt_ctx {
  const wt_bins *bins;
  int n_slots;
  int32_t copy_off[WT_COPIES];  /* index of slot 0 in each histogram copy */
  wt_vec_fn vec;                /* NULL: plain C only */
  /* private forms of the table for the gather kernels */
  const int32_t *slot32;        /* table[] widened to int32 */
  const uint64_t *packed;       /* table_steps <= 1: see pack_table() */
  int pack_shift;
};

/* per-thread state */
typedef struct {
  uint32_t *h;                  /* WT_COPIES histograms of n_slots */
  uint64_t *acc;                /* n_slots */
  int32_t *buf;                 /* WT_ROWS * WT_TILE histogram indices */
  uint64_t pending;             /* increments since the last flush */
} wt_thread;

static inline double pair_d2(double xi, double yi, double zi,
                             double xj, double yj, double zj)
{
  double dx = xi - xj, dy = yi - yj, dz = zi - zj;
  double px = dx * dx, py = dy * dy, pz = dz * dz;
  WT_UNFUSED(px);
  WT_UNFUSED(py);
  WT_UNFUSED(pz);
  return (px + py) + pz;
}

static inline uint64_t d2_bits(double d2)
{
  uint64_t u;
  memcpy(&u, &d2, sizeof u);
  return u;
}

/* The reference slot of d2: the table guess and table_steps compare-and-step
 * rounds, or a binary search without a table. Every kernel agrees with it. */
static inline int slot_of(const wt_bins *bins, double d2)
{
  if (bins->table == NULL) return wt_slot_of(bins, d2);
  int64_t key = (int64_t)(d2_bits(d2) >> bins->table_shift) - bins->table_base;
  if (key < 0) key = 0;
  if (key >= bins->table_size) key = bins->table_size - 1;
  int s = bins->table[key];
  for (int r = 0; r < bins->table_steps; r++) s += d2 >= bins->upper[s];
  return s;
}

/* Plain-C slot pass: rows [i0, i0 + nr) against columns [j0, j1), column by
 * column, into buf from position pos; the pair at position p goes to copy
 * p % WT_COPIES. Returns the next position. */
static size_t slots_plain(const wt_ctx *c, const wt_points *a, int64_t i0,
                          int nr, const wt_points *b, int64_t j0, int64_t j1,
                          int32_t *buf, size_t pos)
{
  const wt_bins *bins = c->bins;
  const double *ax = a->x + i0, *ay = a->y + i0, *az = a->z + i0;
  for (int64_t j = j0; j < j1; j++) {
    double xj = b->x[j], yj = b->y[j], zj = b->z[j];
    for (int r = 0; r < nr; r++, pos++) {
      double d2 = pair_d2(ax[r], ay[r], az[r], xj, yj, zj);
      buf[pos] = c->copy_off[pos & (WT_COPIES - 1)] + slot_of(bins, d2);
    }
  }
  return pos;
}

#ifdef WT_X86
/* Lanes whose key falls outside the table (d2 below the first cell or above
 * the last, or not finite) take the reference path; this is rare. */
__attribute__((noinline, cold))
static void patch_lanes(const wt_ctx *c, const double *d2, unsigned lanes,
                        const int32_t *lane_off, int32_t *out)
{
  for (int l = 0; lanes; l++, lanes >>= 1)
    if (lanes & 1) out[l] = lane_off[l] + slot_of(c->bins, d2[l]);
}

#define WT_INLINE static inline __attribute__((always_inline))
#define WT_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512cd,avx512vl,avx512dq")))
#define WT_AVX2 __attribute__((target("avx2")))
#define WT_UNFUSED_V(v) __asm__("" : "+v"(v))

/* AVX-512: 8 columns per vector, lane l into histogram copy l. nr and packed
 * are constants at each call site so every variant is unrolled. */
WT_AVX512 WT_INLINE int64_t
vec_avx512_body(const wt_ctx *c, const wt_points *a, int64_t i0, int nr,
                const wt_points *b, int64_t j0, int64_t nj, int32_t *buf,
                int packed)
{
  const wt_bins *bins = c->bins;
  __m512d xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS];
  for (int r = 0; r < nr; r++) {
    xi[r] = _mm512_set1_pd(a->x[i0 + r]);
    yi[r] = _mm512_set1_pd(a->y[i0 + r]);
    zi[r] = _mm512_set1_pd(a->z[i0 + r]);
  }
  const __m128i shift = _mm_cvtsi32_si128(bins->table_shift);
  const __m128i pshift = _mm_cvtsi32_si128(c->pack_shift);
  const __m512i base = _mm512_set1_epi64(bins->table_base);
  const __m512i top = _mm512_set1_epi64(bins->table_size - 1);
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i low_mask =
    _mm512_set1_epi64((int64_t)((UINT64_C(1) << bins->table_shift) - 1));
  const __m512i off_mask =
    _mm512_set1_epi64((int64_t)((UINT64_C(1) << c->pack_shift) - 1));
  const __m256i lane_off = _mm256_loadu_si256((const __m256i *)c->copy_off);
  const int steps = bins->table_steps;
  const int64_t nv = nj & ~(int64_t)7;
  int32_t *out = buf;
  for (int64_t j = j0; j < j0 + nv; j += 8) {
    __m512d xj = _mm512_loadu_pd(b->x + j);
    __m512d yj = _mm512_loadu_pd(b->y + j);
    __m512d zj = _mm512_loadu_pd(b->z + j);
    for (int r = 0; r < nr; r++, out += 8) {
      __m512d dx = _mm512_sub_pd(xi[r], xj);
      __m512d dy = _mm512_sub_pd(yi[r], yj);
      __m512d dz = _mm512_sub_pd(zi[r], zj);
      __m512d px = _mm512_mul_pd(dx, dx);
      __m512d py = _mm512_mul_pd(dy, dy);
      __m512d pz = _mm512_mul_pd(dz, dz);
      WT_UNFUSED_V(px);
      WT_UNFUSED_V(py);
      WT_UNFUSED_V(pz);
      __m512d d2 = _mm512_add_pd(_mm512_add_pd(px, py), pz);
      __m512i bits = _mm512_castpd_si512(d2);
      __m512i key = _mm512_sub_epi64(_mm512_srl_epi64(bits, shift), base);
      __mmask8 bad = _mm512_cmpgt_epu64_mask(key, top);
      __m512i s;
      if (packed) {
        __m512i e = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(),
                                                (__mmask8)~bad, key,
                                                c->packed, 8);
        __mmask8 below =
          _mm512_cmplt_epi64_mask(_mm512_and_si512(bits, low_mask),
                                  _mm512_and_si512(e, off_mask));
        s = _mm512_srl_epi64(e, pshift);
        s = _mm512_mask_sub_epi64(s, below, s, one);
      } else {
        s = _mm512_cvtepi32_epi64(
          _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), (__mmask8)~bad,
                                      key, c->slot32, 4));
        for (int t = 0; t < steps; t++) {
          __m512d u = _mm512_i64gather_pd(s, bins->upper, 8);
          s = _mm512_mask_add_epi64(s, _mm512_cmp_pd_mask(d2, u, _CMP_GE_OQ),
                                    s, one);
        }
      }
      _mm256_storeu_si256((__m256i *)out,
                          _mm256_add_epi32(_mm512_cvtepi64_epi32(s), lane_off));
      if (bad) {
        double tmp[8];
        _mm512_storeu_pd(tmp, d2);
        patch_lanes(c, tmp, bad, c->copy_off, out);
      }
    }
  }
  return nv;
}

WT_AVX512 static int64_t
vec_avx512(const wt_ctx *c, const wt_points *a, int64_t i0, int nr,
           const wt_points *b, int64_t j0, int64_t nj, int32_t *buf)
{
  if (c->packed)
    return nr == WT_ROWS
      ? vec_avx512_body(c, a, i0, WT_ROWS, b, j0, nj, buf, 1)
      : vec_avx512_body(c, a, i0, 1, b, j0, nj, buf, 1);
  return nr == WT_ROWS
    ? vec_avx512_body(c, a, i0, WT_ROWS, b, j0, nj, buf, 0)
    : vec_avx512_body(c, a, i0, 1, b, j0, nj, buf, 0);
}
#endif /* WT_X86 */

/* Slot pass of a tile: rows [i0, i0 + nr) against columns [j0, j1); the
 * vector kernel takes whole vectors and plain C the rest. Returns the count
 * of indices written to buf. */
static size_t slots_tile(const wt_ctx *c, const wt_points *a, int64_t i0,
                         int nr, const wt_points *b, int64_t j0, int64_t j1,
                         int32_t *buf)
{
  size_t pos = 0;
  int step = c->vec && nr != WT_ROWS ? 1 : nr;   /* rows per kernel call */
  for (int r = 0; r < nr; r += step) {
    int64_t j = j0;
    if (c->vec) {
      int64_t done = c->vec(c, a, i0 + r, step, b, j0, j1 - j0, buf + pos);
      pos += (size_t)done * step;
      j += done;
    }
    pos = slots_plain(c, a, i0 + r, step, b, j, j1, buf, pos);
  }
  return pos;
}

static void flush(const wt_ctx *c, wt_thread *t)
{
  for (int k = 0; k < WT_COPIES; k++) {
    uint32_t *h = t->h + (size_t)k * c->n_slots;
    for (int s = 0; s < c->n_slots; s++) {
      t->acc[s] += h[s];
      h[s] = 0;
    }
  }
  t->pending = 0;
}

/* Histogram pass over the n indices in t->buf. */
static void count_buf(const wt_ctx *c, wt_thread *t, size_t n)
{
  if (t->pending + n >= WT_FLUSH) flush(c, t);
  t->pending += n;
  uint32_t *restrict h = t->h;
  const int32_t *restrict idx = t->buf;
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    h[idx[k]]++;
    h[idx[k + 1]]++;
    h[idx[k + 2]]++;
    h[idx[k + 3]]++;
  }
  for (; k < n; k++) h[idx[k]]++;
}

/* pairs visited by row block g (rows g*WT_ROWS ...) */
static int64_t block_pairs(const wt_job *job, int64_t g)
{
  int64_t na = job->a.n, i0 = g * WT_ROWS;
  int64_t nr = na - i0 < WT_ROWS ? na - i0 : WT_ROWS;
  if (!job->is_auto) return nr * job->b.n;
  /* rows i0..i0+nr-1, each against j > i */
  int64_t s = 0;
  for (int64_t r = 0; r < nr; r++) s += na - (i0 + r) - 1;
  return s;
}

/* one row block: the whole rectangle for cross, the part j > i for auto */
static void do_block(const wt_job *job, const wt_ctx *c, int64_t g,
                     wt_thread *t)
{
  const wt_points *a = &job->a;
  const wt_points *b = job->is_auto ? &job->a : &job->b;
  int64_t i0 = g * WT_ROWS;
  int nr = (int)(a->n - i0 < WT_ROWS ? a->n - i0 : WT_ROWS);
  int64_t j_start = job->is_auto ? i0 + nr : 0;
  /* the small triangle inside the block (auto only) */
  if (job->is_auto) {
    size_t n = 0;
    for (int r = 0; r < nr - 1; r++)
      n = slots_plain(c, a, i0 + r, 1, b, i0 + r + 1, i0 + nr, t->buf, n);
    count_buf(c, t, n);
  }
  /* the rectangle, tile by tile */
  for (int64_t j0 = j_start; j0 < b->n; j0 += WT_TILE) {
    int64_t j1 = b->n - j0 < WT_TILE ? b->n : j0 + WT_TILE;
    count_buf(c, t, slots_tile(c, a, i0, nr, b, j0, j1, t->buf));
  }
}

/* For table_steps <= 1 every table cell holds at most one edge, so a pair's
 * slot is table[k] or table[k] + 1, decided by d2 >= T with T =
 * upper[table[k]]. Cell k spans the d2 bit patterns B = (base + k) << shift
 * up to B + 2^shift - 1, so for d2 inside the cell that test is
 * (bits(d2) - B) >= clamp(bits(T) - B, 0, 2^shift), an exact comparison of
 * the low shift bits. One 64-bit entry per cell holds both:
 * (table[k] + 1) << (shift + 1) | clamp(bits(T) - B, 0, 2^shift).
 * Returns NULL when the slots do not fit beside the threshold. */
static uint64_t *pack_table(const wt_bins *bins, int *pack_shift)
{
  int sh = bins->table_shift;
  if (bins->table_steps > 1 || (uint64_t)bins->n_bins + 2 >= UINT64_C(1) << (63 - sh))
    return NULL;
  uint64_t *p = malloc((size_t)bins->table_size * sizeof *p);
  if (!p) return NULL;
  for (int k = 0; k < bins->table_size; k++) {
    int s = bins->table[k];
    int64_t cell = (int64_t)((uint64_t)(bins->table_base + k) << sh);
    int64_t off = (int64_t)d2_bits(bins->upper[s]) - cell;
    if (off < 0) off = 0;
    if (off > (int64_t)1 << sh) off = (int64_t)1 << sh;
    p[k] = ((uint64_t)(s + 1) << (sh + 1)) | (uint64_t)off;
  }
  *pack_shift = sh + 1;
  return p;
}

/* Picks the slot pass and builds the private tables it needs. */
static int ctx_init(wt_ctx *c, const wt_bins *bins, int32_t **slot32,
                    uint64_t **packed)
{
  memset(c, 0, sizeof *c);
  c->bins = bins;
  c->n_slots = bins->n_bins + 2;
  for (int k = 0; k < WT_COPIES; k++) c->copy_off[k] = k * c->n_slots;
  *slot32 = NULL;
  *packed = NULL;
#ifdef WT_X86
  if (bins->table == NULL) return WT_OK;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
      && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")
      && __builtin_cpu_supports("avx512cd"))
    c->vec = vec_avx512;
  else
    return WT_OK;
  *packed = pack_table(bins, &c->pack_shift);
  if (*packed == NULL) {
    *slot32 = malloc((size_t)bins->table_size * sizeof **slot32);
    if (*slot32 == NULL) return WT_ERR_NOMEM;
    for (int k = 0; k < bins->table_size; k++) (*slot32)[k] = bins->table[k];
  }
  c->slot32 = *slot32;
  c->packed = *packed;
#endif
  return WT_OK;
}

int wt_count_cpu(wt_job *job)
{
  wt_ctx ctx;
  int32_t *slot32;
  uint64_t *packed;
  int status = ctx_init(&ctx, job->bins, &slot32, &packed);
  const int n_slots = ctx.n_slots;
  int nt = job->n_threads < 1 ? 1 : job->n_threads;
  int64_t n_blocks = (job->a.n + WT_ROWS - 1) / WT_ROWS;
  if (n_blocks < nt) nt = n_blocks < 1 ? 1 : (int)n_blocks;
  size_t per = (size_t)WT_COPIES * n_slots;
  uint32_t *h = calloc((size_t)nt * per, sizeof *h);
  uint64_t *acc = calloc((size_t)nt * n_slots, sizeof *acc);
  int32_t *buf = malloc((size_t)nt * WT_ROWS * WT_TILE * sizeof *buf);
  if (status == WT_OK && (!h || !acc || !buf)) status = WT_ERR_NOMEM;
  /* chunks of row blocks holding about 2^27 pairs: a chunk takes well under
   * a second, and the main thread checks for interrupts between chunks */
  const int64_t chunk_pairs = (int64_t)1 << 27;
  int64_t g = 0;
  while (status == WT_OK && g < n_blocks) {
    int64_t g_end = g, pairs = 0;
    while (g_end < n_blocks && (pairs < chunk_pairs || g_end - g < 4 * nt)) {
      pairs += block_pairs(job, g_end);
      g_end++;
    }
    const int64_t g_first = g;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
#ifdef _OPENMP
      int id = omp_get_thread_num();
#else
      int id = 0;
#endif
      wt_thread t;
      t.h = h + (size_t)id * per;
      t.acc = acc + (size_t)id * n_slots;
      t.buf = buf + (size_t)id * WT_ROWS * WT_TILE;
      t.pending = 0;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
      for (int64_t k = g_first; k < g_end; k++) do_block(job, &ctx, k, &t);
      flush(&ctx, &t);
    }
    g = g_end;
    if (g < n_blocks && job->interrupted && job->interrupted())
      status = WT_ERR_INTERRUPTED;
  }
  if (status == WT_OK) {
    for (int s = 0; s < n_slots; s++) {
      uint64_t sum = 0;
      for (int t = 0; t < nt; t++) sum += acc[(size_t)t * n_slots + s];
      job->slots[s] = sum;
    }
  }
  free(h);
  free(acc);
  free(buf);
  free(slot32);
  free(packed);
  return status;
}
