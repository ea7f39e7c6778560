/* The R boundary of FITS (R/fits.R; io/fits.c, io/fits_write.c,
 * io/fits_hdu.c): table information and columns read in chunks, 64-bit
 * columns, checksums, results written, images and headers read. Checks
 * what R hands over, calls the plain-C code, frees, then errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>
#include "boundary.h"
#include "io/io.h"

/* ---- FITS ---------------------------------------------------------------- */

/* The open table of a .Call, closed on every way out: normal return,
 * errorcall() and R's own errors (a failed allocation, an interrupt), by
 * R_ExecWithCleanup. What the body allocates besides is R's (R_alloc,
 * PROTECT), so a failure leaks no file and no memory. */
static void close_table(void *t)
{
  wt_fits_close((wt_fits_table *)t);
}


SEXP wt_r_fits_compiled(void) { return ScalarLogical(wt_fits_compiled()); }

static void fits_open_or_die(SEXP path, SEXP hdu, SEXP extname,
                             wt_fits_table *t)
{
  char msg[512] = "";
  const char *p = wtr_path_of(path);
  const char *ext = isString(extname) && XLENGTH(extname) == 1
    ? translateChar(STRING_ELT(extname, 0)) : NULL;
  int status = wt_fits_open(p, asInteger(hdu), ext, t, msg, sizeof msg);
  if (status == WT_ERR_NOMEM) errorcall(R_NilValue, "wtheta: out of memory opening \"%s\"", p);
  if (status != WT_OK) errorcall(R_NilValue, "`file` \"%s\": %s.", p, msg);
}

/* list(hdu, extname, n_rows, ascii, columns = list(name, unit, tform,
 * kind, repeat, typecode, scaled), keywords = list(name, value, comment)) */
static SEXP fits_info_body(void *data)
{
  wt_fits_table t = *(wt_fits_table *)data;
  int nk = 0;
  {
    char n[80], v[80], c[80];
    while (wt_fits_keyword(&t, nk + 1, n, v, c)) nk++;
  }
  const char *names[] = {"hdu", "extname", "n_rows", "ascii", "columns",
                         "keywords", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, ScalarInteger(t.hdu));
  SET_VECTOR_ELT(out, 1, mkString(t.extname));
  SET_VECTOR_ELT(out, 2, ScalarReal((double)t.n_rows));
  SET_VECTOR_ELT(out, 3, ScalarLogical(t.ascii));
  const char *cn[] = {"name", "unit", "tform", "kind", "n_elements", "typecode",
                      "scaled", ""};
  SEXP cols = allocVector(VECSXP, 7);
  SET_VECTOR_ELT(out, 4, cols);
  SEXP nm = PROTECT(allocVector(STRSXP, 7));
  for (int k = 0; k < 7; k++) SET_STRING_ELT(nm, k, mkChar(cn[k]));
  setAttrib(cols, R_NamesSymbol, nm);
  UNPROTECT(1);
  int nc = t.n_cols;
  SEXP c_name = allocVector(STRSXP, nc); SET_VECTOR_ELT(cols, 0, c_name);
  SEXP c_unit = allocVector(STRSXP, nc); SET_VECTOR_ELT(cols, 1, c_unit);
  SEXP c_tform = allocVector(STRSXP, nc); SET_VECTOR_ELT(cols, 2, c_tform);
  SEXP c_kind = allocVector(INTSXP, nc); SET_VECTOR_ELT(cols, 3, c_kind);
  SEXP c_rep = allocVector(REALSXP, nc); SET_VECTOR_ELT(cols, 4, c_rep);
  SEXP c_type = allocVector(INTSXP, nc); SET_VECTOR_ELT(cols, 5, c_type);
  SEXP c_sc = allocVector(LGLSXP, nc); SET_VECTOR_ELT(cols, 6, c_sc);
  for (int c = 0; c < nc; c++) {
    SET_STRING_ELT(c_name, c, mkChar(t.cols[c].name));
    SET_STRING_ELT(c_unit, c, mkChar(t.cols[c].unit));
    SET_STRING_ELT(c_tform, c, mkChar(t.cols[c].tform));
    INTEGER(c_kind)[c] = t.cols[c].kind;
    REAL(c_rep)[c] = (double)t.cols[c].repeat;
    INTEGER(c_type)[c] = t.cols[c].typecode;
    LOGICAL(c_sc)[c] = t.cols[c].scaled;
  }
  const char *kn[] = {"name", "value", "comment", ""};
  SEXP keys = allocVector(VECSXP, 3);
  SET_VECTOR_ELT(out, 5, keys);
  SEXP knm = PROTECT(allocVector(STRSXP, 3));
  for (int k = 0; k < 3; k++) SET_STRING_ELT(knm, k, mkChar(kn[k]));
  setAttrib(keys, R_NamesSymbol, knm);
  UNPROTECT(1);
  SEXP k_name = allocVector(STRSXP, nk); SET_VECTOR_ELT(keys, 0, k_name);
  SEXP k_val = allocVector(STRSXP, nk); SET_VECTOR_ELT(keys, 1, k_val);
  SEXP k_com = allocVector(STRSXP, nk); SET_VECTOR_ELT(keys, 2, k_com);
  for (int k = 0; k < nk; k++) {
    char n[80] = "", v[80] = "", c[80] = "";
    wt_fits_keyword(&t, k + 1, n, v, c);
    SET_STRING_ELT(k_name, k, mkChar(n));
    SET_STRING_ELT(k_val, k, mkChar(v));
    SET_STRING_ELT(k_com, k, mkChar(c));
  }
  UNPROTECT(1);
  return out;
}

