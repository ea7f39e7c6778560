/* The AVX-512 kernels of PIP jobs (wt_pip): in double with pair factors
 * (wt_cpu_avx512_pip), the count form with the float prefilter
 * (wt_cpu_f32_pip), and PIP tasks of one slot (kernels_fixed.h). Their own
 * file, as kernels_avx512.c was over the 700 lines ARCHITECTURE.md
 * allows; they share its double lookup and float table through
 * kernels_x86.h. Each function is compiled for AVX-512 by a target
 * attribute, and the driver picks one at run time. */
#include "kernels_x86.h"

#ifdef WT_X86
/* PIP (wt_pip): the popcounts of 8 64-bit lanes (AVX512BW: a nibble
 * table per byte, then the bytes of each lane summed) */
WT_AVX512 WT_INLINE __m512i popcount_avx512(__m512i v)
{
  const __m512i lut = _mm512_set4_epi32(0x04030302, 0x03020201, 0x03020201,
                                        0x02010100);
  const __m512i low = _mm512_set1_epi8(0x0f);
  __m512i lo = _mm512_and_si512(v, low);
  __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
  __m512i cnt = _mm512_add_epi8(_mm512_shuffle_epi8(lut, lo),
                                _mm512_shuffle_epi8(lut, hi));
  return _mm512_sad_epu8(cnt, _mm512_setzero_si512());
}

/* VPOPCNTQ of the 8 lanes, by inline assembly: usable in a function
 * compiled without the avx512vpopcntdq target (the kernels' bodies are
 * shared), called only where the CPU has it (wt_ctx.pip_vpopcnt) */
WT_AVX512 WT_INLINE __m512i popcount_vpopcnt(__m512i v)
{
  __m512i r;
  __asm__("vpopcntq %1, %0" : "=v"(r) : "v"(v));
  return r;
}

/* by_count[] of up to 2 words (65 values, c->pip_lut) in registers, read by
 * permutes instead of a gather per vector: the same values, so the same
 * sums; the gathers (this one and the slot table's) bounded the kernel */
typedef struct {
  __m512d t[9];
} wt_count_regs;

WT_AVX512 WT_INLINE wt_count_regs by_count_regs(const wt_ctx *c)
{
  wt_count_regs F;
  for (int k = 0; k < 9; k++) F.t[k] = _mm512_loadu_pd(c->pip_lut + 8 * k);
  return F;
}

WT_AVX512 WT_INLINE __m512d by_count_reg(const wt_count_regs *F, __m512i c)
{
  const __m512i g = _mm512_srli_epi64(c, 4);
  __m512d r = _mm512_permutex2var_pd(F->t[0], c, F->t[1]);
  r = _mm512_mask_mov_pd(r, _mm512_cmpeq_epi64_mask(g, _mm512_set1_epi64(1)),
                         _mm512_permutex2var_pd(F->t[2], c, F->t[3]));
  r = _mm512_mask_mov_pd(r, _mm512_cmpeq_epi64_mask(g, _mm512_set1_epi64(2)),
                         _mm512_permutex2var_pd(F->t[4], c, F->t[5]));
  r = _mm512_mask_mov_pd(r, _mm512_cmpeq_epi64_mask(g, _mm512_set1_epi64(3)),
                         _mm512_permutex2var_pd(F->t[6], c, F->t[7]));
  return _mm512_mask_mov_pd(r, _mm512_cmpeq_epi64_mask(g, _mm512_set1_epi64(4)),
                            _mm512_permutexvar_pd(_mm512_setzero_si512(),
                                                  F->t[8]));
}

/* the angular factor of 8 squared chords, as pip_ang() (kernels_pip.c)
 * computes it: a branch-free binary search by gathers, then the same
 * interpolation; 1 outside the table (and for NaN) */
