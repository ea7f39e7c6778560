/* FITS tables through cfitsio (Debian's libcfitsio-dev); built when
 * configure finds cfitsio, else fits_stub.c. No R here: statuses and a
 * message in msg (cfitsio's own words). Columns are read in chunks of rows
 * that fit cfitsio's buffers, so a table is read once and never held twice
 * (glue_io.c drives the chunks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fitsio.h>
#include "wt.h"
#include "io.h"

int wt_fits_compiled(void) { return 1; }

static int fits_fail(int status, char *msg, size_t msg_len, const char *what)
{
  char text[FLEN_STATUS] = "", detail[FLEN_ERRMSG] = "", first[FLEN_ERRMSG] = "";
  fits_get_errstatus(status, text);
  /* the oldest message on cfitsio's stack says most about what happened */
  if (fits_read_errmsg(detail)) {
    strncpy(first, detail, sizeof first - 1);
    while (fits_read_errmsg(detail)) {}
  }
  size_t k = strlen(first);
  while (k > 0 && (first[k - 1] == '.' || first[k - 1] == ' ')) first[--k] = '\0';
  snprintf(msg, msg_len, "%s: %s (cfitsio status %d)%s%s", what, text,
           status, first[0] ? "; " : "", first);
  fits_clear_errmsg();
  return WT_ERR_FITS;
}

void wt_fits_close(wt_fits_table *t)
{
  int status = 0;
  if (t->fptr) fits_close_file((fitsfile *)t->fptr, &status);
  t->fptr = NULL;
  free(t->cols);
  t->cols = NULL;
  fits_clear_errmsg();
}

int wt_fits_open(const char *path, int hdu, const char *extname,
                 wt_fits_table *t, char *msg, size_t msg_len)
{
  int status = 0, type = 0, n_hdus = 0;
  fitsfile *f = NULL;
  memset(t, 0, sizeof *t);
  /* the disk-file open takes the name literally: brackets or a leading
   * '-' are not read as cfitsio's extended file-name syntax */
  fits_open_diskfile(&f, path, READONLY, &status);
  if (status) return fits_fail(status, msg, msg_len, "cannot open the file");
  t->fptr = f;
  fits_get_num_hdus(f, &n_hdus, &status);
  if (status) {
    fits_fail(status, msg, msg_len, "cannot read the HDUs");
    wt_fits_close(t);
    return WT_ERR_FITS;
  }
  if (hdu >= 0) {
    if (hdu >= n_hdus) {
      snprintf(msg, msg_len, "the file has %d HDU(s), numbered 0 to %d; "
               "there is no HDU %d", n_hdus, n_hdus - 1, hdu);
      wt_fits_close(t);
      return WT_ERR_ARG;
    }
    fits_movabs_hdu(f, hdu + 1, &type, &status);
  } else if (extname) {
    fits_movnam_hdu(f, ANY_HDU, (char *)extname, 0, &status);
    if (status == BAD_HDU_NUM) {
      snprintf(msg, msg_len, "the file has no HDU with EXTNAME \"%s\"", extname);
      fits_clear_errmsg();
      wt_fits_close(t);
      return WT_ERR_ARG;
    }
    if (!status) fits_get_hdu_type(f, &type, &status);
  } else {
    type = IMAGE_HDU;
    for (int k = 2; k <= n_hdus && !status; k++) {
      fits_movabs_hdu(f, k, &type, &status);
      if (type != IMAGE_HDU) break;
    }
    if (!status && type == IMAGE_HDU) {
      snprintf(msg, msg_len, "the file holds no table extension (%d HDU(s), "
               "all images)", n_hdus);
      wt_fits_close(t);
      return WT_ERR_ARG;
    }
  }
  if (status) {
    fits_fail(status, msg, msg_len, "cannot move to the HDU");
    wt_fits_close(t);
    return WT_ERR_FITS;
  }
  int num = 0;
  fits_get_hdu_num(f, &num);
  t->hdu = num - 1;
  {
    int s2 = 0;
    char ext[FLEN_VALUE] = "";
    fits_read_key(f, TSTRING, "EXTNAME", ext, NULL, &s2);
    strncpy(t->extname, s2 ? "" : ext, sizeof t->extname - 1);
  }
  if (type == IMAGE_HDU) {
    snprintf(msg, msg_len, "HDU %d%s%s%s is an image, not a table", t->hdu,
             t->extname[0] ? " (" : "", t->extname, t->extname[0] ? ")" : "");
    wt_fits_close(t);
    return WT_ERR_ARG;
  }
  t->ascii = type == ASCII_TBL;
  LONGLONG rows = 0;
  fits_get_num_rowsll(f, &rows, &status);
  fits_get_num_cols(f, &t->n_cols, &status);
  if (status) {
    fits_fail(status, msg, msg_len, "cannot read the table's size");
    wt_fits_close(t);
    return WT_ERR_FITS;
  }
  t->n_rows = rows;
  t->cols = calloc((size_t)(t->n_cols > 0 ? t->n_cols : 1), sizeof(wt_fits_col));
  if (!t->cols) { wt_fits_close(t); return WT_ERR_NOMEM; }
  for (int c = 0; c < t->n_cols && !status; c++) {
    wt_fits_col *col = &t->cols[c];
    char key[FLEN_KEYWORD], val[FLEN_VALUE];
    int s2;
    LONGLONG repeat = 0, width = 0;
    fits_get_eqcoltypell(f, c + 1, &col->typecode, &repeat, &width, &status);
    col->repeat = repeat;
    col->width = width;
#define KEY_STR(K, DEST) \
    do { snprintf(key, sizeof key, "%s%d", K, c + 1); s2 = 0; val[0] = 0; \
         fits_read_key(f, TSTRING, key, val, NULL, &s2); \
         strncpy(DEST, s2 ? "" : val, sizeof DEST - 1); } while (0)
    KEY_STR("TTYPE", col->name);
    KEY_STR("TUNIT", col->unit);
    KEY_STR("TFORM", col->tform);
#undef KEY_STR
    col->tscal = 1;
    col->tzero = 0;
    s2 = 0;
    snprintf(key, sizeof key, "TSCAL%d", c + 1);
    fits_read_key(f, TDOUBLE, key, &col->tscal, NULL, &s2);
    if (s2) col->tscal = 1;
    s2 = 0;
    snprintf(key, sizeof key, "TZERO%d", c + 1);
    fits_read_key(f, TDOUBLE, key, &col->tzero, NULL, &s2);
    if (s2) col->tzero = 0;
    col->scaled = col->tscal != 1 || col->tzero != 0;
    switch (col->typecode) {
    case TBYTE: case TSBYTE: case TSHORT: case TUSHORT: case TINT: case TLONG:
      col->kind = WT_COL_INT; break;
    case TULONG: case TLONGLONG: case TULONGLONG: case TFLOAT: case TDOUBLE:
    case TUINT:
      col->kind = WT_COL_DOUBLE; break;
    case TLOGICAL: col->kind = WT_COL_LOGICAL; break;
    case TSTRING: col->kind = WT_COL_STRING; break;
    default: col->kind = WT_COL_NONE;
    }
  }
  fits_clear_errmsg();
  if (status) {
    fits_fail(status, msg, msg_len, "cannot read the column descriptions");
    wt_fits_close(t);
    return WT_ERR_FITS;
  }
  return WT_OK;
}

