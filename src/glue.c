/* The only file that sees SEXP: checks what R hands over, builds a wt_job,
 * calls the core, and turns status codes into R errors after freeing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <R.h>
#include <Rinternals.h>
#include "wt.h"
#include "core/threads.h"
#include "sky/cells.h"

static void check_interrupt(void *unused)
{
  (void)unused;
  R_CheckUserInterrupt();
}

/* progress lines for long runs: off unless asked, silent for the first
 * two seconds, then one line every half second on a terminal (rewritten in
 * place) or every five seconds elsewhere (logs) */
typedef struct {
  int show, tty;           /* tty: one line rewritten in place, else lines */
  double start, last;
  int printed;
  SEXP fun;                /* an R function(done, total) to report to instead
                            * (a progressr progressor), or NULL */
} wt_progress;

/* fun(done, total), evaluated with the caller's condition handlers in
 * place (R_ToplevelExec would hide them from progressr). Its errors are
 * ignored: progress must not stop a count. An interrupt during the call
 * is caught here and returned as 1, so that the count stops cleanly. */
static SEXP progress_body(void *call)
{
  return eval((SEXP)call, R_GlobalEnv);
}

static SEXP progress_caught(SEXP cond, void *interrupted)
{
  if (inherits(cond, "interrupt")) *(int *)interrupted = 1;
  return R_NilValue;
}

static int call_progress(SEXP fun, double done, double total)
{
  SEXP d = PROTECT(ScalarReal(done));
  SEXP t = PROTECT(ScalarReal(total));
  SEXP call = PROTECT(lang3(fun, d, t));
  SEXP classes = PROTECT(allocVector(STRSXP, 2));
  SET_STRING_ELT(classes, 0, mkChar("error"));
  SET_STRING_ELT(classes, 1, mkChar("interrupt"));
  int interrupted = 0;
  R_tryCatch(progress_body, call, classes, progress_caught, &interrupted,
             NULL, NULL);
  UNPROTECT(4);
  return interrupted;
}

/* called by the core from the main thread between chunks */
static int r_poll(void *ctx, double done, double total)
{
  wt_progress *p = (wt_progress *)ctx;
  if (p && p->fun) {
    double t = wt_seconds();
    if (t - p->last >= 0.25) {
      p->last = t;
      if (call_progress(p->fun, done, total)) return 1;
    }
  } else if (p && p->show) {
    double t = wt_seconds(), el = t - p->start;
    if (el >= 2.0 && t - p->last >= (p->tty ? 0.5 : 5.0)) {
      p->last = t;
      if (done > 0 && total > 0) {
        double f = done / total;
        REprintf("%swtheta: %5.1f%% of %.3g pairs, %.1f s elapsed, about %.0f s left%s",
                 p->tty ? "\r" : "", 100.0 * f, total, el,
                 el * (1.0 - f) / f, p->tty ? "   " : "\n");
      } else {
        REprintf("%swtheta: counting %.3g pairs, %.1f s elapsed%s",
                 p->tty ? "\r" : "", total, el, p->tty ? "   " : "\n");
      }
      p->printed = 1;
    }
  }
  return !R_ToplevelExec(check_interrupt, NULL);
}

static void progress_done(wt_progress *p, int status)
{
  if (p->printed)
    REprintf("%swtheta: %s after %.1f s%40s\n", p->tty ? "\r" : "",
             status == WT_OK ? "counted" : "stopped", wt_seconds() - p->start,
             "");
  p->printed = 0;
}

static const double *real_or_die(SEXP x, const char *what)
{
  if (TYPEOF(x) != REALSXP) error("wtheta internal: %s must be double", what);
  return REAL(x);
}

/* The threads a call uses: R checked `threads` (1 up to its ceiling);
 * OMP_THREAD_LIMIT caps it, then at most one per grain points (grain 0:
 * no such limit). A team that cannot start is an R error here, before the
 * OpenMP runtime would end the process. */
static int team_of(SEXP threads, int64_t n, int64_t grain)
{
  int t = asInteger(threads);
  if (t == NA_INTEGER || t < 1) error("wtheta internal: threads < 1");
  t = grain > 0 ? wt_threads_for(t, n, grain) : wt_cap_threads(t);
  char msg[200];
  if (wt_threads_start(t, msg, sizeof msg) != 0)
    error("wtheta: cannot start %d CPU threads: %s; ask for fewer with "
          "`threads` or options(wtheta.threads)", t, msg);
  return t;
}

/* a catalog prepared by wt_r_unit_vectors: an n x 3 double matrix */
static void points_of(SEXP xyz, wt_points *p)
{
  const double *v = real_or_die(xyz, "xyz");
  R_xlen_t n = XLENGTH(xyz) / 3;
  p->x = v;
  p->y = v + n;
  p->z = v + 2 * n;
  p->n = (int64_t)n;
}

/* The unit vectors of k catalogs (lists ra and dec of double vectors), as
 * a list of n x 3 matrices, by one team of threads (a light pass over all
 * their points) */
