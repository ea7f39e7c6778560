/* The CPU engine: OpenMP over work items, per-thread histograms.
 *
 * Every count is the double-precision answer of wt.h: a pair's slot is that
 * of d2 = ((xi-xj)^2 + (yi-yj)^2) + (zi-zj)^2 in IEEE double (separate
 * multiplies and adds, no FMA) against the double edges upper[]. It comes
 * from a table lookup on the high bits of d2 and exact comparisons with the
 * edges, with no acos and no bin search.
 *
 * A job is a list of tasks (wt.h); work items are blocks of rows of one task
 * (WT_BLOCK rows, or a multiple for tasks with few columns, see
 * item_rows()), handed out dynamically, so a list of many small tasks
 * (jackknife patches) keeps every thread busy as one large task does. An
 * item walks its task's columns in tiles of WT_TILE, and each tile is
 * counted against the item's groups of WT_ROWS rows while it is in cache.
 * Within a tile, on x86-64 (kernels chosen at run time):
 *  - AVX-512 with a float prefilter (vec_f32): the tile is rounded to float
 *    once per item and d2 is computed in float, 16 pairs per vector; a
 *    private table turns the float d2 into a slot with one gather, one add
 *    and one shift, and flags the pairs whose float d2 is too close to an
 *    edge for the float result to be trusted (a rigorous error bound, see
 *    f32_table()), or too small for the table; those pairs, rare, are
 *    redone in double.
 *  - otherwise AVX-512 or AVX2 in double (vec_avx512, vec_avx2), 8 or 4
 *    pairs per vector, with gathers from private forms of the table.
 * The vector kernels write the histogram indices of each group of columns to
 * a small ring and increment those counters two groups later, so that the
 * vector work and the scattered increments overlap. Plain C does the rest:
 * other CPUs, the ragged ends of tiles, binnings too fine for a table.
 *
 * Weighted jobs take the same path with the same slot decisions; the
 * kernels also compute w_i w_j in double, keep it in the ring beside the
 * index, and add it to a double histogram laid out as the counters.
 *
 * Each thread keeps WT_COPIES interleaved copies of its histogram and
 * neighbouring pairs count into different copies, so runs of pairs in one bin
 * do not serialise on store-to-load forwarding. Counters are 32-bit and are
 * flushed into the work item's 64-bit sums well before they could overflow,
 * and at the end of the item; weight sums are flushed into the item's double
 * sums every WT_WFLUSH pairs or so (see wt_count_cpu() for the rest).
 *
 * No R API is used here. */
#include <math.h>
#include <stdio.h>
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

#define WT_ROWS 6                 /* rows per kernel call (a row group) */
#define WT_BLOCK 48               /* rows per work unit; a multiple of WT_ROWS */
#define WT_TILE 2048              /* columns per tile; a multiple of 16 */
#define WT_COPIES 8               /* histogram copies, at most */
#define WT_COPY_BYTES (1 << 18)   /* fewer copies when they outgrow this */
#define WT_LAG 2                  /* column groups from computing to counting */
#define WT_RING (2 * WT_LAG)
#define WT_FLUSH (1u << 30)       /* flush 32-bit counters before this */
#define WT_WFLUSH (1u << 14)      /* flush weight sums at least this often */
#define WT_ITEM_PAIRS (1 << 18)   /* pairs a work item aims at, at least */
#define WT_CHUNK_PAIRS (1 << 26)  /* pairs per thread between polls */
#define WT_RECORD_BYTES (1 << 24) /* items' sums per chunk, at most (mostly) */
#define WT_F32_EMIN (-20)         /* the float table spans d2 in [2^-20, 4): */
#define WT_F32_BINADES 22         /* 22 binades (at most 32), 2^m cells each, */
#define WT_F32_MMAX 9             /* m <= WT_F32_MMAX */
#define WT_F32_CELLS (WT_F32_BINADES << WT_F32_MMAX)
#define WT_F32_MIN_PAIRS 4194304.0 /* smaller jobs skip building its table */

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

/* A vector kernel: counts the pairs of rows [i0, i0 + nr) (nr is 1 or
 * WT_ROWS) and columns [j0, j0 + nj) of b into h, as far as whole vectors go,
 * and returns the columns done. tile holds those columns of b as floats
 * (x, then y, then z, WT_TILE apart) for vec_f32; the others ignore it.
 * When wh is not NULL (a->w and b->w are given) it also adds each pair's
 * weight w_i w_j to wh, which has the layout of h. */
typedef int64_t (*wt_vec_fn)(const wt_ctx *c, uint32_t *h, double *wh,
                             const float *tile, const wt_points *a,
                             int64_t i0, int nr, const wt_points *b,
                             int64_t j0, int64_t nj);

struct wt_ctx {
  const wt_bins *bins;
  int n_slots;
  int copies;                   /* histogram copies in use, 1..WT_COPIES */
  /* start of the copy that the k-th of neighbouring pairs counts into */
  int32_t copy_off[2 * WT_COPIES];
  uint32_t sink;                /* a spare counter after the copies */
  wt_vec_fn vec;                /* double kernel; NULL: plain C only */
  wt_vec_fn vec32;              /* float-prefilter kernel, or NULL */
  /* private forms of the table for the double kernels: packed, or else
   * slot32 and upper_pad */
  const uint64_t *packed;       /* table_steps <= 1: see pack_table() */
  const int32_t *slot32;        /* table[] widened to int32 */
  const double *upper_pad;      /* upper[], then table_steps more +inf */
  int low_slot;                 /* packed: cell 0 (every d2 below the */
  double low_edge;              /* table) has slot low_slot, or + 1 from here */
  /* the float table: see f32_table() */
  const uint32_t *f32;
  int f32_shift, f32_m;         /* key = (bits(d2f) >> f32_shift) - f32_base */
  int32_t f32_base;
  uint32_t f32_window[32];      /* per binade */
};

/* per-thread state */
typedef struct {
  uint32_t *h;                  /* copies * n_slots counters, then the sink */
  uint64_t *acc;                /* n_slots: the current work item's counts */
  double *wh;                   /* weighted: sums laid out as h, else NULL */
  double *wacc;                 /* weighted: the work item's n_slots sums */
  float *tile;                  /* 3 * WT_TILE: a tile of b as floats */
  uint64_t pending;             /* increments since the last flush */
  uint64_t wpending;            /* weighted pairs since the last flush_w */
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

/* The slot of d2, equal to wt_slot_of() for every d2: the table guess and
 * table_steps compare-and-step rounds. Keys below the table use cell 0, which
 * covers all d2 from 0; d2 above the last cell (only non-finite d2 or points
 * far off the unit sphere) takes the binary search, as does a missing table.
 * Every kernel agrees with this function. */
static inline int slot_of(const wt_bins *bins, double d2)
{
  if (bins->table == NULL) return wt_slot_of(bins, d2);
  int64_t key = (int64_t)(d2_bits(d2) >> bins->table_shift) - bins->table_base;
  if (key >= bins->table_size) return wt_slot_of(bins, d2);
  if (key < 0) key = 0;
  int s = bins->table[key];
  for (int r = 0; r < bins->table_steps; r++) s += d2 >= bins->upper[s];
  return s;
}

/* Plain C: counts the pairs of rows [i0, i0 + nr) and columns [j0, j1);
 * row r counts into copy r, and with weighted its weight sums into copy r
 * of wh. nr and weighted are constants at each call site. */
static inline void count_plain_body(const wt_ctx *c, uint32_t *h, double *wh,
                                    const wt_points *a, int64_t i0, int nr,
                                    const wt_points *b, int64_t j0,
                                    int64_t j1, int weighted)
{
  const wt_bins bins = *c->bins;   /* a copy the counters cannot alias */
  double xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS], wi[WT_ROWS];
  uint32_t *hr[WT_ROWS];
  double *whr[WT_ROWS];
  for (int r = 0; r < nr; r++) {
    xi[r] = a->x[i0 + r];
    yi[r] = a->y[i0 + r];
    zi[r] = a->z[i0 + r];
    hr[r] = h + c->copy_off[r];
    if (weighted) {
      wi[r] = a->w[i0 + r];
      whr[r] = wh + c->copy_off[r];
    }
  }
  for (int64_t j = j0; j < j1; j++) {
    double xj = b->x[j], yj = b->y[j], zj = b->z[j];
    double wj = weighted ? b->w[j] : 0.0;
    for (int r = 0; r < nr; r++) {
      int s = slot_of(&bins, pair_d2(xi[r], yi[r], zi[r], xj, yj, zj));
      hr[r][s]++;
      if (weighted) {
        double p = wi[r] * wj;
        WT_UNFUSED(p);
        whr[r][s] += p;
      }
    }
  }
}

