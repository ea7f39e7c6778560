/* The AVX2 vector kernels (in double; the narrow kernel in double) behind
 * one signature, wt_vec_fn. See engine.h for the design; each function is
 * compiled for AVX2 by a target attribute, and the driver picks one at run
 * time. */
#include "kernels_x86.h"

#ifdef WT_X86
/* AVX2 in double, 4 columns per vector; lane l of row r counts into copy
 * l + 4 (r % 2). As vec_avx512_body (kernels_avx512.c) otherwise; AVX2
 * has no unsigned or 64-bit min/max comparisons, so the key range is
 * tested with signed ones. */
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
  /* labelled jobs (wt_ctx.hist): each row's offset */
  const int lab = b->lab != NULL;
  int32_t rlab[WT_ROWS];
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++) rlab[r] = lab ? a->lab[i0 + r] : 0;
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
    const __m128i coff = lab
      ? _mm_loadu_si128((const __m128i *)(b->lab + j0 + j))
      : _mm_setzero_si128();
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
      const __m128i off = lab
        ? _mm_add_epi32(_mm_add_epi32(lane_off[r & 1], coff),
                        _mm_set1_epi32(rlab[r]))
        : lane_off[r & 1];
      _mm_store_si128((__m128i *)(out + 4 * r), _mm_add_epi32(s32, off));
      if (weighted) _mm256_store_pd(wout + 4 * r, _mm256_mul_pd(wi[r], wj));
      unsigned bad = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(above));
      if (bad) {
        int32_t o[4];
        _mm_storeu_si128((__m128i *)o, off);
        patch_pairs(c, a, i0 + r, b, j0 + j, bad, o, out + 4 * r);
      }
      if (j < WT_LAG * 4) continue;   /* no group before it (kernels_x86.h) */
      if (weighted)
        count_ring_w(h, wh, old + 4 * r, wold + 4 * r, 4);
      else
        count_ring(h, old + 4 * r, 4);
    }
  }
  WT_RING_DRAIN(ring, wring, 4, nv >> 2);
  return nv;
}

WT_AVX2 int64_t
wt_cpu_avx2(const wt_ctx *c, uint32_t *h, double *wh, const float *tile,
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

/* The narrow kernel in double for AVX2 (and AVX-512 jobs without the float
 * kernel): as narrow_f32_body (kernels_avx512.c), but d2 is the double of
 * the contract, so the comparisons with upper[] are exact and need no
 * margins; only pairs outside the range [upper[slo - 1], upper[slo + K -
 * 1]) (none, if the grid walk's range holds) or non-finite are counted one
 * by one. 4 columns per vector. */
WT_AVX2 __attribute__((noinline, cold)) static void
redo_narrow_avx2(const wt_ctx *c, uint32_t *h, const wt_points *a, int64_t i,
                 const wt_points *b, int64_t j, unsigned lanes,
                 const unsigned *ge, int n_ge, int64_t *minus)
{
  for (int k = 0; k < n_ge; k++)
    minus[k] += __builtin_popcount(ge[k] & lanes);
  recount_lanes(c, h, a, i, b, j, lanes, 4);
}

WT_AVX2 WT_INLINE int64_t
narrow_avx2_body(const wt_ctx *c, uint32_t *h, const wt_points *a,
                 int64_t i0, int nr, const wt_points *b, int64_t j0,
                 int64_t nj, int slo, int K)
{
  const double *bx = b->x + j0, *by = b->y + j0, *bz = b->z + j0;
  const double *upper = c->bins->upper;
  __m256d xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS];
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++) {
    xi[r] = _mm256_set1_pd(a->x[i0 + r]);
    yi[r] = _mm256_set1_pd(a->y[i0 + r]);
    zi[r] = _mm256_set1_pd(a->z[i0 + r]);
  }
  const __m256d in_lo = _mm256_set1_pd(slo > 0 ? upper[slo - 1] : -INFINITY);
  const __m256d in_hi = _mm256_set1_pd(upper[slo + K - 1]);
  __m256d edge[WT_NARROW];
  __m256i cnt[WT_NARROW];
  int64_t minus[WT_NARROW] = {0};
  for (int k = 0; k < K - 1; k++) {
    edge[k] = _mm256_set1_pd(upper[slo + k]);
    cnt[k] = _mm256_setzero_si256();
  }
  int64_t redone = 0;
  const int64_t nv = nj & ~(int64_t)3;
  for (int64_t j = 0; j < nv; j += 4) {
    __m256d xj = _mm256_loadu_pd(bx + j);
    __m256d yj = _mm256_loadu_pd(by + j);
    __m256d zj = _mm256_loadu_pd(bz + j);
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
      __m256d ok = _mm256_and_pd(_mm256_cmp_pd(d2, in_lo, _CMP_GE_OQ),
                                 _mm256_cmp_pd(d2, in_hi, _CMP_LT_OQ));
      __m256d ge[WT_NARROW];
#pragma GCC unroll 8
      for (int k = 0; k < K - 1; k++) {
        ge[k] = _mm256_cmp_pd(d2, edge[k], _CMP_GE_OQ);
        cnt[k] = _mm256_sub_epi64(cnt[k], _mm256_castpd_si256(ge[k]));
      }
      unsigned bad = (unsigned)_mm256_movemask_pd(ok) ^ 15u;
      if (bad) {
        unsigned gm[WT_NARROW];
        for (int k = 0; k < K - 1; k++)
          gm[k] = (unsigned)_mm256_movemask_pd(ge[k]);
        redone += __builtin_popcount(bad);
        redo_narrow_avx2(c, h, a, i0 + r, b, j0 + j, bad, gm, K - 1, minus);
      }
    }
  }
  int64_t above_prev = (int64_t)nr * nv - redone;
  for (int k = 0; k < K - 1; k++) {
    int64_t v[4];
    _mm256_storeu_si256((__m256i *)v, cnt[k]);
    int64_t at = v[0] + v[1] + v[2] + v[3] - minus[k];
    h[slo + k] += (uint32_t)(above_prev - at);
    above_prev = at;
  }
  h[slo + K - 1] += (uint32_t)above_prev;
  return nv;
}

WT_AVX2 int64_t
wt_cpu_avx2_narrow(const wt_ctx *c, uint32_t *h, const float *tile,
                   const wt_points *a, int64_t i0, int nr,
                   const wt_points *b, int64_t j0, int64_t nj, int slo,
                   int span)
{
  (void)tile;
  const int six = nr == WT_ROWS;
#define WT_NARROW_CASE(K)                                                    \
  case K:                                                                    \
    return six ? narrow_avx2_body(c, h, a, i0, WT_ROWS, b, j0, nj, slo, K)   \
               : narrow_avx2_body(c, h, a, i0, 1, b, j0, nj, slo, K);
  switch (span) {
    WT_NARROW_CASE(1)
    WT_NARROW_CASE(2)
    WT_NARROW_CASE(3)
    WT_NARROW_CASE(4)
    WT_NARROW_CASE(5)
    WT_NARROW_CASE(6)
    WT_NARROW_CASE(7)
    WT_NARROW_CASE(8)
  default:
    return 0;
  }
#undef WT_NARROW_CASE
}
#endif /* WT_X86 */
