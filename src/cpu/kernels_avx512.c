/* The AVX-512 vector kernels (in double; with a float prefilter; the
 * narrow float kernel) behind one signature, wt_vec_fn. See engine.h for
 * the design; each function is compiled for AVX-512 by a target
 * attribute, and the driver picks one at run time. */
#include "kernels_x86.h"

#ifdef WT_X86
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
  rows_avx512(a, i0, nr, weighted, xi, yi, zi, wi);
  /* labelled jobs (wt_ctx.hist): each row's offset with the copies' */
  const int lab = b->lab != NULL;
  __m256i roff[WT_ROWS];
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++)
    roff[r] = lab ? _mm256_add_epi32(lane_off,
                                     _mm256_set1_epi32(a->lab[i0 + r]))
                  : lane_off;
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
    const __m256i coff = lab
      ? _mm256_loadu_si256((const __m256i *)(b->lab + j0 + j))
      : _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int r = 0; r < nr; r++) {
      __mmask8 above;
      __m512i s = slots_avx512(&L, d2_avx512(xi[r], yi[r], zi[r], xj, yj, zj),
                               packed, &above);
      const __m256i off = lab ? _mm256_add_epi32(roff[r], coff) : lane_off;
      _mm256_store_si256((__m256i *)(out + 8 * r),
                         _mm256_add_epi32(_mm512_cvtepi64_epi32(s), off));
      if (weighted) _mm512_store_pd(wout + 8 * r, _mm512_mul_pd(wi[r], wj));
      if (above) {
        int32_t o[8];
        _mm256_storeu_si256((__m256i *)o, off);
        patch_pairs(c, a, i0 + r, b, j0 + j, above, o, out + 8 * r);
      }
      if (j < WT_LAG * 8) continue;   /* no group before it (kernels_x86.h) */
      if (weighted)
        count_ring_w(h, wh, old + 8 * r, wold + 8 * r, 8);
      else
        count_ring(h, old + 8 * r, 8);
    }
  }
  WT_RING_DRAIN(ring, wring, 8, nv >> 3);
  return nv;
}

WT_AVX512 int64_t
wt_cpu_avx512(const wt_ctx *c, uint32_t *h, double *wh, const float *tile,
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
         int64_t j, __mmask16 lanes, const int32_t *off, uint32_t *out)
{
  const wt_lut512 L = lut512(c);
  const __m512d xi = _mm512_set1_pd(a->x[i]);
  const __m512d yi = _mm512_set1_pd(a->y[i]);
  const __m512d zi = _mm512_set1_pd(a->z[i]);
  for (int k = 0; k < 16; k += 8) {
    __mmask8 above, mine = (__mmask8)(lanes >> k);
    /* masked loads: a tile's last vector may end before 16 columns */
    __m512d d2 = d2_avx512(xi, yi, zi,
                           _mm512_maskz_loadu_pd(mine, b->x + j + k),
                           _mm512_maskz_loadu_pd(mine, b->y + j + k),
                           _mm512_maskz_loadu_pd(mine, b->z + j + k));
    __m512i s = c->packed ? slots_avx512(&L, d2, 1, &above)
                          : slots_avx512(&L, d2, 0, &above);
    __m256i idx = _mm256_add_epi32(
      _mm512_cvtepi64_epi32(s),
      _mm256_loadu_si256((const __m256i *)(off + k)));
    _mm256_mask_storeu_epi32(out + k, mine, idx);
    if (above & mine)
      patch_pairs(c, a, i, b, j + k, above & mine, off + k, out + k);
  }
}

/* AVX-512 with the float prefilter, 16 columns per vector; lane l counts
 * into copy l % 8. See wt_cpu_f32_table() for the entries. */
