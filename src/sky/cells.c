/* The footprint check's cells: every point's cell on the finest grid once,
 * then the counts of the levels the search of cells.h visits: one pass
 * over the points for every level up to WT_CELLS_LOW (the coarser ones add
 * the four cells each is made of), one pass per finer level, until the
 * search stops. Results are those of the R formulas in
 * R/footprint_check.R (and tests/testthat/test-footprint_check.R checks them
 * against R's own tabulate()). */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "cells.h"
#include "wt.h"
#include "floor/team.h"

/* R's sinpi(), for identical cells: exact at multiples of 1/2. The
 * declinations are checked to lie in [-90, 90], so x = dec / 180 is in
 * [-1/2, 1/2], where fmod(x, 2) is x itself and the range reduction
 * changes nothing: that case skips them (the same value, a third of the
 * time of a key). */
static double sin_pi(double x)
{
  if (x > -0.5 && x < 0.5) return x == 0.0 ? 0.0 : sin(M_PI * x);
  x = fmod(x, 2.0);
  if (x <= -1.0) x += 2.0;
  else if (x > 1.0) x -= 2.0;
  if (x == 0.0 || x == 1.0) return 0.0;
  if (x == 0.5) return 1.0;
  if (x == -0.5) return -1.0;
  return sin(M_PI * x);
}

/* the finest cell of one point: column | row << (top + 1) */
static inline uint32_t fine_key(double ra, double dec, double cols,
                                double rows, int top)
{
  double c = floor(ra / 360.0 * cols);
  double r = floor((sin_pi(dec / 180.0) + 1.0) / 2.0 * rows);
  if (c > cols - 1.0) c = cols - 1.0;
  if (r > rows - 1.0) r = rows - 1.0;
  return (uint32_t)c | ((uint32_t)r << (top + 1));
}

/* a level's counts on a team: each thread its own histogram */
typedef struct {
  const uint32_t *key;
  int top, j;
  uint64_t *priv;    /* a histogram of size cells per thread */
  int64_t size;
} level_count_pass;

/* the points of [lo, hi) into thread tid's histogram */
static void level_count_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const level_count_pass *L = (const level_count_pass *)arg;
  const uint32_t *key = L->key;
  const int top = L->top, j = L->j, s = top - j;
  const uint32_t col_mask = ((uint32_t)1 << (top + 1)) - 1;
  uint64_t *mine = L->priv + (size_t)tid * (size_t)L->size;
  for (int64_t i = lo; i < hi; i++) {
    uint32_t c = (key[i] & col_mask) >> s, r = (key[i] >> (top + 1)) >> s;
    mine[c + ((uint64_t)r << (j + 1))]++;
  }
}

/* counts of the points per cell of level j into h (size cells, zeroed) */
static int level_counts(const uint32_t *key, int64_t n, int top, int j,
                        uint64_t *h, int64_t size, int threads)
{
  const int s = top - j;
  const uint32_t col_mask = ((uint32_t)1 << (top + 1)) - 1;
  if (threads > 1 && n > 200000 && size <= ((int64_t)1 << 16)) {
    /* private histograms, added in thread order */
    uint64_t *priv = (uint64_t *)calloc((size_t)threads * (size_t)size,
                                        sizeof *priv);
    if (!priv) return WT_ERR_NOMEM;
    level_count_pass pass = {key, top, j, priv, size};
    wt_team_for(threads, n, 0, level_count_part, &pass);
    for (int t = 0; t < threads; t++)
      for (int64_t c = 0; c < size; c++) h[c] += priv[(size_t)t * size + c];
    free(priv);
    return WT_OK;
  }
  for (int64_t i = 0; i < n; i++) {
    uint32_t c = (key[i] & col_mask) >> s, r = (key[i] >> (top + 1)) >> s;
    h[c + ((uint64_t)r << (j + 1))]++;
  }
  return WT_OK;
}

/* the counts of level j (into h) from those of level j + 1: each cell's
 * four children, columns 2c and 2c + 1 of rows 2r and 2r + 1 */
static void level_from_finer(const uint64_t *fine, int j, uint64_t *h)
{
  const int64_t cols = (int64_t)1 << (j + 1), rows = (int64_t)1 << j;
  const int64_t fine_cols = cols * 2;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      const uint64_t *f = fine + 2 * c + 2 * r * fine_cols;
      h[c + r * cols] = f[0] + f[1] + f[fine_cols] + f[fine_cols + 1];
    }
}

/* cells of every level up to WT_CELLS_LOW come from one pass over the
 * points at that level (32768 cells), the coarser ones by adding
 * children; finer levels, rarely reached, take a pass of their own */
#define WT_CELLS_LOW 7

