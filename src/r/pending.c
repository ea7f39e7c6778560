/* Counts (R/pair_counts.R): a count's job and buffers held by an R
 * external pointer (wt_pending), run here on the main thread or started
 * in a thread of its own and waited for, its result as an R list; and the
 * host stages of a count timed without counting. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include "boundary.h"
#include "floor/pages.h"

/* A count as the boundary holds it: the job and every buffer it points at, in
 * memory outside R's heap (the histograms of a count with patches take a
 * megabyte or more; from R's heap they made R collect garbage more often),
 * owned by an external pointer whose finalizer frees it: at once when the
 * count is done, or at garbage collection when an error jumps past that. A count on
 * the GPU may run in a thread of its own (wt_r_count_start) while R goes
 * on, so that the host work of one count overlaps the kernels of another;
 * nothing it points at is then on R's heap except the catalogs' points,
 * which the pointer's protected slot keeps alive. */
typedef struct {
  wt_job job;
  wt_bins bins;
  double *upper;
  uint16_t *table;
  wt_task *tasks;
  int *devices;
  int weighted, angles;
  /* PIP pair weights (wt_pip) and their tables, or pip.n_words == -1 and
   * job.pip NULL: none */
  wt_pip pip;
  double *pip_mem;
  wt_catalog *ca, *cb;     /* NULL: the points in job.a, job.b (wt_count) */
  /* a count in its own thread: the thread, and what it shares with the
   * main thread under mu */
  int started;             /* a thread runs or has run and is not joined */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int finished, status, cancel;
  double done, total;
} wt_pending;

/* stops and joins the thread of p, if any */
static void pending_join(wt_pending *p)
{
  if (!p->started) return;
  pthread_mutex_lock(&p->mu);
  p->cancel = 1;
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, NULL);
  p->started = 0;
}

static void pending_free(wt_pending *p)
{
  if (!p) return;
  pending_join(p);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p->upper);
  free(p->table);
  free(p->tasks);
  free(p->devices);
  free(p->job.slots);
  free(p->job.wsum);
  free(p->job.thsum);
  free(p->pip_mem);
  free(p);
}

static void pending_finalize(SEXP holder)
{
  pending_free((wt_pending *)R_ExternalPtrAddr(holder));
  R_ClearExternalPtr(holder);
}

static SEXP pending_tag(void)
{
  static SEXP tag = NULL;
  if (!tag) tag = install("wtheta_pending_count");
  return tag;
}

static void *pending_alloc(size_t n, size_t size)
{
  void *m = calloc(n > 0 ? n : 1, size);
  if (!m) error("wtheta: not enough memory for the pair counts");
  return m;
}

/* the PIP settings of a count into p (job.pip), from NULL (none) or a
 * list(n_words, by_count, theta, weight) made by pip_settings() in
 * R/pair_counts.R: the words per point (0: an angular table only), the
 * pair factor by popcount (32 n_words + 1 values), and the angular table
 * (theta in degrees, increasing, and weights; both empty: none), whose
 * angles become squared chords here (wt_edge_c2; 180 degrees is 4) */
static void pending_pip(wt_pending *p, SEXP pip)
{
  if (isNull(pip)) return;
  if (TYPEOF(pip) != VECSXP || XLENGTH(pip) != 4)
    error("wtheta internal: pip settings");
  const int nw = asInteger(VECTOR_ELT(pip, 0));
  SEXP by = VECTOR_ELT(pip, 1), th = VECTOR_ELT(pip, 2),
       aw = VECTOR_ELT(pip, 3);
  if (nw < 0 || nw > WT_PIP_MAX_WORDS || TYPEOF(by) != REALSXP ||
      (nw > 0 && XLENGTH(by) != 32 * (R_xlen_t)nw + 1) ||
      TYPEOF(th) != REALSXP || TYPEOF(aw) != REALSXP ||
      XLENGTH(th) != XLENGTH(aw))
    error("wtheta internal: pip settings");
  const R_xlen_t nb = XLENGTH(by), na = XLENGTH(th);
  p->pip_mem = (double *)pending_alloc((size_t)(nb + 2 * na), sizeof(double));
  memcpy(p->pip_mem, REAL(by), (size_t)nb * sizeof(double));
  double *d2 = p->pip_mem + nb, *w = d2 + na;
  for (R_xlen_t k = 0; k < na; k++) {
    const double t = REAL(th)[k];
    d2[k] = t >= 180.0 ? 4.0 : wt_edge_c2(t);
    w[k] = REAL(aw)[k];
  }
  for (R_xlen_t k = 1; k < na; k++)
    if (!(d2[k] > d2[k - 1]))
      error("wtheta internal: angular table not increasing in chord");
  p->pip.n_words = nw;
  p->pip.by_count = p->pip_mem;
  p->pip.n_ang = (int)na;
  p->pip.ang_d2 = d2;
  p->pip.ang_w = w;
  p->job.pip = &p->pip;
}