SEXP wt_r_unit_vectors(SEXP ra, SEXP dec, SEXP threads)
{
  if (TYPEOF(ra) != VECSXP || TYPEOF(dec) != VECSXP ||
      XLENGTH(ra) != XLENGTH(dec) || XLENGTH(ra) > INT_MAX)
    error("wtheta internal: ra and dec must be lists of one length");
  const int k = (int)XLENGTH(ra);
  SEXP out = PROTECT(allocVector(VECSXP, k));
  const double **r = (const double **)R_alloc(k > 0 ? (size_t)k : 1,
                                              sizeof(double *));
  const double **d = (const double **)R_alloc(k > 0 ? (size_t)k : 1,
                                              sizeof(double *));
  double **x = (double **)R_alloc(k > 0 ? (size_t)k : 1, sizeof(double *));
  double **y = (double **)R_alloc(k > 0 ? (size_t)k : 1, sizeof(double *));
  double **z = (double **)R_alloc(k > 0 ? (size_t)k : 1, sizeof(double *));
  int64_t *n = (int64_t *)R_alloc(k > 0 ? (size_t)k : 1, sizeof(int64_t));
  int64_t total = 0;
  for (int c = 0; c < k; c++) {
    SEXP rc = VECTOR_ELT(ra, c), dc = VECTOR_ELT(dec, c);
    R_xlen_t nc = XLENGTH(rc);
    if (XLENGTH(dc) != nc)
      error("wtheta internal: ra and dec lengths differ");
    if (nc > INT_MAX)
      error("wtheta: catalogs of more than %d points are not supported",
            INT_MAX);
    r[c] = real_or_die(rc, "ra");
    d[c] = real_or_die(dc, "dec");
    SET_VECTOR_ELT(out, c, allocMatrix(REALSXP, (int)nc, 3));
    x[c] = REAL(VECTOR_ELT(out, c));
    y[c] = x[c] + nc;
    z[c] = y[c] + nc;
    n[c] = (int64_t)nc;
    total += n[c];
  }
  if (wt_unit_vectors_many(k, r, d, n, x, y, z,
                           team_of(threads, total, WT_LIGHT_GRAIN)) != WT_OK)
    error("wtheta: not enough memory for the unit vectors");
  UNPROTECT(1);
  return out;
}

static void status_error(int status, const wt_job *job)
{
  switch (status) {
  case WT_ERR_NOMEM:
    error("wtheta: not enough memory for the pair counts");
  case WT_ERR_NO_CUDA:
    error("wtheta: this build has no CUDA support (no nvcc at install time)");
  case WT_ERR_NO_DEVICE:
    error("wtheta: no usable CUDA GPU: %s", job->message);
  case WT_ERR_CUDA:
    error("wtheta: CUDA error: %s", job->message);
  case WT_ERR_WORKER:
    error("wtheta: a counting thread failed: %s", job->message);
  case WT_ERR_ISA:
    error("wtheta: %s", job->message);
  default:
    error("wtheta: internal error (status %d) %s", status, job->message);
  }
}

/* weights: NULL or a double vector as long as the catalog */
static const double *weights_of(SEXP w, const wt_points *p, const char *what)
{
  if (isNull(w)) return NULL;
  if (TYPEOF(w) != REALSXP || XLENGTH(w) != (R_xlen_t)p->n)
    error("wtheta internal: %s must be a double vector of length %lld", what,
          (long long)p->n);
  return REAL(w);
}

/* the bins of edges (degrees, at least two) into upper (n_edges + 1
 * values) and table (wt_bins_table_capacity() values) */
static void bins_into(SEXP edges, wt_bins *bins, double *upper,
                      uint16_t *table)
{
  if (wt_bins_init(bins, real_or_die(edges, "edges"), (int)XLENGTH(edges),
                   upper, table) != WT_OK)
    error("wtheta internal: bad edges");
}

/* the same in memory that R frees when the .Call returns */
static void bins_of(SEXP edges, wt_bins *bins)
{
  const int n_edges = (int)XLENGTH(edges);
  bins_into(edges, bins,
            (double *)R_alloc((size_t)n_edges + 1, sizeof(double)),
            (uint16_t *)R_alloc((size_t)wt_bins_table_capacity(),
                                sizeof(uint16_t)));
}

/* the number of tasks in `tasks`: NULL or a k x 5 double matrix (a0, a1,
 * b0, b1, out), zero based */
static R_xlen_t tasks_count(SEXP tasks)
{
  if (isNull(tasks)) return 0;
  if (TYPEOF(tasks) != REALSXP || XLENGTH(tasks) % 5 != 0)
    error("wtheta internal: tasks must be a k x 5 double matrix");
  return XLENGTH(tasks) / 5;
}

/* the k tasks of `tasks` into t */
static void tasks_fill(SEXP tasks, R_xlen_t k, wt_task *t)
{
  const double *v = REAL(tasks);
  for (R_xlen_t i = 0; i < k; i++) {
    t[i].a0 = (int64_t)v[i];
    t[i].a1 = (int64_t)v[i + k];
    t[i].b0 = (int64_t)v[i + 2 * k];
    t[i].b1 = (int64_t)v[i + 3 * k];
    t[i].out = (int32_t)v[i + 4 * k];
    t[i].slo = t[i].shi = 0;       /* slots unknown */
  }
}

static wt_task *tasks_of(SEXP tasks, int64_t *n_tasks)
{
  R_xlen_t k = tasks_count(tasks);
  *n_tasks = (int64_t)k;
  if (isNull(tasks)) return NULL;
  wt_task *t = (wt_task *)R_alloc(k > 0 ? (size_t)k : 1, sizeof(wt_task));
  tasks_fill(tasks, k, t);
  return t;
}

/* a patch array (see wt_patch_array) as an R array */
static SEXP patch_array(const uint64_t *counts, const double *wsums,
                        int n_patches, int n_bins, int is_auto)
{
  SEXP out = PROTECT(alloc3DArray(REALSXP, n_patches, n_patches, n_bins));
  wt_patch_array(counts, wsums, n_patches, n_bins, is_auto, REAL(out));
  UNPROTECT(1);
  return out;
}

/* Prepared catalogs (wt_catalog) as R external pointers. The pointer's
 * protected slot holds the unit vectors and weights, so the memory the
 * catalog points at lives as long as the pointer; the finalizer frees the
 * catalog and its cached grid. */
static void catalog_finalize(SEXP ptr)
{
  wt_catalog *c = (wt_catalog *)R_ExternalPtrAddr(ptr);
  if (!c) return;
  wt_catalog_clear(c);
  free(c);
  R_ClearExternalPtr(ptr);
}

static SEXP catalog_tag(void)
{
  static SEXP tag = NULL;
  if (!tag) tag = install("wt_catalog");
  return tag;
}

static wt_catalog *catalog_of(SEXP ptr, const char *what)
{
  if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != catalog_tag())
    error("wtheta internal: %s must be a catalog pointer", what);
  wt_catalog *c = (wt_catalog *)R_ExternalPtrAddr(ptr);
  if (!c) error("wtheta internal: %s is a freed catalog pointer", what);
  return c;
}