static void count_plain(const wt_ctx *c, uint32_t *h, double *wh,
                        const wt_points *a, int64_t i0, int nr,
                        const wt_points *b, int64_t j0, int64_t j1)
{
  if (wh) {
    if (nr == WT_ROWS)
      count_plain_body(c, h, wh, a, i0, WT_ROWS, b, j0, j1, 1);
    else
      for (int r = 0; r < nr; r++)
        count_plain_body(c, h, wh, a, i0 + r, 1, b, j0, j1, 1);
  } else {
    if (nr == WT_ROWS)
      count_plain_body(c, h, NULL, a, i0, WT_ROWS, b, j0, j1, 0);
    else
      for (int r = 0; r < nr; r++)
        count_plain_body(c, h, NULL, a, i0 + r, 1, b, j0, j1, 0);
  }
}

#ifdef WT_X86
#define WT_INLINE static inline __attribute__((always_inline))
#define WT_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512cd,avx512vl,avx512dq")))
#define WT_AVX2 __attribute__((target("avx2")))
#define WT_UNFUSED_V(v) __asm__("" : "+v"(v))

/* The exact histogram indices of the pairs (i, j + l) for the lanes l set in
 * lanes, into out[l]: for d2 above the double table (non-finite, or points
 * far off the unit sphere). */
__attribute__((noinline, cold))
static void patch_pairs(const wt_ctx *c, const wt_points *a, int64_t i,
                        const wt_points *b, int64_t j, unsigned lanes,
                        const int32_t *lane_off, uint32_t *out)
{
  for (int l = 0; lanes; l++, lanes >>= 1)
    if (lanes & 1)
      out[l] = (uint32_t)(lane_off[l] +
                          slot_of(c->bins, pair_d2(a->x[i], a->y[i], a->z[i],
                                                   b->x[j + l], b->y[j + l],
                                                   b->z[j + l])));
}

/* Increments the n counters named in idx (n even), two per load. */
static inline void count_ring(uint32_t *h, const uint32_t *idx, int n)
{
#pragma GCC unroll 16
  for (int k = 0; k < n; k += 2) {
    uint64_t v;
    memcpy(&v, idx + k, sizeof v);
    h[(uint32_t)v]++;
    h[v >> 32]++;
  }
}

/* As count_ring, and adds the weights wv[k] to the sums wh[idx[k]]. */
static inline void count_ring_w(uint32_t *h, double *wh, const uint32_t *idx,
                                const double *wv, int n)
{
#pragma GCC unroll 16
  for (int k = 0; k < n; k += 2) {
    uint64_t v;
    memcpy(&v, idx + k, sizeof v);
    uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
    h[lo]++;
    wh[lo] += wv[k];
    h[hi]++;
    wh[hi] += wv[k + 1];
  }
}

/* The ring of a vector kernel: column group g writes ring[g % WT_RING] and
 * counts ring[(g + WT_LAG) % WT_RING], the indices of group g - WT_LAG; the
 * first groups count the sink, and the last ones are counted at the end.
 * A weighted kernel keeps the pairs' weights in wring, alongside (those of
 * the first groups are 0, so the sink of wh only ever adds zeros). */
#define WT_RING_DECL(ring, wring, width)                                     \
  uint32_t ring[WT_RING][WT_ROWS * (width)] __attribute__((aligned(64)));    \
  double wring[WT_RING][WT_ROWS * (width)] __attribute__((aligned(64)));     \
  for (int g_ = WT_LAG; g_ < WT_RING; g_++)                                  \
    for (int k_ = 0; k_ < WT_ROWS * (width); k_++) {                         \
      ring[g_][k_] = c->sink;                                                \
      if (weighted) wring[g_][k_] = 0.0;                                     \
    }
#define WT_RING_DRAIN(ring, wring, width, groups)                            \
  for (int64_t g_ = (groups) + WT_LAG; g_ < (groups) + WT_RING; g_++) {      \
    if (weighted)                                                            \
      count_ring_w(h, wh, ring[g_ % WT_RING], wring[g_ % WT_RING],           \
                   nr * (width));                                            \
    else                                                                     \
      count_ring(h, ring[g_ % WT_RING], nr * (width));                       \
  }

/* The double lookup, as constants in registers (set up once per call, as
 * stores to the counters could otherwise force reloads from the context). */
typedef struct {
  __m128i shift;
  __m512i base, top, one, low_slot;
  __m512d low_edge;
  const uint64_t *packed;
  const int32_t *slot32;
  const double *upper;
  int steps;
} wt_lut512;

WT_AVX512 WT_INLINE wt_lut512 lut512(const wt_ctx *c)
{
  wt_lut512 L;
  L.shift = _mm_cvtsi32_si128(c->bins->table_shift);
  L.base = _mm512_set1_epi64(c->bins->table_base);
  L.top = _mm512_set1_epi64(c->bins->table_size - 1);
  L.one = _mm512_set1_epi64(1);
  L.low_slot = _mm512_set1_epi64(c->low_slot);
  L.low_edge = _mm512_set1_pd(c->low_edge);
  L.packed = c->packed;
  L.slot32 = c->slot32;
  L.upper = c->upper_pad;
  L.steps = c->bins->table_steps;
  return L;
}

WT_AVX512 WT_INLINE __m512d
d2_avx512(__m512d xi, __m512d yi, __m512d zi, __m512d xj, __m512d yj,
          __m512d zj)
{
  __m512d dx = _mm512_sub_pd(xi, xj);
  __m512d dy = _mm512_sub_pd(yi, yj);
  __m512d dz = _mm512_sub_pd(zi, zj);
  __m512d px = _mm512_mul_pd(dx, dx);
  __m512d py = _mm512_mul_pd(dy, dy);
  __m512d pz = _mm512_mul_pd(dz, dz);
  WT_UNFUSED_V(px);
  WT_UNFUSED_V(py);
  WT_UNFUSED_V(pz);
  return _mm512_add_pd(_mm512_add_pd(px, py), pz);
}

/* The slots of 8 squared chords, as slot_of() gives them, except for the
 * lanes returned in *above (d2 above the table: for patch_pairs). Keys below
 * the table belong to cell 0, which spans every d2 from 0. packed is a
 * constant at each call site. */