/* grid: the wt_grid_mode, or c(mode, scale), the call's widening of the
 * grid's cells (wt_job.grid_scale; grid_scale() in R/pair_counts.R) */
static void grid_of(SEXP grid, wt_job *job)
{
  job->grid = asInteger(grid);
  if (job->grid < WT_GRID_NEVER || job->grid > WT_GRID_PRUNE)
    error("wtheta internal: grid must be a wt_grid_mode, not %d", job->grid);
  job->grid_scale = 0.0;
  if (XLENGTH(grid) == 2) {
    job->grid_scale = TYPEOF(grid) == REALSXP ? REAL(grid)[1]
                                              : (double)INTEGER(grid)[1];
    if (!(job->grid_scale >= 1.0 && job->grid_scale <= 2.0))
      error("wtheta internal: the grid's scale must lie in [1, 2]");
  } else if (XLENGTH(grid) != 1) {
    error("wtheta internal: grid must be a mode, or a mode and a scale");
  }
}

/* A new count, protected (one more to UNPROTECT), whose pointer keeps
 * `keep` alive; the job from the arguments, its buffers zeroed. job_in
 * holds the points (a, b, is_auto); ca, cb their catalogs or NULL. */
static SEXP pending_new(SEXP keep, const wt_job *job_in, wt_catalog *ca,
                        wt_catalog *cb, int weighted, int angles, SEXP edges,
                        SEXP self_pairs, SEXP backend, SEXP threads,
                        SEXP devices, SEXP tasks, SEXP n_out, SEXP grid,
                        SEXP n_lab, wt_pending **out)
{
  SEXP holder = PROTECT(R_MakeExternalPtr(NULL, pending_tag(), keep));
  R_RegisterCFinalizerEx(holder, pending_finalize, TRUE);
  wt_pending *p = (wt_pending *)pending_alloc(1, sizeof(wt_pending));
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  R_SetExternalPtrAddr(holder, p);
  p->job = *job_in;
  p->ca = ca;
  p->cb = cb;
  p->weighted = weighted;
  p->angles = angles;
  wt_job *job = &p->job;
  const int n_edges = (int)XLENGTH(edges);
  if (n_edges < 2) error("wtheta internal: fewer than two edges");
  R_xlen_t k = wtr_tasks_count(tasks);
  if (!isNull(tasks)) {
    p->tasks = (wt_task *)pending_alloc((size_t)k, sizeof(wt_task));
    wtr_tasks_fill(tasks, k, p->tasks);
  }
  job->tasks = p->tasks;
  job->n_tasks = (int64_t)k;
  /* labels (wt_job.n_lab; NULL: none): n_out is then the tasks'
   * histograms times La Lb, also without tasks (wt_count_catalogs checks
   * the rest) */
  job->n_lab = isNull(n_lab) ? 0 : asInteger(n_lab);
  if (job->n_lab == NA_INTEGER || job->n_lab < 0)
    error("wtheta internal: n_lab must be an integer >= 0");
  job->n_out = job->tasks || job->n_lab > 0 ? asInteger(n_out) : 1;
  if (job->n_out < 1 || job->n_out == NA_INTEGER)
    error("wtheta internal: n_out must be a positive integer");
  job->self_pairs = asLogical(self_pairs) == TRUE;
  job->backend = asInteger(backend);
  job->n_threads = wtr_team_of(threads, 0, 0);
  if (TYPEOF(devices) != INTSXP) error("wtheta internal: devices");
  job->n_devices = (int)XLENGTH(devices);
  p->devices = (int *)pending_alloc((size_t)job->n_devices, sizeof(int));
  memcpy(p->devices, INTEGER(devices), (size_t)job->n_devices * sizeof(int));
  job->devices = p->devices;
  grid_of(grid, job);
  p->upper = (double *)pending_alloc((size_t)n_edges + 1, sizeof(double));
  p->table = (uint16_t *)pending_alloc((size_t)wt_bins_table_capacity(),
                                       sizeof(uint16_t));
  wtr_bins_into(edges, &p->bins, p->upper, p->table);
  job->bins = &p->bins;
  const size_t n_all = ((size_t)n_edges + 1) * (size_t)job->n_out;
  job->slots = (uint64_t *)pending_alloc(n_all, sizeof(uint64_t));
  job->wsum = weighted ? (double *)pending_alloc(n_all, sizeof(double))
                       : NULL;
  job->thsum = angles ? (double *)pending_alloc(n_all, sizeof(double)) : NULL;
  *out = p;
  return holder;
}