/* first cell of level j in a block holding levels 0, 1, ... in turn */
static int64_t level_offset(int j)
{
  int64_t off = 0;
  for (int i = 0; i < j; i++) off += (int64_t)1 << (2 * i + 1);
  return off;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* R's median() of v[0..n) (sorted in place); NaN when n == 0 */
static double median(double *v, int64_t n)
{
  if (n == 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  if (n % 2) return v[n / 2];
  long double s = ((long double)v[n / 2 - 1] + v[n / 2]) / 2.0L;
  return (double)s;
}

void wt_cells_free(wt_cells *c)
{
  free(c->id);
  free(c->d);
  free(c->r);
  c->id = c->d = c->r = NULL;
  c->n_cells = 0;
}

/* one level: occupied cells into id/d/r (ascending), how many are well
 * covered and their median expected count */
static void level_scan(const uint64_t *hd, const uint64_t *hr, int64_t size,
                      double n_d, double n_r, double *id, double *d,
                      double *r, double *tmp, int64_t *n_occ, int64_t *m,
                      double *e_med)
{
  int64_t k = 0, k_r = 0;
  for (int64_t c = 0; c < size; c++) {
    if (!hd[c] && !hr[c]) continue;
    id[k] = (double)c;
    d[k] = (double)hd[c];
    r[k] = (double)hr[c];
    if (hr[c]) tmp[k_r++] = (double)hr[c];
    k++;
  }
  *n_occ = k;
  const double half = 0.5 * median(tmp, k_r);
  int64_t w = 0;
  for (int64_t i = 0; i < k; i++)
    if (r[i] > 0 && r[i] >= half) tmp[w++] = r[i] * n_d / n_r;
  *m = w;
  *e_med = median(tmp, w);
}

/* fine keys on a team */
typedef struct {
  const double *ra, *dec;
  int64_t step;
  int top;
  double cols, rows;
  uint32_t *k;
} keys_pass;

static void keys_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const keys_pass *K = (const keys_pass *)arg;
  (void)tid;
  const double *ra = K->ra, *dec = K->dec;
  const double cols = K->cols, rows = K->rows;
  const int64_t step = K->step;
  const int top = K->top;
  uint32_t *k = K->k;
  for (int64_t i = lo; i < hi; i++)
    k[i] = fine_key(ra[i * step], dec[i * step], cols, rows, top);
}

/* fine keys of n points (every step-th of ra, dec), in parallel */
static void keys_of(const double *ra, const double *dec, int64_t n,
                    int64_t step, int top, uint32_t *k, int threads)
{
  const double cols = ldexp(1.0, top + 1), rows = ldexp(1.0, top);
  keys_pass pass = {ra, dec, step, top, cols, rows, k};
  wt_team_for(n > 20000 ? threads : 1, n, 0, keys_part, &pass);
}

/* the counts of levels 0..low (a block as level_offset() lays it out,
 * zeroed) of n points of fine keys k: level low in one pass, the coarser
 * ones from their children */
static int low_levels(const uint32_t *k, int64_t n, int top, int low,
                      uint64_t *lv, int threads)
{
  const int64_t size = (int64_t)1 << (2 * low + 1);
  int status = level_counts(k, n, top, low, lv + level_offset(low), size,
                            threads);
  for (int j = low - 1; status == WT_OK && j >= 0; j--)
    level_from_finer(lv + level_offset(j + 1), j, lv + level_offset(j));
  return status;
}

void wt_cells_randoms_free(wt_cells_randoms *rr)
{
  free(rr->key);
  free(rr->low);
  memset(rr, 0, sizeof *rr);
}

int wt_cells_randoms_make(const double *ra_r, const double *dec_r,
                          int64_t n_r_all, int64_t thin, int top,
                          int threads, wt_cells_randoms *rr)
{
  memset(rr, 0, sizeof *rr);
  if (n_r_all < 1 || thin < 1 || top < 0 || top > WT_CELLS_TOP ||
      threads < 1)
    return WT_ERR_ARG;
  rr->top = top;
  rr->n = (n_r_all + thin - 1) / thin;
  rr->n_low_level = top < WT_CELLS_LOW ? top : WT_CELLS_LOW;
  rr->key = (uint32_t *)malloc((size_t)rr->n * sizeof *rr->key);
  rr->low = (uint64_t *)calloc((size_t)level_offset(rr->n_low_level + 1),
                               sizeof *rr->low);
  if (!rr->key || !rr->low) {
    wt_cells_randoms_free(rr);
    return WT_ERR_NOMEM;
  }
  keys_of(ra_r, dec_r, rr->n, thin, top, rr->key, threads);
  int status = low_levels(rr->key, rr->n, top, rr->n_low_level, rr->low,
                          threads);
  if (status != WT_OK) wt_cells_randoms_free(rr);
  return status;
}

int wt_footprint_cells_of(const wt_cells_randoms *rr, const double *ra_d,
                          const double *dec_d, int64_t n_d, int min_well,
                          double min_expected, int stop_well, int threads,
                          wt_cells *out)
{
  memset(out, 0, sizeof *out);
  out->level = -1;
  if (n_d < 1 || threads < 1 || !rr->key) return WT_ERR_ARG;
  const int top = rr->top, low = rr->n_low_level;
  const int64_t n_r = rr->n;
  const uint32_t *kr = rr->key;
  const int64_t cap = n_d + n_r;     /* occupied cells at any level */
  uint32_t *kd = (uint32_t *)malloc((size_t)n_d * sizeof *kd);
  const int64_t most = (int64_t)1 << (2 * top + 1);
  const int64_t occ_cap = cap < most ? cap : most;
  double *buf = (double *)malloc((size_t)occ_cap * 4 * sizeof *buf);
  /* levels 0..low of the data (the randoms': rr->low) */
  const int64_t n_low = level_offset(low + 1);
  uint64_t *lv = (uint64_t *)calloc((size_t)n_low, sizeof *lv);
  int status = kd && buf && lv ? WT_OK : WT_ERR_NOMEM;
  if (status == WT_OK) {
    keys_of(ra_d, dec_d, n_d, 1, top, kd, threads);
    status = low_levels(kd, n_d, top, low, lv, threads);
  }
  double *id = buf, *d = buf + occ_cap, *r = buf + 2 * occ_cap,
         *tmp = buf + 3 * occ_cap;
  for (int j = 0; status == WT_OK && j <= top; j++) {
    const int64_t size = (int64_t)1 << (2 * j + 1);
    uint64_t *h = NULL;
    const uint64_t *hr = NULL;
    if (j <= low) {
      h = lv + level_offset(j);
      hr = rr->low + level_offset(j);
    } else {
      h = (uint64_t *)calloc(2 * (size_t)size, sizeof *h);
      if (!h) {
        status = WT_ERR_NOMEM;
        break;
      }
      status = level_counts(kd, n_d, top, j, h, size, threads);
      if (status == WT_OK)
        status = level_counts(kr, n_r, top, j, h + size, size, threads);
      hr = h + size;
    }
    int64_t n_occ = 0, m = 0;
    double e_med = NAN;
    if (status == WT_OK)
      level_scan(h, hr, size, (double)n_d, (double)n_r, id, d, r, tmp,
                 &n_occ, &m, &e_med);
    if (j > low) free(h);
    if (status != WT_OK) break;
    if (m >= min_well && e_med >= min_expected) {
      /* kept: copy out (a later level may overwrite the buffers) */
      wt_cells_free(out);
      out->id = (double *)malloc((size_t)(n_occ ? n_occ : 1) * sizeof(double));
      out->d = (double *)malloc((size_t)(n_occ ? n_occ : 1) * sizeof(double));
      out->r = (double *)malloc((size_t)(n_occ ? n_occ : 1) * sizeof(double));
      if (!out->id || !out->d || !out->r) {
        status = WT_ERR_NOMEM;
        break;
      }
      memcpy(out->id, id, (size_t)n_occ * sizeof(double));
      memcpy(out->d, d, (size_t)n_occ * sizeof(double));
      memcpy(out->r, r, (size_t)n_occ * sizeof(double));
      out->n_cells = n_occ;
      out->level = j;
    }
    /* NaN (no well-covered cell) stops too */
    if (m >= stop_well || !(e_med >= min_expected)) break;
  }
  free(kd);
  free(buf);
  free(lv);
  if (status != WT_OK) {
    wt_cells_free(out);
    out->level = -1;
  }
  return status;
}

int wt_footprint_cells(const double *ra_d, const double *dec_d, int64_t n_d,
                       const double *ra_r, const double *dec_r,
                       int64_t n_r_all, int64_t thin, int top, int min_well,
                       double min_expected, int stop_well, int threads,
                       wt_cells *out)
{
  memset(out, 0, sizeof *out);
  out->level = -1;
  if (n_d < 1) return WT_ERR_ARG;
  wt_cells_randoms rr;
  int status = wt_cells_randoms_make(ra_r, dec_r, n_r_all, thin, top,
                                     threads, &rr);
  if (status != WT_OK) return status;
  status = wt_footprint_cells_of(&rr, ra_d, dec_d, n_d, min_well,
                                 min_expected, stop_well, threads, out);
  wt_cells_randoms_free(&rr);
  return status;
}
