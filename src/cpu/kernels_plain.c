/* The plain C kernel: pairs of any CPU and any binning, and the ragged
 * ends of the vector kernels' tiles. See engine.h. */
#include "engine.h"

/* Plain C: counts the pairs of rows [i0, i0 + nr) and columns [j0, j1);
 * row r counts into copy r, with weighted its weight sums into copy r of
 * wh, and with angles its angle sums (weighted: of w_i w_j theta) into
 * copy r of th; labelled (wt_ctx.hist), at the offsets a->lab[i] +
 * b->lab[j] there. nr, weighted, angles and labelled are constants at
 * each call site. */
static inline void count_plain_body(const wt_ctx *c, uint32_t *h, double *wh,
                                    double *th, const wt_points *a,
                                    int64_t i0, int nr, const wt_points *b,
                                    int64_t j0, int64_t j1, int weighted,
                                    int angles, int labelled)
{
  const wt_bins bins = *c->bins;   /* a copy the counters cannot alias */
  double xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS], wi[WT_ROWS];
  uint32_t *hr[WT_ROWS];
  double *whr[WT_ROWS], *thr[WT_ROWS];
  for (int r = 0; r < nr; r++) {
    xi[r] = a->x[i0 + r];
    yi[r] = a->y[i0 + r];
    zi[r] = a->z[i0 + r];
    const int32_t off = c->copy_off[r] + (labelled ? a->lab[i0 + r] : 0);
    hr[r] = h + off;
    if (weighted) {
      wi[r] = a->w[i0 + r];
      whr[r] = wh + off;
    }
    if (angles) thr[r] = th + off;
  }
  for (int64_t j = j0; j < j1; j++) {
    double xj = b->x[j], yj = b->y[j], zj = b->z[j];
    double wj = weighted ? b->w[j] : 0.0;
    const int lj = labelled ? b->lab[j] : 0;
    for (int r = 0; r < nr; r++) {
      double d2 = pair_d2(xi[r], yi[r], zi[r], xj, yj, zj);
      int s = slot_of(&bins, d2) + lj;
      hr[r][s]++;
      if (weighted) {
        double p = wi[r] * wj;
        WT_UNFUSED(p);
        whr[r][s] += p;
        if (angles) {
          double q = p * pair_angle(d2);
          WT_UNFUSED(q);
          thr[r][s] += q;
        }
      } else if (angles) {
        thr[r][s] += pair_angle(d2);
      }
    }
  }
}

/* one row group (nr == WT_ROWS) or row by row */
static inline void count_plain_rows(const wt_ctx *c, uint32_t *h, double *wh,
                                    double *th, const wt_points *a,
                                    int64_t i0, int nr, const wt_points *b,
                                    int64_t j0, int64_t j1, int weighted,
                                    int angles)
{
  const int lab = b->lab != NULL;
  if (nr == WT_ROWS) {
    if (lab)
      count_plain_body(c, h, wh, th, a, i0, WT_ROWS, b, j0, j1, weighted,
                       angles, 1);
    else
      count_plain_body(c, h, wh, th, a, i0, WT_ROWS, b, j0, j1, weighted,
                       angles, 0);
  } else {
    for (int r = 0; r < nr; r++)
      count_plain_body(c, h, wh, th, a, i0 + r, 1, b, j0, j1, weighted,
                       angles, lab);
  }
}

void wt_cpu_plain(const wt_ctx *c, uint32_t *h, double *wh, double *th,
                  const wt_points *a, int64_t i0, int nr,
                  const wt_points *b, int64_t j0, int64_t j1)
{
  if (th) {
    if (wh)
      count_plain_rows(c, h, wh, th, a, i0, nr, b, j0, j1, 1, 1);
    else
      count_plain_rows(c, h, NULL, th, a, i0, nr, b, j0, j1, 0, 1);
  } else if (wh) {
    count_plain_rows(c, h, wh, NULL, a, i0, nr, b, j0, j1, 1, 0);
  } else {
    count_plain_rows(c, h, NULL, NULL, a, i0, nr, b, j0, j1, 0, 0);
  }
}

/* The pairs i < j of rows [i0, i0 + nr) among themselves, row r into copy
 * r: the rows of a group against the group's later rows, at most 15 pairs
 * in one call instead of one call a row (whose setup cost more than its
 * pairs). Each row is count_plain_body()'s loop of one row, on copy r's
 * counters (its own copy, so that one row's increments do not wait on the
 * last row's); weighted or angle sums row by row through wt_cpu_plain(),
 * as before. */
void wt_cpu_plain_triangle(const wt_ctx *c, uint32_t *h, double *wh,
                           double *th, const wt_points *a, int64_t i0,
                           int nr, const wt_points *b)
{
  if (wh || th) {
    for (int r = 0; r + 1 < nr; r++)
      wt_cpu_plain(c, h, wh, th, a, i0 + r, 1, b, i0 + r + 1, i0 + nr);
    return;
  }
  const int lab = b->lab != NULL;
  for (int r = 0; r + 1 < nr; r++)
    count_plain_body(c, h + c->copy_off[r], NULL, NULL, a, i0 + r, 1, b,
                     i0 + r + 1, i0 + nr, 0, 0, lab);
}
