/* PIP weights (R/pip.R): bitwise weight columns checked and made 32-bit
 * words, and the per-object work of a PIP count's normalisation in one
 * pass each: the objects' popcounts, their weights binned by popcount
 * (and by patch), and the one-sided inverse probability weights. R keeps
 * only the small matrix algebra with pip_joint(). Every sum runs
 * sequentially in object order, so results are deterministic. */
#include <string.h>
#include <limits.h>
#include "boundary.h"

/* the set bits of a 32-bit word, portable (no POPCNT instruction needed) */
static inline int pop32(uint32_t v)
{
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  return (int)((((v + (v >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
}

/* the words of bits: an n x k integer matrix (bitwise_words()), k >= 1 */
static const uint32_t *words_of(SEXP bits, R_xlen_t *n, int *k)
{
  if (TYPEOF(bits) != INTSXP || !isMatrix(bits) || ncols(bits) < 1)
    error("wtheta internal: bitwise words must be an n x k integer matrix");
  *n = nrows(bits);
  *k = ncols(bits);
  return (const uint32_t *)INTEGER(bits);
}

/* the popcount of row i of the n x k words b (column major) */
static inline int row_pop(const uint32_t *b, R_xlen_t n, int k, R_xlen_t i)
{
  int c = pop32(b[i]);
  for (int w = 1; w < k; w++) c += pop32(b[(size_t)w * (size_t)n + i]);
  return c;
}

/* n doubles of w (a weight vector), or NULL for NULL (unit weights) */
static const double *weights_or_null(SEXP w, R_xlen_t n)
{
  if (isNull(w)) return NULL;
  if (TYPEOF(w) != REALSXP || XLENGTH(w) != n)
    error("wtheta internal: PIP weights must be %lld doubles",
          (long long)n);
  return REAL(w);
}

/* The first value of one bitwise column v (a double vector) that is not
 * a word, as a row number (1 based: an integer, a double beyond
 * INT_MAX), or 0 when all are: with
 * is64 (the bits of a bit64::integer64), NA (its INT64_MIN pattern);
 * otherwise anything but a whole number from 0 to 2^32 - 1 (NA and NaN
 * included). bitwise_words() in R/pip.R names the row in its error. */
SEXP wt_r_bitwise_bad(SEXP v, SEXP is64)
{
  if (TYPEOF(v) != REALSXP || TYPEOF(is64) != LGLSXP || XLENGTH(is64) != 1)
    error("wtheta internal: a bitwise column");
  const R_xlen_t n = XLENGTH(v);
  const double *x = REAL(v);
  R_xlen_t bad = 0;
  if (LOGICAL(is64)[0]) {
    for (R_xlen_t i = 0; i < n && !bad; i++) {
      uint64_t u;
      memcpy(&u, &x[i], sizeof u);
      if (u == UINT64_C(0x8000000000000000)) bad = i + 1;
    }
  } else {
    for (R_xlen_t i = 0; i < n; i++) {
      const double d = x[i];
      /* NaN fails every comparison: !(...) catches it; in range, the
       * conversion truncates, so a whole number comes back unchanged */
      if (!(d >= 0.0 && d <= 4294967295.0 && (double)(uint32_t)d == d)) {
        bad = i + 1;
        break;
      }
    }
  }
  return bad <= INT_MAX ? ScalarInteger((int)bad) : ScalarReal((double)bad);
}

/* Bitwise weight columns (PIP) as 32-bit words: cols, a list of double
 * vectors of one length n, each either whole numbers in [0, 2^32) (checked
 * first by wt_r_bitwise_bad()) or, where is64[k] is TRUE, the 64-bit
 * patterns of a bit64::integer64 column, which become two words (low,
 * high): the popcount of an AND is the same. An n x k integer matrix whose
 * integers hold the words' 32 bits. */
SEXP wt_r_bitwise_words(SEXP cols, SEXP is64)
{
  if (TYPEOF(cols) != VECSXP || TYPEOF(is64) != LGLSXP ||
      XLENGTH(is64) != XLENGTH(cols) || XLENGTH(cols) < 1)
    error("wtheta internal: bitwise columns");
  const R_xlen_t m = XLENGTH(cols);
  const R_xlen_t n = XLENGTH(VECTOR_ELT(cols, 0));
  int k = 0;
  for (R_xlen_t c = 0; c < m; c++) {
    SEXP v = VECTOR_ELT(cols, c);
    if (TYPEOF(v) != REALSXP || XLENGTH(v) != n)
      error("wtheta internal: bitwise column %d", (int)c + 1);
    k += LOGICAL(is64)[c] ? 2 : 1;
  }
  if (k > WT_PIP_MAX_WORDS)
    error("wtheta: `bitwise` gives %d 32-bit words per object; at most %d "
          "(%d realisations) are supported", k, WT_PIP_MAX_WORDS,
          32 * WT_PIP_MAX_WORDS);
  SEXP out = PROTECT(allocMatrix(INTSXP, (int)n, k));
  uint32_t *o = (uint32_t *)INTEGER(out);
  int at = 0;
  for (R_xlen_t c = 0; c < m; c++) {
    const double *v = REAL(VECTOR_ELT(cols, c));
    if (LOGICAL(is64)[c]) {
      for (R_xlen_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &v[i], sizeof u);
        o[(size_t)at * n + i] = (uint32_t)(u & 0xffffffffu);
        o[(size_t)(at + 1) * n + i] = (uint32_t)(u >> 32);
      }
      at += 2;
    } else {
      for (R_xlen_t i = 0; i < n; i++)
        o[(size_t)at * n + i] = (uint32_t)v[i];
      at++;
    }
  }
  UNPROTECT(1);
  return out;
}

/* The objects of one catalog of a PIP count binned by popcount, for
 * pip_norm() and pip_patch_norm(): bits, its n x k words; w, n weights
 * (NULL: units); patch, NULL or n patch numbers 1..n_patches (integers or
 * doubles); n_index, the bins K (popcounts 0..K - 1: nrow(pip_joint())).
 * list(max: the largest popcount (an integer); w, w2: K doubles, the sums
 * of w and of w^2 by popcount; patch_w, patch_w2: with patches, the same
 * by patch and popcount, n_patches x K matrices, else NULL). Where max >= K
 * the sums are NULL (the caller raises its error). */
SEXP wt_r_pip_bins(SEXP bits, SEXP w, SEXP patch, SEXP n_patches,
                   SEXP n_index)
{
  R_xlen_t n;
  int k;
  const uint32_t *b = words_of(bits, &n, &k);
  const double *wv = weights_or_null(w, n);
  const int K = asInteger(n_index), P = asInteger(n_patches);
  if (K == NA_INTEGER || K < 1) error("wtheta internal: PIP bins");
  const int *pint = NULL;
  const double *pd = NULL;
  if (!isNull(patch)) {
    if (P == NA_INTEGER || P < 1 || XLENGTH(patch) != n)
      error("wtheta internal: PIP patch numbers");
    if (TYPEOF(patch) == INTSXP) pint = INTEGER(patch);
    else if (TYPEOF(patch) == REALSXP) pd = REAL(patch);
    else error("wtheta internal: PIP patch numbers");
  }
  const char *names[] = {"max", "w", "w2", "patch_w", "patch_w2", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SEXP s1 = allocVector(REALSXP, K);
  SET_VECTOR_ELT(out, 1, s1);
  SEXP s2 = allocVector(REALSXP, K);
  SET_VECTOR_ELT(out, 2, s2);
  double *w1 = REAL(s1), *w2 = REAL(s2), *pw1 = NULL, *pw2 = NULL;
  memset(w1, 0, (size_t)K * sizeof *w1);
  memset(w2, 0, (size_t)K * sizeof *w2);
  if (pint || pd) {
    SEXP m1 = allocMatrix(REALSXP, P, K);
    SET_VECTOR_ELT(out, 3, m1);
    SEXP m2 = allocMatrix(REALSXP, P, K);
    SET_VECTOR_ELT(out, 4, m2);
    pw1 = REAL(m1);
    pw2 = REAL(m2);
    memset(pw1, 0, (size_t)P * (size_t)K * sizeof *pw1);
    memset(pw2, 0, (size_t)P * (size_t)K * sizeof *pw2);
  }
  /* one pass: an object beyond the bins is only noted (top), and the
   * sums are then dropped */
  int top = 0;
  for (R_xlen_t i = 0; i < n; i++) {
    const int c = row_pop(b, n, k, i);
    if (c > top) top = c;
    if (c >= K) continue;
    const double x = wv ? wv[i] : 1.0, x2 = x * x;
    w1[c] += x;
    w2[c] += x2;
    if (pw1) {
      const double pv = pint ? (pint[i] == NA_INTEGER ? -1.0 : (double)pint[i])
                           : pd[i];
      if (!(pv >= 1.0 && pv <= (double)P))
        error("wtheta internal: PIP patch number %g of object %lld", pv,
              (long long)i + 1);
      const size_t at = (size_t)(pv - 1.0) + (size_t)P * (size_t)c;
      pw1[at] += x;
      pw2[at] += x2;
    }
  }
  SET_VECTOR_ELT(out, 0, ScalarInteger(top));
  if (top >= K)
    for (int e = 1; e < 5; e++) SET_VECTOR_ELT(out, e, R_NilValue);
  UNPROTECT(1);
  return out;
}

/* The one-sided fold of a cross count (pip_resolve()): each object's
 * weight times its own inverse probability, w[i] * by_count[popcount_i]
 * (by_count: pip_by_count(), one value per popcount 0..32k; w NULL:
 * units). n doubles. */
SEXP wt_r_pip_fold(SEXP bits, SEXP w, SEXP by_count)
{
  R_xlen_t n;
  int k;
  const uint32_t *b = words_of(bits, &n, &k);
  const double *wv = weights_or_null(w, n);
  if (TYPEOF(by_count) != REALSXP || XLENGTH(by_count) < 32 * (R_xlen_t)k + 1)
    error("wtheta internal: PIP factors by popcount");
  const double *f = REAL(by_count);
  SEXP out = PROTECT(allocVector(REALSXP, n));
  double *o = REAL(out);
  for (R_xlen_t i = 0; i < n; i++) {
    const double fi = f[row_pop(b, n, k, i)];
    o[i] = wv ? wv[i] * fi : fi;
  }
  UNPROTECT(1);
  return out;
}