/* p's count as an R list, and p freed (holder: its pointer); a failed
 * count is freed, then an R error, or NULL when it was interrupted, which
 * tells count_pairs() to signal an R interrupt condition (error() cannot) */
static SEXP pending_result(SEXP holder, wt_pending *p, int status,
                           SEXP patches)
{
  if (status != WT_OK) {
    wt_job failed = p->job;   /* the message outlives p */
    pending_finalize(holder);
    if (status == WT_ERR_INTERRUPTED) {
      wtr_raise_caught_error();   /* R's own error, e.g. a time limit */
      return R_NilValue;
    }
    wtr_status_error(status, &failed);
  }
  const wt_job *job = &p->job;
  int La, Lb;
  wt_labels_sizes(job, &La, &Lb);
  const wtr_patch_form pf = wtr_patch_form_of(patches);
  if (job->n_lab <= 0 && pf.map && pf.n_map != job->n_out)
    error("wtheta internal: %d task histograms, a map of %lld",
          job->n_out, (long long)pf.n_map);
  SEXP out = PROTECT(job->n_lab > 0
                     ? wtr_label_parts(job->slots, job->wsum, job->n_out,
                                       job->bins->n_bins, La, Lb, job->is_auto,
                                       pf, job)
                     : wtr_count_list(job->slots, job->wsum, job->thsum,
                                      job->n_out, job->bins->n_bins + 1,
                                      job->is_auto, pf.n, pf.margins,
                                      wtr_patch_inv(pf), job));
  pending_finalize(holder);
  UNPROTECT(1);
  return out;
}

/* p's count here, on the main thread (progress and interrupts through
 * wtr_poll), and its result */
static SEXP pending_run(SEXP holder, wt_pending *p, SEXP progress,
                        SEXP patches)
{
  wtr_progress prog;
  wtr_progress_init(&prog, progress);
  p->job.poll = wtr_poll;
  p->job.poll_ctx = &prog;
  int status = p->ca ? wt_count_catalogs(&p->job, p->ca, p->cb)
                     : wt_count(&p->job);
  wtr_progress_done(&prog, status);
  return pending_result(holder, p, status, patches);
}

/* a count of unit vectors (n x 3 matrices) xyz1 and xyz2 (NULL: auto)
 * with weights w1, w2 (or NULL), through catalogs made for this count
 * (wt_count): benches and tests of the engines call it directly */
