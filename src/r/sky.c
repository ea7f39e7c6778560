/* The sky: the footprint check's cells (sky/cells.c, R/footprint_check.R)
 * and the HEALPix code (sky/healpix.c, R/footprint.R), called in
 * chunks with an interrupt check between them, from the main thread;
 * errorcall(R_NilValue, ) after freeing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#include "boundary.h"
#include "sky/cells.h"
#include "sky/healpix.h"

#define CHUNK ((R_xlen_t)1 << 21)

/* between chunks: an interrupt, or R's own error (a time limit), raised
 * again as it came; what the caller allocated is R's (PROTECT, R_alloc) */
static void interrupt_point(void)
{
  if (wtr_interrupted()) wtr_raise_caught();
}

static const double *rot_of(SEXP rot)
{
  if (isNull(rot)) return NULL;
  if (TYPEOF(rot) != REALSXP || XLENGTH(rot) != 9)
    errorcall(R_NilValue, "wtheta internal: rot must be 9 doubles or NULL");
  return REAL(rot);
}

static int64_t nside_of(SEXP nside)
{
  double v = asReal(nside);
  if (!(v >= 1 && v <= 536870912.0)) errorcall(R_NilValue, "wtheta internal: bad nside");
  return (int64_t)v;
}

static void fail(int st)
{
  if (st == WT_ERR_NO_HEALPIX)
    errorcall(R_NilValue, "wtheta was built without HEALPix support (chealpix)");
  if (st != WT_OK) errorcall(R_NilValue, "wtheta internal: HEALPix status %d", st);
}

/* a footprint check's cells as R's list(level, id, d, r), c freed */
static SEXP cells_list(wt_cells *c)
{
  const char *names[] = {"level", "id", "d", "r", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, ScalarInteger(c->level));
  double *src[3] = {c->id, c->d, c->r};
  for (int k = 0; k < 3; k++) {
    SEXP v = allocVector(REALSXP, (R_xlen_t)c->n_cells);
    SET_VECTOR_ELT(out, k + 1, v);
    if (c->n_cells) memcpy(REAL(v), src[k], (size_t)c->n_cells * sizeof(double));
  }
  wt_cells_free(c);
  UNPROTECT(1);
  return out;
}

static void cells_status(int status)
{
  if (status == WT_ERR_NOMEM)
    errorcall(R_NilValue, "wtheta: not enough memory for the footprint check's cells");
  if (status != WT_OK) errorcall(R_NilValue, "wtheta internal: footprint cells (status %d)",
                             status);
}

/* the footprint check's cells (sky/cells.h): list(level, id, d, r) for the
 * level kept, level -1 and empty vectors when none */
SEXP wt_r_footprint_cells(SEXP ra_d, SEXP dec_d, SEXP ra_r, SEXP dec_r,
                          SEXP thin, SEXP threads)
{
  const int64_t n_d = XLENGTH(ra_d), n_r = XLENGTH(ra_r);
  if (XLENGTH(dec_d) != n_d || XLENGTH(dec_r) != n_r)
    errorcall(R_NilValue, "wtheta internal: ra and dec of different lengths");
  wt_cells c;
  cells_status(wt_footprint_cells(
    wtr_real_or_die(ra_d, "ra"), wtr_real_or_die(dec_d, "dec"), n_d,
    wtr_real_or_die(ra_r, "ra"), wtr_real_or_die(dec_r, "dec"), n_r,
    (int64_t)asReal(thin), WT_CELLS_TOP, 12, 25.0, 256,
    wtr_team_of(threads, n_d + n_r, WT_LIGHT_GRAIN), &c));
  return cells_list(&c);
}

/* the same for several data sets (a list of list(ra, dec)) against one set
 * of randoms, whose cells are made once: a list of the results */