WT_AVX512 WT_INLINE int64_t
vec_f32_body(const wt_ctx *c, uint32_t *h, double *wh, const float *tile,
             const wt_points *a, int64_t i0, int nr, const wt_points *b,
             int64_t j0, int64_t nj, int weighted, int small)
{
  const float *tx = tile, *ty = tile + c->tile_stride,
              *tz = tile + 2 * c->tile_stride;
  const double *bw = weighted ? b->w + j0 : NULL;
  __m512 xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS];
  __m512d wi[WT_ROWS];
  rows_f32(a, i0, nr, xi, yi, zi);
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++)
    if (weighted) wi[r] = _mm512_set1_pd(a->w[i0 + r]);
  /* small: the table's 64 cells in four registers (wt_ctx.f32_small) */
  wt_f32lut L;
  f32lut_init(&L, c, small);
  const __m512i lane_off = _mm512_loadu_si512(c->copy_off);
  /* labelled jobs (wt_ctx.hist): each row's offset with the copies' */
  const int lab = b->lab != NULL;
  __m512i roff[WT_ROWS];
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++)
    roff[r] = lab ? _mm512_add_epi32(lane_off,
                                     _mm512_set1_epi32(a->lab[i0 + r]))
                  : lane_off;
  /* every column: the last vector, when short, with the lanes past nj
   * masked (left out of the counts: their index is a word of the sink, a
   * word per row and lane, so that no word takes increments in a row) */
  const __m512i sink = _mm512_add_epi32(
    _mm512_set1_epi32((int)c->sink),
    _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  WT_RING_DECL(ring, wring, 16);
  for (int64_t j = 0; j < nj; j += 16) {
    const int tail = nj - j < 16;
    const __mmask16 valid = vector_lanes(nj - j);
    uint32_t *out = ring[(j >> 4) % WT_RING];
    const uint32_t *old = ring[((j >> 4) + WT_LAG) % WT_RING];
    double *wout = wring[(j >> 4) % WT_RING];
    const double *wold = wring[((j >> 4) + WT_LAG) % WT_RING];
    const __m512i coff = lab ? _mm512_maskz_loadu_epi32(valid, b->lab + j0 + j)
                             : _mm512_setzero_si512();
    __m512 xj = _mm512_maskz_loadu_ps(valid, tx + j);
    __m512 yj = _mm512_maskz_loadu_ps(valid, ty + j);
    __m512 zj = _mm512_maskz_loadu_ps(valid, tz + j);
    __m512d wj_lo = weighted ? _mm512_maskz_loadu_pd((__mmask8)valid, bw + j)
                             : _mm512_setzero_pd();
    __m512d wj_hi = weighted ? _mm512_maskz_loadu_pd((__mmask8)(valid >> 8),
                                                     bw + j + 8)
                             : _mm512_setzero_pd();
#pragma GCC unroll 8
    for (int r = 0; r < nr; r++) {
      __m512 dx = _mm512_sub_ps(xi[r], xj);
      __m512 dy = _mm512_sub_ps(yi[r], yj);
      __m512 dz = _mm512_sub_ps(zi[r], zj);
      __mmask16 ok;
      const __m512i y = f32_lookup(
        &L, _mm512_castps_si512(d2f_avx512(dx, dy, dz)), valid, small, &ok);
      const __m512i off = lab ? _mm512_add_epi32(roff[r], coff) : lane_off;
      __m512i idx = _mm512_add_epi32(_mm512_srl_epi32(y, L.wshift), off);
      if (tail)
        idx = _mm512_mask_mov_epi32(
          _mm512_add_epi32(sink, _mm512_set1_epi32(16 * r)), valid, idx);
      _mm512_store_si512(out + 16 * r, idx);
      if (weighted) {
        _mm512_store_pd(wout + 16 * r, _mm512_mul_pd(wi[r], wj_lo));
        _mm512_store_pd(wout + 16 * r + 8, _mm512_mul_pd(wi[r], wj_hi));
      }
      if (ok != valid) {
        int32_t o[16];
        _mm512_storeu_si512(o, off);
        redo_f32(c, a, i0 + r, b, j0 + j, (__mmask16)(valid & ~ok), o,
                 out + 16 * r);
      }
      if (j < WT_LAG * 16) continue;  /* no group before it (kernels_x86.h) */
      if (weighted)
        count_ring_w(h, wh, old + 16 * r, wold + 16 * r, 16);
      else
        count_ring(h, old + 16 * r, 16);
    }
  }
  WT_RING_DRAIN(ring, wring, 16, (nj + 15) >> 4);
  return nj;
}

