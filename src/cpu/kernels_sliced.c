/* The sliced form of the AVX-512 float kernel (wt_cpu_f32_sliced): see
 * below. Its own file, as kernels_avx512.c was over the 700 lines
 * ARCHITECTURE.md allows; it shares that file's float table (tables.c)
 * and kernels_x86.h. */
#include "kernels_x86.h"

#ifdef WT_X86
/* The sliced form of the float kernel: unweighted jobs of at most 32
 * slots whose float table fits in registers (wt_ctx.f32_small), unlabelled
 * or labelled on their rows only (h is then the rows' histograms: every
 * row of a call has the same label), up to six rows a call. Each decided
 * pair sets bit `slot` of its lane's one-hot word, and the words are
 * added up in carry-save bit planes (a plane p holds bit p of each lane's
 * count of each slot: three-input adds by
 * VPTERNLOGD, ones, twos, fours, eights and sixteens in registers, higher
 * planes in memory), so that no pair costs a scalar increment; the planes
 * are turned into counts once per call (sliced_flush()). Undecided lanes
 * are counted in double (recount_lanes()). The same slots as
 * vec_f32_body() (kernels_avx512.c), so the same counts; wt_cpu_f32 calls
 * it. */
#define WT_CSA(carry, sum, a, b, c)                                          \
  do {                                                                       \
    const __m512i a_ = (a), b_ = (b), c_ = (c);                              \
    carry = _mm512_ternarylogic_epi32(a_, b_, c_, 0xE8);                     \
    sum = _mm512_ternarylogic_epi32(a_, b_, c_, 0x96);                       \
  } while (0)
#define WT_SLICED_HIGH 27

/* planes pl[0, np) (pl[p] of weight 2^p) into the counters h: for each
 * slot used, the lanes whose bit is set, counted */
WT_AVX512 __attribute__((noinline)) static void
sliced_flush(uint32_t *h, const __m512i *pl, int np)
{
  __m512i any = _mm512_setzero_si512();
  for (int p = 0; p < np; p++) any = _mm512_or_si512(any, pl[p]);
  const uint32_t used = (uint32_t)_mm512_reduce_or_epi32(any);
  for (int p = 0; p < np; p++) {
    if (!_mm512_test_epi32_mask(pl[p], pl[p])) continue;
    for (uint32_t u = used; u; u &= u - 1) {
      const int s = __builtin_ctz(u);
      const __mmask16 m =
        _mm512_test_epi32_mask(pl[p], _mm512_set1_epi32((int)(1u << s)));
      h[s] += (uint32_t)__builtin_popcount((unsigned)m) << p;
    }
  }
}

WT_AVX512 int64_t
wt_cpu_f32_sliced(const wt_ctx *c, uint32_t *h, const float *tile,
                  const wt_points *a, int64_t i0, int nr,
                  const wt_points *b, int64_t j0, int64_t nj)
{
  const float *tx = tile, *ty = tile + c->tile_stride,
              *tz = tile + 2 * c->tile_stride;
  __m512 xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS];
  /* nr rows (1 to WT_ROWS); the others add empty words (a branch the
   * same way in every vector of the call) */
  rows_f32(a, i0, nr, xi, yi, zi);
  for (int r = nr; r < WT_ROWS; r++)
    xi[r] = yi[r] = zi[r] = _mm512_setzero_ps();
  wt_f32lut L;
  f32lut_init(&L, c, 1);
  const __m512i one = _mm512_set1_epi32(1);
  __m512i pl[5 + WT_SLICED_HIGH];
  for (int p = 0; p < 5 + WT_SLICED_HIGH; p++) pl[p] = _mm512_setzero_si512();
  __m512i ones = pl[0], twos = pl[0], fours = pl[0], eights = pl[0],
          sixteens = pl[0];
  int np = 5;
  /* every column, the last vector's lanes past nj masked (not counted) */
  for (int64_t j = 0; j < nj; j += 16) {
    const __mmask16 valid = vector_lanes(nj - j);
    const __m512 xj = _mm512_maskz_loadu_ps(valid, tx + j);
    const __m512 yj = _mm512_maskz_loadu_ps(valid, ty + j);
    const __m512 zj = _mm512_maskz_loadu_ps(valid, tz + j);
    __m512i oh[WT_ROWS];
#pragma GCC unroll 8
    for (int r = 0; r < WT_ROWS; r++) {
      if (r >= nr) {
        oh[r] = _mm512_setzero_si512();
        continue;
      }
      __m512 dx = _mm512_sub_ps(xi[r], xj);
      __m512 dy = _mm512_sub_ps(yi[r], yj);
      __m512 dz = _mm512_sub_ps(zi[r], zj);
      __mmask16 ok;
      const __m512i y = f32_lookup(
        &L, _mm512_castps_si512(d2f_avx512(dx, dy, dz)), valid, 1, &ok);
      oh[r] = _mm512_maskz_sllv_epi32(ok, one, _mm512_srl_epi32(y, L.wshift));
      if (ok != valid)
        recount_lanes(c, h, a, i0 + r, b, j0 + j,
                      (unsigned)(__mmask16)(valid & ~ok), 16);
    }
    /* the six words into the planes: weights 1, 2 and 4 by full adders,
     * then the carries upwards */
    __m512i c1, c2, c3, f1, f2, g, e16, e32;
    WT_CSA(c1, ones, ones, oh[0], oh[1]);
    WT_CSA(c2, ones, ones, oh[2], oh[3]);
    WT_CSA(c3, ones, ones, oh[4], oh[5]);
    WT_CSA(f1, twos, twos, c1, c2);
    f2 = _mm512_and_si512(twos, c3);
    twos = _mm512_xor_si512(twos, c3);
    WT_CSA(g, fours, fours, f1, f2);
    e16 = _mm512_and_si512(eights, g);
    eights = _mm512_xor_si512(eights, g);
    e32 = _mm512_and_si512(sixteens, e16);
    sixteens = _mm512_xor_si512(sixteens, e16);
    for (int p = 5; _mm512_test_epi32_mask(e32, e32); p++) {
      const __m512i t = _mm512_and_si512(pl[p], e32);
      pl[p] = _mm512_xor_si512(pl[p], e32);
      e32 = t;
      if (p + 1 > np) np = p + 1;
    }
  }
  pl[0] = ones;
  pl[1] = twos;
  pl[2] = fours;
  pl[3] = eights;
  pl[4] = sixteens;
  sliced_flush(h, pl, np);
  h[0] += (uint32_t)c->sliced_fault;
  return nj;
}
#undef WT_CSA
#endif /* WT_X86 */
