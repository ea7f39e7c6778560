/* Prepared catalogs: points, their ranges (patches) and the cached grid
 * stage (grid_build.c). A catalog is prepared once and enters several
 * counts; the grid stage it keeps depends only on its points, its ranges
 * and the cell size, so every count with that cell size reuses it. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"
#include "floor/team.h"

/* Guards every catalog's grid stage, its users and grid_builds: counts on
 * the GPU may run at once from several threads (r/pending.c,
 * wt_r_count_start). A stage is built under the lock: a second count that
 * needs it waits for it instead of building its own. */
static pthread_mutex_t grid_lock = PTHREAD_MUTEX_INITIALIZER;

/* grid stages built by this process */
static double grid_builds = 0.0;

double wt_grid_builds(void)
{
  pthread_mutex_lock(&grid_lock);
  double n = grid_builds;
  pthread_mutex_unlock(&grid_lock);
  return n;
}

int wt_range_cmp(const void *x, const void *y)
{
  const int64_t *a = x, *b = y;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] != b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

int wt_catalog_init(wt_catalog *c, const wt_points *p, const int64_t *ranges,
                    int64_t n_ranges)
{
  memset(c, 0, sizeof *c);
  if (!p || p->n < 1 || !p->x || !p->y || !p->z || n_ranges < 0 ||
      (ranges == NULL && n_ranges > 0))
    return WT_ERR_ARG;
  const int64_t k = ranges ? n_ranges : 1;
  int64_t *r = malloc((size_t)(k > 0 ? k : 1) * 2 * sizeof *r);
  if (!r) return WT_ERR_NOMEM;
  if (ranges) {
    if (k > 0) memcpy(r, ranges, (size_t)k * 2 * sizeof *r);
  } else {
    r[0] = 0;
    r[1] = p->n;
  }
  qsort(r, (size_t)k, 2 * sizeof *r, wt_range_cmp);
  int64_t end = 0;
  for (int64_t i = 0; i < k; i++) {
    if (r[2 * i] < end || r[2 * i] > r[2 * i + 1] || r[2 * i + 1] > p->n) {
      free(r);
      return WT_ERR_ARG;
    }
    end = r[2 * i + 1];
  }
  c->p = *p;                /* its weights, PIP words and labels too */
  c->ranges = r;
  c->n_ranges = k;
  return WT_OK;
}

int wt_catalog_has_range(const wt_catalog *c, int64_t r0, int64_t r1)
{
  int64_t lo = 0, hi = c->n_ranges;  /* first range not before (r0, r1) */
  const int64_t key[2] = {r0, r1};
  while (lo < hi) {
    int64_t m = lo + (hi - lo) / 2;
    if (wt_range_cmp(&c->ranges[2 * m], key) < 0) lo = m + 1; else hi = m;
  }
  return lo < c->n_ranges && c->ranges[2 * lo] == r0 &&
         c->ranges[2 * lo + 1] == r1;
}

void wt_catalog_drop_grid(wt_catalog *c)
{
  pthread_mutex_lock(&grid_lock);
  if (c->grid_users == 0) {
    wt_grid_stage_free(c->grid);
    c->grid = NULL;
  }
  pthread_mutex_unlock(&grid_lock);
}

void wt_catalog_clear(wt_catalog *c)
{
  wt_catalog_drop_grid(c);
  free(c->ranges);
  memset(c, 0, sizeof *c);
}

int wt_catalog_grid(wt_catalog *c, double cell_deg, int n_threads,
                    const wt_grid_stage **out)
{
  int status = WT_OK;
  pthread_mutex_lock(&grid_lock);
  if (!c->grid || c->grid->cell_deg != cell_deg) {
    if (c->grid_users > 0) {
      status = WT_ERR_ARG;
    } else {
      /* another cell size: that stage will not serve again */
      wt_grid_stage_free(c->grid);
      c->grid = NULL;
      wt_grid_stage *s = NULL;
      status = wt_grid_stage_build(c, cell_deg, n_threads, &s);
      if (status == WT_OK) {
        c->grid = s;
        grid_builds += 1.0;
      }
    }
  }
  if (status == WT_OK) {
    c->grid_users++;
    *out = c->grid;
  }
  pthread_mutex_unlock(&grid_lock);
  return status;
}

double wt_catalog_grid_cell(wt_catalog *c)
{
  pthread_mutex_lock(&grid_lock);
  const double cell = c->grid ? c->grid->cell_deg : 0.0;
  pthread_mutex_unlock(&grid_lock);
  return cell;
}

void wt_catalog_grid_done(wt_catalog *c)
{
  pthread_mutex_lock(&grid_lock);
  if (c->grid_users > 0) c->grid_users--;
  pthread_mutex_unlock(&grid_lock);
}

/* the fingerprint's sums: each thread's own, added after */
typedef struct {
  const double *x, *y, *z;
  int64_t (*sums)[5];                /* a row per thread */
} fingerprint_sums;

static void fingerprint_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const fingerprint_sums *F = (const fingerprint_sums *)arg;
  const double *x = F->x, *y = F->y, *z = F->z;
  int64_t s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0;
  for (int64_t i = lo; i < hi; i++) {
    /* each q below 2^18, each hash term below 2^38: exact in int64 */
    const int64_t q1 = (int64_t)nearbyint(x[i] * 65536.0) + 65536;
    const int64_t q2 = (int64_t)nearbyint(y[i] * 65536.0) + 65536;
    const int64_t q3 = (int64_t)nearbyint(z[i] * 65536.0) + 65536;
    s1 += q1;
    s2 += q2;
    s3 += q3;
    s4 += (q1 * 1048573 + q2 * 1048571 + q3 * 1048559) % 1048549;
    s5 += (q1 * 999983 + q2 * 1000003 + q3 * 999979) % 1048343;
  }
  int64_t *mine = F->sums[tid];
  mine[0] += s1;
  mine[1] += s2;
  mine[2] += s3;
  mine[3] += s4;
  mine[4] += s5;
}

void wt_catalog_fingerprint(const double *x, const double *y, const double *z,
                            int64_t n, int T, double out[5])
{
  /* a row per requested thread (the team is no larger); on one row when
   * the rows cannot be had */
  int64_t one[1][5] = {{0, 0, 0, 0, 0}};
  int64_t (*sums)[5] = T > 1 ? calloc((size_t)T, sizeof *sums) : NULL;
  const int nt = sums ? T : 1;
  fingerprint_sums F = {x, y, z, sums ? sums : one};
  wt_team_for(nt, n, 0, fingerprint_part, &F);
  int64_t s[5] = {0, 0, 0, 0, 0};
  for (int t = 0; t < nt; t++)
    for (int k = 0; k < 5; k++) s[k] += F.sums[t][k];
  free(sums);
  for (int k = 0; k < 5; k++) out[k] = (double)s[k];
}