/* xyz: n x 3 unit vectors; w: NULL or n weights; ranges: NULL (one range)
 * or a k x 2 double matrix of [start, end) (zero based) of the points of
 * each patch, as group_patches() gives them */
SEXP wt_r_catalog_new(SEXP xyz, SEXP w, SEXP ranges)
{
  wt_points p;
  memset(&p, 0, sizeof p);
  points_of(xyz, &p);
  p.w = weights_of(w, &p, "weights");
  if (p.n < 1) error("wtheta internal: a catalog without points");
  int64_t *r = NULL, k = 0;
  if (!isNull(ranges)) {
    const double *v = real_or_die(ranges, "ranges");
    if (XLENGTH(ranges) % 2 != 0)
      error("wtheta internal: ranges must be a k x 2 matrix");
    k = (int64_t)(XLENGTH(ranges) / 2);
    r = (int64_t *)R_alloc(k > 0 ? (size_t)k * 2 : 1, sizeof *r);
    for (int64_t i = 0; i < k; i++) {   /* column major: starts, then ends */
      r[2 * i] = (int64_t)v[i];
      r[2 * i + 1] = (int64_t)v[i + k];
    }
  }
  /* the pointer first, so that no R allocation can fail while the
   * catalog is held by nothing */
  SEXP keep = PROTECT(list2(xyz, w));
  SEXP ptr = PROTECT(R_MakeExternalPtr(NULL, catalog_tag(), keep));
  R_RegisterCFinalizerEx(ptr, catalog_finalize, TRUE);
  wt_catalog *c = (wt_catalog *)calloc(1, sizeof *c);
  if (!c) error("wtheta: not enough memory for a catalog");
  int status = wt_catalog_init(c, &p, r, isNull(ranges) ? 0 : k);
  if (status != WT_OK) {
    free(c);
    if (status == WT_ERR_NOMEM) error("wtheta: not enough memory for a catalog");
    error("wtheta internal: catalog ranges overlap or lie outside its %lld "
          "points", (long long)p.n);
  }
  R_SetExternalPtrAddr(ptr, c);
  UNPROTECT(2);
  return ptr;
}

/* frees a catalog's cached grid now (the catalog stays usable) */
SEXP wt_r_catalog_release(SEXP ptr)
{
  wt_catalog_drop_grid(catalog_of(ptr, "catalog"));
  return R_NilValue;
}

/* TRUE while ptr holds a catalog: FALSE once freed, or when it was read
 * back from a saved session (external pointers are not saved) */
SEXP wt_r_catalog_alive(SEXP ptr)
{
  return ScalarLogical(TYPEOF(ptr) == EXTPTRSXP &&
                       R_ExternalPtrTag(ptr) == catalog_tag() &&
                       R_ExternalPtrAddr(ptr) != NULL);
}

/* grid stages built by this process (tests) */
SEXP wt_r_grid_builds(void) { return ScalarReal(wt_grid_builds()); }

/* A count as the glue holds it: the job and every buffer it points at, in
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

/* A new count, protected (one more to UNPROTECT), whose pointer keeps
 * `keep` alive; the job from the arguments, its buffers zeroed. job_in
 * holds the points (a, b, is_auto); ca, cb their catalogs or NULL. */
static SEXP pending_new(SEXP keep, const wt_job *job_in, wt_catalog *ca,
                        wt_catalog *cb, int weighted, int angles, SEXP edges,
                        SEXP self_pairs, SEXP backend, SEXP threads,
                        SEXP devices, SEXP tasks, SEXP n_out, SEXP grid,
                        wt_pending **out)
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
  R_xlen_t k = tasks_count(tasks);
  if (!isNull(tasks)) {
    p->tasks = (wt_task *)pending_alloc((size_t)k, sizeof(wt_task));
    tasks_fill(tasks, k, p->tasks);
  }
  job->tasks = p->tasks;
  job->n_tasks = (int64_t)k;
  job->n_out = job->tasks ? asInteger(n_out) : 1;
  if (job->n_out < 1 || job->n_out == NA_INTEGER)
    error("wtheta internal: n_out must be a positive integer");
  job->self_pairs = asLogical(self_pairs) == TRUE;
  job->backend = asInteger(backend);
  job->n_threads = team_of(threads, 0, 0);
  if (TYPEOF(devices) != INTSXP) error("wtheta internal: devices");
  job->n_devices = (int)XLENGTH(devices);
  p->devices = (int *)pending_alloc((size_t)job->n_devices, sizeof(int));
  memcpy(p->devices, INTEGER(devices), (size_t)job->n_devices * sizeof(int));
  job->devices = p->devices;
  job->grid = asInteger(grid);
  if (job->grid < WT_GRID_NEVER || job->grid > WT_GRID_PRUNE)
    error("wtheta internal: grid must be a wt_grid_mode, not %d", job->grid);
  p->upper = (double *)pending_alloc((size_t)n_edges + 1, sizeof(double));
  p->table = (uint16_t *)pending_alloc((size_t)wt_bins_table_capacity(),
                                       sizeof(uint16_t));
  bins_into(edges, &p->bins, p->upper, p->table);
  job->bins = &p->bins;
  const size_t n_all = ((size_t)n_edges + 1) * (size_t)job->n_out;
  job->slots = (uint64_t *)pending_alloc(n_all, sizeof(uint64_t));
  job->wsum = weighted ? (double *)pending_alloc(n_all, sizeof(double))
                       : NULL;
  job->thsum = angles ? (double *)pending_alloc(n_all, sizeof(double)) : NULL;
  *out = p;
  return holder;
}

