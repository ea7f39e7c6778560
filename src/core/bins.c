/* Unit vectors, edges as squared chords, and the slot lookup table. */
#include <math.h>
#include <string.h>
#include "wt.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define WT_TABLE_CAPACITY 8192

static const double wt_rad = M_PI / 180.0;

int wt_bins_table_capacity(void) { return WT_TABLE_CAPACITY; }

double wt_edge_c2(double theta_deg)
{
  if (theta_deg >= 180.0) return INFINITY;
  double s = sin(theta_deg * wt_rad / 2.0);
  return 4.0 * s * s;
}

/* n_threads: the caller's choice for a light pass (wt_threads_for) */
void wt_unit_vectors(const double *ra_deg, const double *dec_deg, int64_t n,
                     double *x, double *y, double *z, int n_threads)
{
#ifdef _OPENMP
#pragma omp parallel for num_threads(n_threads) schedule(static)
#else
  (void)n_threads;
#endif
  for (int64_t i = 0; i < n; i++) {
    double ra = ra_deg[i] * wt_rad, dec = dec_deg[i] * wt_rad;
    double cd = cos(dec);
    x[i] = cd * cos(ra);
    y[i] = cd * sin(ra);
    z[i] = sin(dec);
  }
}

/* smallest slot s with d2 < upper[s] */
static int slot_search(const double *upper, int n_slots, double d2)
{
  int lo = 0, hi = n_slots - 1;     /* upper[n_slots - 1] is +inf */
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (d2 < upper[mid]) hi = mid; else lo = mid + 1;
  }
  return lo;
}

int wt_slot_of(const wt_bins *bins, double d2)
{
  return slot_search(bins->upper, bins->n_bins + 2, d2);
}

static double from_bits(uint64_t u)
{
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

static uint64_t to_bits(double d)
{
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

/* Table over the top table_size keys below 4.0 (the largest squared chord):
 * entry k is the slot of the smallest d2 whose key is k; table_steps is the
 * most edges any cell holds, i.e. the compare-and-step rounds a lookup needs.
 * Keys are monotone in d2 because d2 >= 0. For each precision m (mantissa
 * bits kept) the worst cell is measured, and the best m is kept. */
static int table_build(const double *upper, int m,
                       uint16_t *table, int *shift, int64_t *base)
{
  int sh = 52 - m;
  int64_t ktop = (int64_t)(to_bits(4.0) >> sh) + 1;  /* 4 * (1 + 2^-m) */
  int64_t b = ktop - WT_TABLE_CAPACITY + 1;
  if (b < 0) b = 0;
  int size = (int)(ktop - b + 1), worst = 0;
  /* cells and slots both increase with d2: one merge-like walk finds the
   * slot of each cell's smallest and largest d2 */
  int s_lo = 0, s_hi = 0;
  for (int k = 0; k < size; k++) {
    double lo = k == 0 ? 0.0 : from_bits((uint64_t)(b + k) << sh);
    double hi = from_bits(((uint64_t)(b + k + 1) << sh) - 1);
    while (lo >= upper[s_lo]) s_lo++;      /* the last upper is +inf */
    if (s_hi < s_lo) s_hi = s_lo;
    while (hi >= upper[s_hi]) s_hi++;
    if (table) table[k] = (uint16_t)s_lo;
    if (s_hi - s_lo > worst) worst = s_hi - s_lo;
  }
  *shift = sh;
  *base = b;
  return worst;
}

int wt_bins_init(wt_bins *bins, const double *edges_deg, int n_edges,
                 double *upper, uint16_t *table)
{
  if (n_edges < 2) return WT_ERR_ARG;
  int n_bins = n_edges - 1, n_slots = n_edges + 1;
  for (int s = 0; s < n_edges; s++) upper[s] = wt_edge_c2(edges_deg[s]);
  upper[n_edges] = INFINITY;
  bins->n_bins = n_bins;
  bins->upper = upper;
  bins->table = NULL;
  bins->table_steps = 0;
  if (n_slots > 65535 || table == NULL) return WT_OK;
  int best_m = 1, best_steps = n_slots, shift;
  int64_t base;
  for (int m = 12; m >= 1; m--) {
    int steps = table_build(upper, m, NULL, &shift, &base);
    if (steps < best_steps) { best_steps = steps; best_m = m; }
  }
  table_build(upper, best_m, table, &shift, &base);
  int64_t ktop = (int64_t)(to_bits(4.0) >> shift) + 1;
  bins->table = table;
  bins->table_shift = shift;
  bins->table_base = base;
  bins->table_size = (int)(ktop - base + 1);
  bins->table_steps = best_steps;
  return WT_OK;
}
