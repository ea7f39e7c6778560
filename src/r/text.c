/* The R boundary of the text reader (R/text.R; io/text.c): a file or
 * stream read whole (gzip or plain), the layout and values of its text.
 * Checks what R hands over, calls the plain-C reader, frees, then errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>
#include <zlib.h>
#include "boundary.h"
#include "io/io.h"

/* The whole decompressed content of a gzip-compressed or plain file or
 * stream (a FIFO, a process substitution), read once through zlib; a
 * truncated or corrupt gzip stream is an error, never a prefix. */
SEXP wt_r_read_gzip(SEXP path)
{
  const char *p = wtr_path_of(path);
  gzFile g = gzopen(p, "rb");
  if (!g) errorcall(R_NilValue, "cannot open \"%s\"", p);
  size_t cap = 1 << 20, len = 0;
  char *buf = malloc(cap);
  if (!buf) { gzclose_r(g); errorcall(R_NilValue, "out of memory reading \"%s\"", p); }
  gzbuffer(g, 1 << 17);
  for (;;) {
    if (cap - len < (1u << 16)) {
      size_t nc = cap * 2;
      char *nb = nc > cap ? realloc(buf, nc) : NULL;
      if (!nb) { free(buf); gzclose_r(g); errorcall(R_NilValue, "out of memory reading \"%s\"", p); }
      buf = nb;
      cap = nc;
    }
    unsigned want = (unsigned)((cap - len) > (1u << 30) ? (1u << 30) : (cap - len));
    int got = gzread(g, buf + len, want);
    if (got < 0) {
      int errnum = 0;
      const char *m = gzerror(g, &errnum);
      char text[200];
      snprintf(text, sizeof text, "%s", m ? m : "read error");
      free(buf);
      gzclose_r(g);
      errorcall(R_NilValue, "`file` \"%s\" is a damaged or truncated gzip file (%s).", p, text);
    }
    if (got == 0) break;
    len += (size_t)got;
  }
  int errnum = 0;
  const char *m = gzerror(g, &errnum);
  if (errnum != Z_OK && errnum != Z_STREAM_END) {
    char text[200];
    snprintf(text, sizeof text, "%s", m ? m : "read error");
    free(buf);
    gzclose_r(g);
    errorcall(R_NilValue, "`file` \"%s\" is a damaged or truncated gzip file (%s).", p, text);
  }
  gzclose_r(g);
  SEXP out = allocVector(RAWSXP, (R_xlen_t)len);
  if (len) memcpy(RAW(out), buf, len);
  free(buf);
  return out;
}

static SEXP text_of(const char *buf, int64_t s, int64_t e)
{
  if (e - s > INT_MAX) e = s + INT_MAX;
  return mkCharLenCE(buf + s, (int)(e - s), CE_NATIVE);
}

static const char *raw_or_die(SEXP x, int64_t *len)
{
  if (TYPEOF(x) != RAWSXP) errorcall(R_NilValue, "wtheta internal: text must be raw");
  *len = (int64_t)XLENGTH(x);
  return (const char *)RAW(x);
}

/* list(n: content lines, nul_line: line of the first NUL byte or 0, head:
 * the first k content lines, head_line: their line numbers) */
SEXP wt_r_text_info(SEXP text, SEXP k_)
{
  int64_t len, nul;
  const char *buf = raw_or_die(text, &len);
  int k = asInteger(k_);
  int64_t n = wt_text_count(buf, len, &nul);
  double nul_line = 0;
  if (nul >= 0) {
    int64_t ln, ls, le;
    wt_text_line_at(buf, len, nul, &ln, &ls, &le);
    nul_line = (double)ln;
  }
  int m = nul >= 0 ? 0 : n < k ? (int)n : k;   /* no strings with NULs */
  SEXP out = PROTECT(allocVector(VECSXP, 4));
  SEXP head = allocVector(STRSXP, m);
  SET_VECTOR_ELT(out, 2, head);
  SEXP head_line = allocVector(REALSXP, m);
  SET_VECTOR_ELT(out, 3, head_line);
  int64_t pos = 0, s, e;
  for (int i = 0; i < m && wt_text_next(buf, len, &pos, &s, &e); i++) {
    int64_t ln, ls, le;
    SET_STRING_ELT(head, i, text_of(buf, s, e));
    wt_text_line_at(buf, len, s, &ln, &ls, &le);
    REAL(head_line)[i] = (double)ln;
  }
  SET_VECTOR_ELT(out, 0, ScalarReal((double)n));
  SET_VECTOR_ELT(out, 1, ScalarReal(nul_line));
  UNPROTECT(1);
  return out;
}