WT_AVX512 int64_t
wt_cpu_f32(const wt_ctx *c, uint32_t *h, double *wh, const float *tile,
        const wt_points *a, int64_t i0, int nr, const wt_points *b,
        int64_t j0, int64_t nj)
{
#define WT_F32_BODY(R, W, S)                                                 \
  vec_f32_body(c, h, W ? wh : NULL, tile, a, i0, R, b, j0, nj, W, S)
  /* the sliced form (kernels_sliced.c) where it applies and pays: its
   * planes cost a flush per call. In a job labelled on its rows only
   * (f32_sliced is for no others; b->lab holds zeros), six rows of one
   * label count at their offset */
  if (c->f32_sliced && !wh && nr == WT_ROWS && nj >= WT_SLICED_MIN &&
      (a->lab == NULL || wt_same_label(a->lab + i0, WT_ROWS)))
    return wt_cpu_f32_sliced(c, h + (a->lab ? a->lab[i0] : 0), tile, a, i0,
                             WT_ROWS, b, j0, nj);
  /* the table from registers for six unweighted rows (labelled jobs, and
   * the calls too small for the sliced form); the rarer calls gather, so
   * that the library's code, under the 5 MB the installed package must
   * stay below, grows by one variant */
  if (c->f32_small && !wh && nr == WT_ROWS)
    return WT_F32_BODY(WT_ROWS, 0, 1);
  if (wh)
    return nr == WT_ROWS ? WT_F32_BODY(WT_ROWS, 1, 0) : WT_F32_BODY(1, 1, 0);
  return nr == WT_ROWS ? WT_F32_BODY(WT_ROWS, 0, 0) : WT_F32_BODY(1, 0, 0);
#undef WT_F32_BODY
}

/* The narrow kernel's undecided lanes (l set in lanes): pairs (i, j + l)
 * counted in double into copy 0 of h, and the lanes' bits of the edge masks
 * ge[k] added to minus[k], which the caller takes off its edge totals. */
WT_AVX512 __attribute__((noinline, cold)) static void
redo_narrow(const wt_ctx *c, uint32_t *h, const wt_points *a, int64_t i,
            const wt_points *b, int64_t j, __mmask16 lanes,
            const __mmask16 *ge, int n_ge, int64_t *minus)
{
  for (int k = 0; k < n_ge; k++)
    minus[k] += __builtin_popcount((unsigned)(ge[k] & lanes));
  recount_lanes(c, h, a, i, b, j, lanes, 16);
}

/* The float kernel for a task whose pairs lie in the K slots
 * [slo, slo + K - 1] (K <= WT_NARROW): no table and no per-pair increment.
 * A pair is decided in float when d2f >= lo_of[slo] and d2f < hi_of[slo +
 * K - 1] (inside the slot range, with the margins of wt_cpu_narrow_edges())
 * and, for each of the K - 1 edges inside the range, d2f < edge_lo or
 * d2f >= edge_hi of that edge; the lanes at or above each edge add into a
 * vector of counts per edge, and the slot counts are differences of those
 * totals. Every other pair (a float too close to an edge, or outside the
 * range the grid walk promised) is redone in double (redo_narrow), so the
 * counts are exact whatever the task's range says. 16 columns per vector,
 * unweighted only. */