/* progress as the caller asked for it (see wt_progress) */
static void progress_init(wt_progress *prog, SEXP progress)
{
  memset(prog, 0, sizeof *prog);
  prog->fun = isFunction(progress) ? progress : NULL;
  prog->show = !prog->fun && asLogical(progress) == TRUE;
  prog->tty = isatty(2);
  prog->start = wt_seconds();
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
    if (status == WT_ERR_INTERRUPTED) return R_NilValue;
    status_error(status, &failed);
  }
  const wt_job *job = &p->job;
  const int weighted = p->weighted, angles = p->angles;
  const int n_edges = job->bins->n_bins + 1;
  const size_t n_all = ((size_t)n_edges + 1) * (size_t)job->n_out;
  /* every histogram (n_edges + 1 slots each), unless patch arrays replace
   * them */
  SEXP slots = R_NilValue;
  if (asInteger(patches) <= 0) {
    slots = allocMatrix(REALSXP, n_edges + 1, job->n_out);
    for (size_t s = 0; s < n_all; s++) REAL(slots)[s] = (double)job->slots[s];
  }
  PROTECT(slots);
  SEXP wsum = R_NilValue;
  if (weighted && asInteger(patches) <= 0) {
    wsum = PROTECT(allocMatrix(REALSXP, n_edges + 1, job->n_out));
    memcpy(REAL(wsum), job->wsum, n_all * sizeof(double));
  } else {
    PROTECT(wsum);
  }
  /* the sum over histograms (exact in 64 bits), and of the weight sums */
  const size_t n_row = (size_t)n_edges + 1;
  SEXP total = PROTECT(allocVector(REALSXP, (R_xlen_t)n_row));
  SEXP wtotal = weighted ? allocVector(REALSXP, (R_xlen_t)n_row) : R_NilValue;
  PROTECT(wtotal);
  /* and of the angle sums (radians), in histogram order */
  SEXP thtotal = angles ? allocVector(REALSXP, (R_xlen_t)n_row) : R_NilValue;
  PROTECT(thtotal);
  for (size_t s = 0; s < n_row; s++) {
    uint64_t c = 0;
    double w = 0.0, th = 0.0;
    for (size_t h = 0; h < (size_t)job->n_out; h++) {
      c += job->slots[h * n_row + s];
      if (weighted) w += job->wsum[h * n_row + s];
      if (angles) th += job->thsum[h * n_row + s];
    }
    REAL(total)[s] = (double)c;
    if (weighted) REAL(wtotal)[s] = w;
    if (angles) REAL(thtotal)[s] = th;
  }
  /* per patch pair [a, b, bin] arrays (see patch_array) */
  const int n_patches = asInteger(patches);
  SEXP pcounts = R_NilValue, pweights = R_NilValue;
  if (n_patches > 0) {
    if ((int64_t)n_patches * n_patches != job->n_out)
      error("wtheta internal: n_out is not n_patches^2");
    pcounts = patch_array(job->slots, NULL, n_patches, n_edges - 1,
                          job->is_auto);
  }
  PROTECT(pcounts);
  if (n_patches > 0 && weighted)
    pweights = patch_array(NULL, job->wsum, n_patches, n_edges - 1,
                           job->is_auto);
  PROTECT(pweights);
  const char *names[] = {"slots", "wsum", "gpu_ms", "pairs_skipped", "total",
                         "wtotal", "patch_counts", "patch_weighted",
                         "plan_s", "thtotal", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 6, pcounts);
  SET_VECTOR_ELT(out, 7, pweights);
  SET_VECTOR_ELT(out, 8, ScalarReal(job->plan_s));
  SET_VECTOR_ELT(out, 9, thtotal);
  SET_VECTOR_ELT(out, 0, slots);
  SET_VECTOR_ELT(out, 1, wsum);
  SET_VECTOR_ELT(out, 2, ScalarReal(job->gpu_ms));
  SET_VECTOR_ELT(out, 3, ScalarReal(job->pairs_skipped));
  SET_VECTOR_ELT(out, 4, total);
  SET_VECTOR_ELT(out, 5, wtotal);
  pending_finalize(holder);
  UNPROTECT(8);
  return out;
}

/* p's count here, on the main thread (progress and interrupts through
 * r_poll), and its result */
static SEXP pending_run(SEXP holder, wt_pending *p, SEXP progress,
                        SEXP patches)
{
  wt_progress prog;
  progress_init(&prog, progress);
  p->job.poll = r_poll;
  p->job.poll_ctx = &prog;
  int status = p->ca ? wt_count_catalogs(&p->job, p->ca, p->cb)
                     : wt_count(&p->job);
  progress_done(&prog, status);
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
  points_of(xyz1, &job.a);
  job.is_auto = isNull(xyz2);
  if (!job.is_auto) points_of(xyz2, &job.b);
  job.a.w = weights_of(w1, &job.a, "weights of the first catalog");
  if (!job.is_auto) job.b.w = weights_of(w2, &job.b, "weights of the second catalog");
  int weighted = job.a.w != NULL;
  if (!job.is_auto && (job.b.w != NULL) != weighted)
    error("wtheta internal: weights for one catalog only");
  wt_pending *p;
  SEXP holder = pending_new(R_NilValue, &job, NULL, NULL, weighted, 0, edges,
                            self_pairs, backend, threads, devices, tasks,
                            n_out, grid, &p);
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
                             SEXP mean_theta, wt_pending **out)
{
  wt_catalog *ca = catalog_of(cat1, "cat1");
  wt_catalog *cb = isNull(cat2) ? NULL : catalog_of(cat2, "cat2");
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
                            out);
  UNPROTECT(2);
  return PROTECT(holder);
}

SEXP wt_r_pair_counts_catalogs(SEXP cat1, SEXP cat2, SEXP edges,
                               SEXP self_pairs, SEXP backend, SEXP threads,
                               SEXP devices, SEXP tasks, SEXP n_out,
                               SEXP progress, SEXP grid, SEXP patches,
                               SEXP mean_theta)
{
  wt_pending *p;
  SEXP holder = pending_catalogs(cat1, cat2, edges, self_pairs, backend,
                                 threads, devices, tasks, n_out, grid,
                                 mean_theta, &p);
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
                      SEXP n_out, SEXP grid, SEXP mean_theta)
{
  wt_pending *p;
  SEXP holder = pending_catalogs(cat1, cat2, edges, self_pairs, backend,
                                 threads, devices, tasks, n_out, grid,
                                 mean_theta, &p);
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
  wt_progress prog;
  progress_init(&prog, progress);
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
    int stop = r_poll(&prog, done, total);
    pthread_mutex_lock(&p->mu);
    if (stop) p->cancel = 1;
  }
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, NULL);
  p->started = 0;
  progress_done(&prog, p->status);
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
 * without counting (wt_plan_catalogs): seconds and sizes, named; benches
 * time the grid and the GPU engine's host work with it on any machine */
