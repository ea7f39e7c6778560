/* Dispatch: the one place that picks the engine and applies conventions
 * shared by all engines (tasks, self pairs, fault injection for tests).
 * A count runs between two prepared catalogs (catalog.c); when the grid
 * pays, their kept grid stages are walked here and the engine gets the
 * job derived from them: the catalogs' sorted points and the walk's
 * tasks. Engines never see a catalog (ARCHITECTURE.md says why). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include "wt.h"
#include "grid.h"

static int run_engine(wt_job *job)
{
  return job->backend == WT_BACKEND_CUDA ? wt_count_cuda(job)
                                         : wt_count_cpu(job);
}

/* When the grid pays (WT_GRID_AUTO), and its shape. Pruning pays when the
 * last edge leaves out most pairs, and when there are enough pairs that
 * planning is cheap beside counting; the GPU counts so much faster than
 * the CPU that it needs far more pairs before planning on the host pays.
 * The measurements behind these numbers are in bench/kernel-notes.md
 * ("Grid thresholds"). */
#define WT_GRID_AUTO_MAX_DEG 60.0    /* largest last edge that prunes */
#define WT_GRID_AUTO_MIN_PAIRS_CPU 1e8
#define WT_GRID_AUTO_MIN_PAIRS_GPU 1e11
/* bulk counting on the GPU (auto): measured to lose at 5e13 pairs and to
 * win at 5e15; the threshold lies between */
#define WT_GRID_BULK_MIN_PAIRS_GPU 5e14
/* the cells: a fraction of the last edge, with a floor in degrees (the
 * shape measured in bench/kernel-notes.md, "Grid thresholds") */
#define WT_GRID_CELLS_PER_EDGE 4.0
#define WT_GRID_MIN_CELL_DEG 0.02
/* Node pairs that may be pruned are split down to this many pairs. The
 * GPU engine pays a host-side cost per task, so its tasks stay large; the
 * CPU engine hands tasks out in small work items anyway. */
#define WT_GRID_MIN_SPLIT_CPU ((double)(1 << 20))
#define WT_GRID_MIN_SPLIT_GPU ((double)(1 << 27))

/* The largest angle and the cell size of the grid, or 0 when the job is
 * better counted without one. */
static double grid_cell(const wt_job *job, double pairs, double *theta_max)
{
  const wt_bins *b = job->bins;
  double c2 = b->upper[b->n_bins];
  if (job->grid == WT_GRID_NEVER || !(c2 < 4.0)) return 0.0;
  *theta_max = 2.0 * asin(sqrt(c2) / 2.0) * (180.0 / M_PI);
  const double min_pairs = job->backend == WT_BACKEND_CUDA
    ? WT_GRID_AUTO_MIN_PAIRS_GPU : WT_GRID_AUTO_MIN_PAIRS_CPU;
  if (job->grid == WT_GRID_AUTO &&
      (*theta_max > WT_GRID_AUTO_MAX_DEG || pairs < min_pairs)) return 0.0;
  /* WT_GRID_ALWAYS: with bulk counting; WT_GRID_PRUNE: pruning only */
  double h = *theta_max / WT_GRID_CELLS_PER_EDGE;
  return h < WT_GRID_MIN_CELL_DEG ? WT_GRID_MIN_CELL_DEG : h;
}

/* the catalog ranges of every non-empty task range (the grid's trees are
 * per range), b's being a's in an auto job */
static int tasks_in_ranges(const wt_job *job, const wt_catalog *ca,
                           const wt_catalog *cb)
{
  for (int64_t k = 0; k < job->n_tasks; k++) {
    const wt_task *t = &job->tasks[k];
    if (t->a0 == t->a1 || t->b0 == t->b1) continue;
    if (!wt_catalog_has_range(ca, t->a0, t->a1) ||
        !wt_catalog_has_range(cb, t->b0, t->b1))
      return 0;
  }
  return 1;
}

/* The job's tasks, or `whole` (one task over all pairs into histogram 0)
 * when it has none, checked; *pairs: their pairs. WT_ERR_ARG when they do
 * not fit the job. The caller calls tasks_done() in any case. */
static int job_tasks(wt_job *job, wt_task *whole, double *pairs)
{
  *pairs = 0.0;
  if (!job->tasks) {
    whole->a0 = 0;
    whole->a1 = job->a.n;
    whole->b0 = 0;
    whole->b1 = job->is_auto ? job->a.n : job->b.n;
    whole->out = 0;
    whole->slo = whole->shi = 0;
    job->tasks = whole;
    job->n_tasks = 1;
    job->n_out = 1;
  }
  if (job->n_out < 1 || job->n_tasks < 0 || !wt_tasks_valid(job))
    return WT_ERR_ARG;
  for (int64_t k = 0; k < job->n_tasks; k++)
    *pairs += wt_task_pairs(job, &job->tasks[k]);
  return WT_OK;
}

