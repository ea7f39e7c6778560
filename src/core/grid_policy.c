/* Grid policy: whether the grid pays for a count (WT_GRID_AUTO), the
 * size of its cells, whether it counts in bulk and how far it splits node
 * pairs; and the plan of one count that follows from them: the catalogs'
 * grid stages (kept in the catalogs, catalog.c; built by grid_build.c),
 * the walk over them (grid_walk.c) and the engine's job derived from it.
 * The dispatcher (count.c) asks here and runs the engine on the result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"

/* When the grid pays (WT_GRID_AUTO), and its shape. Pruning pays when the
 * last edge leaves out most pairs, and when there are enough pairs that
 * planning is cheap beside counting; the GPU counts so much faster than
 * the CPU that it needs far more pairs before planning on the host pays.
 * The measurements behind these numbers are in bench/kernel/kernel-notes.md
 * ("Grid thresholds"). */
#define WT_GRID_AUTO_MAX_DEG 60.0    /* largest last edge that prunes */
#define WT_GRID_AUTO_MIN_PAIRS_CPU 1e8
/* ... and on the CPU for a job of many tasks (patch pairs): counted
 * directly, its tasks are small rectangles (a sample of 3,000 points over
 * 100 patches makes 5,050 of 30 x 30 points), which the vector kernels
 * count poorly, while the grouped walk costs no more than a plain one */
#define WT_GRID_AUTO_MIN_PAIRS_CPU_TASKS 1e6
#define WT_GRID_AUTO_MIN_PAIRS_GPU 1e11
/* bulk counting on the GPU (auto): measured to lose at 5e13 pairs and to
 * win at 5e15; the threshold lies between */
#define WT_GRID_BULK_MIN_PAIRS_GPU 5e14
/* the cells: a fraction of the last edge, with a floor in degrees (the
 * shape measured in bench/kernel/kernel-notes.md, "Grid thresholds") */
#define WT_GRID_CELLS_PER_EDGE 4.0
#define WT_GRID_MIN_CELL_DEG 0.02
/* ... but sparse catalogs take larger cells, up to WT_GRID_MAX_SCALE
 * times as wide, so that the call's catalogs hold about
 * WT_GRID_OCCUPANCY points per non-empty cell (wt_grid_call_scale()):
 * the walk tests every pair of cells within reach, so cells of a few
 * points each cost more to pair than their pairs cost to count
 * (bench/kernel/kernel-notes.md, "Cells of sparse catalogs") */
#define WT_GRID_OCCUPANCY 80.0
#define WT_GRID_MAX_SCALE 2.0
/* Node pairs that may be pruned are split down to this many pairs.
 *
 * The GPU engine pays a host-side cost per task, so its tasks stay
 * larger: 2^25 against 2^27 took the 10^8-point full-sky call from 22.17
 * to 21.04 s on one H100 (kernels 17.20 -> 16.58 s: smaller node pairs
 * prune more and their caps are counted in bulk more often), with the
 * survey workload at 10^6 x 10^7 unchanged (bench/kernel/kernel-notes.md,
 * "The host's share at 10^8 points").
 *
 * The CPU engine hands tasks out in small work items anyway, and smaller
 * node pairs prune more pairs beyond the last edge and give the narrow
 * kernel narrower slot ranges: 2^16 against 2^20 took 10^6 x 10^6 from
 * 58.6 to 54.9 s and 3 x 10^5 from 7.7 to 6.6-6.7 s on one thread
 * (bench/kernel/kernel-notes.md, "Splitting node pairs further"). */
#define WT_GRID_MIN_SPLIT_CPU ((double)(1 << 16))
#define WT_GRID_MIN_SPLIT_GPU ((double)(1 << 25))
/* Node pairs of more than this many pairs are split when nodes a quarter
 * their size would lie inside one bin (bulk counting two levels down).
 * The CPU's 2^12 against 2^14 took 3 x 10^5 from 6.68-6.75 to 6.43-6.45 s
 * and the survey workload's plain call at 10^5 from 2.27 to 2.17 s on one
 * thread (bench/kernel/kernel-notes.md, "Splitting node pairs further");
 * the GPU engine, which pays per task on the host, keeps 2^14. */
#define WT_GRID_MIN_BULK_CPU ((double)(1 << 12))
#define WT_GRID_MIN_BULK_GPU ((double)(1 << 14))

/* Whether a count in grid mode `mode` on `backend` with a last edge of
 * theta_max degrees and `pairs` pairs takes the grid; many_tasks: a job
 * of many tasks (patch pairs) */
static int grid_pays(int mode, int backend, int many_tasks, double theta_max,
                     double pairs)
{
  if (mode == WT_GRID_NEVER || !(theta_max < 180.0)) return 0;
  if (mode != WT_GRID_AUTO) return 1;
  const double min_pairs = backend == WT_BACKEND_CUDA
    ? WT_GRID_AUTO_MIN_PAIRS_GPU
    : many_tasks ? WT_GRID_AUTO_MIN_PAIRS_CPU_TASKS
                 : WT_GRID_AUTO_MIN_PAIRS_CPU;
  return theta_max <= WT_GRID_AUTO_MAX_DEG && pairs >= min_pairs;
}