long long wt_fits_chunk_rows(wt_fits_table *t)
{
  long rows = 0;
  int status = 0;
  fits_get_rowsize((fitsfile *)t->fptr, &rows, &status);
  if (status || rows < 1) rows = 1000;
  if (rows < 4096) rows = 4096;
  return rows;
}

int wt_fits_read(wt_fits_table *t, int col, long long first_row,
                 long long n_rows, int kind, void *out, char *nulls,
                 char *msg, size_t msg_len)
{
  int status = 0, anynul = 0;
  int type = kind == WT_COL_INT ? TINT : kind == WT_COL_LOGICAL ? TLOGICAL
             : TDOUBLE;
  LONGLONG n = (LONGLONG)n_rows * t->cols[col].repeat;
  if (n == 0) return WT_OK;
  fits_read_colnull((fitsfile *)t->fptr, type, col + 1, first_row + 1, 1, n,
                    out, nulls, &anynul, &status);
  if (status) {
    char what[160];
    snprintf(what, sizeof what, "cannot read column %d (\"%s\") at row %lld",
             col + 1, t->cols[col].name, first_row + 1);
    return fits_fail(status, msg, msg_len, what);
  }
  return WT_OK;
}

int wt_fits_read_strings(wt_fits_table *t, int col, long long first_row,
                         long long n_rows, char **out, char *msg,
                         size_t msg_len)
{
  int status = 0, anynul = 0;
  if (n_rows == 0) return WT_OK;
  fits_read_col_str((fitsfile *)t->fptr, col + 1, first_row + 1, 1, n_rows,
                    "", out, &anynul, &status);
  if (status) {
    char what[160];
    snprintf(what, sizeof what, "cannot read column %d (\"%s\") at row %lld",
             col + 1, t->cols[col].name, first_row + 1);
    return fits_fail(status, msg, msg_len, what);
  }
  return WT_OK;
}

int wt_fits_keyword(wt_fits_table *t, int k, char *name, char *value,
                    char *comment)
{
  int status = 0;
  fits_read_keyn((fitsfile *)t->fptr, k, name, value, comment, &status);
  if (status) fits_clear_errmsg();
  return status == 0;
}