WT_AVX512 WT_INLINE __m512i
slots_avx512(const wt_lut512 *L, __m512d d2, int packed, __mmask8 *above)
{
  __m512i bits = _mm512_castpd_si512(d2);
  __m512i key = _mm512_sub_epi64(_mm512_srl_epi64(bits, L->shift), L->base);
  __m512i s;
  if (packed) {
    __mmask8 in = _mm512_cmple_epu64_mask(key, L->top);
    __m512i e = _mm512_mask_i64gather_epi64(_mm512_undefined_epi32(), in,
                                            key, L->packed, 8);
    s = _mm512_srl_epi64(_mm512_add_epi64(bits, e), L->shift);
    *above = 0;
    if (!_kortestc_mask8_u8(in, in)) {
      /* cell 0 holds one edge at most, upper[table[0]] */
      __mmask8 below = _mm512_cmplt_epi64_mask(key, _mm512_setzero_si512());
      s = _mm512_mask_mov_epi64(s, below, L->low_slot);
      s = _mm512_mask_add_epi64(
        s, _mm512_mask_cmp_pd_mask(below, d2, L->low_edge, _CMP_GE_OQ), s,
        L->one);
      *above = (__mmask8)~(in | below);
    }
  } else {
    /* the slot is the first s in [table[key], table[key] + steps] with
     * d2 < upper[s]: a branch-free binary search over those slots */
    key = _mm512_max_epi64(key, _mm512_setzero_si512());
    *above = _mm512_cmpgt_epu64_mask(key, L->top);
    s = _mm512_cvtepi32_epi64(_mm512_mask_i64gather_epi32(
      _mm256_setzero_si256(), (__mmask8)~*above, key, L->slot32, 4));
    for (int n = L->steps; n > 1; ) {
      int half = n / 2;
      __m512d u = _mm512_i64gather_pd(s, L->upper + half - 1, 8);
      s = _mm512_mask_add_epi64(s, _mm512_cmp_pd_mask(d2, u, _CMP_GE_OQ), s,
                                _mm512_set1_epi64(half));
      n -= half;
    }
    __m512d u = _mm512_i64gather_pd(s, L->upper, 8);
    s = _mm512_mask_add_epi64(s, _mm512_cmp_pd_mask(d2, u, _CMP_GE_OQ), s,
                              L->one);
  }
  return s;
}

/* AVX-512 in double, 8 columns per vector; lane l counts into copy l. nr,
 * packed and weighted are constants at each call site, so every variant is
 * unrolled. */
WT_AVX512 WT_INLINE int64_t
vec_avx512_body(const wt_ctx *c, uint32_t *h, double *wh, const wt_points *a,
                int64_t i0, int nr, const wt_points *b, int64_t j0,
                int64_t nj, int packed, int weighted)
{
  const double *bx = b->x + j0, *by = b->y + j0, *bz = b->z + j0;
  const double *bw = weighted ? b->w + j0 : NULL;
  const wt_lut512 L = lut512(c);
  const __m256i lane_off = _mm256_loadu_si256((const __m256i *)c->copy_off);
  __m512d xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS], wi[WT_ROWS];
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++) {
    xi[r] = _mm512_set1_pd(a->x[i0 + r]);
    yi[r] = _mm512_set1_pd(a->y[i0 + r]);
    zi[r] = _mm512_set1_pd(a->z[i0 + r]);
    if (weighted) wi[r] = _mm512_set1_pd(a->w[i0 + r]);
  }
  const int64_t nv = nj & ~(int64_t)7;
  WT_RING_DECL(ring, wring, 8);
  for (int64_t j = 0; j < nv; j += 8) {
    uint32_t *out = ring[(j >> 3) % WT_RING];
    const uint32_t *old = ring[((j >> 3) + WT_LAG) % WT_RING];
    double *wout = wring[(j >> 3) % WT_RING];
    const double *wold = wring[((j >> 3) + WT_LAG) % WT_RING];
    __m512d xj = _mm512_loadu_pd(bx + j);
    __m512d yj = _mm512_loadu_pd(by + j);
    __m512d zj = _mm512_loadu_pd(bz + j);
    __m512d wj = weighted ? _mm512_loadu_pd(bw + j) : _mm512_setzero_pd();
#pragma GCC unroll 8
    for (int r = 0; r < nr; r++) {
      __mmask8 above;
      __m512i s = slots_avx512(&L, d2_avx512(xi[r], yi[r], zi[r], xj, yj, zj),
                               packed, &above);
      _mm256_store_si256((__m256i *)(out + 8 * r),
                         _mm256_add_epi32(_mm512_cvtepi64_epi32(s), lane_off));
      if (weighted) _mm512_store_pd(wout + 8 * r, _mm512_mul_pd(wi[r], wj));
      if (above)
        patch_pairs(c, a, i0 + r, b, j0 + j, above, c->copy_off, out + 8 * r);
      if (weighted)
        count_ring_w(h, wh, old + 8 * r, wold + 8 * r, 8);
      else
        count_ring(h, old + 8 * r, 8);
    }
  }
  WT_RING_DRAIN(ring, wring, 8, nv >> 3);
  return nv;
}

WT_AVX512 static int64_t
vec_avx512(const wt_ctx *c, uint32_t *h, double *wh, const float *tile,
           const wt_points *a, int64_t i0, int nr, const wt_points *b,
           int64_t j0, int64_t nj)
{
  (void)tile;
  const int six = nr == WT_ROWS, p = c->packed != NULL;
  if (wh)
    return six ? (p ? vec_avx512_body(c, h, wh, a, i0, WT_ROWS, b, j0, nj, 1, 1)
                    : vec_avx512_body(c, h, wh, a, i0, WT_ROWS, b, j0, nj, 0, 1))
               : (p ? vec_avx512_body(c, h, wh, a, i0, 1, b, j0, nj, 1, 1)
                    : vec_avx512_body(c, h, wh, a, i0, 1, b, j0, nj, 0, 1));
  return six ? (p ? vec_avx512_body(c, h, NULL, a, i0, WT_ROWS, b, j0, nj, 1, 0)
                  : vec_avx512_body(c, h, NULL, a, i0, WT_ROWS, b, j0, nj, 0, 0))
             : (p ? vec_avx512_body(c, h, NULL, a, i0, 1, b, j0, nj, 1, 0)
                  : vec_avx512_body(c, h, NULL, a, i0, 1, b, j0, nj, 0, 0));
}

/* The float kernel's undecided lanes: pairs (i, j + l), l < 16, redone in
 * double, into out[l]. */
WT_AVX512 __attribute__((noinline, cold)) static void
redo_f32(const wt_ctx *c, const wt_points *a, int64_t i, const wt_points *b,
         int64_t j, __mmask16 lanes, uint32_t *out)
{
  const wt_lut512 L = lut512(c);
  const __m512d xi = _mm512_set1_pd(a->x[i]);
  const __m512d yi = _mm512_set1_pd(a->y[i]);
  const __m512d zi = _mm512_set1_pd(a->z[i]);
  for (int k = 0; k < 16; k += 8) {
    __mmask8 above, mine = (__mmask8)(lanes >> k);
    __m512d d2 = d2_avx512(xi, yi, zi, _mm512_loadu_pd(b->x + j + k),
                           _mm512_loadu_pd(b->y + j + k),
                           _mm512_loadu_pd(b->z + j + k));
    __m512i s = c->packed ? slots_avx512(&L, d2, 1, &above)
                          : slots_avx512(&L, d2, 0, &above);
    __m256i idx = _mm256_add_epi32(
      _mm512_cvtepi64_epi32(s),
      _mm256_loadu_si256((const __m256i *)(c->copy_off + k)));
    _mm256_mask_storeu_epi32(out + k, mine, idx);
    if (above & mine)
      patch_pairs(c, a, i, b, j + k, above & mine, c->copy_off + k, out + k);
  }
}