SEXP wt_r_footprint_cells_many(SEXP data, SEXP ra_r, SEXP dec_r, SEXP thin,
                               SEXP threads)
{
  const int64_t n_r = XLENGTH(ra_r);
  if (TYPEOF(data) != VECSXP || XLENGTH(dec_r) != n_r)
    errorcall(R_NilValue, "wtheta internal: footprint cells of many");
  const R_xlen_t k = XLENGTH(data);
  for (R_xlen_t i = 0; i < k; i++) {
    SEXP di = VECTOR_ELT(data, i);
    if (TYPEOF(di) != VECSXP || XLENGTH(di) != 2 ||
        XLENGTH(VECTOR_ELT(di, 0)) != XLENGTH(VECTOR_ELT(di, 1)) ||
        XLENGTH(VECTOR_ELT(di, 0)) < 1)
      errorcall(R_NilValue, "wtheta internal: footprint cells of many");
    wtr_real_or_die(VECTOR_ELT(di, 0), "ra");
    wtr_real_or_die(VECTOR_ELT(di, 1), "dec");
  }
  const int nt = wtr_team_of(threads, n_r, WT_LIGHT_GRAIN);
  wt_cells_randoms rr;
  cells_status(wt_cells_randoms_make(
    wtr_real_or_die(ra_r, "ra"), wtr_real_or_die(dec_r, "dec"), n_r,
    (int64_t)asReal(thin), WT_CELLS_TOP, nt, &rr));
  SEXP out = PROTECT(allocVector(VECSXP, k));
  for (R_xlen_t i = 0; i < k; i++) {
    SEXP di = VECTOR_ELT(data, i);
    wt_cells c;
    const int st = wt_footprint_cells_of(
      &rr, REAL(VECTOR_ELT(di, 0)), REAL(VECTOR_ELT(di, 1)),
      XLENGTH(VECTOR_ELT(di, 0)), 12, 25.0, 256,
      wtr_team_of(threads, XLENGTH(VECTOR_ELT(di, 0)) + n_r,
                  WT_LIGHT_GRAIN), &c);
    if (st != WT_OK) {
      wt_cells_randoms_free(&rr);
      cells_status(st);
    }
    SET_VECTOR_ELT(out, i, cells_list(&c));
  }
  wt_cells_randoms_free(&rr);
  UNPROTECT(1);
  return out;
}

/* mean() of x over each level of the factor f (codes 1..nlev, every code
 * in range): for each level, the values in order summed in long double,
 * divided by their number, then corrected by the long double sum of the
 * differences over that number, as R's mean() of doubles does
 * (R/footprint_check.R, group_means()). NULL when a level is empty or a
 * sum is not finite (R then calls mean() itself). */
SEXP wt_r_group_means(SEXP x, SEXP f, SEXP nlev)
{
  const R_xlen_t n = XLENGTH(x);
  const int k = asInteger(nlev);
  if (TYPEOF(x) != REALSXP || TYPEOF(f) != INTSXP || XLENGTH(f) != n ||
      k < 1)
    errorcall(R_NilValue, "wtheta internal: group means");
  const double *xv = REAL(x);
  const int *fv = INTEGER(f);
  for (R_xlen_t i = 0; i < n; i++) {
    if (fv[i] < 1 || fv[i] > k)
      errorcall(R_NilValue, "wtheta internal: group means");
  }
  /* scratch from malloc(), whose blocks suit long double (R_alloc()'s
   * are aligned for double only); nothing between it and free() can
   * raise an R error */
  SEXP out = PROTECT(allocVector(REALSXP, k));
  long double *s = (long double *)malloc(2 * (size_t)k * sizeof(long double));
  R_xlen_t *m = (R_xlen_t *)calloc((size_t)k, sizeof(R_xlen_t));
  if (s == NULL || m == NULL) {
    free(s);
    free(m);
    errorcall(R_NilValue, "wtheta: out of memory for %d group means", k);
  }
  long double *t = s + k;
  for (int g = 0; g < k; g++) s[g] = t[g] = 0.0L;
  for (R_xlen_t i = 0; i < n; i++) {
    s[fv[i] - 1] += xv[i];
    m[fv[i] - 1]++;
  }
  int ok = 1;
  for (int g = 0; g < k && ok; g++) {
    ok = m[g] > 0 && R_FINITE((double)s[g]);
    if (ok) {
      s[g] /= m[g];
      ok = R_FINITE((double)s[g]);
    }
  }
  if (ok) {
    for (R_xlen_t i = 0; i < n; i++) t[fv[i] - 1] += (xv[i] - s[fv[i] - 1]);
    for (int g = 0; g < k; g++) REAL(out)[g] = (double)(s[g] + t[g] / m[g]);
  }
  free(s);
  free(m);
  UNPROTECT(1);
  return ok ? out : R_NilValue;
}

SEXP wt_r_healpix_compiled(void)
{
  return ScalarLogical(wt_healpix_compiled());
}

/* the length of positions given as two double vectors ra, dec */
static R_xlen_t radec_length(SEXP ra, SEXP dec)
{
  if (TYPEOF(ra) != REALSXP || TYPEOF(dec) != REALSXP ||
      XLENGTH(ra) != XLENGTH(dec))
    errorcall(R_NilValue, "wtheta internal: ra and dec must be doubles of one length");
  return XLENGTH(ra);
}

