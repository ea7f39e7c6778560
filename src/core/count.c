/* Dispatch: the one place that picks the engine and applies conventions
 * shared by all engines (tasks, self pairs, labels' fold and last slot
 * through labels.c, fault injection for tests), and the order of a GPU
 * cross count's catalogs (gpu_larger_first()).
 * A count runs between two prepared catalogs (catalog.c); when the grid
 * pays (grid_policy.c decides and plans it), the engine gets the job
 * derived from them: the catalogs' sorted points and the walk's tasks.
 * Engines never see a catalog (ARCHITECTURE.md says why). */
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"
#include "labels.h"
#include "floor/pages.h"

static int run_engine(wt_job *job)
{
  return job->backend == WT_BACKEND_CUDA ? wt_count_cuda(job)
                                         : wt_count_cpu(job);
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
    /* with labels, that task's La x Lb histograms */
    int la, lb;
    wt_labels_sizes(job, &la, &lb);
    job->n_out = la * lb;
  }
  if (job->n_out < 1 || job->n_tasks < 0 || !wt_tasks_valid(job))
    return WT_ERR_ARG;
  *pairs = wt_tasks_pairs(job);
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

/* job's points: those of catalogs a and b, or of a alone (b NULL: auto) */
static void catalogs_job(wt_job *job, const wt_catalog *a,
                         const wt_catalog *b)
{
  job->a = a->p;
  job->is_auto = b == NULL;
  if (b) job->b = b->p; else memset(&job->b, 0, sizeof job->b);
}

/* the CUDA engine as the walk's sink (grid.h): it counts the tasks of
 * each round of the walk while the walk makes the next */
static int sink_open(void *ctx, wt_job *sub)
{
  return wt_cuda_stream_open(sub, (void **)ctx);
}

static int sink_feed(void *ctx, const wt_task *tasks, int64_t n)
{
  return wt_cuda_stream_feed(*(void **)ctx, tasks, n);
}

static int sink_close(void *ctx, int abort)
{
  void **h = (void **)ctx;
  int status = wt_cuda_stream_close(*h, abort);
  *h = NULL;
  return status;
}

/* Counts through the grid when it pays (grid_policy.c), directly
 * otherwise. ca, cb: the catalogs of job->a and job->b (cb is ca in an
 * auto job), or NULL: no grid. On the GPU the walk feeds the engine as it
 * goes (the host's walk and planning then overlap the kernels). */
static int count_as_given(wt_job *job, double pairs, wt_catalog *ca,
                          wt_catalog *cb)
{
  wt_grid_plan gp;
  void *h = NULL;
  const wt_task_sink sink = {sink_open, sink_feed, sink_close, &h};
  int status = wt_grid_plan_make(
      job, pairs, ca, cb, &gp, NULL, NULL,
      job->backend == WT_BACKEND_CUDA ? &sink : NULL);
  if (status != WT_OK || !gp.gridded) {
    /* an engine message (a failed open or feed) */
    if (status != WT_OK && !job->message[0])
      memcpy(job->message, gp.sub.message, sizeof job->message);
    wt_grid_plan_free(&gp);
    return status == WT_OK ? run_engine(job) : status;
  }
  if (gp.opened)
    status = sink.close(sink.ctx, 0);
  else
    status = gp.walk.n_tasks > 0 ? run_engine(&gp.sub) : WT_OK;
  if (status == WT_OK) wt_grid_plan_add_bulk(&gp, job);
  job->gpu_ms = gp.sub.gpu_ms;
  /* the pairs the GPU's kernels counted in bulk */
  job->pairs_skipped += gp.sub.pairs_skipped;
  memcpy(job->message, gp.sub.message, sizeof job->message);
  wt_grid_plan_free(&gp);
  return status;
}

int wt_plan_catalogs(wt_job *job, wt_catalog *a, wt_catalog *b,
                     double *out)
{
  if (!job || !a || !job->bins || !out) return WT_ERR_ARG;
  for (int k = 0; k < WT_PLAN_TIMES; k++) out[k] = 0.0;
  catalogs_job(job, a, b);
  wt_task whole;
  double pairs;
  wt_grid_plan gp;
  int status = job_tasks(job, &whole, &pairs);
  if (status == WT_OK)
    status = wt_grid_plan_make(job, pairs, a, b ? b : a, &gp, &out[0],
                               &out[1], NULL);
  else
    memset(&gp, 0, sizeof gp);
  if (status == WT_OK) {
    out[2] = (double)gp.sub.n_tasks;
    out[3] = wt_tasks_pairs(&gp.sub);
    if (job->backend == WT_BACKEND_CUDA)
      status = wt_cuda_host_plan(&gp.sub, &out[4]);
  }
  wt_grid_plan_free(&gp);
  tasks_done(job, &whole);
  return status;
}