/* the job without `whole` again, as the caller gave it */
static void tasks_done(wt_job *job, const wt_task *whole)
{
  if (job->tasks == whole) {
    job->tasks = NULL;
    job->n_tasks = 0;
  }
}

/* the catalogs' grid stages, no longer read by this count */
static void grid_done(wt_catalog *ca, wt_catalog *cb)
{
  wt_catalog_grid_done(ca);
  if (cb != ca) wt_catalog_grid_done(cb);
}

/* The grid's plan for job between ca and cb with cells of h degrees: the
 * catalogs' stages (built unless cached; the caller calls grid_done()
 * once it no longer reads them, unless this fails), the walk into gr, and
 * the engine's job in sub (the catalogs' sorted points and the walk's
 * tasks).
 * pairs: the job's pairs (whether bulk counting pays). Sets job->plan_s;
 * build_s, walk_s (may be NULL): its two stages. */
static int plan_grid(wt_job *job, double pairs, double h, double theta_max,
                     wt_catalog *ca, wt_catalog *cb, wt_grid *gr, wt_job *sub,
                     double *build_s, double *walk_s)
{
  /* Bulk counting inside bins visits fewer pairs but makes many small
   * tasks: it pays on the CPU at survey sizes, and on the GPU, whose host
   * plans every task, only from WT_GRID_BULK_MIN_PAIRS_GPU pairs
   * (bench/kernel-notes.md, "Grid thresholds"). Sums of angles (thsum)
   * need every pair in a bin visited: no bulk counting then. */
  const int bulk = !job->thsum && (job->grid == WT_GRID_ALWAYS ||
    (job->grid == WT_GRID_AUTO &&
     (job->backend == WT_BACKEND_CPU ||
      pairs >= WT_GRID_BULK_MIN_PAIRS_GPU)));
  const double min_split = job->backend == WT_BACKEND_CUDA
    ? WT_GRID_MIN_SPLIT_GPU : WT_GRID_MIN_SPLIT_CPU;
  const double t0 = wt_seconds();
  const wt_grid_stage *sa = NULL, *sb = NULL;
  memset(gr, 0, sizeof *gr);
  int status = wt_catalog_grid(ca, h, job->n_threads, &sa);
  if (status == WT_OK && cb == ca) {
    sb = sa;
  } else if (status == WT_OK &&
             (status = wt_catalog_grid(cb, h, job->n_threads, &sb)) != WT_OK) {
    wt_catalog_grid_done(ca);
  }
  if (status == WT_ERR_ARG)
    snprintf(job->message, sizeof job->message,
             "a catalog's grid of another cell size is in use by a count "
             "running at the same time");
  if (status != WT_OK) return status;
  const double t1 = wt_seconds();
  status = wt_grid_walk(job, sa, sb, theta_max, bulk, min_split, gr);
  const double t2 = wt_seconds();
  job->plan_s = t2 - t0;
  if (build_s) *build_s = t1 - t0;
  if (walk_s) *walk_s = t2 - t1;
  if (status != WT_OK) {
    grid_done(ca, cb);
    return status;
  }
  *sub = *job;
  sub->a = sa->sorted;
  if (!job->is_auto) sub->b = sb->sorted;
  sub->tasks = gr->tasks;
  sub->n_tasks = gr->n_tasks;
  return WT_OK;
}

/* Counts through the grid when it pays, directly otherwise. The grid has
 * two stages: each catalog's (points sorted by cell, trees), built once
 * and kept in the catalog, and this pair's walk over the two, which makes
 * the engine's tasks and the pairs counted in bulk. ca, cb: the catalogs
 * of job->a and job->b (cb is ca in an auto job), or NULL: no grid. */