SEXP wt_r_pair_counts(SEXP xyz1, SEXP xyz2, SEXP edges, SEXP self_pairs,
                      SEXP backend, SEXP threads, SEXP devices, SEXP w1,
                      SEXP w2, SEXP tasks, SEXP n_out, SEXP progress,
                      SEXP grid, SEXP patches)
{
  wt_job job;
  memset(&job, 0, sizeof job);
  wtr_points_of(xyz1, &job.a);
  job.is_auto = isNull(xyz2);
  if (!job.is_auto) wtr_points_of(xyz2, &job.b);
  job.a.w = wtr_weights_of(w1, &job.a, "weights of the first catalog");
  if (!job.is_auto) job.b.w = wtr_weights_of(w2, &job.b, "weights of the second catalog");
  int weighted = job.a.w != NULL;
  if (!job.is_auto && (job.b.w != NULL) != weighted)
    error("wtheta internal: weights for one catalog only");
  wt_pending *p;
  SEXP holder = pending_new(R_NilValue, &job, NULL, NULL, weighted, 0, edges,
                            self_pairs, backend, threads, devices, tasks,
                            n_out, grid, R_NilValue, &p);
  SEXP out = pending_run(holder, p, progress, patches);
  UNPROTECT(1);
  return out;
}

/* the count between catalogs cat1 and cat2 (NULL: the auto pairs of cat1),
 * made by wt_r_catalog_new, whose grids they keep for later counts; the
 * tasks use their patch ranges (count_pairs()). job.a, job.b and
 * job.is_auto are set again by wt_count_catalogs, which checks the tasks
 * against them. */
static SEXP pending_catalogs(SEXP cat1, SEXP cat2, SEXP edges,
                             SEXP self_pairs, SEXP backend, SEXP threads,
                             SEXP devices, SEXP tasks, SEXP n_out, SEXP grid,
                             SEXP mean_theta, SEXP pip, SEXP n_lab,
                             wt_pending **out)
{
  wt_huge_pages_refresh();   /* WTHETA_HUGE_PAGES, read here on R's thread */
  wt_catalog *ca = wtr_catalog_of(cat1, "cat1");
  wt_catalog *cb = isNull(cat2) ? NULL : wtr_catalog_of(cat2, "cat2");
  int weighted = ca->p.w != NULL;
  if (cb && (cb->p.w != NULL) != weighted)
    error("wtheta internal: weights for one catalog only");
  wt_job job;
  memset(&job, 0, sizeof job);
  job.a = ca->p;
  job.is_auto = cb == NULL;
  if (cb) job.b = cb->p;
  SEXP keep = PROTECT(CONS(cat1, CONS(cat2, R_NilValue)));
  SEXP holder = pending_new(keep, &job, ca, cb, weighted,
                            asLogical(mean_theta) == TRUE, edges, self_pairs,
                            backend, threads, devices, tasks, n_out, grid,
                            n_lab, out);
  pending_pip(*out, pip);
  UNPROTECT(2);
  return PROTECT(holder);
}

SEXP wt_r_pair_counts_catalogs(SEXP cat1, SEXP cat2, SEXP edges,
                               SEXP self_pairs, SEXP backend, SEXP threads,
                               SEXP devices, SEXP tasks, SEXP n_out,
                               SEXP progress, SEXP grid, SEXP patches,
                               SEXP mean_theta, SEXP pip, SEXP n_lab)
{
  wt_pending *p;
  SEXP holder = pending_catalogs(cat1, cat2, edges, self_pairs, backend,
                                 threads, devices, tasks, n_out, grid,
                                 mean_theta, pip, n_lab, &p);
  SEXP out = pending_run(holder, p, progress, patches);
  UNPROTECT(1);
  return out;
}

/* ---- overlapped counts: one count's thread ---- */

/* the thread's poll: records progress for the main thread, and stops when
 * it asks (interrupt, cancel) */
static int pending_poll(void *ctx, double done, double total)
{
  wt_pending *p = (wt_pending *)ctx;
  pthread_mutex_lock(&p->mu);
  p->done = done;
  p->total = total;
  int stop = p->cancel;
  pthread_mutex_unlock(&p->mu);
  return stop;
}