/* a sink that keeps what it is fed (wt_plan_sink_check) */
typedef struct {
  wt_task *t;
  int64_t n, cap, feeds;
  int opened, closed;
} kept_tasks;

static int kept_open(void *ctx, wt_job *sub)
{
  (void)sub;
  ((kept_tasks *)ctx)->opened++;
  return WT_OK;
}

static int kept_feed(void *ctx, const wt_task *tasks, int64_t n)
{
  kept_tasks *k = ctx;
  if (k->n + n > k->cap) {
    int64_t cap = 2 * (k->n + n) + 16;
    wt_task *t = wt_realloc_big(k->t, (size_t)cap * sizeof *t);
    if (!t) return WT_ERR_NOMEM;
    k->t = t;
    k->cap = cap;
  }
  memcpy(k->t + k->n, tasks, (size_t)n * sizeof *tasks);
  k->n += n;
  k->feeds++;
  return WT_OK;
}

static int kept_close(void *ctx, int abort)
{
  (void)abort;
  ((kept_tasks *)ctx)->closed++;
  return WT_OK;
}

int wt_plan_sink_check(wt_job *job, wt_catalog *a, wt_catalog *b,
                       double *out)
{
  if (!job || !a || !job->bins || !out) return WT_ERR_ARG;
  out[0] = out[1] = out[2] = 0.0;
  catalogs_job(job, a, b);
  wt_task whole;
  double pairs;
  wt_grid_plan listed, fed;
  memset(&listed, 0, sizeof listed);
  memset(&fed, 0, sizeof fed);
  kept_tasks k;
  memset(&k, 0, sizeof k);
  const wt_task_sink sink = {kept_open, kept_feed, kept_close, &k};
  int status = job_tasks(job, &whole, &pairs);
  if (status == WT_OK)
    status = wt_grid_plan_make(job, pairs, a, b ? b : a, &listed, NULL,
                               NULL, NULL);
  if (status == WT_OK)
    status = wt_grid_plan_make(job, pairs, a, b ? b : a, &fed, NULL, NULL,
                               &sink);
  if (status == WT_OK && fed.opened) status = sink.close(sink.ctx, 0);
  if (status == WT_OK) {
    const wt_grid *x = &listed.walk, *y = &fed.walk;
    const size_t n_all = (size_t)x->n_hist * (size_t)(job->bins->n_bins + 2);
    int same = listed.gridded == fed.gridded && k.opened == fed.gridded &&
               k.closed == k.opened && y->tasks == NULL &&
               y->n_tasks == k.n && x->n_tasks == k.n &&
               x->n_hist == y->n_hist &&
               (k.n == 0 ||
                memcmp(x->tasks, k.t, (size_t)k.n * sizeof *k.t) == 0);
    for (size_t s = 0; same && s < n_all; s++)
      same = x->bulk_n[s] == y->bulk_n[s] && x->bulk_w[s] == y->bulk_w[s];
    out[0] = same;
    out[1] = (double)k.feeds;
    out[2] = (double)k.n;
  }
  free(k.t);
  wt_grid_plan_free(&fed);
  wt_grid_plan_free(&listed);
  tasks_done(job, &whole);
  return status;
}

/* Whether a cross count on the GPU runs with its catalogs swapped, so
 * that the larger one is the a side: the grid's walk then goes over its
 * cells, and the CUDA kernels hold its points in registers (the i side)
 * against runs of the other's staged points. A task's few i points (a
 * sparse sample's cell) leave most of a block's lanes idle while it
 * stages the j runs, so the kernels' time follows the staged side, not
 * the pairs. One H200, 20 log bins 2.5-250 arcmin on the DES-like box,
 * 10^7 randoms R against D galaxies, kernel ms of D x R against R x D:
 * 130.7 against 97.7 at D = 10^6, 217.3 against 186.1 at 2 x 10^6, 70.0
 * against 20.3 at 1.67 x 10^5 (a sample of a six-sample tomography),
 * 57.7 against 6.7 at 3 x 10^4; within 1% at D = R. Every task keeps its
 * histogram, and a pair's float and exact squared chords do not depend on
 * its order, so the counts are the same either way (weight and angle sums
 * up to the order of the GPU's additions, as ever). Not for labelled
 * jobs, which the GPU does not take. */
