/* The AVX-512 kernel of PIP tasks of one slot (wt_ctx.fixed_fn), a body
 * included twice by kernels_avx512_pip.c: with the nibble popcount of
 * AVX512BW and with VPOPCNTDQ, each under its target attribute. Before including:
 * WT_FIXED_TARGET (the attribute), WT_FIXED_POPCOUNT(v) (popcounts of the
 * 8 64-bit lanes of v) and WT_FIXED_NAME(x) (the names of this copy).
 *
 * Every pair of the task lies in its slot, so no d2 and no slot: per row i,
 * sum_j w_j by_count[popcount(b_i & b_j)] in 8 lanes (two 32-bit words to
 * a 64-bit lane, by_count from registers for up to two words as in
 * wt_cpu_avx512_pip, gathered for more), columns of a ragged end masked
 * off; then w_i times its lanes' sum, summed over the rows in order. */

/* rows [i0, i0 + nr) (nr <= WT_FIXED_ROWS), each column vector loaded once
 * for all of them; nr and nw (words) are constants at each call site */
WT_FIXED_TARGET WT_INLINE double
WT_FIXED_NAME(fixed_rows)(const wt_ctx *c, const wt_count_regs *F,
                          const wt_points *a, int64_t i0, int nr,
                          const wt_points *b, int64_t j0, int64_t j1, int nw)
{
  const int nl = (nw + 1) / 2;               /* 64-bit lanes of words */
  const int64_t na = a->n, nbp = b->n, nj = j1 - j0;
  const double *bw = b->w + j0, *by = c->pip->by_count;
  __m512i bi[WT_FIXED_ROWS][WT_PIP_MAX_WORDS / 2];
  __m512d acc[WT_FIXED_ROWS];
  const __m512d one = _mm512_set1_pd(1.0);
#pragma GCC unroll 4
  for (int r = 0; r < nr; r++) {
    acc[r] = _mm512_setzero_pd();
    for (int l = 0; l < nl; l++) {
      uint64_t lo = a->bits[(int64_t)(2 * l) * na + i0 + r];
      uint64_t hi = 2 * l + 1 < nw
                      ? a->bits[(int64_t)(2 * l + 1) * na + i0 + r] : 0;
      bi[r][l] = _mm512_set1_epi64((long long)(lo | hi << 32));
    }
  }
  for (int64_t j = 0; j < nj; j += 8) {
    const __mmask8 m = nj - j >= 8 ? (__mmask8)0xff
                                   : (__mmask8)((1u << (nj - j)) - 1u);
    const __m512d wj = _mm512_maskz_loadu_pd(m, bw + j);
    __m512i bj[WT_PIP_MAX_WORDS / 2];
    for (int l = 0; l < nl; l++) {
      __m512i lo = _mm512_cvtepu32_epi64(_mm256_maskz_loadu_epi32(
        m, b->bits + (int64_t)(2 * l) * nbp + j0 + j));
      __m512i hi = 2 * l + 1 < nw
        ? _mm512_cvtepu32_epi64(_mm256_maskz_loadu_epi32(
            m, b->bits + (int64_t)(2 * l + 1) * nbp + j0 + j))
        : _mm512_setzero_si512();
      bj[l] = _mm512_or_si512(lo, _mm512_slli_epi64(hi, 32));
    }
#pragma GCC unroll 4
    for (int r = 0; r < nr; r++) {
      __m512d f = one;
      if (nw > 0) {
        __m512i cnt = _mm512_setzero_si512();
        for (int l = 0; l < nl; l++)
          cnt = _mm512_add_epi64(cnt, WT_FIXED_POPCOUNT(
                                        _mm512_and_si512(bi[r][l], bj[l])));
        f = nw <= 2 ? by_count_reg(F, cnt) : _mm512_i64gather_pd(cnt, by, 8);
      }
      __m512d p = _mm512_mul_pd(wj, f);
      WT_UNFUSED_V(p);
      acc[r] = _mm512_mask_add_pd(acc[r], m, acc[r], p);
    }
  }
  double total = 0.0;
  for (int r = 0; r < nr; r++) {
    double q = a->w[i0 + r] * _mm512_reduce_add_pd(acc[r]);
    WT_UNFUSED(q);
    total += q;
  }
  return total;
}

#define WT_FIXED_NW(NR)                                                      \
  (nw == 0   ? WT_FIXED_NAME(fixed_rows)(c, &F, a, i, NR, b, j0, j1, 0)      \
   : nw == 1 ? WT_FIXED_NAME(fixed_rows)(c, &F, a, i, NR, b, j0, j1, 1)      \
   : nw == 2 ? WT_FIXED_NAME(fixed_rows)(c, &F, a, i, NR, b, j0, j1, 2)      \
   : nw == 3 ? WT_FIXED_NAME(fixed_rows)(c, &F, a, i, NR, b, j0, j1, 3)      \
   : nw == 4 ? WT_FIXED_NAME(fixed_rows)(c, &F, a, i, NR, b, j0, j1, 4)      \
             : WT_FIXED_NAME(fixed_rows)(c, &F, a, i, NR, b, j0, j1, nw))

WT_FIXED_TARGET double
WT_FIXED_NAME(wt_cpu_avx512_fixed)(const wt_ctx *c, const wt_points *a,
                                   int64_t i0, int64_t i1,
                                   const wt_points *b, int64_t j0, int64_t j1)
{
  const int nw = c->pip->n_words;
  wt_count_regs F;
  memset(&F, 0, sizeof F);
  if (nw > 0 && nw <= 2) F = by_count_regs(c);
  double total = 0.0;
  int64_t i = i0;
  for (; i + WT_FIXED_ROWS <= i1; i += WT_FIXED_ROWS)
    total += WT_FIXED_NW(WT_FIXED_ROWS);
  for (; i < i1; i++) total += WT_FIXED_NW(1);
  return total;
}
#undef WT_FIXED_NW
