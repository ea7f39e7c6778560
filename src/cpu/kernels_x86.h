/* What the x86-64 vector kernels (kernels_avx512.c, kernels_avx512_pip.c,
 * kernels_sliced.c, kernels_avx2.c) share, private to them: the target
 * attributes, the float table's and the AVX-512 double lookups, the rings
 * that count a column group's indices a few groups later, and the
 * double-precision recounts of lanes a kernel could not decide. Static:
 * each kernel file keeps its own copy, as the single kernels_x86.c did
 * (`unused`: a file that calls none of a copy's callers). */
#ifndef WT_CPU_KERNELS_X86_H
#define WT_CPU_KERNELS_X86_H
#include "engine.h"

#ifdef WT_X86

#define WT_INLINE static inline __attribute__((always_inline))
#define WT_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512cd,avx512vl,avx512dq")))
#define WT_AVX2 __attribute__((target("avx2")))
#define WT_UNFUSED_V(v) __asm__("" : "+v"(v))

/* The float d2 of the float kernels from the float differences, by fused
 * multiply-adds: (dz dz rounded, then dy dy + that, then dx dx + that,
 * each rounded once), within f32_err()'s bound (tables.c), which allows a
 * rounding for each product and each sum. Only the float prefilter uses
 * it: the double d2 that defines every slot is never fused (pair_d2()). */
WT_AVX512 WT_INLINE __m512 d2f_avx512(__m512 dx, __m512 dy, __m512 dz)
{
  return _mm512_fmadd_ps(dx, dx,
                         _mm512_fmadd_ps(dy, dy, _mm512_mul_ps(dz, dz)));
}

/* The lanes of a 16-column vector that hold columns, `left` of them
 * remaining: all 16, or the first `left` of a tile's short last vector */
static inline __mmask16 vector_lanes(int64_t left)
{
  return left < 16 ? (__mmask16)((1u << left) - 1) : (__mmask16)0xffff;
}

/* rows [i0, i0 + nr) of a as floats, each broadcast to a vector, for the
 * float kernels */
WT_AVX512 WT_INLINE void rows_f32(const wt_points *a, int64_t i0, int nr,
                                  __m512 *xi, __m512 *yi, __m512 *zi)
{
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++) {
    xi[r] = _mm512_set1_ps((float)a->x[i0 + r]);
    yi[r] = _mm512_set1_ps((float)a->y[i0 + r]);
    zi[r] = _mm512_set1_ps((float)a->z[i0 + r]);
  }
}

/* The float table (wt_cpu_f32_table()) as the AVX-512 float kernels read
 * it: its constants in registers, and with at most 64 cells
 * (wt_ctx.f32_small) the cells themselves. */
typedef struct {
  __m128i shift, wshift, mshift;
  __m512i base, top, low_mask, windows_lo, windows_hi, bit5;
  __m512i tab[4];
  const uint32_t *cells;
} wt_f32lut;

WT_AVX512 WT_INLINE void f32lut_init(wt_f32lut *L, const wt_ctx *c,
                                     int small)
{
  L->shift = _mm_cvtsi32_si128(c->f32_shift);
  L->wshift = _mm_cvtsi32_si128(c->f32_shift + 1);
  L->mshift = _mm_cvtsi32_si128(c->f32_m);
  L->base = _mm512_set1_epi32(c->f32_base);
  L->top = _mm512_set1_epi32((WT_F32_BINADES << c->f32_m) - 1);
  L->low_mask = _mm512_set1_epi32((1 << c->f32_shift) - 1);
  L->windows_lo = _mm512_loadu_si512(c->f32_window);
  L->windows_hi = _mm512_loadu_si512(c->f32_window + 16);
  L->bit5 = _mm512_set1_epi32(32);
  for (int k = 0; k < 4; k++)
    L->tab[k] = small ? _mm512_loadu_si512(c->f32 + 16 * k)
                      : _mm512_setzero_si512();
  L->cells = c->f32;
}

/* The table's y for the float d2 bits of the lanes in `valid`: the slot
 * is y >> (f32_shift + 1) where *ok has the lane; the other valid lanes
 * are undecided (too near an edge, or outside the table) and are redone
 * in double. small (a constant at each call): the cells from registers
 * (two permutes and a blend), else by a gather. */