static void *pending_main(void *arg)
{
  wt_pending *p = (wt_pending *)arg;
  int status = wt_count_catalogs(&p->job, p->ca, p->cb);
  pthread_mutex_lock(&p->mu);
  p->status = status;
  p->finished = 1;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* Starts the count between catalogs cat1 and cat2 in a thread of its own
 * and returns at once: a pending count for wt_r_count_wait(). The core
 * never calls R (its poll here is pending_poll), so either engine may run
 * so; R overlaps GPU counts only (run_counts()), as CPU counts already use
 * every core. The catalogs stay alive (the pointer keeps them) and must
 * stay unchanged until the wait or cancel (run_counts() does one or the
 * other for every count it starts). Counts may share catalogs:
 * wt_catalog_grid is safe across threads. */
SEXP wt_r_count_start(SEXP cat1, SEXP cat2, SEXP edges, SEXP self_pairs,
                      SEXP backend, SEXP threads, SEXP devices, SEXP tasks,
                      SEXP n_out, SEXP grid, SEXP mean_theta, SEXP pip,
                      SEXP n_lab)
{
  wt_pending *p;
  SEXP holder = pending_catalogs(cat1, cat2, edges, self_pairs, backend,
                                 threads, devices, tasks, n_out, grid,
                                 mean_theta, pip, n_lab, &p);
  p->job.poll = pending_poll;
  p->job.poll_ctx = p;
  if (pthread_create(&p->thread, NULL, pending_main, p) != 0)
    error("wtheta: cannot start a thread for the count");
  p->started = 1;
  UNPROTECT(1);
  return holder;
}

static wt_pending *pending_of(SEXP holder)
{
  if (TYPEOF(holder) != EXTPTRSXP || R_ExternalPtrTag(holder) != pending_tag())
    error("wtheta internal: not a pending count");
  return (wt_pending *)R_ExternalPtrAddr(holder);
}

/* Waits for a count from wt_r_count_start(), reporting progress and
 * taking interrupts on this (the main) thread meanwhile; its result as
 * wt_r_pair_counts_catalogs() gives it. */
SEXP wt_r_count_wait(SEXP holder, SEXP progress, SEXP patches)
{
  wt_pending *p = pending_of(holder);
  if (!p) error("wtheta internal: the pending count was collected already");
  wtr_progress prog;
  wtr_progress_init(&prog, progress);
  pthread_mutex_lock(&p->mu);
  while (!p->finished) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 20000000L;            /* 20 ms */
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec += 1;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&p->cv, &p->mu, &until);
    if (p->finished) break;
    double done = p->done, total = p->total;
    pthread_mutex_unlock(&p->mu);
    int stop = wtr_poll(&prog, done, total);
    pthread_mutex_lock(&p->mu);
    if (stop) p->cancel = 1;
  }
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, NULL);
  p->started = 0;
  wtr_progress_done(&prog, p->status);
  return pending_result(holder, p, p->status, patches);
}

/* Stops a count from wt_r_count_start() and frees it (no result); nothing
 * when it was collected already. */
SEXP wt_r_count_cancel(SEXP holder)
{
  if (pending_of(holder)) pending_finalize(holder);
  return R_NilValue;
}

/* the host stages of a count between catalogs cat1 and cat2 (NULL: auto)
 * without counting (wt_plan_catalogs), of the whole catalogs or of tasks
 * (a task matrix as count_pairs() gives, and n_out): seconds and sizes,
 * named; benches
 * time the grid and the GPU engine's host work with it on any machine.
 * sink_check TRUE (tests): the walk fed to a sink against the listed walk
 * instead (wt_plan_sink_check): same, feeds, tasks */