static int count_pruned(wt_job *job, double pairs, wt_catalog *ca,
                        wt_catalog *cb)
{
  double theta_max = 0.0, h = grid_cell(job, pairs, &theta_max);
  /* a task over ranges that are not its catalog's: no trees to walk */
  if (h == 0.0 || !ca || !cb || !tasks_in_ranges(job, ca, cb))
    return run_engine(job);
  wt_grid gr;
  wt_job sub;
  int status = plan_grid(job, pairs, h, theta_max, ca, cb, &gr, &sub, NULL, NULL);
  if (status != WT_OK) {
    wt_grid_free(&gr);
    return status;
  }
  status = gr.n_tasks > 0 ? run_engine(&sub) : WT_OK;
  if (status == WT_OK) {
    const int n_slots = job->bins->n_bins + 2;
    const size_t n_all = (size_t)job->n_out * (size_t)n_slots;
    for (size_t s = 0; s < n_all; s++) {
      job->slots[s] += (uint64_t)gr.bulk_n[s];
      if (job->wsum) job->wsum[s] += gr.bulk_w[s];
      job->pairs_skipped += gr.bulk_n[s];
    }
  }
  job->gpu_ms = sub.gpu_ms;
  memcpy(job->message, sub.message, sizeof job->message);
  wt_grid_free(&gr);
  grid_done(ca, cb);
  return status;
}

int wt_plan_catalogs(wt_job *job, wt_catalog *a, wt_catalog *b,
                     double *out)
{
  if (!job || !a || !job->bins || !out) return WT_ERR_ARG;
  for (int k = 0; k < WT_PLAN_TIMES; k++) out[k] = 0.0;
  job->a = a->p;
  job->is_auto = b == NULL;
  if (b) job->b = b->p; else memset(&job->b, 0, sizeof job->b);
  wt_catalog *cb = b ? b : a;
  wt_task whole;
  double pairs;
  int status = job_tasks(job, &whole, &pairs);
  double theta_max = 0.0,
         h = status == WT_OK ? grid_cell(job, pairs, &theta_max) : 0.0;
  wt_job sub = *job;
  wt_grid gr;
  memset(&gr, 0, sizeof gr);
  int gridded = 0;
  if (status == WT_OK && h > 0.0 && tasks_in_ranges(job, a, cb)) {
    status = plan_grid(job, pairs, h, theta_max, a, cb, &gr, &sub, &out[0],
                       &out[1]);
    gridded = status == WT_OK;
  }
  if (status == WT_OK) {
    out[2] = (double)sub.n_tasks;
    for (int64_t k = 0; k < sub.n_tasks; k++)
      out[3] += wt_task_pairs(&sub, &sub.tasks[k]);
    if (job->backend == WT_BACKEND_CUDA)
      status = wt_cuda_host_plan(&sub, &out[4]);
  }
  wt_grid_free(&gr);
  if (gridded) grid_done(a, cb);
  tasks_done(job, &whole);
  return status;
}

/* checks the job, counts (through the grid of ca and cb when it pays),
 * applies self pairs */
static int count_job(wt_job *job, wt_catalog *ca, wt_catalog *cb)
{
  if (!job->bins || !job->slots || job->a.n < 1 ||
      (!job->is_auto && job->b.n < 1) || job->n_out < 0)
    return WT_ERR_ARG;
  if (job->is_auto ? (job->a.w == NULL) != (job->wsum == NULL)
      : ((job->a.w == NULL) != (job->wsum == NULL) ||
         (job->b.w == NULL) != (job->wsum == NULL)))
    return WT_ERR_ARG;
  wt_task whole;
  double pairs;
  if (job_tasks(job, &whole, &pairs) != WT_OK) {
    tasks_done(job, &whole);
    return WT_ERR_ARG;
  }
  const int n_slots = job->bins->n_bins + 2;
  const size_t n_all = (size_t)job->n_out * (size_t)n_slots;
  memset(job->slots, 0, n_all * sizeof *job->slots);
  if (job->wsum) memset(job->wsum, 0, n_all * sizeof *job->wsum);
  if (job->thsum) memset(job->thsum, 0, n_all * sizeof *job->thsum);
  job->gpu_ms = 0.0;
  job->plan_s = 0.0;
  job->message[0] = '\0';
  job->fault = wt_fault_from_env();
  job->pairs_skipped = 0.0;
  int status, isa;
  if (pairs == 0.0) {
    status = WT_OK;                 /* e.g. one point: no unordered pair */
  } else if (job->backend != WT_BACKEND_CUDA &&
             job->backend != WT_BACKEND_CPU) {
    status = WT_ERR_ARG;
  } else if (job->backend == WT_BACKEND_CPU &&
             wt_cpu_isa_chosen(&isa, job->message, sizeof job->message) !=
               WT_OK) {
    /* refused here, not only in the engine: the grid may count every pair
     * in bulk and leave the engine nothing to do, and a bad
     * WTHETA_CPU_ISA must not pass unnoticed then */
    status = WT_ERR_ISA;
  } else {
    status = count_pruned(job, pairs, ca, cb);
  }
  if (status == WT_OK && job->is_auto && job->self_pairs) {
    /* ordered pairs: each unordered pair twice, plus a self pair at d2 = 0
     * for every point of every diagonal task */
    for (size_t s = 0; s < n_all; s++) job->slots[s] *= 2;
    if (job->wsum)
      for (size_t s = 0; s < n_all; s++) job->wsum[s] *= 2.0;
    /* a self pair's angle is 0: it adds nothing to thsum */
    if (job->thsum)
      for (size_t s = 0; s < n_all; s++) job->thsum[s] *= 2.0;
    const int zero = wt_slot_of(job->bins, 0.0);
    for (int64_t k = 0; k < job->n_tasks; k++) {
      const wt_task *t = &job->tasks[k];
      if (t->a0 != t->b0) continue;
      size_t at = (size_t)t->out * (size_t)n_slots + (size_t)zero;
      job->slots[at] += (uint64_t)(t->a1 - t->a0);
      if (job->wsum) {
        double w2 = 0.0;
        for (int64_t i = t->a0; i < t->a1; i++)
          w2 += job->a.w[i] * job->a.w[i];
        job->wsum[at] += w2;
      }
    }
  }
  tasks_done(job, &whole);
  return status;
}

