/* The PIP kernel (issue 37): every pair in double with the plain kernel's
 * slot decision, each adding (w_i w_j) * by_count[popcount(b_i & b_j)] *
 * ang(d2) to the weight sums (wt.h, wt_pip), or, in count form (unit
 * weights, no angular table: wt_ctx.pip_count), one to the counter of
 * its slot and popcount. Two builds of one body: with
 * the POPCNT instruction (target attribute, chosen at run time where the
 * CPU has it and the instruction set is not plain), and portable C for
 * every other CPU. See engine.h. */
#include "engine.h"

#if defined(__GNUC__)
#define WT_POPCOUNT32(v) __builtin_popcount(v)
#else
static inline int wt_popcount32(uint32_t v)
{
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  v = (v + (v >> 4)) & 0x0f0f0f0fu;
  return (int)((v * 0x01010101u) >> 24);
}
#define WT_POPCOUNT32(v) wt_popcount32(v)
#endif

#if defined(__GNUC__)
#define WT_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define WT_ALWAYS_INLINE static inline
#endif

/* the angular factor, as wt_pip_ang() (floor/bins.c) computes it */
WT_ALWAYS_INLINE double pip_ang(const wt_pip *pip, double d2)
{
  const int n = pip->n_ang;
  if (n < 2) return n == 1 && d2 == pip->ang_d2[0] ? pip->ang_w[0] : 1.0;
  const double *x = pip->ang_d2, *y = pip->ang_w;
  if (!(d2 >= x[0]) || d2 > x[n - 1]) return 1.0;
  int lo = 0, hi = n - 1;
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (x[mid] <= d2) lo = mid; else hi = mid;
  }
  const double t = (d2 - x[lo]) / (x[lo + 1] - x[lo]);
  double u = t * (y[lo + 1] - y[lo]);
  WT_UNFUSED(u);
  return y[lo] + u;
}

/* row i against columns [j0, j1) in count form (wt_ctx.pip_count): each
 * pair increments counter slot * (32 nw + 1) + popcount of copy `copy`
 * of h; no weights (flush() in driver.c makes the weight sums) */
WT_ALWAYS_INLINE void pip_row_count(const wt_ctx *c, uint32_t *h,
                                    const wt_points *a, int64_t i,
                                    const wt_points *b, int64_t j0,
                                    int64_t j1, int copy, int nw)
{
  const wt_bins bins = *c->bins;
  const int K = 32 * nw + 1;
  uint32_t bi[WT_PIP_MAX_WORDS];
  const int64_t na = a->n, nb = b->n;
  for (int k = 0; k < nw; k++) bi[k] = a->bits[(int64_t)k * na + i];
  const double xi = a->x[i], yi = a->y[i], zi = a->z[i];
  uint32_t *hr = h + c->copy_off[copy];
  const uint32_t *bb = b->bits;
  for (int64_t j = j0; j < j1; j++) {
    const double d2 = pair_d2(xi, yi, zi, b->x[j], b->y[j], b->z[j]);
    const int s = slot_of(&bins, d2);
    int cnt = 0;
    for (int k = 0; k < nw; k++)
      cnt += WT_POPCOUNT32(bi[k] & bb[(int64_t)k * nb + j]);
    hr[s * K + cnt]++;
  }
}

/* row i against columns [j0, j1) into copy `copy` of h, wh (and th);
 * nw: words (0: none), angles: th is given, ang: an angular table */
WT_ALWAYS_INLINE void pip_row(const wt_ctx *c, uint32_t *h, double *wh,
                              double *th, const wt_points *a, int64_t i,
                              const wt_points *b, int64_t j0, int64_t j1,
                              int copy, int nw, int angles, int ang)
{
  const wt_bins bins = *c->bins;
  const wt_pip *pip = c->pip;
  const double *by = pip->by_count;
  uint32_t bi[WT_PIP_MAX_WORDS];
  const int64_t na = a->n, nb = b->n;
  for (int k = 0; k < nw; k++) bi[k] = a->bits[(int64_t)k * na + i];
  const double xi = a->x[i], yi = a->y[i], zi = a->z[i], wi = a->w[i];
  uint32_t *hr = h + c->copy_off[copy];
  double *whr = wh + c->copy_off[copy];
  double *thr = angles ? th + c->copy_off[copy] : NULL;
  const uint32_t *bb = b->bits;
  for (int64_t j = j0; j < j1; j++) {
    const double d2 = pair_d2(xi, yi, zi, b->x[j], b->y[j], b->z[j]);
    const int s = slot_of(&bins, d2);
    hr[s]++;
    int cnt = 0;
    for (int k = 0; k < nw; k++)
      cnt += WT_POPCOUNT32(bi[k] & bb[(int64_t)k * nb + j]);
    double f = nw > 0 ? by[cnt] : 1.0;
    if (ang) f *= pip_ang(pip, d2);
    double p = wi * b->w[j];
    WT_UNFUSED(p);
    double q = p * f;
    WT_UNFUSED(q);
    whr[s] += q;
    if (angles) {
      double t = q * pair_angle(d2);
      WT_UNFUSED(t);
      thr[s] += t;
    }
  }
}

/* the body: rows [i0, i0 + nr), row r into copy r; word counts 1, 2 and
 * 4 (DESI's 128 realisations) get their own loops; in count form
 * (c->pip_count) counters by slot and popcount only, wh unused */
