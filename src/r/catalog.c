/* Catalogs: coordinates checked and reduced (R/catalog.R), unit vectors
 * made once, and prepared catalogs (wt_catalog) held by R external
 * pointers (R/pair_counts.R). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include "boundary.h"
#include "floor/pages.h"
#include "floor/team.h"

/* The unit vectors of k catalogs (lists ra and dec of double vectors), as
 * a list of n x 3 matrices, by one team of threads (a light pass over all
 * their points) */
SEXP wt_r_unit_vectors(SEXP ra, SEXP dec, SEXP threads)
{
  if (TYPEOF(ra) != VECSXP || TYPEOF(dec) != VECSXP ||
      XLENGTH(ra) != XLENGTH(dec) || XLENGTH(ra) > INT_MAX)
    error("wtheta internal: ra and dec must be lists of one length");
  wt_huge_pages_refresh();
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
    r[c] = wtr_real_or_die(rc, "ra");
    d[c] = wtr_real_or_die(dc, "dec");
    SET_VECTOR_ELT(out, c, allocMatrix(REALSXP, (int)nc, 3));
    x[c] = REAL(VECTOR_ELT(out, c));
    /* before the threads below first touch it (floor/pages.h) */
    wt_advise_big(x[c], (size_t)nc * 3 * sizeof(double));
    y[c] = x[c] + nc;
    z[c] = y[c] + nc;
    n[c] = (int64_t)nc;
    total += n[c];
  }
  /* a sine and cosine of each angle a point: the trigonometric grain */
  const int t = wtr_team_of(threads, total, WT_TRIG_GRAIN);
  if (wt_unit_vectors_many(k, r, d, n, x, y, z, t) != WT_OK)
    error("wtheta: not enough memory for the unit vectors");
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

wt_catalog *wtr_catalog_of(SEXP ptr, const char *what)
{
  if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != catalog_tag())
    error("wtheta internal: %s must be a catalog pointer", what);
  wt_catalog *c = (wt_catalog *)R_ExternalPtrAddr(ptr);
  if (!c) error("wtheta internal: %s is a freed catalog pointer", what);
  return c;
}

/* xyz: n x 3 unit vectors; w: NULL or n weights; ranges: NULL (one range)
 * or a k x 2 double matrix of [start, end) (zero based) of the points of
 * each patch, as group_patches() gives them; bits: NULL or an n x k
 * integer matrix of bitwise words (PIP), each the 32 bits of a word
 * (bitwise_words() in R/pip.R), k at most WT_PIP_MAX_WORDS; lab: NULL or
 * n integer sample labels, 0-based, in [0, 2^20) (labelled counts,
 * wt_job.n_lab: a count checks them against its n_lab) */
