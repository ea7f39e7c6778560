/* Unit vectors, edges as squared chords, and the slot lookup table. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "team.h"

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

/* points a light-pass team hands out at a time */
#define WT_UNIT_BLOCK 8192

/* the blocks of all catalogs of one wt_unit_vectors_many() */
typedef struct {
  const int64_t *start, *n;
  const double *const *ra_deg, *const *dec_deg;
  double *const *x, *const *y, *const *z;
} unit_blocks;

static void unit_vector_blocks(void *v, int64_t j0, int64_t j1, int tid)
{
  const unit_blocks *U = (const unit_blocks *)v;
  (void)tid;
  int c = 0;                         /* the catalog of block j */
  for (int64_t j = j0; j < j1; j++) {
    while (U->start[c + 1] <= j) c++;
    const int64_t nc = U->n[c], i0 = (j - U->start[c]) * WT_UNIT_BLOCK;
    const int64_t i1 = i0 + WT_UNIT_BLOCK < nc ? i0 + WT_UNIT_BLOCK : nc;
    const double *ra = U->ra_deg[c], *dec = U->dec_deg[c];
    double *xc = U->x[c], *yc = U->y[c], *zc = U->z[c];
    for (int64_t i = i0; i < i1; i++) {
      double r = ra[i] * wt_rad, d = dec[i] * wt_rad;
      double cd = cos(d);
      xc[i] = cd * cos(r);
      yc[i] = cd * sin(r);
      zc[i] = sin(d);
    }
  }
}

/* n_threads: the caller's choice for a light pass (wt_threads_for) over
 * all k catalogs together: one team shares out blocks of every catalog,
 * so that small catalogs need not each run on a small team. x[c], y[c],
 * z[c]: n[c] values each. WT_OK, or WT_ERR_NOMEM (only for more than 64
 * catalogs). */
int wt_unit_vectors_many(int k, const double *const *ra_deg,
                         const double *const *dec_deg, const int64_t *n,
                         double *const *x, double *const *y,
                         double *const *z, int n_threads)
{
  /* start[c]: the first block of catalog c; start[k]: all blocks */
  int64_t on_stack[65], *start = on_stack;
  if (k > 64 && !(start = malloc(((size_t)k + 1) * sizeof *start)))
    return WT_ERR_NOMEM;
  start[0] = 0;
  for (int c = 0; c < k; c++)
    start[c + 1] = start[c] + (n[c] + WT_UNIT_BLOCK - 1) / WT_UNIT_BLOCK;
  unit_blocks U = {start, n, ra_deg, dec_deg, x, y, z};
  wt_team_for(n_threads, start[k], 0, unit_vector_blocks, &U);
  if (start != on_stack) free(start);
  return WT_OK;
}

/* one catalog */
void wt_unit_vectors(const double *ra_deg, const double *dec_deg, int64_t n,
                     double *x, double *y, double *z, int n_threads)
{
  (void)wt_unit_vectors_many(1, &ra_deg, &dec_deg, &n, &x, &y, &z,
                             n_threads);
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

/* The table's precision for the edges of the last call: measuring every
 * precision took most of a small count's set-up (12 passes over the
 * table), and the counts of one call share their edges. Guarded: counts
 * are set up on R's main thread, but the core does not rely on it. */
static pthread_mutex_t best_lock = PTHREAD_MUTEX_INITIALIZER;
static double *best_edges = NULL;
static int best_n = 0, best_m_kept = 0, best_steps_kept = 0;

static int best_cached(const double *edges, int n, int *m, int *steps)
{
  pthread_mutex_lock(&best_lock);
  int hit = best_edges && best_n == n &&
            memcmp(best_edges, edges, (size_t)n * sizeof *edges) == 0;
  if (hit) {
    *m = best_m_kept;
    *steps = best_steps_kept;
  }
  pthread_mutex_unlock(&best_lock);
  return hit;
}

static void best_store(const double *edges, int n, int m, int steps)
{
  pthread_mutex_lock(&best_lock);
  double *e = n > best_n ? realloc(best_edges, (size_t)n * sizeof *e)
                         : best_edges;
  if (e) {
    memcpy(e, edges, (size_t)n * sizeof *e);
    best_edges = e;
    best_n = n;
    best_m_kept = m;
    best_steps_kept = steps;
  }
  pthread_mutex_unlock(&best_lock);
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
  if (!best_cached(edges_deg, n_edges, &best_m, &best_steps)) {
    for (int m = 12; m >= 1; m--) {
      int steps = table_build(upper, m, NULL, &shift, &base);
      if (steps < best_steps) { best_steps = steps; best_m = m; }
    }
    best_store(edges_deg, n_edges, best_m, best_steps);
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

double wt_pip_ang(const wt_pip *pip, double d2)
{
  const int n = pip->n_ang;
  if (n < 2) return n == 1 && d2 == pip->ang_d2[0] ? pip->ang_w[0] : 1.0;
  const double *x = pip->ang_d2, *y = pip->ang_w;
  if (!(d2 >= x[0]) || d2 > x[n - 1]) return 1.0;
  int lo = 0, hi = n - 1;            /* x[lo] <= d2, lo < hi */
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (x[mid] <= d2) lo = mid; else hi = mid;
  }
  const double t = (d2 - x[lo]) / (x[lo + 1] - x[lo]);
  return y[lo] + t * (y[lo + 1] - y[lo]);
}

double wt_pip_factor(const wt_pip *pip, int c, double d2)
{
  double f = pip->n_words > 0 ? pip->by_count[c] : 1.0;
  return pip->n_ang > 0 ? f * wt_pip_ang(pip, d2) : f;
}