/* list(line_no, text) of content row `row` (from 0) after `skip` lines */
SEXP wt_r_text_row(SEXP text, SEXP skip, SEXP row)
{
  int64_t len;
  const char *buf = raw_or_die(text, &len);
  int64_t off = wt_text_row_offset(buf, len, (int64_t)asReal(skip),
                                   (int64_t)asReal(row));
  SEXP out = PROTECT(allocVector(VECSXP, 2));
  if (off >= 0) {
    int64_t ln, ls, le;
    wt_text_line_at(buf, len, off, &ln, &ls, &le);
    SET_VECTOR_ELT(out, 0, ScalarReal((double)ln));
    SET_VECTOR_ELT(out, 1, ScalarString(text_of(buf, ls, le)));
  }
  UNPROTECT(1);
  return out;
}

/* The columns cols (from 0) of n_rows rows after skip content lines:
 * list(values, bad, na, short): bad, na and short are rows from 1, 0 for
 * none. Fields that are NA, empty or not numbers are NA in values. */
SEXP wt_r_text_parse(SEXP text, SEXP sep_, SEXP skip_, SEXP n_rows_,
                     SEXP cols_)
{
  int64_t len;
  const char *buf = raw_or_die(text, &len);
  int sep = asInteger(sep_), ncol = LENGTH(cols_);
  int64_t skip = (int64_t)asReal(skip_), n_rows = (int64_t)asReal(n_rows_);
  if (TYPEOF(cols_) != INTSXP || ncol < 1) errorcall(R_NilValue, "wtheta internal: cols");
  SEXP out = PROTECT(allocVector(VECSXP, 4));
  SEXP values = allocVector(VECSXP, ncol);
  SET_VECTOR_ELT(out, 0, values);
  double **dst = (double **)R_alloc((size_t)ncol, sizeof(double *));
  int64_t *bad = (int64_t *)R_alloc((size_t)ncol * 2, sizeof(int64_t));
  int64_t *na = bad + ncol, short_row = -1;
  for (int j = 0; j < ncol; j++) {
    SEXP v = allocVector(REALSXP, (R_xlen_t)n_rows);
    SET_VECTOR_ELT(values, j, v);
    dst[j] = REAL(v);
  }
  int status = wt_text_parse(buf, len, sep, skip, n_rows, ncol,
                             INTEGER(cols_), dst, bad, na, &short_row);
  if (status != WT_OK) errorcall(R_NilValue, "wtheta: out of memory parsing the text");
  for (int j = 0; j < ncol; j++) {
    double *v = dst[j];
    for (int64_t r = 0; r < n_rows; r++) if (isnan(v[r])) v[r] = NA_REAL;
  }
  SEXP b = allocVector(REALSXP, ncol);
  SET_VECTOR_ELT(out, 1, b);
  SEXP a = allocVector(REALSXP, ncol);
  SET_VECTOR_ELT(out, 2, a);
  for (int j = 0; j < ncol; j++) {
    REAL(b)[j] = (double)(bad[j] + 1);
    REAL(a)[j] = (double)(na[j] + 1);
  }
  SET_VECTOR_ELT(out, 3, ScalarReal((double)(short_row + 1)));
  UNPROTECT(1);
  return out;
}

/* column col (from 0) of n_rows rows after skip lines, as text (one pair
 * of surrounding double quotes removed; "NA" and empty fields NA) */
SEXP wt_r_text_strings(SEXP text, SEXP sep_, SEXP skip_, SEXP n_rows_,
                       SEXP col_)
{
  int64_t len;
  const char *buf = raw_or_die(text, &len);
  int sep = asInteger(sep_), col = asInteger(col_);
  int64_t skip = (int64_t)asReal(skip_), n_rows = (int64_t)asReal(n_rows_);
  SEXP out = PROTECT(allocVector(STRSXP, (R_xlen_t)n_rows));
  int64_t pos = 0, s, e, fs, fe;
  for (int64_t i = 0; i < skip && wt_text_next(buf, len, &pos, &s, &e); i++) {}
  for (int64_t r = 0; r < n_rows && wt_text_next(buf, len, &pos, &s, &e); r++) {
    if (!wt_text_field(buf, s, e, sep, col, &fs, &fe) || fe == fs ||
        (fe - fs == 2 && buf[fs] == 'N' && buf[fs + 1] == 'A')) {
      SET_STRING_ELT(out, (R_xlen_t)r, NA_STRING);
      continue;
    }
    if (fe - fs >= 2 && buf[fs] == '"' && buf[fe - 1] == '"') { fs++; fe--; }
    SET_STRING_ELT(out, (R_xlen_t)r, text_of(buf, fs, fe));
  }
  UNPROTECT(1);
  return out;
}