SEXP wt_r_fits_info(SEXP path, SEXP hdu, SEXP extname)
{
  wt_fits_table t;
  fits_open_or_die(path, hdu, extname, &t);
  return R_ExecWithCleanup(fits_info_body, &t, close_table, &t);
}

typedef struct {
  wt_fits_table t;
  SEXP path, cols;
  double shrink_to;        /* tests: truncate the file to this many bytes
                              after the first chunk (< 0: never) */
} fits_read_ctx;

/* copy a chunk of m rows x rep values (row-major, with null flags) into
 * the column-major result v of n rows, from row r0 */
static void chunk_into(SEXP v, int kind, long long n, long long r0,
                       long long m, long long rep, const void *tmp,
                       const char *nulls)
{
  R_xlen_t nn = (R_xlen_t)n;
  for (long long i = 0; i < m; i++)
    for (long long k = 0; k < rep; k++) {
      size_t from = (size_t)(i * rep + k);
      R_xlen_t to = (R_xlen_t)(r0 + i) + (R_xlen_t)k * nn;
      if (kind == WT_COL_DOUBLE) {
        REAL(v)[to] = nulls[from] ? NA_REAL : ((const double *)tmp)[from];
      } else if (kind == WT_COL_INT64) {
        int64_t x = nulls[from] ? INT64_MIN : ((const int64_t *)tmp)[from];
        memcpy(REAL(v) + to, &x, 8);
      } else if (kind == WT_COL_INT) {
        INTEGER(v)[to] = nulls[from] ? NA_INTEGER : ((const int *)tmp)[from];
      } else {
        LOGICAL(v)[to] = nulls[from] ? NA_LOGICAL
          : ((const char *)tmp)[from] != 0;
      }
    }
}

/* an unsigned 64-bit chunk (TZERO = 2^63) as int64_t, which holds it
 * when every value is below 2^63: else the first row that is not */
static long long unsigned_into_signed(void *tmp, const char *nulls,
                                      long long m, long long rep)
{
  uint64_t *u = tmp;
  for (long long i = 0; i < m * rep; i++)
    if (!nulls[i] && u[i] > (uint64_t)INT64_MAX) return i / rep;
  return -1;
}

