/* What R hands over, unpacked: doubles, thread teams, unit vectors,
 * weights, bins and tasks (R checked the values; these check the types
 * and shapes and stop with "wtheta internal" errors), and the core's
 * status codes as R errors. */
#include "boundary.h"

const double *wtr_real_or_die(SEXP x, const char *what)
{
  if (TYPEOF(x) != REALSXP) error("wtheta internal: %s must be double", what);
  return REAL(x);
}

/* The threads a call uses: R checked `threads` (1 up to its ceiling);
 * OMP_THREAD_LIMIT caps it, then at most one per grain points (grain 0:
 * no such limit). A team that cannot start is an R error here, before the
 * OpenMP runtime would end the process. */
int wtr_team_of(SEXP threads, int64_t n, int64_t grain)
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
void wtr_points_of(SEXP xyz, wt_points *p)
{
  const double *v = wtr_real_or_die(xyz, "xyz");
  R_xlen_t n = XLENGTH(xyz) / 3;
  p->x = v;
  p->y = v + n;
  p->z = v + 2 * n;
  p->w = NULL;
  p->bits = NULL;
  p->n_words = 0;
  p->lab = NULL;
  p->n = (int64_t)n;
}

void wtr_status_error(int status, const wt_job *job)
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
const double *wtr_weights_of(SEXP w, const wt_points *p, const char *what)
{
  if (isNull(w)) return NULL;
  if (TYPEOF(w) != REALSXP || XLENGTH(w) != (R_xlen_t)p->n)
    error("wtheta internal: %s must be a double vector of length %lld", what,
          (long long)p->n);
  return REAL(w);
}

/* the bins of edges (degrees, at least two) into upper (n_edges + 1
 * values) and table (wt_bins_table_capacity() values) */
void wtr_bins_into(SEXP edges, wt_bins *bins, double *upper,
                      uint16_t *table)
{
  if (wt_bins_init(bins, wtr_real_or_die(edges, "edges"), (int)XLENGTH(edges),
                   upper, table) != WT_OK)
    error("wtheta internal: bad edges");
}

/* the same in memory that R frees when the .Call returns */
void wtr_bins_of(SEXP edges, wt_bins *bins)
{
  const int n_edges = (int)XLENGTH(edges);
  wtr_bins_into(edges, bins,
            (double *)R_alloc((size_t)n_edges + 1, sizeof(double)),
            (uint16_t *)R_alloc((size_t)wt_bins_table_capacity(),
                                sizeof(uint16_t)));
}

/* the number of tasks in `tasks`: NULL or a k x 5 double matrix (a0, a1,
 * b0, b1, out), zero based */
R_xlen_t wtr_tasks_count(SEXP tasks)
{
  if (isNull(tasks)) return 0;
  if (TYPEOF(tasks) != REALSXP || XLENGTH(tasks) % 5 != 0)
    error("wtheta internal: tasks must be a k x 5 double matrix");
  return XLENGTH(tasks) / 5;
}

/* the k tasks of `tasks` into t */
void wtr_tasks_fill(SEXP tasks, R_xlen_t k, wt_task *t)
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

wt_task *wtr_tasks_of(SEXP tasks, int64_t *n_tasks)
{
  R_xlen_t k = wtr_tasks_count(tasks);
  *n_tasks = (int64_t)k;
  if (isNull(tasks)) return NULL;
  wt_task *t = (wt_task *)R_alloc(k > 0 ? (size_t)k : 1, sizeof(wt_task));
  wtr_tasks_fill(tasks, k, t);
  return t;
}

/* a file path from R: one string, in the native encoding */
const char *wtr_path_of(SEXP path)
{
  if (TYPEOF(path) != STRSXP || XLENGTH(path) != 1)
    errorcall(R_NilValue, "wtheta internal: path must be one string");
  return translateChar(STRING_ELT(path, 0));
}