SEXP wt_r_catalog_new(SEXP xyz, SEXP w, SEXP ranges, SEXP bits, SEXP lab)
{
  wt_points p;
  memset(&p, 0, sizeof p);
  wtr_points_of(xyz, &p);
  p.w = wtr_weights_of(w, &p, "weights");
  if (!isNull(bits)) {
    if (TYPEOF(bits) != INTSXP || !isMatrix(bits) ||
        (int64_t)nrows(bits) != p.n || ncols(bits) < 1 ||
        ncols(bits) > WT_PIP_MAX_WORDS)
      error("wtheta internal: bitwise words must be an n x k integer matrix, "
            "1 <= k <= %d", WT_PIP_MAX_WORDS);
    p.bits = (const uint32_t *)INTEGER(bits);
    p.n_words = ncols(bits);
  }
  if (!isNull(lab)) {
    if (TYPEOF(lab) != INTSXP || (int64_t)XLENGTH(lab) != p.n)
      error("wtheta internal: labels must be %lld integers, not a vector "
            "of type %s and length %lld", (long long)p.n,
            type2char(TYPEOF(lab)), (long long)XLENGTH(lab));
    const int *l = INTEGER(lab);
    for (int64_t i = 0; i < p.n; i++)
      if (l[i] < 0 || l[i] >= (1 << 20))
        error("wtheta internal: label %d of point %lld lies outside "
              "[0, 2^20)", l[i], (long long)i + 1);
    p.lab = (const int32_t *)l;
  }
  if (p.n < 1) error("wtheta internal: a catalog without points");
  int64_t *r = NULL, k = 0;
  if (!isNull(ranges)) {
    const double *v = wtr_real_or_die(ranges, "ranges");
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
  SEXP keep = PROTECT(list4(xyz, w, bits, lab));
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
  wt_catalog_drop_grid(wtr_catalog_of(ptr, "catalog"));
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

/* one thread's block of wt_r_check_coords()'s pass: whether every row is
 * well (finite, dec in [-90, 90]) and whether any ra lies outside [0,
 * 360), branch-free; ok and out_ra: one each per thread */
typedef struct {
  const double *r, *d;
  int *ok, *out_ra;
} coords_pass;

static void coords_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const coords_pass *c = (const coords_pass *)arg;
  const double *r = c->r, *d = c->d;
  int ok = 1, out_ra = 0;
  for (int64_t i = lo; i < hi; i++) {
    ok &= isfinite(r[i]) & isfinite(d[i]) & (d[i] >= -90.0) & (d[i] <= 90.0);
    out_ra |= (r[i] < 0.0) | (r[i] >= 360.0);
  }
  c->ok[tid] &= ok;
  c->out_ra[tid] |= out_ra;
}

/* one pass over the coordinates of a catalog (degrees), on up to
 * `threads` threads (a light pass): the first row (1-based, 0 for none)
 * with a non-finite ra, a non-finite dec, a dec outside [-90, 90], and
 * whether any ra lies outside [0, 360). The first bad rows are found by
 * a second, serial pass, only when there are any. */
SEXP wt_r_check_coords(SEXP ra, SEXP dec, SEXP threads)
{
  const R_xlen_t n = XLENGTH(ra);
  if (XLENGTH(dec) != n) error("wtheta internal: ra and dec lengths differ");
  const double *r = wtr_real_or_die(ra, "ra"), *d = wtr_real_or_die(dec, "dec");
  double bad_ra = 0, bad_dec = 0, bad_range = 0;
  const int nt = wtr_team_of(threads, (int64_t)n, WT_LIGHT_GRAIN);
  int *ok_t = (int *)R_alloc((size_t)nt, sizeof *ok_t);
  int *out_t = (int *)R_alloc((size_t)nt, sizeof *out_t);
  for (int k = 0; k < nt; k++) {
    ok_t[k] = 1;
    out_t[k] = 0;
  }
  coords_pass c = {r, d, ok_t, out_t};
  wt_team_for(nt, (int64_t)n, 0, coords_part, &c);
  int ok = 1, wrap = 0;
  for (int k = 0; k < nt; k++) {
    ok &= ok_t[k];
    wrap |= out_t[k];
  }
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
  const double *r = wtr_real_or_die(ra, "ra");
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

/* wt_catalog_fingerprint() of unit vectors xyz (an n x 3 matrix): the five
 * sums as doubles (exact below 2^53) */
SEXP wt_r_fingerprint(SEXP xyz, SEXP threads)
{
  if (!isMatrix(xyz) || ncols(xyz) != 3)
    error("wtheta internal: xyz must be an n x 3 matrix");
  const double *x = wtr_real_or_die(xyz, "xyz");
  const int64_t n = (int64_t)nrows(xyz);
  const int T = wtr_team_of(threads, n, WT_LIGHT_GRAIN);
  SEXP out = PROTECT(allocVector(REALSXP, 5));
  wt_catalog_fingerprint(x, x + n, x + 2 * n, n, T, REAL(out));
  UNPROTECT(1);
  return out;
}