static SEXP fits_read_body(void *data)
{
  fits_read_ctx *x = data;
  wt_fits_table *t = &x->t;
  const char *path = wtr_path_of(x->path);
  int ncol = LENGTH(x->cols);
  const int *cols = INTEGER(x->cols);
  long long n = t->n_rows;
  if (n > R_XLEN_T_MAX) errorcall(R_NilValue, "`file` \"%s\": table too large", path);
  for (int j = 0; j < ncol; j++) {
    if (cols[j] < 0 || cols[j] >= t->n_cols || t->cols[cols[j]].kind == WT_COL_NONE)
      errorcall(R_NilValue, "wtheta internal: column %d cannot be read", cols[j] + 1);
  }
  SEXP out = PROTECT(allocVector(VECSXP, ncol));
  long long max_rep = 1, max_width = 1;
  for (int j = 0; j < ncol; j++) {
    wt_fits_col *c = &t->cols[cols[j]];
    R_xlen_t rep = (R_xlen_t)c->repeat;
    SEXP v;
    if (c->kind == WT_COL_STRING) {
      v = allocVector(STRSXP, (R_xlen_t)n);
      if (c->repeat + 1 > max_width) max_width = c->repeat + 1;
    } else {
      SEXPTYPE st = c->kind == WT_COL_DOUBLE || c->kind == WT_COL_INT64
        ? REALSXP : c->kind == WT_COL_INT ? INTSXP : LGLSXP;
      if (rep > 1 && ((double)n > INT_MAX || (double)rep > INT_MAX ||
                      (double)n * (double)rep > (double)R_XLEN_T_MAX))
        errorcall(R_NilValue, "`file` \"%s\": vector column \"%s\" too large",
                  path, c->name);
      v = rep == 1 ? allocVector(st, (R_xlen_t)n)
        : allocMatrix(st, (int)n, (int)rep);
      if (c->repeat > max_rep) max_rep = c->repeat;
    }
    SET_VECTOR_ELT(out, j, v);
  }
  int n_fast = 0;
  for (int j = 0; j < ncol; j++) n_fast += t->cols[cols[j]].fast;
  long long chunk = wt_fits_chunk_rows(t);
  if (n_fast && t->row_bytes > 0) {
    /* raw rows: about 4 MB at a time */
    long long c2 = (4LL << 20) / t->row_bytes;
    if (c2 > chunk) chunk = c2;
  }
  if (chunk > n) chunk = n > 0 ? n : 1;
  /* bounded buffers, freed by R however the call ends: one chunk of
   * values (8 bytes each) and of null flags; fast columns decode from rows
   * read 4 MB at a time (pread through cfitsio: a file that shrinks while
   * it is read is an error, never a bus error as a mapping gave) */
  size_t cells = (size_t)chunk * (size_t)(max_rep > max_width ? max_rep : max_width);
  double *tmp = (double *)R_alloc(cells, sizeof(double));
  char *nulls = R_alloc(cells, 1);
  char **strs = (char **)R_alloc((size_t)chunk, sizeof(char *));
  unsigned char *raw = n_fast
    ? (unsigned char *)R_alloc((size_t)chunk, (size_t)t->row_bytes) : NULL;
  char msg[512] = "";
  int status = WT_OK;
  for (long long r0 = 0; r0 < n && status == WT_OK; r0 += chunk) {
    long long m = n - r0 < chunk ? n - r0 : chunk;
    if (n_fast) status = wt_fits_read_rows(t, r0, m, raw, msg, sizeof msg);
    for (int j = 0; j < ncol && status == WT_OK; j++) {
      wt_fits_col *c = &t->cols[cols[j]];
      SEXP v = VECTOR_ELT(out, j);
      long long rep = c->repeat;
      if (c->fast) {
        if (c->kind == WT_COL_INT)
          wt_fits_decode(t, cols[j], raw, m, INTEGER(v) + r0, 0);
        else
          wt_fits_decode(t, cols[j], raw, m, REAL(v) + r0, NA_REAL);
        continue;
      }
      if (c->kind == WT_COL_STRING) {
        char *base = (char *)tmp;
        for (long long i = 0; i < m; i++) strs[i] = base + i * (rep + 1);
        status = wt_fits_read_strings(t, cols[j], r0, m, strs, msg, sizeof msg);
        for (long long i = 0; status == WT_OK && i < m; i++)
          SET_STRING_ELT(v, (R_xlen_t)(r0 + i), mkChar(strs[i]));
        continue;
      }
      if (rep == 1 && (c->kind == WT_COL_DOUBLE || c->kind == WT_COL_INT)) {
        /* straight into the result: NaN and INT_MIN (R's NA_integer_) */
        if (c->kind == WT_COL_DOUBLE) {
          double *d = REAL(v) + r0;
          status = wt_fits_read(t, cols[j], r0, m, c->kind, d, NULL, msg,
                                sizeof msg);
          for (long long i = 0; status == WT_OK && i < m; i++)
            if (isnan(d[i])) d[i] = NA_REAL;
        } else {
          status = wt_fits_read(t, cols[j], r0, m, c->kind, INTEGER(v) + r0,
                                NULL, msg, sizeof msg);
        }
        continue;
      }
      status = wt_fits_read(t, cols[j], r0, m, c->kind, tmp, nulls, msg,
                            sizeof msg);
      if (status != WT_OK) break;
      if (c->kind == WT_COL_INT64 && c->u64) {
        long long bad = unsigned_into_signed(tmp, nulls, m, rep);
        if (bad >= 0) {
          snprintf(msg, sizeof msg, "column %d (\"%s\", unsigned 64-bit: "
                   "TZERO = 2^63) holds a value above 2^63 - 1 at row %lld, "
                   "more than a 64-bit integer (integer64) holds",
                   cols[j] + 1, c->name, r0 + bad + 1);
          status = WT_ERR_ARG;
          break;
        }
      }
      /* row-major chunk into the column-major result, nulls to NA */
      chunk_into(v, c->kind, n, r0, m, rep, tmp, nulls);
    }
    if (status == WT_OK && r0 == 0 && x->shrink_to >= 0 &&
        truncate(path, (off_t)x->shrink_to) != 0)
      errorcall(R_NilValue, "wtheta internal: the test could not shrink \"%s\"", path);
    if (status == WT_OK && wtr_interrupted())
      status = WT_ERR_INTERRUPTED;
  }
  if (status == WT_ERR_INTERRUPTED) wtr_raise_caught();
  if (status != WT_OK) errorcall(R_NilValue, "`file` \"%s\": %s.", path, msg);
  UNPROTECT(1);
  return out;
}