WT_AVX512 WT_INLINE __m512d ang_avx512(const wt_pip *q, __m512d d2)
{
  const int n = q->n_ang;
  const double *x = q->ang_d2, *y = q->ang_w;
  const __m512d one = _mm512_set1_pd(1.0);
  if (n == 1)
    return _mm512_mask_mov_pd(one, _mm512_cmp_pd_mask(d2, _mm512_set1_pd(x[0]),
                                                      _CMP_EQ_OQ),
                              _mm512_set1_pd(y[0]));
  __mmask8 in = _mm512_cmp_pd_mask(d2, _mm512_set1_pd(x[0]), _CMP_GE_OQ) &
                _mm512_cmp_pd_mask(d2, _mm512_set1_pd(x[n - 1]), _CMP_LE_OQ);
  if (!in) return one;
  __m512i lo = _mm512_setzero_si512();
  for (int len = n - 1; len > 1; ) {
    const int half = len / 2;
    __m512d xv = _mm512_i64gather_pd(lo, x + half, 8);
    lo = _mm512_mask_add_epi64(lo, _mm512_cmp_pd_mask(xv, d2, _CMP_LE_OQ), lo,
                               _mm512_set1_epi64(half));
    len -= half;
  }
  __m512d x0 = _mm512_i64gather_pd(lo, x, 8);
  __m512d x1 = _mm512_i64gather_pd(lo, x + 1, 8);
  __m512d y0 = _mm512_i64gather_pd(lo, y, 8);
  __m512d y1 = _mm512_i64gather_pd(lo, y + 1, 8);
  __m512d t = _mm512_div_pd(_mm512_sub_pd(d2, x0), _mm512_sub_pd(x1, x0));
  __m512d u = _mm512_mul_pd(t, _mm512_sub_pd(y1, y0));
  WT_UNFUSED_V(u);
  return _mm512_mask_mov_pd(one, in, _mm512_add_pd(y0, u));
}

/* The count form's indices of the pairs (i, j + l) for the lanes l set in
 * lanes whose d2 lies above the double table: lane_off[l] + slot * K +
 * cnt[l] into out[l] (patch_pairs() with the popcounts). */
__attribute__((noinline, cold))
static void patch_pairs_count(const wt_ctx *c, const wt_points *a, int64_t i,
                              const wt_points *b, int64_t j, unsigned lanes,
                              const int32_t *lane_off, const int64_t *cnt,
                              int K, uint32_t *out)
{
  for (int l = 0; lanes; l++, lanes >>= 1)
    if (lanes & 1)
      out[l] = (uint32_t)(lane_off[l] + (int64_t)K *
                          slot_of(c->bins, pair_d2(a->x[i], a->y[i], a->z[i],
                                                   b->x[j + l], b->y[j + l],
                                                   b->z[j + l])) + cnt[l]);
}

/* AVX-512 for PIP jobs, 8 columns per vector, as vec_avx512_body()
 * weighted, each pair's weight (w_i w_j) times its factor: by_count[c] of
 * the popcount c of the AND of the words (two 32-bit words to a 64-bit
 * lane), times the angular weight when ang. In count form (count: unit
 * weights, words, no angular table, see wt_ctx.pip_count) no weight at
 * all: the pair's index is slot * (32 nw + 1) + c, counted as an
 * unweighted kernel counts. nr, packed, nw (words; 0: none), ang and count
 * are constants at each call site. */
