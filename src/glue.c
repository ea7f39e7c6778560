/* The only file that sees SEXP: checks what R hands over, builds a wt_job,
 * calls the core, and turns status codes into R errors after freeing. */
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <R.h>
#include <Rinternals.h>
#include "wt.h"
#include "threads.h"

static void check_interrupt(void *unused)
{
  (void)unused;
  R_CheckUserInterrupt();
}

/* called by the core from the main thread between chunks */
static int r_interrupted(void)
{
  return !R_ToplevelExec(check_interrupt, NULL);
}

static const double *real_or_die(SEXP x, const char *what)
{
  if (TYPEOF(x) != REALSXP) error("wtheta internal: %s must be double", what);
  return REAL(x);
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

SEXP wt_r_unit_vectors(SEXP ra, SEXP dec, SEXP threads)
{
  R_xlen_t n = XLENGTH(ra);
  if (XLENGTH(dec) != n) error("wtheta internal: ra and dec lengths differ");
  if (n > INT_MAX) error("wtheta: catalogs of more than %d points are not supported", INT_MAX);
  const double *r = real_or_die(ra, "ra"), *d = real_or_die(dec, "dec");
  SEXP xyz = PROTECT(allocMatrix(REALSXP, (int)n, 3));
  double *v = REAL(xyz);
  wt_unit_vectors(r, d, (int64_t)n, v, v + n, v + 2 * n,
                  wt_cap_threads(asInteger(threads)));
  UNPROTECT(1);
  return xyz;
}

static void status_error(int status, const wt_job *job)
{
  switch (status) {
  case WT_ERR_NOMEM:
    error("wtheta: not enough memory for the pair counts");
  case WT_ERR_INTERRUPTED:
    error("wtheta: counting was interrupted; no result was returned");
  case WT_ERR_NO_CUDA:
    error("wtheta: this build has no CUDA support (no nvcc at install time)");
  case WT_ERR_NO_DEVICE:
    error("wtheta: no usable CUDA GPU: %s", job->message);
  case WT_ERR_CUDA:
    error("wtheta: CUDA error: %s", job->message);
  default:
    error("wtheta: internal error (status %d) %s", status, job->message);
  }
}

SEXP wt_r_pair_counts(SEXP xyz1, SEXP xyz2, SEXP edges, SEXP self_pairs,
                      SEXP backend, SEXP threads, SEXP devices)
{
  int n_edges = (int)XLENGTH(edges);
  if (n_edges < 2) error("wtheta internal: fewer than two edges");
  wt_job job;
  memset(&job, 0, sizeof job);
  points_of(xyz1, &job.a);
  job.is_auto = isNull(xyz2);
  if (!job.is_auto) points_of(xyz2, &job.b);
  job.self_pairs = asLogical(self_pairs) == TRUE;
  job.backend = asInteger(backend);
  job.n_threads = asInteger(threads);
  if (job.n_threads < 1) error("wtheta internal: threads < 1");
  job.n_threads = wt_cap_threads(job.n_threads);
  if (TYPEOF(devices) != INTSXP) error("wtheta internal: devices");
  job.devices = INTEGER(devices);
  job.n_devices = (int)XLENGTH(devices);
  job.interrupted = r_interrupted;

  wt_bins bins;
  double *upper = (double *)R_alloc((size_t)n_edges + 1, sizeof(double));
  uint16_t *table = (uint16_t *)R_alloc((size_t)wt_bins_table_capacity(),
                                        sizeof(uint16_t));
  if (wt_bins_init(&bins, real_or_die(edges, "edges"), n_edges, upper,
                   table) != WT_OK)
    error("wtheta internal: bad edges");
  job.bins = &bins;
  job.slots = (uint64_t *)R_alloc((size_t)n_edges + 1, sizeof(uint64_t));

  int status = wt_count(&job);
  if (status != WT_OK) status_error(status, &job);

  SEXP slots = PROTECT(allocVector(REALSXP, (R_xlen_t)n_edges + 1));
  for (int s = 0; s <= n_edges; s++) REAL(slots)[s] = (double)job.slots[s];
  const char *names[] = {"slots", "gpu_ms", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, slots);
  SET_VECTOR_ELT(out, 1, ScalarReal(job.gpu_ms));
  UNPROTECT(2);
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

SEXP wt_r_default_threads(void) { return ScalarInteger(wt_default_threads()); }

SEXP wt_r_cpu_cores(void) { return ScalarInteger(wt_cpu_cores()); }