SEXP wt_r_plan_catalogs(SEXP cat1, SEXP cat2, SEXP edges, SEXP backend,
                        SEXP threads, SEXP grid)
{
  wt_catalog *ca = catalog_of(cat1, "cat1");
  wt_catalog *cb = isNull(cat2) ? NULL : catalog_of(cat2, "cat2");
  wt_job job;
  memset(&job, 0, sizeof job);
  job.backend = asInteger(backend);
  job.n_threads = team_of(threads, 0, 0);
  job.grid = asInteger(grid);
  job.n_devices = 1;
  job.n_out = 1;
  if (XLENGTH(edges) < 2) error("wtheta internal: fewer than two edges");
  wt_bins bins;
  bins_of(edges, &bins);
  job.bins = &bins;
  double t[WT_PLAN_TIMES];
  int status = wt_plan_catalogs(&job, ca, cb, t);
  if (status != WT_OK) status_error(status, &job);
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

/* a named integer vector of n codes */
static SEXP named_codes(int n, const char *const *names, const int *codes)
{
  SEXP v = PROTECT(allocVector(INTSXP, n));
  SEXP nm = PROTECT(allocVector(STRSXP, n));
  for (int k = 0; k < n; k++) {
    INTEGER(v)[k] = codes[k];
    SET_STRING_ELT(nm, k, mkChar(names[k]));
  }
  setAttrib(v, R_NamesSymbol, nm);
  UNPROTECT(2);
  return v;
}

/* The codes of wt.h's enums, by name: the one place R learns them from
 * (wt_constant() in R/backend.R). */
SEXP wt_r_constants(void)
{
  static const char *const backend_names[] = {"cpu", "cuda"};
  static const int backend_codes[] = {WT_BACKEND_CPU, WT_BACKEND_CUDA};
  static const char *const grid_names[] = {"never", "auto", "always", "prune"};
  static const int grid_codes[] = {WT_GRID_NEVER, WT_GRID_AUTO,
                                   WT_GRID_ALWAYS, WT_GRID_PRUNE};
  static const char *const isa_names[] = {"plain", "avx2", "avx512"};
  static const int isa_codes[] = {WT_ISA_PLAIN, WT_ISA_AVX2, WT_ISA_AVX512};
  const char *names[] = {"backend", "grid", "isa", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, named_codes(2, backend_names, backend_codes));
  SET_VECTOR_ELT(out, 1, named_codes(4, grid_names, grid_codes));
  SET_VECTOR_ELT(out, 2, named_codes(3, isa_names, isa_codes));
  UNPROTECT(1);
  return out;
}

/* The CPU engine's instruction sets: those this CPU and build can run, the
 * one it uses now (NA when WTHETA_CPU_ISA is refused) and why not. */
SEXP wt_r_cpu_isa(void)
{
  char msg[256] = "";
  int chosen = WT_ISA_PLAIN, n = 0;
  const int ok = wt_cpu_isa_chosen(&chosen, msg, sizeof msg) == WT_OK;
  for (int k = WT_ISA_PLAIN; k <= WT_ISA_AVX512; k++)
    n += wt_cpu_isa_supported(k);
  const char *names[] = {"supported", "chosen", "message", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SEXP sup = allocVector(STRSXP, n);
  SET_VECTOR_ELT(out, 0, sup);
  for (int k = WT_ISA_PLAIN, i = 0; k <= WT_ISA_AVX512; k++)
    if (wt_cpu_isa_supported(k))
      SET_STRING_ELT(sup, i++, mkChar(wt_cpu_isa_name(k)));
  SET_VECTOR_ELT(out, 1, ok ? mkString(wt_cpu_isa_name(chosen))
                            : ScalarString(NA_STRING));
  SET_VECTOR_ELT(out, 2, mkString(msg));
  UNPROTECT(1);
  return out;
}

SEXP wt_r_cuda_info(void)
{
  char msg[256] = "";
  int count = wt_cuda_device_count(msg, sizeof msg);
  const char *names[] = {"compiled", "count", "message", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, ScalarLogical(wt_cuda_compiled()));
  SET_VECTOR_ELT(out, 1, ScalarInteger(count));
  SET_VECTOR_ELT(out, 2, mkString(msg));
  UNPROTECT(1);
  return out;
}

SEXP wt_r_cuda_device(SEXP device)
{
  char name[256] = "";
  int major = 0, minor = 0;
  double mem = 0;
  if (wt_cuda_device_info(asInteger(device), name, sizeof name, &major,
                          &minor, &mem) != WT_OK)
    error("wtheta: cannot query CUDA device %d: %s", asInteger(device), name);
  const char *names[] = {"name", "major", "minor", "memory", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, mkString(name));
  SET_VECTOR_ELT(out, 1, ScalarInteger(major));
  SET_VECTOR_ELT(out, 2, ScalarInteger(minor));
  SET_VECTOR_ELT(out, 3, ScalarReal(mem));
  UNPROTECT(1);
  return out;
}

/* xyz: n x 3 unit vectors; centres: k x 3 */
SEXP wt_r_nearest_centre(SEXP xyz, SEXP centres, SEXP threads)
{
  wt_points p, c;
  points_of(xyz, &p);
  points_of(centres, &c);
  if (c.n < 1 || c.n > INT_MAX) error("wtheta internal: centres");
  SEXP out = PROTECT(allocVector(INTSXP, (R_xlen_t)p.n));
  wt_nearest_centre(p.x, p.y, p.z, p.n, c.x, c.y, c.z, (int)c.n,
                    INTEGER(out), team_of(threads, p.n, WT_LIGHT_GRAIN));
  UNPROTECT(1);
  return out;
}

/* A catalog grouped by patch (a stable counting sort) is a list of the
 * unit vectors (n x 3), the labels (1..P), the weights (or NULL) in the
 * new order, and the points per patch. group_alloc makes the list
 * (unprotected); group_fill fills it from plain arrays with labels already
 * checked to lie in 1..P, using `at` (P values) as scratch; it calls
 * nothing that can raise an R error. */
static SEXP group_alloc(R_xlen_t n, int P, int weighted)
{
  const char *names[] = {"xyz", "labels", "weights", "counts", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, allocMatrix(REALSXP, (int)n, 3));
  SET_VECTOR_ELT(out, 1, allocVector(INTSXP, n));
  if (weighted) SET_VECTOR_ELT(out, 2, allocVector(REALSXP, n));
  SET_VECTOR_ELT(out, 3, allocVector(INTSXP, P));
  UNPROTECT(1);
  return out;
}

static void group_fill(SEXP out, const double *x, const double *y,
                       const double *z, const int *lab, const double *wv,
                       R_xlen_t n, int P, int64_t *at, int threads)
{
  double *ox = REAL(VECTOR_ELT(out, 0));
  wt_group_by_label(x, y, z, lab, wv, (int64_t)n, P, INTEGER(VECTOR_ELT(out, 3)),
                    at, ox, ox + n, ox + 2 * n, INTEGER(VECTOR_ELT(out, 1)),
                    wv ? REAL(VECTOR_ELT(out, 2)) : NULL, threads);
}

/* a catalog's unit vectors grouped by the given patch labels (1..n_patches) */
SEXP wt_r_group_patches(SEXP xyz, SEXP labels, SEXP n_patches, SEXP w)
{
  wt_points p;
  points_of(xyz, &p);
  const R_xlen_t n = (R_xlen_t)p.n;
  const int P = asInteger(n_patches);
  if (XLENGTH(labels) != n || TYPEOF(labels) != INTSXP || P < 1)
    error("wtheta internal: patch labels");
  const int *lab = INTEGER(labels);
  for (R_xlen_t i = 0; i < n; i++)
    if (lab[i] < 1 || lab[i] > P) error("wtheta internal: patch label range");
  const double *wv = isNull(w) ? NULL : real_or_die(w, "weights");
  SEXP out = PROTECT(group_alloc(n, P, wv != NULL));
  int64_t *at = (int64_t *)R_alloc((size_t)P, sizeof *at);
  group_fill(out, p.x, p.y, p.z, lab, wv, n, P, at, 1);
  UNPROTECT(1);
  return out;
}

/* unit vectors of ra, dec (degrees), labelled by their nearest centre and
 * grouped by it, in one call (see wt_patch_vectors: C scratch of one
 * column, not the ungrouped catalog; nothing extra on R's heap). The
 * result of group_patches. */
SEXP wt_r_patch_vectors(SEXP ra, SEXP dec, SEXP centres, SEXP w,
                        SEXP threads)
{
  const R_xlen_t n = XLENGTH(ra);
  if (XLENGTH(dec) != n) error("wtheta internal: ra and dec lengths differ");
  if (n > INT_MAX)
    error("wtheta: catalogs of more than %d points are not supported",
          INT_MAX);
  wt_points c;
  points_of(centres, &c);
  if (c.n < 1 || c.n > INT_MAX) error("wtheta internal: centres");
  const double *r = real_or_die(ra, "ra"), *d = real_or_die(dec, "dec");
  const double *wv = isNull(w) ? NULL : real_or_die(w, "weights");
  if (wv && XLENGTH(w) != n) error("wtheta internal: weights length");
  const int t = team_of(threads, (int64_t)n, WT_LIGHT_GRAIN);
  SEXP out = PROTECT(group_alloc(n, (int)c.n, wv != NULL));
  double *ox = REAL(VECTOR_ELT(out, 0));
  int status = wt_patch_vectors(r, d, wv, (int64_t)n, c.x, c.y, c.z,
                                (int)c.n, INTEGER(VECTOR_ELT(out, 3)), ox,
                                ox + n, ox + 2 * n,
                                INTEGER(VECTOR_ELT(out, 1)),
                                wv ? REAL(VECTOR_ELT(out, 2)) : NULL, t);
  if (status != WT_OK)
    error("wtheta: out of memory grouping a catalog by patch");
  UNPROTECT(1);
  return out;
}

/* jackknife replicate counts (see wt_jackknife_counts): an n_bins x P
 * matrix, each column r divided by total[r] (the replicates' normalisers,
 * P values) when total is not NULL */
SEXP wt_r_jackknife_counts(SEXP arr, SEXP is_auto, SEXP total)
{
  SEXP dim = getAttrib(arr, R_DimSymbol);
  if (TYPEOF(arr) != REALSXP || XLENGTH(dim) != 3)
    error("wtheta internal: patch array");
  const int P = INTEGER(dim)[0], nb = INTEGER(dim)[2];
  if (INTEGER(dim)[1] != P) error("wtheta internal: patch array shape");
  const int autoc = asLogical(is_auto);
  const double *S = REAL(arr);
  const double *tot = NULL;
  if (!isNull(total)) {
    tot = real_or_die(total, "total");
    if (XLENGTH(total) != P) error("wtheta internal: total length");
  }
  SEXP out = PROTECT(allocMatrix(REALSXP, nb, P));
  double *rows = (double *)R_alloc((size_t)P * 2, sizeof(double));
  double *o = REAL(out);
  wt_jackknife_counts(S, P, nb, autoc, tot, rows, o);
  UNPROTECT(1);
  return out;
}

/* one pass over the coordinates of a catalog (degrees): the first row
 * (1-based, 0 for none) with a non-finite ra, a non-finite dec, a dec
 * outside [-90, 90], and whether any ra lies outside [0, 360) */
SEXP wt_r_check_coords(SEXP ra, SEXP dec)
{
  const R_xlen_t n = XLENGTH(ra);
  if (XLENGTH(dec) != n) error("wtheta internal: ra and dec lengths differ");
  const double *r = real_or_die(ra, "ra"), *d = real_or_die(dec, "dec");
  double bad_ra = 0, bad_dec = 0, bad_range = 0, wrap = 0;
  /* a branch-free pass for the usual case, all well */
  int ok = 1, out_ra = 0;
  for (R_xlen_t i = 0; i < n; i++) {
    ok &= isfinite(r[i]) & isfinite(d[i]) & (d[i] >= -90.0) & (d[i] <= 90.0);
    out_ra |= (r[i] < 0.0) | (r[i] >= 360.0);
  }
  wrap = out_ra;
  for (R_xlen_t i = 0; !ok && i < n; i++) {
    if (!bad_ra && !isfinite(r[i])) bad_ra = (double)i + 1;
    if (!bad_dec && !isfinite(d[i])) bad_dec = (double)i + 1;
    if (!bad_range && (d[i] < -90.0 || d[i] > 90.0)) bad_range = (double)i + 1;
  }
  SEXP out = PROTECT(allocVector(REALSXP, 4));
  REAL(out)[0] = bad_ra;
  REAL(out)[1] = bad_dec;
  REAL(out)[2] = bad_range;
  REAL(out)[3] = wrap;
  UNPROTECT(1);
  return out;
}

/* right ascensions (degrees) reduced to [0, 360): fmod() is exact for
 * every finite double (the remainder is representable), where R's %%
 * loses all accuracy beyond 2^53 degrees. A tiny negative angle whose
 * 360 + ra rounds to 360 becomes 0. */
SEXP wt_r_reduce_ra(SEXP ra)
{
  const R_xlen_t n = XLENGTH(ra);
  const double *r = real_or_die(ra, "ra");
  SEXP out = PROTECT(allocVector(REALSXP, n));
  double *o = REAL(out);
  for (R_xlen_t i = 0; i < n; i++) {
    double v = fmod(r[i], 360.0);
    if (v < 0.0) v += 360.0;
    o[i] = v >= 360.0 ? 0.0 : v;
  }
  UNPROTECT(1);
  return out;
}

/* sky patches: k-means++ seeding from the k uniform draws, then spherical
 * k-means; a list of the centres (k x 3), the 1-based label of every point
 * and the rounds made */
SEXP wt_r_kmeans(SEXP xyz, SEXP draws, SEXP iter, SEXP threads)
{
  wt_points p;
  points_of(xyz, &p);
  const int k = (int)XLENGTH(draws);
  if (k < 1 || p.n < k) error("wtheta internal: k-means sizes");
  const double *draw = real_or_die(draws, "draws");
  const int n_threads = team_of(threads, p.n, WT_LIGHT_GRAIN);
  SEXP cen = PROTECT(allocMatrix(REALSXP, k, 3));
  SEXP lab = PROTECT(allocVector(INTSXP, (R_xlen_t)p.n));
  double *cv = REAL(cen);
  double *d2 = (double *)R_alloc((size_t)p.n + (size_t)p.n / 4096 + 1,
                                 sizeof(double));
  wt_kmeanspp(p.x, p.y, p.z, p.n, k, draw, d2, cv, cv + k, cv + 2 * k,
              n_threads);
  int rounds = wt_kmeans(p.x, p.y, p.z, p.n, cv, cv + k, cv + 2 * k, k,
                         asInteger(iter), INTEGER(lab), n_threads);
  if (rounds < 0) error("wtheta: out of memory in the k-means of sky_patches()");
  SEXP out = PROTECT(allocVector(VECSXP, 3));
  SET_VECTOR_ELT(out, 0, cen);
  SET_VECTOR_ELT(out, 1, lab);
  SET_VECTOR_ELT(out, 2, ScalarInteger(rounds));
  UNPROTECT(3);
  return out;
}

SEXP wt_r_cuda_release(void) { return ScalarInteger(wt_cuda_release()); }

SEXP wt_r_default_threads(SEXP available)
{
  return ScalarInteger(wt_default_threads(asInteger(available)));
}

SEXP wt_r_cpu_cores(void) { return ScalarInteger(wt_cpu_cores()); }

/* the footprint check's cells (sky/cells.h): list(level, id, d, r) for the
 * level kept, level -1 and empty vectors when none */
SEXP wt_r_footprint_cells(SEXP ra_d, SEXP dec_d, SEXP ra_r, SEXP dec_r,
                          SEXP thin, SEXP threads)
{
  const int64_t n_d = XLENGTH(ra_d), n_r = XLENGTH(ra_r);
  if (XLENGTH(dec_d) != n_d || XLENGTH(dec_r) != n_r)
    error("wtheta internal: ra and dec of different lengths");
  wt_cells c;
  int status = wt_footprint_cells(
    real_or_die(ra_d, "ra"), real_or_die(dec_d, "dec"), n_d,
    real_or_die(ra_r, "ra"), real_or_die(dec_r, "dec"), n_r,
    (int64_t)asReal(thin), WT_CELLS_TOP, 12, 25.0, 256,
    team_of(threads, n_d + n_r, WT_LIGHT_GRAIN), &c);
  if (status == WT_ERR_NOMEM)
    error("wtheta: not enough memory for the footprint check's cells");
  if (status != WT_OK) error("wtheta internal: footprint cells (status %d)",
                             status);
  const char *names[] = {"level", "id", "d", "r", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, ScalarInteger(c.level));
  double *src[3] = {c.id, c.d, c.r};
  for (int k = 0; k < 3; k++) {
    SEXP v = allocVector(REALSXP, (R_xlen_t)c.n_cells);
    SET_VECTOR_ELT(out, k + 1, v);
    if (c.n_cells) memcpy(REAL(v), src[k], (size_t)c.n_cells * sizeof(double));
  }
  wt_cells_free(&c);
  UNPROTECT(1);
  return out;
}

/* ---- the CUDA engine's host planning (cuda/plan.cxx), for tests: built
 * in every build, so that it is checked without nvcc or a GPU ---- */

/* the plan of `edges` (degrees) for analysis c(sane, r2max, eta, weighted)
 * and a device with shared memory device = c(per SM, per block) */
SEXP wt_r_cuda_plan_table(SEXP edges, SEXP analysis, SEXP device)
{
  const int n_edges = (int)XLENGTH(edges);
  if (n_edges < 2 || TYPEOF(analysis) != REALSXP || XLENGTH(analysis) != 4 ||
      TYPEOF(device) != REALSXP || XLENGTH(device) != 2)
    error("wtheta internal: cuda_plan_table arguments");
  wt_bins bins;
  bins_of(edges, &bins);
  wt_cuda_plan_info info;
  memset(&info, 0, sizeof info);
  const double *an = REAL(analysis), *dev = REAL(device);
  info.sane = an[0] != 0.0;
  info.r2max = an[1];
  info.eta = an[2];
  info.weighted = an[3] != 0.0;
  info.smem_sm = dev[0];
  info.smem_block = dev[1];
  if (wt_cuda_plan_table(&bins, &info, NULL, NULL, 0) != WT_OK)
    error("wtheta internal: cuda_plan_table out of memory");
  const int nc = info.n_cells;
  float *thr = (float *)R_alloc(nc > 0 ? (size_t)nc : 1, sizeof(float));
  int *cmap = (int *)R_alloc(nc > 0 ? 2 * (size_t)nc : 1, sizeof(int));
  if (wt_cuda_plan_table(&bins, &info, thr, cmap, nc) != WT_OK)
    error("wtheta internal: cuda_plan_table out of memory");
  static const char *names[] = {"fast", "cfg", "fix_shared", "rcols", "smem",
                                "c", "onec", "margin", "multi", "upper",
                                "thr", "lo", "hi", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, ScalarLogical(info.fast));
  SET_VECTOR_ELT(out, 1, ScalarInteger(info.cfg));
  SET_VECTOR_ELT(out, 2, ScalarLogical(info.fix_shared));
  SET_VECTOR_ELT(out, 3, ScalarInteger(info.rcols));
  SET_VECTOR_ELT(out, 4, ScalarReal(info.smem));
  SET_VECTOR_ELT(out, 5, ScalarReal(info.c));
  SET_VECTOR_ELT(out, 6, ScalarReal(info.onec));
  SET_VECTOR_ELT(out, 7, ScalarReal(info.margin));
  SET_VECTOR_ELT(out, 8, ScalarReal(info.multi));
  SEXP up = SET_VECTOR_ELT(out, 9, allocVector(REALSXP, n_edges + 1));
  memcpy(REAL(up), bins.upper, ((size_t)n_edges + 1) * sizeof(double));
  SEXP t = SET_VECTOR_ELT(out, 10, allocVector(REALSXP, nc));
  SEXP lo = SET_VECTOR_ELT(out, 11, allocVector(INTSXP, nc));
  SEXP hi = SET_VECTOR_ELT(out, 12, allocVector(INTSXP, nc));
  for (int k = 0; k < nc; k++) {
    REAL(t)[k] = (double)thr[k];
    INTEGER(lo)[k] = cmap[2 * k];
    INTEGER(hi)[k] = cmap[2 * k + 1];
  }
  UNPROTECT(1);
  return out;
}

/* the launches and items of `tasks` (k x 5, as for pair_counts) between
 * catalogs of sizes = c(n_a, n_b, is_auto) points; settings = c(fast,
 * chunk, max_pairs, n_devices, n_blocks[, threads]) (0: the engine's chunk
 * or launch size; threads of the planning, 1 when not given) */
SEXP wt_r_cuda_plan_work(SEXP sizes, SEXP tasks, SEXP settings)
{
  if (TYPEOF(sizes) != REALSXP || XLENGTH(sizes) != 3 ||
      TYPEOF(settings) != REALSXP ||
      (XLENGTH(settings) != 5 && XLENGTH(settings) != 6) || isNull(tasks))
    error("wtheta internal: cuda_plan_work arguments");
  wt_job job;
  memset(&job, 0, sizeof job);
  const double *sz = REAL(sizes), *st = REAL(settings);
  job.a.n = (int64_t)sz[0];
  job.b.n = (int64_t)sz[1];
  job.is_auto = sz[2] != 0.0;
  job.tasks = tasks_of(tasks, &job.n_tasks);
  job.n_threads = XLENGTH(settings) == 6 ? (int)st[5] : 1;
  const int fast = st[0] != 0.0, n_devices = (int)st[3], n_blocks = (int)st[4];
  const int64_t chunk = (int64_t)st[1];
  int64_t nl = 0, ni = 0;
  int status = wt_cuda_plan_work(&job, fast, chunk, st[2], n_devices,
                                 n_blocks, NULL, 0, NULL, 0, &nl, &ni);
  if (status == WT_OK && (nl > INT_MAX / 8 || ni > INT_MAX / 7))
    error("wtheta internal: cuda_plan_work: too many items (%.0f)",
          (double)ni);
  SEXP launch = PROTECT(allocMatrix(REALSXP, (int)nl, 8));
  SEXP item = PROTECT(allocMatrix(INTSXP, (int)ni, 7));
  double *lv = (double *)R_alloc(nl > 0 ? 8 * (size_t)nl : 1, sizeof(double));
  int *iv = (int *)R_alloc(ni > 0 ? 7 * (size_t)ni : 1, sizeof(int));
  if (status == WT_OK)
    status = wt_cuda_plan_work(&job, fast, chunk, st[2], n_devices, n_blocks,
                               lv, nl, iv, ni, &nl, &ni);
  if (status != WT_OK)
    error("wtheta internal: cuda_plan_work failed with status %d", status);
  for (int64_t r = 0; r < nl; r++)
    for (int c = 0; c < 8; c++) REAL(launch)[r + nl * c] = lv[8 * r + c];
  for (int64_t r = 0; r < ni; r++)
    for (int c = 0; c < 7; c++) INTEGER(item)[r + ni * c] = iv[7 * r + c];
  static const char *names[] = {"launches", "items", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, launch);
  SET_VECTOR_ELT(out, 1, item);
  UNPROTECT(3);
  return out;
}