WT_AVX512 WT_INLINE int64_t
vec_pip_body(const wt_ctx *c, uint32_t *h, double *wh, const wt_points *a,
             int64_t i0, int nr, const wt_points *b, int64_t j0, int64_t nj,
             int packed, int nw, int ang, int count, int vp)
{
  const int weighted = !count;
  const int K = 32 * nw + 1;
  const __m512i Kv = _mm512_set1_epi64(K);
  const wt_pip *q = c->pip;
  const double *bx = b->x + j0, *by = b->y + j0, *bz = b->z + j0;
  const double *bw = count ? NULL : b->w + j0;
  const wt_lut512 L = lut512(c);
  const __m256i lane_off = _mm256_loadu_si256((const __m256i *)c->copy_off);
  const int nl = (nw + 1) / 2;               /* 64-bit lanes of words */
  wt_count_regs F;
  if (nw > 0 && nw <= 2) F = by_count_regs(c);
  __m512d xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS], wi[WT_ROWS];
  __m512i bi[WT_ROWS][WT_PIP_MAX_WORDS / 2];
  const int64_t na = a->n, nbp = b->n;
  rows_avx512(a, i0, nr, weighted, xi, yi, zi, wi);
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++) {
    for (int l = 0; l < nl; l++) {
      uint64_t lo = a->bits[(int64_t)(2 * l) * na + i0 + r];
      uint64_t hi = 2 * l + 1 < nw
                      ? a->bits[(int64_t)(2 * l + 1) * na + i0 + r] : 0;
      bi[r][l] = _mm512_set1_epi64((long long)(lo | hi << 32));
    }
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
    __m512d wj = count ? _mm512_setzero_pd() : _mm512_loadu_pd(bw + j);
    __m512i bj[WT_PIP_MAX_WORDS / 2];
    for (int l = 0; l < nl; l++) {
      __m512i lo = _mm512_cvtepu32_epi64(_mm256_loadu_si256(
        (const __m256i *)(b->bits + (int64_t)(2 * l) * nbp + j0 + j)));
      __m512i hi = 2 * l + 1 < nw
        ? _mm512_cvtepu32_epi64(_mm256_loadu_si256(
            (const __m256i *)(b->bits + (int64_t)(2 * l + 1) * nbp + j0 + j)))
        : _mm512_setzero_si512();
      bj[l] = _mm512_or_si512(lo, _mm512_slli_epi64(hi, 32));
    }
#pragma GCC unroll 8
    for (int r = 0; r < nr; r++) {
      __mmask8 above;
      __m512d d2 = d2_avx512(xi[r], yi[r], zi[r], xj, yj, zj);
      __m512i s = slots_avx512(&L, d2, packed, &above);
      if (count) {
        __m512i cnt = _mm512_setzero_si512();
        for (int l = 0; l < nl; l++) {
          const __m512i v = _mm512_and_si512(bi[r][l], bj[l]);
          cnt = _mm512_add_epi64(cnt, vp ? popcount_vpopcnt(v)
                                         : popcount_avx512(v));
        }
        /* slot * K + cnt, K = 32 nw + 1: a shift and adds for 1, 2 or 4
         * words */
        __m512i sk = (nw == 1 || nw == 2 || nw == 4)
          ? _mm512_add_epi64(_mm512_slli_epi64(s, nw == 1 ? 5
                                                  : nw == 2 ? 6 : 7), s)
          : _mm512_mullo_epi64(s, Kv);
        _mm256_store_si256(
          (__m256i *)(out + 8 * r),
          _mm256_add_epi32(_mm512_cvtepi64_epi32(_mm512_add_epi64(sk, cnt)),
                           lane_off));
        if (above) {
          int64_t cl[8];
          _mm512_storeu_si512(cl, cnt);
          patch_pairs_count(c, a, i0 + r, b, j0 + j, above, c->copy_off, cl,
                            K, out + 8 * r);
        }
        if (j >= WT_LAG * 8) count_ring(h, old + 8 * r, 8);
        continue;
      }
      _mm256_store_si256((__m256i *)(out + 8 * r),
                         _mm256_add_epi32(_mm512_cvtepi64_epi32(s), lane_off));
      __m512d f = _mm512_set1_pd(1.0);
      if (nw > 0) {
        __m512i cnt = _mm512_setzero_si512();
        for (int l = 0; l < nl; l++)
          cnt = _mm512_add_epi64(cnt, popcount_avx512(
                                        _mm512_and_si512(bi[r][l], bj[l])));
        f = nw <= 2 ? by_count_reg(&F, cnt)
                    : _mm512_i64gather_pd(cnt, q->by_count, 8);
      }
      if (ang) f = _mm512_mul_pd(f, ang_avx512(q, d2));
      __m512d p = _mm512_mul_pd(wi[r], wj);
      WT_UNFUSED_V(p);
      _mm512_store_pd(wout + 8 * r, _mm512_mul_pd(p, f));
      if (above)
        patch_pairs(c, a, i0 + r, b, j0 + j, above, c->copy_off, out + 8 * r);
      if (j >= WT_LAG * 8) count_ring_w(h, wh, old + 8 * r, wold + 8 * r, 8);
    }
  }
  WT_RING_DRAIN(ring, wring, 8, nv >> 3);
  return nv;
}