/* AVX-512 with the float prefilter, 16 columns per vector; lane l counts
 * into copy l % 8. See f32_table() for the entries. */
WT_AVX512 WT_INLINE int64_t
vec_f32_body(const wt_ctx *c, uint32_t *h, double *wh, const float *tile,
             const wt_points *a, int64_t i0, int nr, const wt_points *b,
             int64_t j0, int64_t nj, int weighted)
{
  const float *tx = tile, *ty = tile + WT_TILE, *tz = tile + 2 * WT_TILE;
  const double *bw = weighted ? b->w + j0 : NULL;
  const uint32_t *ftab = c->f32;
  __m512 xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS];
  __m512d wi[WT_ROWS];
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++) {
    xi[r] = _mm512_set1_ps((float)a->x[i0 + r]);
    yi[r] = _mm512_set1_ps((float)a->y[i0 + r]);
    zi[r] = _mm512_set1_ps((float)a->z[i0 + r]);
    if (weighted) wi[r] = _mm512_set1_pd(a->w[i0 + r]);
  }
  const __m128i shift = _mm_cvtsi32_si128(c->f32_shift);
  const __m128i wshift = _mm_cvtsi32_si128(c->f32_shift + 1);
  const __m128i mshift = _mm_cvtsi32_si128(c->f32_m);
  const __m512i base = _mm512_set1_epi32(c->f32_base);
  const __m512i top = _mm512_set1_epi32((WT_F32_BINADES << c->f32_m) - 1);
  const __m512i low_mask = _mm512_set1_epi32((1 << c->f32_shift) - 1);
  const __m512i windows_lo = _mm512_loadu_si512(c->f32_window);
  const __m512i windows_hi = _mm512_loadu_si512(c->f32_window + 16);
  const __m512i lane_off = _mm512_loadu_si512(c->copy_off);
  const int64_t nv = nj & ~(int64_t)15;
  WT_RING_DECL(ring, wring, 16);
  for (int64_t j = 0; j < nv; j += 16) {
    uint32_t *out = ring[(j >> 4) % WT_RING];
    const uint32_t *old = ring[((j >> 4) + WT_LAG) % WT_RING];
    double *wout = wring[(j >> 4) % WT_RING];
    const double *wold = wring[((j >> 4) + WT_LAG) % WT_RING];
    __m512 xj = _mm512_loadu_ps(tx + j);
    __m512 yj = _mm512_loadu_ps(ty + j);
    __m512 zj = _mm512_loadu_ps(tz + j);
    __m512d wj_lo = weighted ? _mm512_loadu_pd(bw + j) : _mm512_setzero_pd();
    __m512d wj_hi =
      weighted ? _mm512_loadu_pd(bw + j + 8) : _mm512_setzero_pd();
#pragma GCC unroll 8
    for (int r = 0; r < nr; r++) {
      __m512 dx = _mm512_sub_ps(xi[r], xj);
      __m512 dy = _mm512_sub_ps(yi[r], yj);
      __m512 dz = _mm512_sub_ps(zi[r], zj);
      __m512 px = _mm512_mul_ps(dx, dx);
      __m512 py = _mm512_mul_ps(dy, dy);
      __m512 pz = _mm512_mul_ps(dz, dz);
      WT_UNFUSED_V(px);
      WT_UNFUSED_V(py);
      WT_UNFUSED_V(pz);
      __m512i bits =
        _mm512_castps_si512(_mm512_add_ps(_mm512_add_ps(px, py), pz));
      __m512i key = _mm512_sub_epi32(_mm512_srl_epi32(bits, shift), base);
      __mmask16 in = _mm512_cmple_epu32_mask(key, top);
      __m512i e = _mm512_mask_i32gather_epi32(_mm512_undefined_epi32(), in,
                                              key, ftab, 4);
      __m512i y = _mm512_add_epi32(_mm512_and_si512(bits, low_mask), e);
      __m512i window = _mm512_permutex2var_epi32(
        windows_lo, _mm512_srl_epi32(key, mshift), windows_hi);
      __mmask16 ok = _mm512_mask_test_epi32_mask(in, y, window);
      _mm512_store_si512(out + 16 * r,
                         _mm512_add_epi32(_mm512_srl_epi32(y, wshift),
                                          lane_off));
      if (weighted) {
        _mm512_store_pd(wout + 16 * r, _mm512_mul_pd(wi[r], wj_lo));
        _mm512_store_pd(wout + 16 * r + 8, _mm512_mul_pd(wi[r], wj_hi));
      }
      if (!_kortestc_mask16_u8(ok, ok))
        redo_f32(c, a, i0 + r, b, j0 + j, (__mmask16)~ok, out + 16 * r);
      if (weighted)
        count_ring_w(h, wh, old + 16 * r, wold + 16 * r, 16);
      else
        count_ring(h, old + 16 * r, 16);
    }
  }
  WT_RING_DRAIN(ring, wring, 16, nv >> 4);
  return nv;
}

WT_AVX512 static int64_t
vec_f32(const wt_ctx *c, uint32_t *h, double *wh, const float *tile,
        const wt_points *a, int64_t i0, int nr, const wt_points *b,
        int64_t j0, int64_t nj)
{
  if (wh)
    return nr == WT_ROWS
      ? vec_f32_body(c, h, wh, tile, a, i0, WT_ROWS, b, j0, nj, 1)
      : vec_f32_body(c, h, wh, tile, a, i0, 1, b, j0, nj, 1);
  return nr == WT_ROWS
    ? vec_f32_body(c, h, NULL, tile, a, i0, WT_ROWS, b, j0, nj, 0)
    : vec_f32_body(c, h, NULL, tile, a, i0, 1, b, j0, nj, 0);
}

/* AVX2 in double, 4 columns per vector; lane l of row r counts into copy
 * l + 4 (r % 2). As vec_avx512_body otherwise; AVX2 has no unsigned or
 * 64-bit min/max comparisons, so the key range is tested with signed ones. */