SEXP wt_r_healpix_pixels(SEXP nside, SEXP nest, SEXP ra, SEXP dec, SEXP rot,
                         SEXP threads)
{
  R_xlen_t n = radec_length(ra, dec);
  int64_t ns = nside_of(nside);
  const double *r = rot_of(rot);
  int t = wtr_team_of(threads, n, WT_LIGHT_GRAIN);
  SEXP out = PROTECT(allocVector(REALSXP, n));
  for (R_xlen_t s = 0; s < n; s += CHUNK) {
    R_xlen_t m = n - s < CHUNK ? n - s : CHUNK;
    int st = wt_healpix_pixels(ns, asLogical(nest), REAL(ra) + s,
                               REAL(dec) + s, m, r, REAL(out) + s, t);
    if (st != WT_OK) { UNPROTECT(1); fail(st); }
    interrupt_point();
  }
  UNPROTECT(1);
  return out;
}

SEXP wt_r_healpix_centres(SEXP nside, SEXP nest, SEXP pix, SEXP rot,
                          SEXP threads)
{
  if (TYPEOF(pix) != REALSXP) errorcall(R_NilValue, "wtheta internal: pix must be double");
  R_xlen_t n = XLENGTH(pix);
  int t = wtr_team_of(threads, n, WT_LIGHT_GRAIN);
  SEXP ra = PROTECT(allocVector(REALSXP, n));
  SEXP dec = PROTECT(allocVector(REALSXP, n));
  int st = wt_healpix_centres(nside_of(nside), asLogical(nest), REAL(pix),
                              n, rot_of(rot), REAL(ra), REAL(dec), t);
  if (st != WT_OK) { UNPROTECT(2); fail(st); }
  SEXP out = PROTECT(allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, ra);
  SET_VECTOR_ELT(out, 1, dec);
  UNPROTECT(3);
  return out;
}

SEXP wt_r_healpix_renumber(SEXP nside, SEXP to_nest, SEXP pix)
{
  if (TYPEOF(pix) != REALSXP) errorcall(R_NilValue, "wtheta internal: pix must be double");
  R_xlen_t n = XLENGTH(pix);
  SEXP out = PROTECT(allocVector(REALSXP, n));
  int st = wt_healpix_renumber(nside_of(nside), asLogical(to_nest),
                               REAL(pix), n, REAL(out));
  UNPROTECT(1);
  fail(st);
  return out;
}

/* Large output vectors are written once, by every thread, straight after
 * allocation: on Linux, ask for transparent huge pages (where the system
 * leaves them to madvise) so that first writes fault 2 MiB at a time, not
 * 4 KiB. Only a hint: nothing changes but the speed where it is refused. */
static void huge_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)1 << 21;
  uintptr_t a = (uintptr_t)p, b = a + bytes;
  uintptr_t lo = (a + huge - 1) & ~(huge - 1), hi = b & ~(huge - 1);
  if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
  (void)p; (void)bytes;
#endif
}

/* the runs (see healpix.h) of a map's increasing pixel numbers `pix`
 * (doubles) among npix, with their tables, in R_alloc memory (freed by R at
 * the end of the call, error or not) */
static wt_runs runs_of(SEXP pix, int64_t npix)
{
  if (TYPEOF(pix) != REALSXP || XLENGTH(pix) < 1)
    errorcall(R_NilValue, "wtheta internal: pixels must be doubles");
  if (npix > INT64_C(12) << 56) errorcall(R_NilValue, "wtheta internal: bad nside");
  R_xlen_t k = XLENGTH(pix);
  int64_t n_runs = wt_runs_find(REAL(pix), k, NULL, NULL);
  if (n_runs < 0) errorcall(R_NilValue, "wtheta internal: pixels must increase");
  R_xlen_t len = n_runs > 0 ? n_runs : 1;
  double *start = (double *)R_alloc(len, sizeof(double));
  double *first = (double *)R_alloc(len, sizeof(double));
  wt_runs_find(REAL(pix), k, start, first);
  wt_runs r;
  int64_t n_index, n_pixel;
  fail(wt_runs_plan(&r, start, first, n_runs, k, npix, &n_index, &n_pixel));
  r.by_index = (int64_t *)R_alloc(n_index, sizeof(int64_t));
  r.by_pixel = (int64_t *)R_alloc(n_pixel, sizeof(int64_t));
  wt_runs_build(&r);
  return r;
}