WT_AVX512 WT_INLINE int64_t
narrow_f32_body(const wt_ctx *c, uint32_t *h, const float *tile,
                const wt_points *a, int64_t i0, int nr, int nv,
                const wt_points *b, int64_t j0, int64_t nj, int slo, int K)
{
  const float *tx = tile, *ty = tile + c->tile_stride,
              *tz = tile + 2 * c->tile_stride;
  /* nr rows unrolled (1 or WT_ROWS), the first nv of them counted (a
   * branch the same way in every vector of the call) */
  __m512 xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS];
  rows_f32(a, i0, nv, xi, yi, zi);
  for (int r = nv; r < nr; r++)
    xi[r] = yi[r] = zi[r] = _mm512_setzero_ps();
  const __m512 in_lo = _mm512_set1_ps(c->lo_of[slo]);
  const __m512 in_hi = _mm512_set1_ps(c->hi_of[slo + K - 1]);
  __m512 e_lo[WT_NARROW], e_hi[WT_NARROW];
  __m512i cnt[WT_NARROW];
  int64_t minus[WT_NARROW] = {0};
  for (int k = 0; k < K - 1; k++) {
    e_lo[k] = _mm512_set1_ps(c->edge_lo[slo + k]);
    e_hi[k] = _mm512_set1_ps(c->edge_hi[slo + k]);
    cnt[k] = _mm512_setzero_si512();
  }
  const __m512i one = _mm512_set1_epi32(1);
  int64_t redone = 0;
  /* every column, the last vector's lanes past nj masked (not counted) */
  for (int64_t j = 0; j < nj; j += 16) {
    const __mmask16 valid = vector_lanes(nj - j);
    __m512 xj = _mm512_maskz_loadu_ps(valid, tx + j);
    __m512 yj = _mm512_maskz_loadu_ps(valid, ty + j);
    __m512 zj = _mm512_maskz_loadu_ps(valid, tz + j);
#pragma GCC unroll 8
    for (int r = 0; r < nr; r++) {
      if (r >= nv) break;
      __m512 dx = _mm512_sub_ps(xi[r], xj);
      __m512 dy = _mm512_sub_ps(yi[r], yj);
      __m512 dz = _mm512_sub_ps(zi[r], zj);
      __m512 d2 = d2f_avx512(dx, dy, dz);
      __mmask16 ok = _mm512_mask_cmp_ps_mask(
        _mm512_mask_cmp_ps_mask(valid, d2, in_lo, _CMP_GE_OQ), d2, in_hi,
        _CMP_LT_OQ);
      __mmask16 ge[WT_NARROW];
#pragma GCC unroll 8
      for (int k = 0; k < K - 1; k++) {
        ge[k] = _mm512_mask_cmp_ps_mask(valid, d2, e_hi[k], _CMP_GE_OQ);
        ok &= ge[k] | _mm512_cmp_ps_mask(d2, e_lo[k], _CMP_LT_OQ);
        cnt[k] = _mm512_mask_add_epi32(cnt[k], ge[k], cnt[k], one);
      }
      if (ok != valid) {
        const __mmask16 redo = valid & ~ok;
        redone += __builtin_popcount((unsigned)redo);
        redo_narrow(c, h, a, i0 + r, b, j0 + j, redo, ge, K - 1, minus);
      }
    }
  }
  /* at or above each edge, decided pairs only; then the slot counts */
  int64_t above_prev = (int64_t)nv * nj - redone;
  for (int k = 0; k < K - 1; k++) {
    int64_t at = (int64_t)_mm512_reduce_add_epi32(cnt[k]) - minus[k];
    h[slo + k] += (uint32_t)(above_prev - at);
    above_prev = at;
  }
  h[slo + K - 1] += (uint32_t)above_prev;
  return nj;
}

WT_AVX512 int64_t
wt_cpu_f32_narrow(const wt_ctx *c, uint32_t *h, const float *tile,
                  const wt_points *a, int64_t i0, int nr, const wt_points *b,
                  int64_t j0, int64_t nj, int slo, int span)
{
  /* one row, six, or two to five through the six rows' body (rows of one
   * label at the end of a run, driver.c) */
#define WT_NARROW_CASE(K)                                                    \
  case K:                                                                    \
    return nr == 1 ? narrow_f32_body(c, h, tile, a, i0, 1, 1, b, j0, nj,     \
                                     slo, K)                                 \
         : nr == WT_ROWS ? narrow_f32_body(c, h, tile, a, i0, WT_ROWS,       \
                                           WT_ROWS, b, j0, nj, slo, K)       \
         : narrow_f32_body(c, h, tile, a, i0, WT_ROWS, nr, b, j0, nj, slo,   \
                           K);
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