WT_AVX2 WT_INLINE int64_t
vec_avx2_body(const wt_ctx *c, uint32_t *h, double *wh, const wt_points *a,
              int64_t i0, int nr, const wt_points *b, int64_t j0, int64_t nj,
              int packed, int weighted)
{
  const wt_bins *bins = c->bins;
  const double *bx = b->x + j0, *by = b->y + j0, *bz = b->z + j0;
  const double *bw = weighted ? b->w + j0 : NULL;
  __m256d wi[WT_ROWS];
  const double *upper = c->upper_pad;
  const long long *ptab = (const long long *)c->packed;
  const int *stab = c->slot32;
  __m256d xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS];
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++) {
    xi[r] = _mm256_set1_pd(a->x[i0 + r]);
    yi[r] = _mm256_set1_pd(a->y[i0 + r]);
    zi[r] = _mm256_set1_pd(a->z[i0 + r]);
    if (weighted) wi[r] = _mm256_set1_pd(a->w[i0 + r]);
  }
  const __m128i shift = _mm_cvtsi32_si128(bins->table_shift);
  const __m256i base = _mm256_set1_epi64x(bins->table_base);
  const __m256i zero = _mm256_setzero_si256();
  /* key >u top, as a signed comparison with the sign bits flipped */
  const __m256i sign = _mm256_set1_epi64x(INT64_MIN);
  const __m256i top = _mm256_set1_epi64x((bins->table_size - 1) ^ INT64_MIN);
  const __m256i low_slot = _mm256_set1_epi64x(c->low_slot);
  const __m256d low_edge = _mm256_set1_pd(c->low_edge);
  const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const __m128i lane_off[2] = {
    _mm_loadu_si128((const __m128i *)c->copy_off),
    _mm_loadu_si128((const __m128i *)(c->copy_off + 4))};
  const int steps = bins->table_steps;
  const int64_t nv = nj & ~(int64_t)3;
  WT_RING_DECL(ring, wring, 4);
  for (int64_t j = 0; j < nv; j += 4) {
    uint32_t *out = ring[(j >> 2) % WT_RING];
    const uint32_t *old = ring[((j >> 2) + WT_LAG) % WT_RING];
    double *wout = wring[(j >> 2) % WT_RING];
    const double *wold = wring[((j >> 2) + WT_LAG) % WT_RING];
    __m256d xj = _mm256_loadu_pd(bx + j);
    __m256d yj = _mm256_loadu_pd(by + j);
    __m256d zj = _mm256_loadu_pd(bz + j);
    __m256d wj = weighted ? _mm256_loadu_pd(bw + j) : _mm256_setzero_pd();
#pragma GCC unroll 8
    for (int r = 0; r < nr; r++) {
      __m256d dx = _mm256_sub_pd(xi[r], xj);
      __m256d dy = _mm256_sub_pd(yi[r], yj);
      __m256d dz = _mm256_sub_pd(zi[r], zj);
      __m256d px = _mm256_mul_pd(dx, dx);
      __m256d py = _mm256_mul_pd(dy, dy);
      __m256d pz = _mm256_mul_pd(dz, dz);
      WT_UNFUSED_V(px);
      WT_UNFUSED_V(py);
      WT_UNFUSED_V(pz);
      __m256d d2 = _mm256_add_pd(_mm256_add_pd(px, py), pz);
      __m256i bits = _mm256_castpd_si256(d2);
      __m256i key = _mm256_sub_epi64(_mm256_srl_epi64(bits, shift), base);
      __m256i s, above;
      if (packed) {
        __m256i out_of = _mm256_cmpgt_epi64(_mm256_xor_si256(key, sign), top);
        __m256i e = _mm256_i64gather_epi64(ptab,
                                           _mm256_andnot_si256(out_of, key), 8);
        s = _mm256_srl_epi64(_mm256_add_epi64(bits, e), shift);
        above = zero;
        if (!_mm256_testz_si256(out_of, out_of)) {
          /* cell 0 holds one edge at most, upper[table[0]] */
          __m256i below = _mm256_cmpgt_epi64(zero, key);
          __m256i ge =
            _mm256_castpd_si256(_mm256_cmp_pd(d2, low_edge, _CMP_GE_OQ));
          s = _mm256_blendv_epi8(s, _mm256_sub_epi64(low_slot, ge), below);
          above = _mm256_andnot_si256(below, out_of);
        }
      } else {
        /* below the table: cell 0, as in slots_avx512 */
        key = _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, key), key);
        above = _mm256_cmpgt_epi64(_mm256_xor_si256(key, sign), top);
        key = _mm256_andnot_si256(above, key);
        s = _mm256_cvtepi32_epi64(_mm256_i64gather_epi32(stab, key, 4));
        for (int n = steps; n > 1; ) {
          int half = n / 2;
          __m256d u = _mm256_i64gather_pd(upper + half - 1, s, 8);
          __m256i ge = _mm256_castpd_si256(_mm256_cmp_pd(d2, u, _CMP_GE_OQ));
          s = _mm256_add_epi64(s,
                               _mm256_and_si256(ge, _mm256_set1_epi64x(half)));
          n -= half;
        }
        __m256d u = _mm256_i64gather_pd(upper, s, 8);
        s = _mm256_sub_epi64(
          s, _mm256_castpd_si256(_mm256_cmp_pd(d2, u, _CMP_GE_OQ)));
      }
      __m128i s32 =
        _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(s, even));
      _mm_store_si128((__m128i *)(out + 4 * r),
                      _mm_add_epi32(s32, lane_off[r & 1]));
      if (weighted) _mm256_store_pd(wout + 4 * r, _mm256_mul_pd(wi[r], wj));
      unsigned bad = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(above));
      if (bad)
        patch_pairs(c, a, i0 + r, b, j0 + j, bad, c->copy_off + 4 * (r & 1),
                    out + 4 * r);
      if (weighted)
        count_ring_w(h, wh, old + 4 * r, wold + 4 * r, 4);
      else
        count_ring(h, old + 4 * r, 4);
    }
  }
  WT_RING_DRAIN(ring, wring, 4, nv >> 2);
  return nv;
}

WT_AVX2 static int64_t
vec_avx2(const wt_ctx *c, uint32_t *h, double *wh, const float *tile,
         const wt_points *a, int64_t i0, int nr, const wt_points *b,
         int64_t j0, int64_t nj)
{
  (void)tile;
  const int six = nr == WT_ROWS, p = c->packed != NULL;
  if (wh)
    return six ? (p ? vec_avx2_body(c, h, wh, a, i0, WT_ROWS, b, j0, nj, 1, 1)
                    : vec_avx2_body(c, h, wh, a, i0, WT_ROWS, b, j0, nj, 0, 1))
               : (p ? vec_avx2_body(c, h, wh, a, i0, 1, b, j0, nj, 1, 1)
                    : vec_avx2_body(c, h, wh, a, i0, 1, b, j0, nj, 0, 1));
  return six ? (p ? vec_avx2_body(c, h, NULL, a, i0, WT_ROWS, b, j0, nj, 1, 0)
                  : vec_avx2_body(c, h, NULL, a, i0, WT_ROWS, b, j0, nj, 0, 0))
             : (p ? vec_avx2_body(c, h, NULL, a, i0, 1, b, j0, nj, 1, 0)
                  : vec_avx2_body(c, h, NULL, a, i0, 1, b, j0, nj, 0, 0));
}
#endif /* WT_X86 */

static void flush(const wt_ctx *c, wt_thread *t)
{
  for (int k = 0; k < c->copies; k++) {
    uint32_t *h = t->h + (size_t)k * c->n_slots;
    for (int s = 0; s < c->n_slots; s++) {
      t->acc[s] += h[s];
      h[s] = 0;
    }
  }
  t->pending = 0;
}

/* Adds the weight sums of the copies into the work item's sums, in a fixed
 * order, and clears them. Called at least every WT_WFLUSH weighted pairs, so
 * that no double running sum takes more than a few thousand terms. */
static void flush_w(const wt_ctx *c, wt_thread *t)
{
  for (int s = 0; s < c->n_slots; s++) {
    double v = 0.0;
    for (int k = 0; k < c->copies; k++) {
      double *wh = t->wh + (size_t)k * c->n_slots + s;
      v += *wh;
      *wh = 0.0;
    }
    t->wacc[s] += v;
  }
  t->wpending = 0;
}

/* Counts the pairs of rows [i0, i0 + nr) and columns [j0, j1), at most
 * WT_ROWS * WT_TILE of them: a vector kernel takes whole vectors and plain C
 * the rest. in_tile: t->tile holds columns [j0, j1) as floats. */