static int gpu_larger_first(const wt_job *job)
{
  return job->backend == WT_BACKEND_CUDA && !job->is_auto &&
         job->n_lab == 0 && job->b.n > job->a.n;
}

/* count_as_given(), for a cross job on the GPU with its larger catalog
 * first (gpu_larger_first()): the same histograms, filled through a copy
 * of the job whose catalogs and task ranges are swapped */
static int count_pruned(wt_job *job, double pairs, wt_catalog *ca,
                        wt_catalog *cb)
{
  if (!gpu_larger_first(job)) return count_as_given(job, pairs, ca, cb);
  wt_task *t = wt_alloc_big((size_t)job->n_tasks * sizeof *t);
  if (!t) return WT_ERR_NOMEM;
  for (int64_t k = 0; k < job->n_tasks; k++) {
    t[k] = job->tasks[k];
    t[k].a0 = job->tasks[k].b0;
    t[k].a1 = job->tasks[k].b1;
    t[k].b0 = job->tasks[k].a0;
    t[k].b1 = job->tasks[k].a1;
  }
  wt_job sw = *job;
  sw.a = job->b;
  sw.b = job->a;
  sw.tasks = t;
  const int status = count_as_given(&sw, pairs, cb, ca);
  free(t);
  job->pairs_skipped = sw.pairs_skipped;
  job->gpu_ms = sw.gpu_ms;
  job->plan_s = sw.plan_s;
  memcpy(job->message, sw.message, sizeof job->message);
  return status;
}

/* checks the job, counts (through the grid of ca and cb when it pays),
 * applies self pairs; with labels, folds and fills their histograms
 * (labels.c) */
static int count_job(wt_job *job, wt_catalog *ca, wt_catalog *cb)
{
  job->message[0] = '\0';
  if (wt_labels_check(job) != WT_OK) return WT_ERR_ARG;
  if (!job->bins || !job->slots || job->a.n < 1 ||
      (!job->is_auto && job->b.n < 1) || job->n_out < 0)
    return WT_ERR_ARG;
  if (job->is_auto ? (job->a.w == NULL) != (job->wsum == NULL)
      : ((job->a.w == NULL) != (job->wsum == NULL) ||
         (job->b.w == NULL) != (job->wsum == NULL)))
    return WT_ERR_ARG;
  if (job->pip) {
    const wt_pip *q = job->pip;
    const int nw = q->n_words;
    if (!job->wsum || nw < 0 || nw > WT_PIP_MAX_WORDS ||
        (nw > 0 && !q->by_count) || q->n_ang < 0 ||
        (q->n_ang > 0 && (!q->ang_d2 || !q->ang_w)))
      return WT_ERR_ARG;
    if (nw > 0 && (!job->a.bits || job->a.n_words != nw ||
                   (!job->is_auto &&
                    (!job->b.bits || job->b.n_words != nw))))
      return WT_ERR_ARG;
  }
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
  /* labels: the diagonal fold and the last slot, from the job's own tasks
   * and points (whether gridded or not; no pair at all included) */
  if (status == WT_OK && job->n_lab > 0) status = wt_labels_finish(job);
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
        if (job->pip) {
          /* PIP: w_i^2 times the pair factor of b_i & b_i = b_i at 0 */
          const wt_points *p = &job->a;
          for (int64_t i = t->a0; i < t->a1; i++) {
            int c = 0;
            for (int k = 0; k < job->pip->n_words; k++) {
              uint32_t v = p->bits[(int64_t)k * p->n + i];
              while (v) {
                v &= v - 1;
                c++;
              }
            }
            double ww = p->w[i] * p->w[i];
            w2 += ww * wt_pip_factor(job->pip, c, 0.0);
          }
        } else {
          for (int64_t i = t->a0; i < t->a1; i++)
            w2 += job->a.w[i] * job->a.w[i];
        }
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
  catalogs_job(job, a, b);
  return count_job(job, a, b ? b : a);
}

/* the distinct non-empty ranges of the tasks' a side (side 0), b side
 * (side 1) or both (side 2), sorted; their number, or -1 on memory */
static int64_t task_ranges(const wt_job *job, int side, int64_t **out)
{
  const int64_t n = job->n_tasks;
  int64_t *r = wt_alloc_big((size_t)(2 * n > 0 ? 2 * n : 1) * 2 * sizeof *r);
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