/* the policy's cells for a last edge of theta_max degrees: a quarter of
 * it, with a floor */
static double quarter_cell(double theta_max)
{
  const double h = theta_max / WT_GRID_CELLS_PER_EDGE;
  return h < WT_GRID_MIN_CELL_DEG ? WT_GRID_MIN_CELL_DEG : h;
}

/* s within [1, WT_GRID_MAX_SCALE] */
static double scale_within(double s)
{
  return s < 1.0 ? 1.0 : s > WT_GRID_MAX_SCALE ? WT_GRID_MAX_SCALE : s;
}

/* The largest angle and the cell size of the grid, or 0 when the job is
 * better counted without one. */
static double grid_cell(const wt_job *job, double pairs, double *theta_max)
{
  const wt_bins *b = job->bins;
  double c2 = b->upper[b->n_bins];
  if (job->grid == WT_GRID_NEVER || !(c2 < 4.0)) return 0.0;
  *theta_max = 2.0 * asin(sqrt(c2) / 2.0) * (180.0 / M_PI);
  if (!grid_pays(job->grid, job->backend, job->n_tasks > 1, *theta_max,
                 pairs))
    return 0.0;
  /* WT_GRID_ALWAYS: with bulk counting; WT_GRID_PRUNE: pruning only */
  const double h = quarter_cell(*theta_max);
  return job->grid_scale > 1.0 ? h * scale_within(job->grid_scale) : h;
}

double wt_grid_call_scale(const wt_points *const *p, int k,
                          double theta_max_deg, int grid_mode, int backend,
                          int n_threads, const double *cached)
{
  /* no count of the call takes the grid (its largest count holds at most
   * the square of all its points): nothing to read */
  double n = 0.0;
  for (int c = 0; c < k; c++) n += (double)p[c]->n;
  if (!(theta_max_deg > 0.0) ||
      !grid_pays(grid_mode, backend, 1, theta_max_deg, n * n))
    return 1.0;
  const double h = quarter_cell(theta_max_deg);
  /* a catalog's cached grid of a widening of these cells: kept */
  for (int c = 0; cached && c < k; c++) {
    const double s0 = cached[c] / h;
    if (s0 >= 1.0 - 1e-12 && s0 <= WT_GRID_MAX_SCALE * (1.0 + 1e-12))
      return scale_within(s0);
  }
  /* the points of all the catalogs over the cells of the one that fills
   * most: at least the mean occupancy of any of them, or of any union of
   * them (a call's samples are counted as one); a sample's cells are at
   * most the catalog's, which errs the same way (smaller cells) */
  double cells = 0.0;
  for (int c = 0; c < k; c++) {
    const int64_t f = wt_grid_cells_found(p[c], h, n_threads);
    if (f < 0) return 1.0;            /* too many cells to tell */
    if ((double)f > cells) cells = (double)f;
  }
  if (!(cells > 0.0)) return 1.0;
  /* cells s times as wide hold about s^2 times the points; s in steps of
   * 2^(1/4) */
  const double s = sqrt(WT_GRID_OCCUPANCY / (n / cells));
  if (!(s > 1.0)) return 1.0;
  return scale_within(pow(2.0, nearbyint(4.0 * log2(s)) / 4.0));
}

/* Bulk counting inside bins visits fewer pairs but makes many small
 * tasks: it pays on the CPU at survey sizes, and on the GPU, whose host
 * plans every task, only from WT_GRID_BULK_MIN_PAIRS_GPU pairs
 * (bench/kernel/kernel-notes.md, "Grid thresholds"). Sums of angles (thsum)
 * need every pair in a bin visited: no bulk counting then (WT_WALK_PRUNE).
 * Nor with PIP pair weights (wt_pip), which do not factorise over a cell
 * pair; nor with labels (wt_job.n_lab), whose node pairs mix label pairs
 * (core/labels.c). With PIP on the CPU, without an angular table (a weight that varies
 * inside a bin), the walk splits as for bulk counting and hands each node
 * pair proved inside one bin to the engine as a task of that slot
 * (WT_WALK_FIXED), whose pairs the engine visits for their popcounts only:
 * no d2, no slot lookup (cpu/driver.c, do_fixed()). Labelled jobs (the CPU
 * only) are walked so too: the engine adds such a task's pairs by the
 * tally of its columns' labels (cpu/labelled.c), unless
 * WTHETA_LABELS_BULK is "0" (benchmarks, tests: pruning only, every pair
 * visited). The GPU engine keeps pruning by the last edge only for PIP.
 * Returns a WT_WALK_* mode. */