static void count_tile(const wt_ctx *c, wt_thread *t, const wt_points *a,
                       int64_t i0, int nr, const wt_points *b, int64_t j0,
                       int64_t j1, int in_tile)
{
  uint64_t n = (uint64_t)nr * (uint64_t)(j1 - j0);
  if (t->pending + n >= WT_FLUSH) flush(c, t);
  t->pending += n;
  if (t->wh) {
    if (t->wpending + n > WT_WFLUSH) flush_w(c, t);
    t->wpending += n;
  }
  wt_vec_fn vec = in_tile && c->vec32 ? c->vec32 : c->vec;
  int step = vec && nr != WT_ROWS ? 1 : nr;   /* rows per kernel call */
  for (int r = 0; r < nr; r += step) {
    int64_t j = j0;
    if (vec)
      j += vec(c, t->h, t->wh, t->tile, a, i0 + r, step, b, j0, j1 - j0);
    count_plain(c, t->h, t->wh, a, i0 + r, step, b, j, j1);
  }
}

/* A work item: rows [r0, r1) of task `task`, against the task's columns. */
typedef struct {
  int64_t task, r0, r1;
  double start;                 /* pairs of the job before this item */
  int64_t pairs;
} wt_item;

static int task_is_diagonal(const wt_job *job, const wt_task *t)
{
  return job->is_auto && t->a0 == t->b0;
}

/* Rows per work item of a task: blocks of WT_BLOCK rows, as many as make
 * about WT_ITEM_PAIRS pairs against the task's columns. This depends on the
 * task only, never on the thread count, so every item's sums (and the
 * weighted results) are the same on any number of threads. */
static int64_t item_rows(const wt_task *t)
{
  int64_t cols = t->b1 - t->b0;
  int64_t blocks = cols > 0 ? WT_ITEM_PAIRS / ((int64_t)WT_BLOCK * cols) : 1;
  return (blocks < 1 ? 1 : blocks) * WT_BLOCK;
}

static int64_t item_pairs(const wt_job *job, const wt_task *t, int64_t r0,
                          int64_t r1)
{
  int64_t nr = r1 - r0;
  /* diagonal: each row i against the columns j > i of the task */
  if (task_is_diagonal(job, t)) return nr * (t->a1 - 1 - r0) - nr * (nr - 1) / 2;
  return nr * (t->b1 - t->b0);
}

/* One work item: for a diagonal task of an auto job the pairs i < j with i
 * in [i0, i1), otherwise the whole rectangle of those rows against the
 * task's columns. All row groups of the item take each column tile in turn,
 * so the tile is read from memory (and rounded to float) once per item. */
static void do_item(const wt_job *job, const wt_ctx *c, const wt_task *task,
                    int64_t i0, int64_t i1, wt_thread *t)
{
  const wt_points *a = &job->a;
  const wt_points *b = job->is_auto ? &job->a : &job->b;
  int64_t j_start = task->b0;
  const int64_t j_end = task->b1;
  if (task_is_diagonal(job, task)) {
    /* the triangle inside the block: each group's own small triangle, then
     * the group against the rest of the block */
    for (int64_t r0 = i0; r0 < i1; r0 += WT_ROWS) {
      int nr = (int)(i1 - r0 < WT_ROWS ? i1 - r0 : WT_ROWS);
      for (int r = 0; r < nr - 1; r++)
        count_tile(c, t, a, r0 + r, 1, b, r0 + r + 1, r0 + nr, 0);
      count_tile(c, t, a, r0, nr, b, r0 + nr, i1, 0);
    }
    j_start = i1;
  }
  for (int64_t j0 = j_start; j0 < j_end; j0 += WT_TILE) {
    int64_t j1 = j_end - j0 < WT_TILE ? j_end : j0 + WT_TILE;
    if (c->vec32)
      for (int64_t j = j0; j < j1; j++) {
        t->tile[j - j0] = (float)b->x[j];
        t->tile[WT_TILE + j - j0] = (float)b->y[j];
        t->tile[2 * WT_TILE + j - j0] = (float)b->z[j];
      }
    for (int64_t r0 = i0; r0 < i1; r0 += WT_ROWS)
      count_tile(c, t, a, r0, (int)(i1 - r0 < WT_ROWS ? i1 - r0 : WT_ROWS), b,
                 j0, j1, 1);
  }
}

/* For table_steps <= 1 every table cell holds at most one edge, so a d2 in
 * cell k has slot S or S + 1, S = table[k], and it is S + 1 exactly when
 * d2 >= T = upper[S]. Cell k holds the d2 whose bit patterns are B + low,
 * B = (table_base + k) << shift, 0 <= low < 2^shift; as d2 >= 0 the order of
 * the bit patterns is that of the values, so the test is low >= off with
 * off = clamp(bits(T) - B, 0, 2^shift). With c = 2^shift - off, low + c
 * reaches 2^shift exactly when low >= off and stays below 2^(shift+1), so
 *   slot = ((S << shift) + c + low) >> shift = (bits(d2) + e[k]) >> shift,
 *   e[k] = (S << shift) + c - B   (mod 2^64),
 * one add and one shift per pair; (S + 2) << shift must not overflow. */
static void pack_table(const wt_bins *bins, uint64_t *e)
{
  const int sh = bins->table_shift;
  const uint64_t cell = UINT64_C(1) << sh;
  for (int k = 0; k < bins->table_size; k++) {
    uint64_t s = bins->table[k];
    uint64_t b = (uint64_t)(bins->table_base + k) << sh;
    uint64_t t = d2_bits(bins->upper[s]);
    uint64_t off = t <= b ? 0 : t - b > cell ? cell : t - b;
    e[k] = (s << sh) + (cell - off) - b;
  }
}

/* An upper bound on |d2f - d2| for pairs of points of norm at most
 * 1 + 2^-40 whose float d2f is below v >= 2^-20: d2 is the double result and
 * d2f the float one, from coordinates rounded to float and separate float
 * operations. Let u = 2^-24, eta = 2^-126 (underflow, even with flush to zero
 * or denormals as zero) and D the exact chord of the double coordinates.
 * Rounding a coordinate moves it by at most u times its size, so the float
 * differences df_k are off the exact ones delta_k by E_k, with
 * |E| <= u (2 + 2^-39 + D) + 2 u^2 + 3 eta (Euclidean norms), and by
 * Cauchy-Schwarz
 *   sum |df_k^2 - delta_k^2| <= 2 |E| D + |E|^2;
 * the products and sums then add u P + 2 u (1 + u)^2 P + 4 eta at most,
 * P = (D + |E|)^2, and the double d2 is within 2^-50 D^2 of D^2. Also
 * D^2 <= v (1 + 2^-10) as long as the bound stays below v 2^-12 (checked by
 * the caller), for the bound over D^2 falls as D grows. The factor 1 + 2^-20
 * covers the rounding of this computation. */
static double f32_err(double v)
{
  const double u = 0x1p-24, eta = 0x1p-126;
  double d = sqrt(v * (1 + 0x1p-10));
  double e = u * (2 + 0x1p-39 + d) + 2 * u * u + 3 * eta;
  double p = (d + e) * (d + e);
  double err = 2 * e * d + e * e + u * p + 2 * u * (1 + u) * (1 + u) * p
    + 4 * eta + 0x1p-50 * d * d;
  return err * (1 + 0x1p-20);
}

