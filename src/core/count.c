/* Dispatch: the one place that picks the engine and applies conventions
 * shared by all engines (tasks, self pairs, fault injection for tests). */
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

/* counts through the grid when it pays, directly otherwise */
static int count_pruned(wt_job *job, double pairs)
{
  double theta_max = 0.0, h = grid_cell(job, pairs, &theta_max);
  if (h == 0.0) return run_engine(job);
  wt_grid gr;
  /* Bulk counting inside bins visits fewer pairs but makes many small
   * tasks: it pays on the CPU at survey sizes, but the GPU engine pays per
   * task on the host, so there it runs only when asked (WT_GRID_ALWAYS;
   * bench/kernel-notes.md, "Grid thresholds"). */
  const int bulk = job->grid == WT_GRID_ALWAYS ||
    (job->grid == WT_GRID_AUTO && job->backend == WT_BACKEND_CPU);
  const double min_split = job->backend == WT_BACKEND_CUDA
    ? WT_GRID_MIN_SPLIT_GPU : WT_GRID_MIN_SPLIT_CPU;
  const double t0 = wt_seconds();
  int status = wt_grid_plan(job, theta_max, h, bulk, min_split, &gr);
  job->plan_s = wt_seconds() - t0;
  if (status == WT_ERR_ARG) return run_engine(job);   /* ranges overlap */
  if (status != WT_OK) return status;
  wt_job sub = *job;
  sub.a = gr.a;
  if (!job->is_auto) sub.b = gr.b;
  sub.tasks = gr.tasks;
  sub.n_tasks = gr.n_tasks;
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
  return status;
}

int wt_count(wt_job *job)
{
  if (!job || !job->bins || !job->slots || job->a.n < 1 ||
      (!job->is_auto && job->b.n < 1) || job->n_out < 0)
    return WT_ERR_ARG;
  if (job->is_auto ? (job->a.w == NULL) != (job->wsum == NULL)
      : ((job->a.w == NULL) != (job->wsum == NULL) ||
         (job->b.w == NULL) != (job->wsum == NULL)))
    return WT_ERR_ARG;
  wt_task whole;
  if (!job->tasks) {
    whole.a0 = 0;
    whole.a1 = job->a.n;
    whole.b0 = 0;
    whole.b1 = job->is_auto ? job->a.n : job->b.n;
    whole.out = 0;
    job->tasks = &whole;
    job->n_tasks = 1;
    job->n_out = 1;
  }
  if (job->n_out < 1 || job->n_tasks < 0 || !wt_tasks_valid(job)) {
    if (job->tasks == &whole) job->tasks = NULL;
    return WT_ERR_ARG;
  }
  const int n_slots = job->bins->n_bins + 2;
  const size_t n_all = (size_t)job->n_out * (size_t)n_slots;
  memset(job->slots, 0, n_all * sizeof *job->slots);
  if (job->wsum) memset(job->wsum, 0, n_all * sizeof *job->wsum);
  job->gpu_ms = 0.0;
  job->plan_s = 0.0;
  job->message[0] = '\0';
  job->fault = wt_fault_from_env();

  double pairs = 0.0;
  for (int64_t k = 0; k < job->n_tasks; k++)
    pairs += wt_task_pairs(job, &job->tasks[k]);
  job->pairs_skipped = 0.0;
  int status;
  if (pairs == 0.0) {
    status = WT_OK;                 /* e.g. one point: no unordered pair */
  } else if (job->backend != WT_BACKEND_CUDA &&
             job->backend != WT_BACKEND_CPU) {
    status = WT_ERR_ARG;
  } else {
    status = count_pruned(job, pairs);
  }
  if (status == WT_OK && job->is_auto && job->self_pairs) {
    /* ordered pairs: each unordered pair twice, plus a self pair at d2 = 0
     * for every point of every diagonal task */
    for (size_t s = 0; s < n_all; s++) job->slots[s] *= 2;
    if (job->wsum)
      for (size_t s = 0; s < n_all; s++) job->wsum[s] *= 2.0;
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
  if (job->tasks == &whole) {
    job->tasks = NULL;
    job->n_tasks = 0;
  }
  return status;
}