WT_AVX512 WT_INLINE __m512i f32_lookup(const wt_f32lut *L, __m512i bits,
                                       __mmask16 valid, int small,
                                       __mmask16 *ok)
{
  const __m512i key =
    _mm512_sub_epi32(_mm512_srl_epi32(bits, L->shift), L->base);
  const __mmask16 in = _mm512_mask_cmple_epu32_mask(valid, key, L->top);
  const __m512i e =
    small ? _mm512_mask_blend_epi32(
              _mm512_test_epi32_mask(key, L->bit5),
              _mm512_permutex2var_epi32(L->tab[0], key, L->tab[1]),
              _mm512_permutex2var_epi32(L->tab[2], key, L->tab[3]))
          : _mm512_mask_i32gather_epi32(_mm512_undefined_epi32(), in, key,
                                        L->cells, 4);
  const __m512i y =
    _mm512_add_epi32(_mm512_and_si512(bits, L->low_mask), e);
  const __m512i window = _mm512_permutex2var_epi32(
    L->windows_lo, _mm512_srl_epi32(key, L->mshift), L->windows_hi);
  *ok = _mm512_mask_test_epi32_mask(in, y, window);
  return y;
}

/* The exact histogram indices of the pairs (i, j + l) for the lanes l set in
 * lanes, into out[l]: for d2 above the double table (non-finite, or points
 * far off the unit sphere). */
__attribute__((noinline, cold, unused))
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
 * counts ring[(g + WT_LAG) % WT_RING], the indices of group g - WT_LAG,
 * from g = WT_LAG on; the last groups are counted at the end. Nothing
 * reads a group that was not written, so the ring starts as it is (it was
 * filled with the index of one spare counter, which the first groups and
 * the drain of a short call then incremented 2 x 96 times in a row: a
 * chain of dependent increments, several cycles each, that cost a call of
 * a few columns -- a jackknife's small tasks -- more than its pairs). The
 * float kernel's lanes past the last column count into the sink, WT_SINK
 * spare counters, one per row and lane. A weighted kernel keeps the pairs'
 * weights in wring, alongside. */
#define WT_RING_DECL(ring, wring, width)                                     \
  uint32_t ring[WT_RING][WT_ROWS * (width)] __attribute__((aligned(64)));    \
  double wring[WT_RING][WT_ROWS * (width)] __attribute__((aligned(64)));     \
  (void)wring
#define WT_RING_DRAIN(ring, wring, width, groups)                            \
  for (int64_t g_ = (groups) + WT_LAG; g_ < (groups) + WT_RING; g_++) {      \
    if (g_ < WT_RING) continue;      /* a group that never was */            \
    if (weighted)                                                            \
      count_ring_w(h, wh, ring[g_ % WT_RING], wring[g_ % WT_RING],           \
                   nr * (width));                                            \
    else                                                                     \
      count_ring(h, ring[g_ % WT_RING], nr * (width));                       \
  }

/* The narrow kernels' undecided pairs (i, j + l), l set in the `width`
 * bits of lanes, counted one by one in double into h (copy 0). Out of
 * line and not specialised, as when one file held both of its callers
 * (redo_narrow, redo_narrow_avx2: their code stays the same). */
__attribute__((noinline, noclone, unused))
static void recount_lanes(const wt_ctx *c, uint32_t *h, const wt_points *a,
                          int64_t i, const wt_points *b, int64_t j,
                          unsigned lanes, int width)
{
  for (int l = 0; l < width; l++)
    if (lanes >> l & 1)
      h[slot_of(c->bins, pair_d2(a->x[i], a->y[i], a->z[i], b->x[j + l],
                                 b->y[j + l], b->z[j + l]))]++;
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

/* the rows i0 .. i0 + nr - 1 of a, each coordinate (and weight when
 * weighted) broadcast to a vector, for the double kernels */
WT_AVX512 WT_INLINE void rows_avx512(const wt_points *a, int64_t i0, int nr,
                                     int weighted, __m512d *xi, __m512d *yi,
                                     __m512d *zi, __m512d *wi)
{
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++) {
    xi[r] = _mm512_set1_pd(a->x[i0 + r]);
    yi[r] = _mm512_set1_pd(a->y[i0 + r]);
    zi[r] = _mm512_set1_pd(a->z[i0 + r]);
    if (weighted) wi[r] = _mm512_set1_pd(a->w[i0 + r]);
  }
}

#endif /* WT_X86 */
#endif