/* Columns cols (from 0) of the table at HDU hdu (from 0): a list of
 * vectors (double, integer, logical, character; 64-bit integers as
 * doubles holding their bits, bit64's integer64 without its class) or,
 * for vector columns, n x repeat matrices; nulls are NA. Read in chunks
 * of rows, each chunk column by column, so cfitsio reads the file once.
 * shrink_to: see fits_read_ctx (tests). */
SEXP wt_r_fits_read(SEXP path, SEXP hdu, SEXP cols_, SEXP shrink_to)
{
  fits_read_ctx x;
  if (TYPEOF(cols_) != INTSXP) errorcall(R_NilValue, "wtheta internal: cols");
  x.path = path;
  x.cols = cols_;
  x.shrink_to = isNull(shrink_to) ? -1 : asReal(shrink_to);
  fits_open_or_die(path, hdu, R_NilValue, &x.t);
  return R_ExecWithCleanup(fits_read_body, &x, close_table, &x.t);
}

/* 64-bit integers (bit64's integer64: doubles holding their bits) as
 * doubles, when every one is within 2^53 (so exactly); else NULL */
SEXP wt_r_int64_as_double(SEXP x)
{
  if (TYPEOF(x) != REALSXP) errorcall(R_NilValue, "wtheta internal: int64");
  R_xlen_t n = XLENGTH(x);
  const int64_t lim = (int64_t)1 << 53;
  for (R_xlen_t i = 0; i < n; i++) {
    int64_t v;
    memcpy(&v, REAL(x) + i, 8);
    if (v != INT64_MIN && (v > lim || v < -lim)) return R_NilValue;
  }
  SEXP out = PROTECT(allocVector(REALSXP, n));
  for (R_xlen_t i = 0; i < n; i++) {
    int64_t v;
    memcpy(&v, REAL(x) + i, 8);
    REAL(out)[i] = v == INT64_MIN ? NA_REAL : (double)v;
  }
  SEXP dim = getAttrib(x, R_DimSymbol);
  if (!isNull(dim)) setAttrib(out, R_DimSymbol, dim);
  UNPROTECT(1);
  return out;
}