/* the PIP variants: rows (6 or 1), packed table or not, 0, 1, 2 or 4
 * words (others: the generic count), angular table or not; the count
 * form (1, 2, 4 words or the generic count; never an angular table) */
#define WT_PIP_NW(NR, P, ANG)                                                \
  (nw == 0   ? vec_pip_body(c, h, wh, a, i0, NR, b, j0, nj, P, 0, ANG, 0, 0) \
   : nw == 1 ? vec_pip_body(c, h, wh, a, i0, NR, b, j0, nj, P, 1, ANG, 0, 0) \
   : nw == 2 ? vec_pip_body(c, h, wh, a, i0, NR, b, j0, nj, P, 2, ANG, 0, 0) \
   : nw == 4 ? vec_pip_body(c, h, wh, a, i0, NR, b, j0, nj, P, 4, ANG, 0, 0) \
             : vec_pip_body(c, h, wh, a, i0, NR, b, j0, nj, P, nw, ANG, 0, 0))
#define WT_PIP_COUNT_VP(NR, P, VP)                                           \
  (nw == 1   ? vec_pip_body(c, h, NULL, a, i0, NR, b, j0, nj, P, 1, 0, 1, VP) \
   : nw == 2 ? vec_pip_body(c, h, NULL, a, i0, NR, b, j0, nj, P, 2, 0, 1, VP) \
   : nw == 4 ? vec_pip_body(c, h, NULL, a, i0, NR, b, j0, nj, P, 4, 0, 1, VP) \
             : vec_pip_body(c, h, NULL, a, i0, NR, b, j0, nj, P, nw, 0, 1, VP))
#define WT_PIP_COUNT(NR, P)                                                  \
  (c->pip_vpopcnt ? WT_PIP_COUNT_VP(NR, P, 1) : WT_PIP_COUNT_VP(NR, P, 0))
#define WT_PIP_ANG(NR, P)                                                    \
  (c->pip_count ? WT_PIP_COUNT(NR, P)                                        \
   : ang        ? WT_PIP_NW(NR, P, 1) : WT_PIP_NW(NR, P, 0))

WT_AVX512 int64_t
wt_cpu_avx512_pip(const wt_ctx *c, uint32_t *h, double *wh,
                  const float *tile, const wt_points *a, int64_t i0, int nr,
                  const wt_points *b, int64_t j0, int64_t nj)
{
  (void)tile;
  const int nw = c->pip->n_words, ang = c->pip->n_ang > 0;
  if (nr == WT_ROWS)
    return c->packed ? WT_PIP_ANG(WT_ROWS, 1) : WT_PIP_ANG(WT_ROWS, 0);
  return c->packed ? WT_PIP_ANG(1, 1) : WT_PIP_ANG(1, 0);
}
#undef WT_PIP_NW
#undef WT_PIP_COUNT
#undef WT_PIP_COUNT_VP
#undef WT_PIP_ANG

/* PIP tasks of one slot (wt_ctx.fixed_fn): kernels_fixed.h, with the
 * nibble popcount and with VPOPCNTDQ */