/* n points from the increasing nested pixels `pix` of a map at nside, with
 * weights `w` per pixel (NULL: all pixels equally likely, by area); seed:
 * two integers from R (the high and low 32 bits); fine_order: see below */
SEXP wt_r_healpix_draw(SEXP nside, SEXP pix, SEXP w, SEXP seed, SEXP n,
                       SEXP rot, SEXP fine_order, SEXP threads)
{
  /* NULL: WT_HEALPIX_FINE_ORDER; tests take less, to compare the points
   * with chealpix's centres at an nside whose pixel numbers are exact in
   * doubles */
  int fine = isNull(fine_order) ? WT_HEALPIX_FINE_ORDER :
    asInteger(fine_order);
  if (fine == NA_INTEGER || fine < 0 || fine > WT_HEALPIX_FINE_ORDER)
    errorcall(R_NilValue, "wtheta internal: bad fine_order");
  int64_t ns = nside_of(nside);
  if (TYPEOF(pix) != REALSXP) errorcall(R_NilValue, "wtheta internal: pix must be double");
  R_xlen_t kk = XLENGTH(pix);
  if (!isNull(w) && (TYPEOF(w) != REALSXP || XLENGTH(w) != kk))
    errorcall(R_NilValue, "wtheta internal: w must be one double per pixel");
  if (TYPEOF(seed) != REALSXP || XLENGTH(seed) != 2)
    errorcall(R_NilValue, "wtheta internal: seed must be two doubles");
  uint64_t s = ((uint64_t)REAL(seed)[0] << 32) | (uint64_t)REAL(seed)[1];
  double nd = asReal(n);
  if (!(nd >= 0 && nd <= 4503599627370496.0)) errorcall(R_NilValue, "wtheta internal: n");
  R_xlen_t nn = (R_xlen_t)nd;
  const double *r = rot_of(rot);
  int t = wtr_team_of(threads, nn, WT_LIGHT_GRAIN);
  wt_runs runs = runs_of(pix, 12 * ns * ns);
  double *prob = NULL;
  int64_t *alias = NULL;
  if (!isNull(w)) {
    /* R_alloc: freed by R at the end of the call, error or not */
    prob = (double *)R_alloc(kk, sizeof(double));
    alias = (int64_t *)R_alloc(kk, sizeof(int64_t));
    int64_t *work = (int64_t *)R_alloc(2 * kk, sizeof(int64_t));
    fail(wt_alias_build(REAL(w), kk, prob, alias, work));
  }
  SEXP ra = PROTECT(allocVector(REALSXP, nn));
  SEXP dec = PROTECT(allocVector(REALSXP, nn));
  huge_pages(REAL(ra), (size_t)nn * sizeof(double));
  huge_pages(REAL(dec), (size_t)nn * sizeof(double));
  for (R_xlen_t f = 0; f < nn; f += CHUNK) {
    R_xlen_t m = nn - f < CHUNK ? nn - f : CHUNK;
    int st = wt_healpix_draw(ns, &runs, prob, alias, s, f, m, r, fine,
                             REAL(ra) + f, REAL(dec) + f, t);
    if (st != WT_OK) { UNPROTECT(2); fail(st); }
    interrupt_point();
  }
  SEXP out = PROTECT(allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, ra);
  SET_VECTOR_ELT(out, 1, dec);
  UNPROTECT(3);
  return out;
}

/* TRUE where (ra, dec) falls on one of the increasing pixels `pix` of a
 * map (numbers in its ordering, nest) */
SEXP wt_r_healpix_on_map(SEXP nside, SEXP nest, SEXP pix, SEXP ra, SEXP dec,
                         SEXP rot, SEXP threads)
{
  R_xlen_t n = radec_length(ra, dec);
  int64_t ns = nside_of(nside);
  const double *r = rot_of(rot);
  int t = wtr_team_of(threads, n, WT_LIGHT_GRAIN);
  wt_runs runs = runs_of(pix, 12 * ns * ns);
  SEXP out = PROTECT(allocVector(LGLSXP, n));
  huge_pages(LOGICAL(out), (size_t)n * sizeof(int));
  for (R_xlen_t s = 0; s < n; s += CHUNK) {
    R_xlen_t m = n - s < CHUNK ? n - s : CHUNK;
    int st = wt_healpix_on_map(ns, asLogical(nest), REAL(ra) + s,
                               REAL(dec) + s, m, r, &runs, LOGICAL(out) + s,
                               t);
    if (st != WT_OK) { UNPROTECT(1); fail(st); }
    interrupt_point();
  }
  UNPROTECT(1);
  return out;
}