/* The CHECKSUM and DATASUM keywords of every HDU: NULL when each is right
 * or absent, else an error naming the file and the HDU */
SEXP wt_r_fits_verify(SEXP path)
{
  const char *p = wtr_path_of(path);
  char msg[512] = "";
  int bad = -1;
  int status = wt_fits_verify(p, &bad, msg, sizeof msg);
  if (status != WT_OK) errorcall(R_NilValue, "`file` \"%s\": %s.", p, msg);
  return R_NilValue;
}

/* ---- FITS writing -------------------------------------------------------- */

static SEXP elt_named(SEXP list, const char *name)
{
  SEXP nm = getAttrib(list, R_NamesSymbol);
  for (R_xlen_t k = 0; k < XLENGTH(list); k++)
    if (!strcmp(CHAR(STRING_ELT(nm, k)), name)) return VECTOR_ELT(list, k);
  errorcall(R_NilValue, "wtheta internal: no element %s", name);
  return R_NilValue;
}

static const char *string_of(SEXP x)
{
  if (TYPEOF(x) != STRSXP || XLENGTH(x) != 1 || STRING_ELT(x, 0) == NA_STRING)
    errorcall(R_NilValue, "wtheta internal: a string is needed");
  return translateChar(STRING_ELT(x, 0));
}

/* keys: list(name = character, value = list of scalars, comment =
 * character) into an R_alloc'ed array */
static wt_fits_key *keys_of(SEXP keys, int *n)
{
  SEXP name = elt_named(keys, "name"), value = elt_named(keys, "value"),
    comment = elt_named(keys, "comment");
  *n = LENGTH(name);
  if (TYPEOF(value) != VECSXP || LENGTH(value) != *n || LENGTH(comment) != *n)
    errorcall(R_NilValue, "wtheta internal: keys");
  wt_fits_key *k = (wt_fits_key *)R_alloc((size_t)(*n > 0 ? *n : 1),
                                          sizeof(wt_fits_key));
  for (int i = 0; i < *n; i++) {
    SEXP v = VECTOR_ELT(value, i);
    memset(&k[i], 0, sizeof k[i]);
    k[i].name = translateChar(STRING_ELT(name, i));
    k[i].comment = translateChar(STRING_ELT(comment, i));
    if (XLENGTH(v) != 1) errorcall(R_NilValue, "wtheta internal: key %s", k[i].name);
    switch (TYPEOF(v)) {
    case STRSXP: k[i].type = WT_KEY_STRING; k[i].s = string_of(v); break;
    case LGLSXP: k[i].type = WT_KEY_LOGICAL; k[i].l = LOGICAL(v)[0] == 1; break;
    case INTSXP: k[i].type = WT_KEY_INT; k[i].i = INTEGER(v)[0]; break;
    case REALSXP: k[i].type = WT_KEY_DOUBLE; k[i].d = REAL(v)[0]; break;
    default: errorcall(R_NilValue, "wtheta internal: key %s", k[i].name);
    }
  }
  return k;
}

typedef struct {
  int image;
  const char *extname;
  wt_fits_key *keys;
  int n_keys;
  long long n_rows, n_cols;    /* image: its size; table: rows, columns */
  wt_fits_wcol *cols;
  const double *data;
} hdu_plan;