#define WT_FIXED_ROWS 4
#define WT_FIXED_TARGET WT_AVX512
#define WT_FIXED_POPCOUNT(v) popcount_avx512(v)
#define WT_FIXED_NAME(x) x
#include "kernels_fixed.h"
#undef WT_FIXED_TARGET
#undef WT_FIXED_POPCOUNT
#undef WT_FIXED_NAME
#define WT_FIXED_TARGET                                                      \
  __attribute__((target("avx512f,avx512bw,avx512cd,avx512vl,avx512dq,"      \
                        "avx512vpopcntdq")))
#define WT_FIXED_POPCOUNT(v) _mm512_popcnt_epi64(v)
#define WT_FIXED_NAME(x) x##_vpopcnt
#include "kernels_fixed.h"
#undef WT_FIXED_TARGET
#undef WT_FIXED_POPCOUNT
#undef WT_FIXED_NAME

/* The popcounts of 16 32-bit lanes: VPOPCNTD by inline assembly (vp, see
 * popcount_vpopcnt()) or AVX512BW's nibble table, the bytes of each lane
 * summed by two multiply-adds */
WT_AVX512 WT_INLINE __m512i popcount32_avx512(__m512i v, int vp)
{
  if (vp) {
    __m512i r;
    __asm__("vpopcntd %1, %0" : "=v"(r) : "v"(v));
    return r;
  }
  const __m512i lut = _mm512_set4_epi32(0x04030302, 0x03020201, 0x03020201,
                                        0x02010100);
  const __m512i low = _mm512_set1_epi8(0x0f);
  __m512i lo = _mm512_and_si512(v, low);
  __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
  __m512i cnt = _mm512_add_epi8(_mm512_shuffle_epi8(lut, lo),
                                _mm512_shuffle_epi8(lut, hi));
  return _mm512_madd_epi16(_mm512_maddubs_epi16(cnt, _mm512_set1_epi8(1)),
                           _mm512_set1_epi16(1));
}

/* The float kernel's undecided lanes in count form: as redo_f32, but the
 * exact slots themselves (no copy offset) into slot[l] */
WT_AVX512 __attribute__((noinline, cold)) static void
redo_f32_slots(const wt_ctx *c, const wt_points *a, int64_t i,
               const wt_points *b, int64_t j, __mmask16 lanes, uint32_t *slot)
{
  static const int32_t zero[16] = {0};
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
    _mm256_mask_storeu_epi32(slot + k, mine, _mm512_cvtepi64_epi32(s));
    if (above & mine)
      patch_pairs(c, a, i, b, j + k, above & mine, zero, slot + k);
  }
}

/* The PIP count form (wt_ctx.pip_count) with the float prefilter: the
 * slots of vec_f32_body() (undecided lanes redone in double), each pair
 * counted at slot * (32 nw + 1) + the popcount of its ANDed words (one
 * 32-bit word of each point to a lane); 16 columns per vector, lane l
 * into copy l % 8. nr, nw and vp are constants at each call site. */