int wt_count_catalogs(wt_job *job, wt_catalog *a, wt_catalog *b)
{
  if (!job || !a) return WT_ERR_ARG;
  job->a = a->p;
  job->is_auto = b == NULL;
  if (b) {
    job->b = b->p;
  } else {
    memset(&job->b, 0, sizeof job->b);
  }
  return count_job(job, a, b ? b : a);
}

/* the distinct non-empty ranges of the tasks' a side (side 0), b side
 * (side 1) or both (side 2), sorted; their number, or -1 on memory */
static int64_t task_ranges(const wt_job *job, int side, int64_t **out)
{
  const int64_t n = job->n_tasks;
  int64_t *r = malloc((size_t)(2 * n > 0 ? 2 * n : 1) * 2 * sizeof *r);
  if (!r) return -1;
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    const wt_task *t = &job->tasks[i];
    if (side != 1 && t->a0 < t->a1) {
      r[2 * k] = t->a0;
      r[2 * k + 1] = t->a1;
      k++;
    }
    if (side != 0 && t->b0 < t->b1) {
      r[2 * k] = t->b0;
      r[2 * k + 1] = t->b1;
      k++;
    }
  }
  qsort(r, (size_t)k, 2 * sizeof *r, wt_range_cmp);
  int64_t m = 0;
  for (int64_t i = 0; i < k; i++)
    if (m == 0 || r[2 * i] != r[2 * m - 2] || r[2 * i + 1] != r[2 * m - 1]) {
      r[2 * m] = r[2 * i];
      r[2 * m + 1] = r[2 * i + 1];
      m++;
    }
  *out = r;
  return m;
}

/* a temporary catalog of p grouped by the ranges of the tasks (all points
 * when there are no tasks); 0 when the ranges overlap or are out of
 * bounds (no grid then), 1, or -1 on memory */
static int temp_catalog(const wt_job *job, const wt_points *p, int side,
                        wt_catalog *c)
{
  int64_t *r = NULL, k = 0;
  if (job->tasks) {
    k = task_ranges(job, side, &r);
    if (k < 0) return -1;
  }
  int status = wt_catalog_init(c, p, r, k);
  free(r);
  return status == WT_OK ? 1 : status == WT_ERR_NOMEM ? -1 : 0;
}

int wt_count(wt_job *job)
{
  if (!job) return WT_ERR_ARG;
  wt_catalog ca, cb;
  memset(&ca, 0, sizeof ca);
  memset(&cb, 0, sizeof cb);
  int ha = temp_catalog(job, &job->a, job->is_auto ? 2 : 0, &ca), hb = 0;
  if (ha >= 0 && !job->is_auto) hb = temp_catalog(job, &job->b, 1, &cb);
  int status;
  if (ha < 0 || hb < 0) {
    status = WT_ERR_NOMEM;
  } else if (job->is_auto) {
    status = count_job(job, ha ? &ca : NULL, ha ? &ca : NULL);
  } else {
    status = count_job(job, ha && hb ? &ca : NULL, ha && hb ? &cb : NULL);
  }
  wt_catalog_clear(&ca);
  wt_catalog_clear(&cb);
  return status;
}