SEXP wt_r_plan_catalogs(SEXP cat1, SEXP cat2, SEXP edges, SEXP backend,
                        SEXP threads, SEXP grid, SEXP tasks, SEXP n_out,
                        SEXP sink_check)
{
  wt_catalog *ca = wtr_catalog_of(cat1, "cat1");
  wt_catalog *cb = isNull(cat2) ? NULL : wtr_catalog_of(cat2, "cat2");
  wt_job job;
  memset(&job, 0, sizeof job);
  job.backend = asInteger(backend);
  job.n_threads = wtr_team_of(threads, 0, 0);
  grid_of(grid, &job);
  job.n_devices = 1;
  job.n_out = 1;
  /* tasks (patch pairs; NULL: the whole catalogs) and their histograms */
  const R_xlen_t k = wtr_tasks_count(tasks);
  if (!isNull(tasks)) {
    wt_task *t = (wt_task *)R_alloc((size_t)(k > 0 ? k : 1), sizeof(wt_task));
    wtr_tasks_fill(tasks, k, t);
    job.tasks = t;
    job.n_tasks = (int64_t)k;
    job.n_out = asInteger(n_out);
    if (job.n_out < 1 || job.n_out == NA_INTEGER)
      error("wtheta internal: n_out must be a positive integer");
  }
  if (XLENGTH(edges) < 2) error("wtheta internal: fewer than two edges");
  wt_bins bins;
  wtr_bins_of(edges, &bins);
  job.bins = &bins;
  if (asLogical(sink_check) == TRUE) {
    /* tests: the walk fed to a sink in rounds against the listed walk */
    double c[3];
    int status = wt_plan_sink_check(&job, ca, cb, c);
    if (status != WT_OK) wtr_status_error(status, &job);
    SEXP out = PROTECT(allocVector(REALSXP, 3));
    SEXP nm = PROTECT(allocVector(STRSXP, 3));
    static const char *cn[] = {"same", "feeds", "tasks"};
    for (int k = 0; k < 3; k++) {
      REAL(out)[k] = c[k];
      SET_STRING_ELT(nm, k, mkChar(cn[k]));
    }
    setAttrib(out, R_NamesSymbol, nm);
    UNPROTECT(2);
    return out;
  }
  double t[WT_PLAN_TIMES];
  int status = wt_plan_catalogs(&job, ca, cb, t);
  if (status != WT_OK) wtr_status_error(status, &job);
  static const char *names[] = {"grid_build_s", "grid_walk_s", "tasks",
                                "task_pairs", "cuda_analyse_s",
                                "cuda_launches_s", "cuda_bounds_s",
                                "cuda_items_s", "cuda_launches",
                                "cuda_chunk_loads"};
  SEXP out = PROTECT(allocVector(REALSXP, WT_PLAN_TIMES));
  SEXP nm = PROTECT(allocVector(STRSXP, WT_PLAN_TIMES));
  for (int k = 0; k < WT_PLAN_TIMES; k++) {
    REAL(out)[k] = t[k];
    SET_STRING_ELT(nm, k, mkChar(names[k]));
  }
  setAttrib(out, R_NamesSymbol, nm);
  UNPROTECT(2);
  return out;
}

/* the widening of the grid's cells for the counts of one call
 * (wt_grid_call_scale()) between the catalogs whose unit vectors are in
 * the list xyzs, for a last edge of theta_max degrees, grid mode `grid`
 * on `backend`; ptrs: a list of their C catalogs where they have one
 * (NULL elsewhere), whose cached grids a call keeps when it can */
SEXP wt_r_grid_scale(SEXP xyzs, SEXP theta_max, SEXP grid, SEXP backend,
                     SEXP threads, SEXP ptrs)
{
  const int n_threads = wtr_team_of(threads, 0, 0);
  if (TYPEOF(xyzs) != VECSXP || TYPEOF(ptrs) != VECSXP ||
      XLENGTH(ptrs) != XLENGTH(xyzs))
    error("wtheta internal: xyzs and ptrs must be lists of one length");
  const int k = (int)XLENGTH(xyzs);
  wt_points *p = (wt_points *)R_alloc((size_t)(k > 0 ? k : 1), sizeof *p);
  const wt_points **pp =
      (const wt_points **)R_alloc((size_t)(k > 0 ? k : 1), sizeof *pp);
  double *cached = (double *)R_alloc((size_t)(k > 0 ? k : 1), sizeof *cached);
  for (int c = 0; c < k; c++) {
    wtr_points_of(VECTOR_ELT(xyzs, c), &p[c]);
    pp[c] = &p[c];
    SEXP ptr = VECTOR_ELT(ptrs, c);
    cached[c] = TYPEOF(ptr) == EXTPTRSXP && R_ExternalPtrAddr(ptr)
                  ? wt_catalog_grid_cell(wtr_catalog_of(ptr, "ptrs"))
                  : 0.0;
  }
  return ScalarReal(wt_grid_call_scale(pp, k, asReal(theta_max),
                                       asInteger(grid), asInteger(backend),
                                       n_threads, cached));
}