WT_AVX512 WT_INLINE int64_t
vec_f32_count_body(const wt_ctx *c, uint32_t *h, const float *tile,
                   const wt_points *a, int64_t i0, int nr,
                   const wt_points *b, int64_t j0, int64_t nj, int nw, int vp)
{
  const int weighted = 0;            /* for WT_RING_DECL, _DRAIN */
  double *wh = NULL;
  const __m512i Kv = _mm512_set1_epi32(32 * nw + 1);
  const float *tx = tile, *ty = tile + c->tile_stride,
              *tz = tile + 2 * c->tile_stride;
  const int64_t na = a->n, nbp = b->n;
  __m512 xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS];
  __m512i bi[WT_ROWS][WT_PIP_MAX_WORDS];
  rows_f32(a, i0, nr, xi, yi, zi);
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++)
    for (int k = 0; k < nw; k++)
      bi[r][k] = _mm512_set1_epi32((int)a->bits[(int64_t)k * na + i0 + r]);
  wt_f32lut L;
  f32lut_init(&L, c, 0);
  const __m512i lane_off = _mm512_loadu_si512(c->copy_off);
  const int64_t nv = nj & ~(int64_t)15;
  WT_RING_DECL(ring, wring, 16);
  for (int64_t j = 0; j < nv; j += 16) {
    uint32_t *out = ring[(j >> 4) % WT_RING];
    const uint32_t *old = ring[((j >> 4) + WT_LAG) % WT_RING];
    __m512 xj = _mm512_loadu_ps(tx + j);
    __m512 yj = _mm512_loadu_ps(ty + j);
    __m512 zj = _mm512_loadu_ps(tz + j);
    __m512i bj[WT_PIP_MAX_WORDS];
    for (int k = 0; k < nw; k++)
      bj[k] = _mm512_loadu_si512(b->bits + (int64_t)k * nbp + j0 + j);
#pragma GCC unroll 8
    for (int r = 0; r < nr; r++) {
      __m512 dx = _mm512_sub_ps(xi[r], xj);
      __m512 dy = _mm512_sub_ps(yi[r], yj);
      __m512 dz = _mm512_sub_ps(zi[r], zj);
      __mmask16 ok;
      const __m512i y = f32_lookup(
        &L, _mm512_castps_si512(d2f_avx512(dx, dy, dz)), (__mmask16)0xffff,
        0, &ok);
      __m512i sl = _mm512_srl_epi32(y, L.wshift);
      if (!_kortestc_mask16_u8(ok, ok)) {
        uint32_t tmp[16] __attribute__((aligned(64)));
        _mm512_store_si512(tmp, sl);
        redo_f32_slots(c, a, i0 + r, b, j0 + j, (__mmask16)~ok, tmp);
        sl = _mm512_load_si512(tmp);
      }
      __m512i cnt = _mm512_setzero_si512();
      for (int k = 0; k < nw; k++)
        cnt = _mm512_add_epi32(cnt, popcount32_avx512(
                                      _mm512_and_si512(bi[r][k], bj[k]), vp));
      __m512i sk = (nw == 1 || nw == 2 || nw == 4)
        ? _mm512_add_epi32(_mm512_slli_epi32(sl, nw == 1 ? 5
                                                : nw == 2 ? 6 : 7), sl)
        : _mm512_mullo_epi32(sl, Kv);
      _mm512_store_si512(out + 16 * r,
                         _mm512_add_epi32(_mm512_add_epi32(sk, cnt),
                                          lane_off));
      if (j >= WT_LAG * 16) count_ring(h, old + 16 * r, 16);
    }
  }
  WT_RING_DRAIN(ring, wring, 16, nv >> 4);
  return nv;
}

#define WT_F32C_NW(NR, VP)                                                   \
  (nw == 1   ? vec_f32_count_body(c, h, tile, a, i0, NR, b, j0, nj, 1, VP)  \
   : nw == 2 ? vec_f32_count_body(c, h, tile, a, i0, NR, b, j0, nj, 2, VP)  \
   : nw == 4 ? vec_f32_count_body(c, h, tile, a, i0, NR, b, j0, nj, 4, VP)  \
             : vec_f32_count_body(c, h, tile, a, i0, NR, b, j0, nj, nw, VP))

/* the PIP count form with the float prefilter (the vec32 of such jobs) */
WT_AVX512 int64_t
wt_cpu_f32_pip(const wt_ctx *c, uint32_t *h, double *wh, const float *tile,
               const wt_points *a, int64_t i0, int nr, const wt_points *b,
               int64_t j0, int64_t nj)
{
  (void)wh;
  const int nw = c->pip->n_words;
  if (c->pip_vpopcnt)
    return nr == WT_ROWS ? WT_F32C_NW(WT_ROWS, 1) : WT_F32C_NW(1, 1);
  return nr == WT_ROWS ? WT_F32C_NW(WT_ROWS, 0) : WT_F32C_NW(1, 0);
}
#undef WT_F32C_NW
#endif /* WT_X86 */