static int grid_bulk(const wt_job *job, double pairs)
{
  const int bulk = !job->thsum && (job->grid == WT_GRID_ALWAYS ||
    (job->grid == WT_GRID_AUTO &&
     (job->backend == WT_BACKEND_CPU ||
      pairs >= WT_GRID_BULK_MIN_PAIRS_GPU)));
  if (!bulk) return WT_WALK_PRUNE;
  if (job->n_lab > 0) {
    const char *v = getenv("WTHETA_LABELS_BULK");
    return job->backend == WT_BACKEND_CPU && !(v && strcmp(v, "0") == 0)
      ? WT_WALK_FIXED : WT_WALK_PRUNE;
  }
  if (!job->pip) return WT_WALK_BULK;
  return job->backend == WT_BACKEND_CPU && job->pip->n_ang == 0
    ? WT_WALK_FIXED : WT_WALK_PRUNE;
}

/* how far the walk splits node pairs whose quarters would be counted in
 * bulk */
static double grid_min_bulk(const wt_job *job)
{
  return job->backend == WT_BACKEND_CUDA ? WT_GRID_MIN_BULK_GPU
                                         : WT_GRID_MIN_BULK_CPU;
}

/* how far the walk splits node pairs that may be pruned */
static double grid_min_split(const wt_job *job)
{
  return job->backend == WT_BACKEND_CUDA ? WT_GRID_MIN_SPLIT_GPU
                                         : WT_GRID_MIN_SPLIT_CPU;
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

/* the catalogs' grid stages, no longer read by the count */
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
 * build_s, walk_s (may be NULL): its two stages. With a sink (may be
 * NULL), opened once the stages are built (*opened = 1), the walk's tasks
 * go to it and sub gets none; if the walk fails, the sink is closed
 * (aborting) before the stages are let go, since it reads their points. */
static int plan_grid(wt_job *job, double pairs, double h, double theta_max,
                     wt_catalog *ca, wt_catalog *cb, wt_grid *gr, wt_job *sub,
                     double *build_s, double *walk_s,
                     const wt_task_sink *sink, int *opened)
{
  const int bulk = grid_bulk(job, pairs);
  const double min_split = grid_min_split(job);
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
  /* the engine's job: the sorted points, the walk's tasks */
  *sub = *job;
  sub->a = sa->sorted;
  if (!job->is_auto) sub->b = sb->sorted;
  sub->tasks = NULL;
  sub->n_tasks = 0;
  sub->ordered = 1;
  sub->pairs_skipped = 0.0;          /* the engine's own (GPU bulk) */
  if (sink) {
    status = sink->open(sink->ctx, sub);
    if (status != WT_OK) {
      grid_done(ca, cb);
      return status;
    }
    *opened = 1;
  }
  status = wt_grid_walk(job, sa, sb, theta_max, bulk, min_split,
                        grid_min_bulk(job), gr, sink);
  const double t2 = wt_seconds();
  job->plan_s = t2 - t0;
  if (build_s) *build_s = t1 - t0;
  if (walk_s) *walk_s = t2 - t1;
  if (status != WT_OK) {
    if (*opened) {
      (void)sink->close(sink->ctx, 1);
      *opened = 0;
    }
    grid_done(ca, cb);
    return status;
  }
  sub->tasks = gr->tasks;
  sub->n_tasks = sink ? 0 : gr->n_tasks;
  return WT_OK;
}

int wt_grid_plan_make(wt_job *job, double pairs, wt_catalog *ca,
                      wt_catalog *cb, wt_grid_plan *gp, double *build_s,
                      double *walk_s, const wt_task_sink *sink)
{
  memset(gp, 0, sizeof *gp);
  gp->sub = *job;
  double theta_max = 0.0, h = grid_cell(job, pairs, &theta_max);
  /* a task over ranges that are not its catalog's: no trees to walk */
  if (h == 0.0 || !ca || !cb || !tasks_in_ranges(job, ca, cb)) return WT_OK;
  int status = plan_grid(job, pairs, h, theta_max, ca, cb, &gp->walk,
                         &gp->sub, build_s, walk_s, sink, &gp->opened);
  if (status == WT_OK) {
    gp->gridded = 1;
    gp->ca = ca;
    gp->cb = cb;
  }
  return status;
}

void wt_grid_plan_add_bulk(const wt_grid_plan *gp, wt_job *job)
{
  const wt_grid *gr = &gp->walk;
  const int n_slots = job->bins->n_bins + 2;
  const size_t n_all = (size_t)gr->n_hist * (size_t)n_slots;
  for (size_t s = 0; s < n_all; s++) {
    job->pairs_skipped += gr->bulk_n[s];
    /* labels: the pruned pairs (all beyond the last edge) are counted per
     * task histogram, not per label pair; the dispatcher fills that slot
     * from label totals instead (core/labels.c) */
    if (job->n_lab > 0) continue;
    job->slots[s] += (uint64_t)gr->bulk_n[s];
    /* PIP: the pruned pairs' weights (products of cell sums) are not
     * their pair weights: the weight sums keep the visited pairs only */
    if (job->wsum && !job->pip) job->wsum[s] += gr->bulk_w[s];
  }
}

void wt_grid_plan_free(wt_grid_plan *gp)
{
  wt_grid_free(&gp->walk);
  if (gp->gridded) grid_done(gp->ca, gp->cb);
  gp->gridded = 0;
}
