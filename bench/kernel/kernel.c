/* Kernel benchmark without R: the counting engines driven through the C core
 * (wt_count), for work on the CUDA kernels on a GPU machine that has no R.
 * bench/kernel/kernel.sh builds it against one or more builds of the CUDA
 * engine (src/cuda/entry.cu).
 *
 *   kernel DATA_DIR REPS [CHECK_N]
 *
 * Cases: the classic workload (the two reference catalogs, DD + RR + DR,
 * 360 bins of 0.25 degree from 0 to 90) and the same pairs in 20 log bins
 * from 0.01 to 10 degrees, 2000 log bins from 0.001 to 90 and 50 log bins
 * from 0.001 to 1, the last two also pruned by the grid (WT_GRID_PRUNE,
 * as on the GPU by default): summed GPU kernel time (CUDA events, job.gpu_ms) of
 * REPS warm runs, minimum and median; the histograms of the first run
 * against the CPU engine's, slot by slot. Then, on the first CHECK_N
 * points of each catalog (default 30000), 4000 linear bins and 2000 log
 * bins (many pairs near an edge: the kernels' exact path under load)
 * against the CPU engine. Prints one line per case; exit status 1 if any
 * histogram differs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../src/wt.h"
#include "../../src/core/threads.h"

typedef struct {
  double *x, *y, *z;
  int64_t n;
} cat_t;

static void die(const char *what)
{
  fprintf(stderr, "kernel: %s\n", what);
  exit(2);
}

/* two columns in arcminutes; a first line holding only a count is skipped */
static cat_t read_cat(const char *path)
{
  FILE *f = fopen(path, "r");
  if (!f) die(path);
  size_t cap = 1 << 17, n = 0;
  double *ra = malloc(cap * sizeof *ra), *dec = malloc(cap * sizeof *dec);
  char line[256];
  while (fgets(line, sizeof line, f)) {
    double a, b;
    if (sscanf(line, "%lf %lf", &a, &b) != 2) continue;
    if (n == cap) {
      cap *= 2;
      ra = realloc(ra, cap * sizeof *ra);
      dec = realloc(dec, cap * sizeof *dec);
    }
    ra[n] = a / 60.0;
    dec[n] = b / 60.0;
    n++;
  }
  fclose(f);
  cat_t c = {malloc(n * 8), malloc(n * 8), malloc(n * 8), (int64_t)n};
  wt_unit_vectors(ra, dec, (int64_t)n, c.x, c.y, c.z, 8);
  free(ra);
  free(dec);
  return c;
}

typedef struct {
  wt_bins bins;
  double *upper;
  uint16_t *table;
} bins_t;

static bins_t make_bins(int n_bins, double lo, double hi, int logb)
{
  bins_t b;
  double *e = malloc((n_bins + 1) * sizeof *e);
  for (int k = 0; k <= n_bins; k++)
    e[k] = logb ? lo * pow(hi / lo, (double)k / n_bins)
                : lo + (hi - lo) * k / n_bins;
  b.upper = malloc((n_bins + 2) * sizeof *b.upper);
  b.table = malloc(wt_bins_table_capacity() * sizeof *b.table);
  if (wt_bins_init(&b.bins, e, n_bins + 1, b.upper, b.table) != WT_OK)
    die("bins");
  free(e);
  return b;
}

static int use_grid = WT_GRID_NEVER;   /* wt_job.grid of the counts */

/* one count; returns gpu_ms (CUDA) and fills slots */
static double count(const cat_t *a, const cat_t *b, const bins_t *bn,
                    int backend, uint64_t *slots)
{
  static const int dev0[1] = {0};
  wt_job job;
  memset(&job, 0, sizeof job);
  job.a = (wt_points){.x = a->x, .y = a->y, .z = a->z, .n = a->n};
  if (b) job.b = (wt_points){.x = b->x, .y = b->y, .z = b->z, .n = b->n};
  job.is_auto = b == NULL;
  job.bins = &bn->bins;
  job.backend = backend;
  job.n_threads = wt_default_threads(0);   /* the CPU check: every core */
  job.devices = dev0;
  job.n_devices = 1;
  job.n_out = 1;
  job.slots = slots;
  job.grid = use_grid;
  int st = wt_count(&job);
  if (st != WT_OK) {
    fprintf(stderr, "kernel: status %d: %s\n", st, job.message);
    exit(2);
  }
  return job.gpu_ms;
}

