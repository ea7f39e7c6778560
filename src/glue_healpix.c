/* The R boundary of the HEALPix code (healpix.c): checks what R hands
 * over, calls the plain-C functions in chunks (checking for interrupts
 * between them, from the main thread), then error() after freeing. */
#include <stdint.h>
#include <R.h>
#include <Rinternals.h>
#include "wt.h"
#include "core/threads.h"
#include "sky/healpix.h"

#define CHUNK ((R_xlen_t)1 << 21)

static void check_interrupt(void *unused)
{
  (void)unused;
  R_CheckUserInterrupt();
}

static void interrupt_point(void)
{
  if (!R_ToplevelExec(check_interrupt, NULL))
    error("wtheta: interrupted");
}

static const double *rot_of(SEXP rot)
{
  if (isNull(rot)) return NULL;
  if (TYPEOF(rot) != REALSXP || XLENGTH(rot) != 9)
    error("wtheta internal: rot must be 9 doubles or NULL");
  return REAL(rot);
}

static int64_t nside_of(SEXP nside)
{
  double v = asReal(nside);
  if (!(v >= 1 && v <= 536870912.0)) error("wtheta internal: bad nside");
  return (int64_t)v;
}

static void fail(int st)
{
  if (st == WT_ERR_NO_HEALPIX)
    error("wtheta was built without HEALPix support (chealpix)");
  if (st != WT_OK) error("wtheta internal: HEALPix status %d", st);
}

static int threads_of(SEXP threads, R_xlen_t n)
{
  int t = asInteger(threads);
  if (t == NA_INTEGER || t < 1) error("wtheta internal: threads < 1");
  t = wt_threads_for(t, n, WT_LIGHT_GRAIN);
  char msg[200];
  if (wt_threads_start(t, msg, sizeof msg) != 0)
    error("wtheta: cannot start %d CPU threads: %s", t, msg);
  return t;
}

SEXP wt_r_healpix_compiled(void)
{
  return ScalarLogical(wt_healpix_compiled());
}

SEXP wt_r_healpix_pixels(SEXP nside, SEXP nest, SEXP ra, SEXP dec, SEXP rot,
                         SEXP threads)
{
  if (TYPEOF(ra) != REALSXP || TYPEOF(dec) != REALSXP ||
      XLENGTH(ra) != XLENGTH(dec))
    error("wtheta internal: ra and dec must be doubles of one length");
  R_xlen_t n = XLENGTH(ra);
  int64_t ns = nside_of(nside);
  const double *r = rot_of(rot);
  int t = threads_of(threads, n);
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

SEXP wt_r_healpix_centres(SEXP nside, SEXP nest, SEXP pix, SEXP rot)
{
  if (TYPEOF(pix) != REALSXP) error("wtheta internal: pix must be double");
  R_xlen_t n = XLENGTH(pix);
  SEXP ra = PROTECT(allocVector(REALSXP, n));
  SEXP dec = PROTECT(allocVector(REALSXP, n));
  int st = wt_healpix_centres(nside_of(nside), asLogical(nest), REAL(pix),
                              n, rot_of(rot), REAL(ra), REAL(dec));
  if (st != WT_OK) { UNPROTECT(2); fail(st); }
  SEXP out = PROTECT(allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, ra);
  SET_VECTOR_ELT(out, 1, dec);
  UNPROTECT(3);
  return out;
}

SEXP wt_r_healpix_renumber(SEXP nside, SEXP to_nest, SEXP pix)
{
  if (TYPEOF(pix) != REALSXP) error("wtheta internal: pix must be double");
  R_xlen_t n = XLENGTH(pix);
  SEXP out = PROTECT(allocVector(REALSXP, n));
  int st = wt_healpix_renumber(nside_of(nside), asLogical(to_nest),
                               REAL(pix), n, REAL(out));
  UNPROTECT(1);
  fail(st);
  return out;
}

/* n points from the increasing nested pixels given as runs (run_start,
 * run_end: see healpix.h), with weights `w` per pixel (NULL: all pixels
 * equally likely, by area); seed: two integers from R (the high and low 32
 * bits) */
SEXP wt_r_healpix_draw(SEXP nside, SEXP run_start, SEXP run_end, SEXP w,
                       SEXP seed, SEXP n, SEXP rot, SEXP threads)
{
  if (TYPEOF(run_start) != REALSXP || TYPEOF(run_end) != REALSXP ||
      XLENGTH(run_start) < 1 || XLENGTH(run_start) != XLENGTH(run_end))
    error("wtheta internal: runs must be doubles of one length");
  R_xlen_t n_runs = XLENGTH(run_start);
  R_xlen_t k = (R_xlen_t)REAL(run_end)[n_runs - 1];
  if (!isNull(w) && (TYPEOF(w) != REALSXP || XLENGTH(w) != k))
    error("wtheta internal: w must be one double per pixel");
  if (TYPEOF(seed) != REALSXP || XLENGTH(seed) != 2)
    error("wtheta internal: seed must be two doubles");
  uint64_t s = ((uint64_t)REAL(seed)[0] << 32) | (uint64_t)REAL(seed)[1];
  double nd = asReal(n);
  if (!(nd >= 0 && nd <= 4503599627370496.0)) error("wtheta internal: n");
  R_xlen_t nn = (R_xlen_t)nd;
  const double *r = rot_of(rot);
  int64_t ns = nside_of(nside);
  int t = threads_of(threads, nn);
  double *prob = NULL;
  int64_t *alias = NULL;
  if (!isNull(w)) {
    /* R_alloc: freed by R at the end of the call, error or not */
    prob = (double *)R_alloc(k, sizeof(double));
    alias = (int64_t *)R_alloc(k, sizeof(int64_t));
    int64_t *work = (int64_t *)R_alloc(2 * k, sizeof(int64_t));
    fail(wt_alias_build(REAL(w), k, prob, alias, work));
  }
  SEXP ra = PROTECT(allocVector(REALSXP, nn));
  SEXP dec = PROTECT(allocVector(REALSXP, nn));
  for (R_xlen_t f = 0; f < nn; f += CHUNK) {
    R_xlen_t m = nn - f < CHUNK ? nn - f : CHUNK;
    int st = wt_healpix_draw(ns, REAL(run_start), REAL(run_end), n_runs,
                             prob, alias, s, f, m, r, REAL(ra) + f,
                             REAL(dec) + f, t);
    if (st != WT_OK) { UNPROTECT(2); fail(st); }
    interrupt_point();
  }
  SEXP out = PROTECT(allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, ra);
  SET_VECTOR_ELT(out, 1, dec);
  UNPROTECT(3);
  return out;
}