WT_ALWAYS_INLINE void pip_body(const wt_ctx *c, uint32_t *h, double *wh,
                               double *th, const wt_points *a, int64_t i0,
                               int nr, const wt_points *b, int64_t j0,
                               int64_t j1)
{
  const int nw = c->pip->n_words, ang = c->pip->n_ang > 0;
  if (c->pip_count) {
    for (int r = 0; r < nr; r++) {
      const int64_t i = i0 + r;
      switch (nw) {
      case 1: pip_row_count(c, h, a, i, b, j0, j1, r, 1); break;
      case 2: pip_row_count(c, h, a, i, b, j0, j1, r, 2); break;
      case 4: pip_row_count(c, h, a, i, b, j0, j1, r, 4); break;
      default: pip_row_count(c, h, a, i, b, j0, j1, r, nw); break;
      }
    }
    return;
  }
  for (int r = 0; r < nr; r++) {
    const int64_t i = i0 + r;
#define WT_PIP_ROW(NW, ANG)                                                  \
  (th ? pip_row(c, h, wh, th, a, i, b, j0, j1, r, NW, 1, ANG)               \
      : pip_row(c, h, wh, NULL, a, i, b, j0, j1, r, NW, 0, ANG))
    /* 0, 1, 2 or 4 words as constants (others: the generic row), with
     * or without the angular table */
#define WT_PIP_WORDS(ANG)                                                    \
  switch (nw) {                                                              \
  case 0: WT_PIP_ROW(0, ANG); break;                                         \
  case 1: WT_PIP_ROW(1, ANG); break;                                         \
  case 2: WT_PIP_ROW(2, ANG); break;                                         \
  case 4: WT_PIP_ROW(4, ANG); break;                                         \
  default: WT_PIP_ROW(nw, ANG); break;                                       \
  }
    if (ang) {
      WT_PIP_WORDS(1)
    } else {
      WT_PIP_WORDS(0)
    }
#undef WT_PIP_WORDS
#undef WT_PIP_ROW
  }
}

void wt_cpu_pip_plain(const wt_ctx *c, uint32_t *h, double *wh, double *th,
                      const wt_points *a, int64_t i0, int nr,
                      const wt_points *b, int64_t j0, int64_t j1)
{
  pip_body(c, h, wh, th, a, i0, nr, b, j0, j1);
}

#ifdef WT_X86
__attribute__((target("popcnt")))
void wt_cpu_pip_popcnt(const wt_ctx *c, uint32_t *h, double *wh, double *th,
                       const wt_points *a, int64_t i0, int nr,
                       const wt_points *b, int64_t j0, int64_t j1)
{
  pip_body(c, h, wh, th, a, i0, nr, b, j0, j1);
}
#endif

/* Tasks of one slot (the grid walk's WT_WALK_FIXED, no angular table):
 * every pair's slot is known, so only its factor is computed. Row i's
 * sum over the columns, sum_j w_j by_count[popcount(b_i & b_j)] (by_count
 * taken as 1 without words), times w_i, summed over the rows. */
WT_ALWAYS_INLINE double fixed_row(const wt_pip *pip, const wt_points *a,
                                  int64_t i, const wt_points *b, int64_t j0,
                                  int64_t j1, int nw)
{
  const double *by = pip->by_count, *bw = b->w;
  const uint32_t *bb = b->bits;
  const int64_t na = a->n, nb = b->n;
  uint32_t bi[WT_PIP_MAX_WORDS];
  for (int k = 0; k < nw; k++) bi[k] = a->bits[(int64_t)k * na + i];
  double s = 0.0;
  for (int64_t j = j0; j < j1; j++) {
    int cnt = 0;
    for (int k = 0; k < nw; k++)
      cnt += WT_POPCOUNT32(bi[k] & bb[(int64_t)k * nb + j]);
    double f = nw > 0 ? by[cnt] : 1.0;
    double p = bw[j] * f;
    WT_UNFUSED(p);
    s += p;
  }
  return s;
}

WT_ALWAYS_INLINE double fixed_body(const wt_ctx *c, const wt_points *a,
                                   int64_t i0, int64_t i1,
                                   const wt_points *b, int64_t j0,
                                   int64_t j1)
{
  const wt_pip *pip = c->pip;
  const int nw = pip->n_words;
  double total = 0.0;
  for (int64_t i = i0; i < i1; i++) {
    double s;
    switch (nw) {
    case 0: s = fixed_row(pip, a, i, b, j0, j1, 0); break;
    case 1: s = fixed_row(pip, a, i, b, j0, j1, 1); break;
    case 2: s = fixed_row(pip, a, i, b, j0, j1, 2); break;
    case 3: s = fixed_row(pip, a, i, b, j0, j1, 3); break;
    case 4: s = fixed_row(pip, a, i, b, j0, j1, 4); break;
    default: s = fixed_row(pip, a, i, b, j0, j1, nw); break;
    }
    double q = a->w[i] * s;
    WT_UNFUSED(q);
    total += q;
  }
  return total;
}

double wt_cpu_pip_fixed_plain(const wt_ctx *c, const wt_points *a,
                              int64_t i0, int64_t i1, const wt_points *b,
                              int64_t j0, int64_t j1)
{
  return fixed_body(c, a, i0, i1, b, j0, j1);
}

#ifdef WT_X86
__attribute__((target("popcnt")))
double wt_cpu_pip_fixed_popcnt(const wt_ctx *c, const wt_points *a,
                               int64_t i0, int64_t i1, const wt_points *b,
                               int64_t j0, int64_t j1)
{
  return fixed_body(c, a, i0, i1, b, j0, j1);
}
#endif