static int cmp_double(const void *p, const void *q)
{
  double a = *(const double *)p, b = *(const double *)q;
  return a < b ? -1 : a > b;
}

/* DD + RR + DR on the GPU REPS times (after one warm-up) and once on the
 * CPU; returns 1 when a histogram differs */
static int run_case(const char *name, const cat_t *D, const cat_t *R,
                    const bins_t *bn, int reps, int timed)
{
  const int ns = bn->bins.n_bins + 2;
  uint64_t *g = calloc(3 * (size_t)ns, 8), *c = calloc(3 * (size_t)ns, 8);
  double *ms = malloc((reps + 1) * sizeof *ms);
  for (int r = 0; r <= reps; r++) {
    ms[r] = count(D, NULL, bn, WT_BACKEND_CUDA, g) +
            count(R, NULL, bn, WT_BACKEND_CUDA, g + ns) +
            count(D, R, bn, WT_BACKEND_CUDA, g + 2 * ns);
  }
  count(D, NULL, bn, WT_BACKEND_CPU, c);
  count(R, NULL, bn, WT_BACKEND_CPU, c + ns);
  count(D, R, bn, WT_BACKEND_CPU, c + 2 * ns);
  int bad = 0;
  for (int s = 0; s < 3 * ns; s++) bad += g[s] != c[s];
  qsort(ms + 1, reps, sizeof *ms, cmp_double);
  if (timed)
    printf("%-22s %8lld %8lld %5d  kernel ms min %7.3f median %7.3f  "
           "slots differing from CPU: %d\n",
           name, (long long)D->n, (long long)R->n, bn->bins.n_bins, ms[1],
           ms[1 + (reps - 1) / 2], bad);
  else
    printf("%-22s %8lld %8lld %5d  slots differing from CPU: %d\n", name,
           (long long)D->n, (long long)R->n, bn->bins.n_bins, bad);
  free(g);
  free(c);
  free(ms);
  return bad != 0;
}

int main(int argc, char **argv)
{
  if (argc < 3) die("usage: kernel DATA_DIR REPS [CHECK_N]");
  char p[4096];
  snprintf(p, sizeof p, "%s/data_100k_arcmin.txt", argv[1]);
  cat_t D = read_cat(p);
  snprintf(p, sizeof p, "%s/flat_100k_arcmin.txt", argv[1]);
  cat_t R = read_cat(p);
  int reps = atoi(argv[2]);
  int64_t check_n = argc > 3 ? atoll(argv[3]) : 30000;
  if (reps < 1) reps = 1;
  int bad = 0;
  printf("%-22s %8s %8s %5s\n", "case", "n_data", "n_rand", "bins");
  bins_t lin = make_bins(360, 0.0, 90.0, 0);
  bins_t lg = make_bins(20, 0.01, 10.0, 1);
  bad |= run_case("classic 360 bins", &D, &R, &lin, reps, 1);
  bad |= run_case("classic 20 log bins", &D, &R, &lg, reps, 1);
  bins_t lg2k = make_bins(2000, 0.001, 90.0, 1);
  bad |= run_case("classic 2000 log bins", &D, &R, &lg2k, reps, 1);
  bins_t lg50 = make_bins(50, 0.001, 1.0, 1);
  bad |= run_case("classic 50 log to 1 deg", &D, &R, &lg50, reps, 1);
  use_grid = WT_GRID_PRUNE;   /* pruning by the last edge */
  bad |= run_case("grid, 20 log bins", &D, &R, &lg, reps, 1);
  bad |= run_case("grid, 50 log to 1 deg", &D, &R, &lg50, reps, 1);
  use_grid = WT_GRID_NEVER;
  cat_t d = D, r = R;
  if (check_n < d.n) d.n = check_n;
  if (check_n < r.n) r.n = check_n;
  bins_t dense = make_bins(4000, 0.0, 90.0, 0);
  bins_t dlog = make_bins(2000, 0.001, 90.0, 1);
  bad |= run_case("subset 4000 bins", &d, &r, &dense, 1, 0);
  bad |= run_case("subset 2000 log bins", &d, &r, &dlog, 1, 0);
  printf("%s\n", bad ? "HISTOGRAMS DIFFER" : "all histograms identical to the CPU engine");
  return bad;
}