static double f32_value(uint32_t bits)
{
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* bits of the smallest float >= t, for 0 < t < 2^127 */
static uint32_t f32_bits_up(double t)
{
  float f = (float)t;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (double)f < t ? u + 1 : u;
}

/* wt_slot_of() by a walk from slot s, for arguments that change little */
static int slot_near(const double *upper, int s, double d2)
{
  while (d2 >= upper[s]) s++;               /* the last upper is +inf */
  while (s > 0 && d2 < upper[s - 1]) s--;
  return s;
}

/* The float table. Cell k covers the floats whose bit patterns are B + low,
 * 0 <= low < 2^sh, sh = 23 - m, B = (f32_base + k) << sh: binade
 * WT_F32_EMIN + (k >> m) cut in 2^m cells. With err = f32_err(top of the
 * binade), an exact d2 is within err of its float d2f, so it lies in the
 * cell widened by err on both sides; the table is only built when every
 * widened cell holds at most one edge. Let S be the slot of the widened
 * cell's bottom. In ulps of the binade err is below M, a power of two per
 * binade, M <= 2^(sh-2).
 *  - No edge in the widened cell: every pair there has slot S, and
 *    e = (S << w) + 2^(sh-1), w = sh + 1.
 *  - One edge T = upper[S]: let t be the bits of the smallest float >= T
 *    and off = max(t - B, 0), in [0, 2^sh + M]. If low >= off + M, then d2f
 *    is at least M ulps above T (at least low ulps if T is below the cell),
 *    so d2 >= d2f - err >= T: slot S + 1; if low < off - M, then d2f is more
 *    than M ulps below T (ulps above the cell are larger), so
 *    d2 <= d2f + err < T: slot S; in between the float cannot decide.
 *    With e = (S << w) + 2^w - off + M, y = low + e is (S << w) + x,
 *    x = 2^w + low - off + M in [2^sh, 2^(w+1)), so y >> w is
 *    S + (low >= off - M), right whenever decided, and undecided exactly when
 *    the bits [log2(2M), w) of y are all 0; without an edge x is in
 *    [2^(sh-1), 2^w) and those bits are never all 0.
 * A pair is thus counted from its float d2f as slot y >> w unless
 * (y & window[binade]) == 0, window = (2^w - 1) & ~(2M - 1), or its key is
 * outside the table; those pairs are redone in double. Returns 0 when no m
 * gives a table (then the double kernels run). */
static int f32_table(wt_ctx *c, uint32_t *tab)
{
  const double *upper = c->bins->upper;
  for (int m = 5; m <= WT_F32_MMAX; m++) {
    const int sh = 23 - m, w = sh + 1;
    int ok = ((uint64_t)c->n_slots + 2) << w <= UINT64_C(1) << 32;
    int s = 0, s_hi = 0;   /* slots of the ends of the widened cells */
    for (int bi = 0; ok && bi < WT_F32_BINADES; bi++) {
      const int ex = WT_F32_EMIN + bi;
      const double err = f32_err(ldexp(1.0, ex + 1));
      const double need = err / ldexp(1.0, ex - 23) + 1;
      uint32_t M = 1;
      while (M < need) M <<= 1;
      if (err > ldexp(1.0, ex + 1 - 12) || M > (1u << (sh - 2))) ok = 0;
      c->f32_window[bi] = ((1u << w) - 1) & ~(2 * M - 1);
      for (int q = 0; ok && q < (1 << m); q++) {
        uint32_t cell = (uint32_t)(ex + 127) << 23 | (uint32_t)q << sh;
        double lo = f32_value(cell) - err;
        double hi = f32_value(cell + (1u << sh) - 1) + err;
        s = slot_near(upper, s, lo);
        s_hi = slot_near(upper, s_hi, hi);
        int64_t e = ((int64_t)s << w) + ((int64_t)1 << (sh - 1));
        if (s_hi == s + 1) {
          int64_t off = (int64_t)f32_bits_up(upper[s]) - cell;
          if (off < 0) off = 0;
          if (off > ((int64_t)1 << sh) + M) ok = 0;
          e = ((int64_t)s << w) + ((int64_t)1 << w) - off + M;
        } else if (s_hi != s) {
          ok = 0;
        }
        tab[(bi << m) | q] = (uint32_t)e;
      }
    }
    if (ok) {
      c->f32_shift = sh;
      c->f32_m = m;
      c->f32_base = (127 + WT_F32_EMIN) << m;
      return 1;
    }
  }
  return 0;
}

/* all points of norm at most 1 + 2^-40 (and not NaN), as f32_err()
 * assumes; the rounding of the squared norm is far below the slack */
static int unit_norms(const wt_points *p)
{
  for (int64_t i = 0; i < p->n; i++) {
    double n2 = p->x[i] * p->x[i] + p->y[i] * p->y[i] + p->z[i] * p->z[i];
    if (!(n2 <= 1 + 0x1p-40)) return 0;
  }
  return 1;
}

/* Host allocations; all fail under WT_FAULT_ALLOC (tests). */
static void *cpu_malloc(const wt_job *job, size_t bytes)
{
  return job->fault & WT_FAULT_ALLOC ? NULL : malloc(bytes);
}

static void *cpu_calloc(const wt_job *job, size_t n, size_t size)
{
  return job->fault & WT_FAULT_ALLOC ? NULL : calloc(n, size);
}

/* Picks the kernels and builds the private tables they need, into *mem (one
 * block for the caller to free). pairs: the job's pairs, over all tasks. */
static int ctx_init(wt_ctx *c, const wt_job *job, double pairs, void **mem)
{
  const wt_bins *bins = job->bins;
  memset(c, 0, sizeof *c);
  c->bins = bins;
  c->n_slots = bins->n_bins + 2;
  c->copies = WT_COPIES;
  while (c->copies > 1 &&
         (size_t)c->copies * c->n_slots * sizeof(uint32_t) > WT_COPY_BYTES)
    c->copies /= 2;
  for (int k = 0; k < 2 * WT_COPIES; k++)
    c->copy_off[k] = (k % WT_COPIES % c->copies) * c->n_slots;
  c->sink = (uint32_t)(c->copies * c->n_slots);
  *mem = NULL;
#ifdef WT_X86
  if (bins->table == NULL) return WT_OK;
  __builtin_cpu_init();
  int avx512 = __builtin_cpu_supports("avx512f") &&
    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd");
  if (avx512)
    c->vec = vec_avx512;
  else if (__builtin_cpu_supports("avx2"))
    c->vec = vec_avx2;
  else
    return WT_OK;
  /* one block: the double kernel's tables, then the float table */
  const int sh = bins->table_shift, n = bins->table_size;
  const size_t n_up = (size_t)c->n_slots + bins->table_steps;
  const int packed = bins->table_steps <= 1 &&
    (uint64_t)c->n_slots < UINT64_C(1) << (63 - sh);
  size_t bytes = packed ? (size_t)n * sizeof(uint64_t)
    : n_up * sizeof(double) + (size_t)n * sizeof(int32_t);
  bytes = (bytes + 63) & ~(size_t)63;
  char *m = cpu_malloc(job, bytes + (avx512 ? WT_F32_CELLS * sizeof(uint32_t)
                                            : 0));
  if (m == NULL) return WT_ERR_NOMEM;
  *mem = m;
  if (packed) {
    pack_table(bins, (uint64_t *)m);
    c->packed = (const uint64_t *)m;
    c->low_slot = bins->table[0];
    c->low_edge = bins->upper[c->low_slot];
  } else {
    double *up = (double *)m;
    int32_t *s32 = (int32_t *)(up + n_up);
    for (size_t s = 0; s < n_up; s++)
      up[s] = bins->upper[s < (size_t)c->n_slots ? s : (size_t)c->n_slots - 1];
    for (int k = 0; k < n; k++) s32[k] = bins->table[k];
    c->upper_pad = up;
    c->slot32 = s32;
  }
  if (avx512 && pairs >= WT_F32_MIN_PAIRS && unit_norms(&job->a) &&
      (job->is_auto || unit_norms(&job->b)) &&
      f32_table(c, (uint32_t *)(m + bytes))) {
    c->f32 = (const uint32_t *)(m + bytes);
    c->vec32 = vec_f32;
  }
#else
  (void)job;
  (void)pairs;
#endif
  return WT_OK;
}


/* The engine. The job's tasks are cut into work items (a task and a range
 * of its rows, see item_rows()), which go out in chunks of about
 * WT_CHUNK_PAIRS pairs per thread, one item at a time, to whichever thread
 * is free. A thread counts an item into its own counters and writes the
 * item's slot counts (and weight sums) into the item's record; after each
 * chunk the main thread adds the records into the tasks' histograms in item
 * order, then reports progress and polls for an interrupt. Every sum thus
 * runs over the same terms in the same order whatever the thread count:
 * weighted results are the same on 1 or 64 threads, and a weight sum is a
 * sum of at most a few thousand terms at each of its levels (copies, item,
 * chunk, job). A failed worker (only an injected one so far) stops the run:
 * the other threads skip their remaining items and nothing is added. */
int wt_count_cpu(wt_job *job)
{
  const int n_slots = job->bins->n_bins + 2;
  const int weighted = job->wsum != NULL;
  const int n_out = job->n_out;
  double total = 0.0;
  for (int64_t k = 0; k < job->n_tasks; k++)
    total += wt_task_pairs(job, &job->tasks[k]);
  if (total == 0.0) return WT_OK;

  wt_ctx ctx;
  void *tables = NULL;
  int status = ctx_init(&ctx, job, total, &tables);
  const int nt = job->n_threads < 1 ? 1 : job->n_threads;
  /* per thread: the copies and the sink, padded to a cache line */
  const size_t per = ((size_t)ctx.copies * n_slots + 1 + 15) & ~(size_t)15;
  const size_t rec_bytes =
    (size_t)n_slots * (sizeof(uint64_t) + (weighted ? sizeof(double) : 0));
  size_t cap = WT_RECORD_BYTES / rec_bytes;
  if (cap < (size_t)4 * nt) cap = (size_t)4 * nt;
  uint32_t *h = NULL;
  double *wh = NULL, *rec_w = NULL, *wchunk = NULL;
  float *tiles = NULL;
  wt_item *items = NULL;
  uint64_t *rec_n = NULL;
  int32_t *outs = NULL;
  char *seen = NULL;
  if (status == WT_OK) {
    h = cpu_calloc(job, (size_t)nt * per, sizeof *h);
    items = cpu_malloc(job, cap * sizeof *items);
    rec_n = cpu_malloc(job, cap * n_slots * sizeof *rec_n);
    if (ctx.vec32)
      tiles = cpu_malloc(job, (size_t)nt * 3 * WT_TILE * sizeof *tiles);
    if (weighted) {
      wh = cpu_calloc(job, (size_t)nt * per, sizeof *wh);
      rec_w = cpu_malloc(job, cap * n_slots * sizeof *rec_w);
      wchunk = cpu_malloc(job, (size_t)n_out * n_slots * sizeof *wchunk);
      outs = cpu_malloc(job, (size_t)n_out * sizeof *outs);
      seen = cpu_calloc(job, (size_t)n_out, 1);
    }
    if (!h || !items || !rec_n || (ctx.vec32 && !tiles) ||
        (weighted && (!wh || !rec_w || !wchunk || !outs || !seen)))
      status = WT_ERR_NOMEM;
  }

  const int fault_thread = (job->fault & WT_FAULT_THREAD) != 0;
  const double fault_at = total / 2;   /* the pair whose item fails */
  const double chunk_pairs = (double)WT_CHUNK_PAIRS * nt;
  int64_t task = 0, row = job->n_tasks > 0 ? job->tasks[0].a0 : 0;
  double done = 0.0;
  while (status == WT_OK) {
    /* the next chunk of items */
    int64_t n_items = 0;
    double pairs = 0.0;
    while (task < job->n_tasks && (size_t)n_items < cap &&
           (pairs < chunk_pairs || n_items < 4 * nt)) {
      const wt_task *t = &job->tasks[task];
      if (row >= t->a1) {
        if (++task < job->n_tasks) row = job->tasks[task].a0;
        continue;
      }
      int64_t r1 = t->a1 - row < item_rows(t) ? t->a1 : row + item_rows(t);
      int64_t p = item_pairs(job, t, row, r1);
      if (p > 0) {
        wt_item *it = &items[n_items++];
        it->task = task;
        it->r0 = row;
        it->r1 = r1;
        it->start = done + pairs;
        it->pairs = p;
        pairs += (double)p;
      }
      row = r1;
    }
    if (n_items == 0) break;

    int failed = 0;
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
      memset(&t, 0, sizeof t);
      t.h = h + (size_t)id * per;
      t.wh = weighted ? wh + (size_t)id * per : NULL;
      t.tile = tiles ? tiles + (size_t)id * 3 * WT_TILE : NULL;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
      for (int64_t k = 0; k < n_items; k++) {
        int stop;
#ifdef _OPENMP
#pragma omp atomic read
#endif
        stop = failed;
        if (stop) continue;
        const wt_item *it = &items[k];
        if (fault_thread && it->start <= fault_at &&
            fault_at < it->start + (double)it->pairs) {
          /* a worker that cannot go on: report and leave the item */
#ifdef _OPENMP
#pragma omp critical(wt_cpu_failure)
#endif
          {
            if (!failed)
              snprintf(job->message, sizeof job->message,
                       "injected fault in a CPU worker thread "
                       "(WTHETA_TEST_FAULT=thread)");
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
          }
          continue;
        }
        t.acc = rec_n + (size_t)k * n_slots;
        memset(t.acc, 0, (size_t)n_slots * sizeof *t.acc);
        t.pending = 0;
        if (weighted) {
          t.wacc = rec_w + (size_t)k * n_slots;
          memset(t.wacc, 0, (size_t)n_slots * sizeof *t.wacc);
          t.wpending = 0;
        }
        do_item(job, &ctx, &job->tasks[it->task], it->r0, it->r1, &t);
        flush(&ctx, &t);
        if (weighted) flush_w(&ctx, &t);
      }
    }
    if (failed) {
      status = WT_ERR_WORKER;
      break;
    }

    /* the records into the histograms, in item order; weight sums of the
     * chunk first add up per histogram, then into the job's */
    int n_seen = 0;
    for (int64_t k = 0; k < n_items; k++) {
      const int out = job->tasks[items[k].task].out;
      uint64_t *dst = job->slots + (size_t)out * n_slots;
      const uint64_t *src = rec_n + (size_t)k * n_slots;
      for (int s = 0; s < n_slots; s++) dst[s] += src[s];
      if (weighted) {
        double *wc = wchunk + (size_t)out * n_slots;
        const double *wsrc = rec_w + (size_t)k * n_slots;
        if (!seen[out]) {
          seen[out] = 1;
          outs[n_seen++] = out;
          memcpy(wc, wsrc, (size_t)n_slots * sizeof *wc);
        } else {
          for (int s = 0; s < n_slots; s++) wc[s] += wsrc[s];
        }
      }
    }
    for (int q = 0; q < n_seen; q++) {
      const int out = outs[q];
      double *dst = job->wsum + (size_t)out * n_slots;
      const double *wc = wchunk + (size_t)out * n_slots;
      for (int s = 0; s < n_slots; s++) dst[s] += wc[s];
      seen[out] = 0;
    }

    done += pairs;
    if (done < total && job->poll && job->poll(job->poll_ctx, done, total))
      status = WT_ERR_INTERRUPTED;
  }
  free(h);
  free(wh);
  free(tiles);
  free(items);
  free(rec_n);
  free(rec_w);
  free(wchunk);
  free(outs);
  free(seen);
  free(tables);
  return status;
}