/* Writes a new FITS file at tmp, then renames it to path. primary: keys
 * of the primary HDU; hdus: a list of list(extname, keys, and either
 * columns = named list of double (row after row) or raw vectors, repeat,
 * unit, n_rows; or image = a double matrix, written row after row). Every
 * R object is read before the file is created, so no R error can leave it
 * open. */
SEXP wt_r_fits_write(SEXP tmp_, SEXP path_, SEXP primary, SEXP hdus)
{
  const char *tmp = wtr_path_of(tmp_), *path = wtr_path_of(path_);
  int n_primary = 0, n_hdu = LENGTH(hdus);
  wt_fits_key *pkeys = keys_of(primary, &n_primary);
  hdu_plan *plan = (hdu_plan *)R_alloc((size_t)(n_hdu > 0 ? n_hdu : 1),
                                       sizeof(hdu_plan));
  for (int h = 0; h < n_hdu; h++) {
    SEXP hdu = VECTOR_ELT(hdus, h);
    hdu_plan *p = &plan[h];
    memset(p, 0, sizeof *p);
    p->extname = string_of(elt_named(hdu, "extname"));
    p->keys = keys_of(elt_named(hdu, "keys"), &p->n_keys);
    SEXP nm = getAttrib(hdu, R_NamesSymbol);
    int is_image = 0;
    for (int k = 0; k < LENGTH(hdu); k++)
      if (!strcmp(CHAR(STRING_ELT(nm, k)), "image")) is_image = 1;
    if (is_image) {
      SEXP m = elt_named(hdu, "image");
      SEXP dim = getAttrib(m, R_DimSymbol);
      if (TYPEOF(m) != REALSXP || LENGTH(dim) != 2)
        errorcall(R_NilValue, "wtheta internal: image");
      p->image = 1;
      p->n_rows = INTEGER(dim)[0];
      p->n_cols = INTEGER(dim)[1];
      /* R's column-major matrix, row after row */
      double *rows = (double *)R_alloc((size_t)(p->n_rows * p->n_cols + 1),
                                       sizeof(double));
      for (long long i = 0; i < p->n_rows; i++)
        for (long long j = 0; j < p->n_cols; j++)
          rows[i * p->n_cols + j] = REAL(m)[i + j * p->n_rows];
      p->data = rows;
      continue;
    }
    SEXP cols = elt_named(hdu, "columns"), rep = elt_named(hdu, "repeat"),
      unit = elt_named(hdu, "unit");
    SEXP cn = getAttrib(cols, R_NamesSymbol);
    p->n_rows = (long long)asReal(elt_named(hdu, "n_rows"));
    p->n_cols = LENGTH(cols);
    if (TYPEOF(rep) != INTSXP || LENGTH(rep) != p->n_cols ||
        TYPEOF(unit) != STRSXP || LENGTH(unit) != p->n_cols)
      errorcall(R_NilValue, "wtheta internal: columns");
    p->cols = (wt_fits_wcol *)R_alloc((size_t)(p->n_cols + 1),
                                      sizeof(wt_fits_wcol));
    for (int j = 0; j < p->n_cols; j++) {
      SEXP v = VECTOR_ELT(cols, j);
      wt_fits_wcol *c = &p->cols[j];
      memset(c, 0, sizeof *c);
      c->name = translateChar(STRING_ELT(cn, j));
      c->unit = translateChar(STRING_ELT(unit, j));
      c->repeat = INTEGER(rep)[j];
      /* a character column: one string a row, repeat its width */
      if ((double)XLENGTH(v) != (double)p->n_rows *
          (TYPEOF(v) == STRSXP ? 1.0 : (double)c->repeat))
        errorcall(R_NilValue, "wtheta internal: column %s length", c->name);
      if (TYPEOF(v) == RAWSXP) c->b = RAW(v);
      else if (TYPEOF(v) == REALSXP) c->d = REAL(v);
      else if (TYPEOF(v) == INTSXP) c->j = INTEGER(v);
      else if (TYPEOF(v) == STRSXP) {
        const char **s = (const char **)R_alloc((size_t)(p->n_rows + 1),
                                                sizeof(char *));
        for (long long r = 0; r < p->n_rows; r++) {
          SEXP e = STRING_ELT(v, r);
          s[r] = e == NA_STRING ? "" : translateChar(e);
        }
        c->s = s;
      }
      else errorcall(R_NilValue, "wtheta internal: column %s type", c->name);
    }
  }
  char msg[512] = "";
  void *f = NULL;
  int status = wt_fits_create(tmp, &f, pkeys, n_primary, msg, sizeof msg);
  for (int h = 0; h < n_hdu && status == WT_OK; h++) {
    hdu_plan *p = &plan[h];
    status = p->image
      ? wt_fits_write_image(f, p->extname, p->n_rows, p->n_cols, p->data,
                            p->keys, p->n_keys, msg, sizeof msg)
      : wt_fits_write_table(f, p->extname, p->n_rows, p->cols, p->n_cols,
                            p->keys, p->n_keys, msg, sizeof msg);
  }
  if (status == WT_OK) {
    status = wt_fits_finish(f, tmp, path, msg, sizeof msg);
  } else {
    wt_fits_abandon(f, tmp);
  }
  if (status == WT_ERR_NOMEM) errorcall(R_NilValue, "wtheta: out of memory writing \"%s\"", path);
  if (status != WT_OK) errorcall(R_NilValue, "`file` \"%s\": %s.", path, msg);
  return R_NilValue;
}

/* The 2-d image HDU named extname as a double matrix (nulls NA). */
SEXP wt_r_fits_read_image(SEXP path, SEXP extname)
{
  const char *p = wtr_path_of(path), *ext = string_of(extname);
  char msg[512] = "";
  long long nr = 0, nc = 0;
  double *v = NULL;
  int status = wt_fits_read_image(p, ext, &nr, &nc, &v, msg, sizeof msg);
  if (status == WT_ERR_NOMEM) errorcall(R_NilValue, "wtheta: out of memory reading \"%s\"", p);
  if (status != WT_OK) errorcall(R_NilValue, "`file` \"%s\": %s.", p, msg);
  if (nr > INT_MAX || nc > INT_MAX) {
    free(v);
    errorcall(R_NilValue, "`file` \"%s\": image %s is too large.", p, ext);
  }
  SEXP out = allocMatrix(REALSXP, (int)nr, (int)nc);
  double *d = REAL(out);
  for (long long i = 0; i < nr; i++)
    for (long long j = 0; j < nc; j++) {
      double x = v[i * nc + j];
      d[i + j * nr] = isnan(x) ? NA_REAL : x;
    }
  free(v);
  return out;
}

/* The header of HDU hdu (from 0) of a FITS file: list(n_hdus, cards =
 * character vector of 80-character cards, COMMENT and HISTORY left out).
 * Any HDU, image or table; R parses the cards. */
SEXP wt_r_fits_header(SEXP path, SEXP hdu)
{
  const char *p = wtr_path_of(path);
  char msg[512] = "", *cards = NULL;
  int n_hdus = 0, n_cards = 0;
  int status = wt_fits_header(p, asInteger(hdu), &n_hdus, &cards, &n_cards,
                              msg, sizeof msg);
  if (status != WT_OK) errorcall(R_NilValue, "`file` \"%s\": %s.", p, msg);
  const char *names[] = {"n_hdus", "cards", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, ScalarInteger(n_hdus));
  SEXP c = allocVector(STRSXP, n_cards);
  SET_VECTOR_ELT(out, 1, c);
  for (int k = 0; k < n_cards; k++)
    SET_STRING_ELT(c, k, mkCharLen(cards + 80 * (size_t)k, 80));
  wt_fits_free_header(cards);
  UNPROTECT(1);
  return out;
}
