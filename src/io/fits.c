/* FITS tables through cfitsio (Debian's libcfitsio-dev); built when
 * configure finds cfitsio, else fits_stub.c. No R here: statuses and a
 * message in msg (cfitsio's own words). Columns are read in chunks of rows
 * that fit cfitsio's buffers, so a table is read once and never held twice
 * (r/io.c drives the chunks). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <fitsio.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
  while (k > 0 && (first[k - 1] == '.' || first[k - 1] == ' ' ||
                   first[k - 1] == ':')) first[--k] = '\0';
  snprintf(msg, msg_len, "%s: %s (cfitsio status %d)%s%s", what, text,
           status, first[0] ? "; " : "", first);
  fits_clear_errmsg();
  return WT_ERR_FITS;
}

/* a failed read of column col (from 0) at first_row (from 0) */
static int column_fail(wt_fits_table *t, int col, long long first_row,
                       int status, char *msg, size_t msg_len)
{
  char what[160];
  snprintf(what, sizeof what, "cannot read column %d (\"%s\") at row %lld",
           col + 1, t->cols[col].name, first_row + 1);
  return fits_fail(status, msg, msg_len, what);
}

void wt_fits_close(wt_fits_table *t)
{
  int status = 0;
  wt_fits_unmap(t);
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
  snprintf(t->path, sizeof t->path, "%s", path);
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
  /* byte offsets of the columns of a binary table, checked against NAXIS1:
   * when they do not add up, no column takes the fast path */
  if (!status && !t->ascii) {
    long long off = 0, naxis1 = -1;
    int s2 = 0, ok = 1;
    fits_read_key(f, TLONGLONG, "NAXIS1", &naxis1, NULL, &s2);
    for (int c = 0; c < t->n_cols && ok; c++) {
      wt_fits_col *col = &t->cols[c];
      LONGLONG repeat = 0, width = 0;
      int code = 0, s3 = 0;
      fits_get_coltypell(f, c + 1, &code, &repeat, &width, &s3);
      long long bytes;
      switch (code < 0 ? -code : code) {
      case TBIT: bytes = (repeat + 7) / 8; break;
      case TBYTE: case TSBYTE: case TLOGICAL: case TSTRING: bytes = repeat; break;
      case TSHORT: bytes = 2 * repeat; break;
      case TLONG: case TFLOAT: bytes = 4 * repeat; break;
      case TLONGLONG: case TDOUBLE: case TCOMPLEX: bytes = 8 * repeat; break;
      case TDBLCOMPLEX: bytes = 16 * repeat; break;
      default: bytes = -1;
      }
      if (code < 0) bytes = strchr(col->tform, 'Q') ? 16 : 8;
      if (s3 || bytes < 0) { ok = 0; break; }
      col->raw_code = code;
      col->offset = off;
      off += bytes;
      char key[FLEN_KEYWORD];
      snprintf(key, sizeof key, "TNULL%d", c + 1);
      s3 = 0;
      fits_read_key(f, TLONGLONG, key, &col->tnull, NULL, &s3);
      col->has_tnull = s3 == 0;
      col->fast = !col->scaled && repeat == 1 &&
        (code == TDOUBLE || code == TFLOAT || code == TLONGLONG ||
         code == TLONG || code == TSHORT || code == TBYTE) &&
        (col->kind == WT_COL_DOUBLE || col->kind == WT_COL_INT);
    }
    if (!ok || s2 || off != naxis1) {
      for (int c = 0; c < t->n_cols; c++) t->cols[c].fast = 0;
    } else {
      t->row_bytes = naxis1;
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
  if (nulls) {
    fits_read_colnull((fitsfile *)t->fptr, type, col + 1, first_row + 1, 1, n,
                      out, nulls, &anynul, &status);
  } else {
    /* nulls become NaN (double) or INT_MIN (int) in place */
    double nan_val = NAN;
    int int_null = INT_MIN;
    fits_read_col((fitsfile *)t->fptr, type, col + 1, first_row + 1, 1, n,
                  type == TINT ? (void *)&int_null : (void *)&nan_val, out,
                  &anynul, &status);
  }
  return status ? column_fail(t, col, first_row, status, msg, msg_len)
                : WT_OK;
}

int wt_fits_read_strings(wt_fits_table *t, int col, long long first_row,
                         long long n_rows, char **out, char *msg,
                         size_t msg_len)
{
  int status = 0, anynul = 0;
  if (n_rows == 0) return WT_OK;
  fits_read_col_str((fitsfile *)t->fptr, col + 1, first_row + 1, 1, n_rows,
                    "", out, &anynul, &status);
  return status ? column_fail(t, col, first_row, status, msg, msg_len)
                : WT_OK;
}

int wt_fits_keyword(wt_fits_table *t, int k, char *name, char *value,
                    char *comment)
{
  int status = 0;
  fits_read_keyn((fitsfile *)t->fptr, k, name, value, comment, &status);
  if (status) fits_clear_errmsg();
  return status == 0;
}

int wt_fits_read_rows(wt_fits_table *t, long long first_row, long long n_rows,
                      unsigned char *buf, char *msg, size_t msg_len)
{
  int status = 0;
  if (n_rows == 0) return WT_OK;
  fits_read_tblbytes((fitsfile *)t->fptr, first_row + 1, 1,
                     (LONGLONG)n_rows * t->row_bytes, buf, &status);
  if (status) {
    char what[160];
    snprintf(what, sizeof what, "cannot read rows %lld to %lld",
             first_row + 1, first_row + n_rows);
    return fits_fail(status, msg, msg_len, what);
  }
  return WT_OK;
}

/* FITS stores big-endian numbers */
static uint64_t be64(const unsigned char *p)
{
  return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
         (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
         (uint64_t)p[6] << 8 | (uint64_t)p[7];
}
static uint32_t be32(const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         (uint32_t)p[3];
}

void wt_fits_decode(const wt_fits_table *t, int col, const unsigned char *rows,
                    long long n_rows, void *out, double na)
{
  const wt_fits_col *c = &t->cols[col];
  const unsigned char *p = rows + c->offset;
  const long long w = t->row_bytes;
  if (c->kind == WT_COL_DOUBLE) {
    double *d = out;
    for (long long i = 0; i < n_rows; i++, p += w) {
      double x;
      if (c->raw_code == TDOUBLE) {
        uint64_t u = be64(p);
        memcpy(&x, &u, 8);
      } else if (c->raw_code == TFLOAT) {
        uint32_t u = be32(p);
        float f;
        memcpy(&f, &u, 4);
        x = (double)f;
      } else {                                   /* K */
        int64_t v = (int64_t)be64(p);
        x = c->has_tnull && v == c->tnull ? NAN : (double)v;
      }
      d[i] = isnan(x) ? na : x;
    }
  } else {
    int *d = out;
    for (long long i = 0; i < n_rows; i++, p += w) {
      long long v = c->raw_code == TLONG ? (long long)(int32_t)be32(p)
        : c->raw_code == TSHORT ? (long long)(int16_t)((uint16_t)p[0] << 8 | p[1])
        : (long long)p[0];
      d[i] = c->has_tnull && v == c->tnull ? INT_MIN : (int)v;
    }
  }
}

void wt_fits_unmap(wt_fits_table *t)
{
  if (t->map) munmap(t->map, t->map_len);
  t->map = NULL;
  t->map_len = 0;
}

const unsigned char *wt_fits_map_rows(wt_fits_table *t)
{
  LONGLONG head = 0, data = 0, end = 0;
  int status = 0;
  if (t->row_bytes <= 0 || t->n_rows <= 0) return NULL;
  fits_get_hduaddrll((fitsfile *)t->fptr, &head, &data, &end, &status);
  if (status) { fits_clear_errmsg(); return NULL; }
  int fd = open(t->path, O_RDONLY);
  if (fd < 0) return NULL;
  struct stat st;
  char magic[6] = {0};
  /* a regular, uncompressed file that holds every row: never map past
   * its end (a NAXIS2 beyond the data reads through cfitsio and fails) */
  long long need = (long long)data + t->n_rows * t->row_bytes;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < need ||
      pread(fd, magic, 6, 0) != 6 || memcmp(magic, "SIMPLE", 6) != 0) {
    close(fd);
    return NULL;
  }
  void *m = mmap(NULL, (size_t)need, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return NULL;
  t->map = m;
  t->map_len = (size_t)need;
  return (const unsigned char *)m + data;
}

/* ---- writing ---------------------------------------------------------------
 * A result file is written HDU by HDU into a new file (cfitsio refuses to
 * create over an existing one) and then renamed over its final name, so
 * that a failed write leaves no half file behind. */

/* the checksums of the HDU just written; a failure of any step before
 * them (status) or of the checksums is "cannot write the <kind> <extname>"
 * (extname NULL: none) */
static int finish_hdu(fitsfile *f, int status, const char *kind,
                      const char *extname, char *msg, size_t msg_len)
{
  fits_write_chksum(f, &status);
  if (!status) return WT_OK;
  char what[120];
  snprintf(what, sizeof what, "cannot write the %s%s%s", kind,
           extname ? " " : "", extname ? extname : "");
  return fits_fail(status, msg, msg_len, what);
}

static int write_keys(fitsfile *f, const wt_fits_key *keys, int n_keys,
                      int *status)
{
  for (int k = 0; k < n_keys && !*status; k++) {
    const wt_fits_key *key = &keys[k];
    char *name = (char *)key->name, *comment = (char *)key->comment;
    switch (key->type) {
    case WT_KEY_STRING:
      fits_update_key_str(f, name, (char *)key->s, comment, status);
      break;
    case WT_KEY_LOGICAL:
      fits_update_key_log(f, name, key->l, comment, status);
      break;
    case WT_KEY_INT:
      fits_update_key_lng(f, name, key->i, comment, status);
      break;
    default:
      /* -17: 17 significant digits, every double exactly */
      fits_update_key_dbl(f, name, key->d, -17, comment, status);
    }
  }
  return *status;
}

int wt_fits_create(const char *path, void **fptr, const wt_fits_key *keys,
                   int n_keys, char *msg, size_t msg_len)
{
  int status = 0;
  fitsfile *f = NULL;
  *fptr = NULL;
  /* the disk-file create takes the name literally, like the open */
  errno = 0;
  fits_create_diskfile(&f, path, &status);
  if (status) {
    /* the system's reason, when it gave one, says more than cfitsio's
     * guess ("already exists?") */
    int err = errno;
    char what[300];
    snprintf(what, sizeof what, "cannot create the file (as \"%.150s\")%s%s",
             path, err ? ": " : "", err ? strerror(err) : "");
    return fits_fail(status, msg, msg_len, what);
  }
  *fptr = f;
  /* a primary HDU with no data: the keywords of the result */
  fits_create_img(f, BYTE_IMG, 0, NULL, &status);
  write_keys(f, keys, n_keys, &status);
  return finish_hdu(f, status, "primary HDU", NULL, msg, msg_len);
}

int wt_fits_write_table(void *fptr, const char *extname, long long n_rows,
                        const wt_fits_wcol *cols, int n_cols,
                        const wt_fits_key *keys, int n_keys, char *msg,
                        size_t msg_len)
{
  fitsfile *f = fptr;
  int status = 0;
  char **ttype = calloc((size_t)n_cols + 1, sizeof(char *));
  char **tform = calloc((size_t)n_cols + 1, sizeof(char *));
  char **tunit = calloc((size_t)n_cols + 1, sizeof(char *));
  char *forms = calloc((size_t)n_cols + 1, 32);
  if (!ttype || !tform || !tunit || !forms) {
    free(ttype); free(tform); free(tunit); free(forms);
    return WT_ERR_NOMEM;
  }
  for (int j = 0; j < n_cols; j++) {
    ttype[j] = (char *)cols[j].name;
    tunit[j] = (char *)(cols[j].unit ? cols[j].unit : "");
    tform[j] = forms + 32 * j;
    snprintf(tform[j], 32, "%lld%c", cols[j].repeat,
             cols[j].b ? 'B' : cols[j].j ? 'J' : cols[j].s ? 'A' : 'D');
  }
  fits_create_tbl(f, BINARY_TBL, n_rows, n_cols, ttype, tform, tunit,
                  (char *)extname, &status);
  free(ttype); free(tform); free(tunit); free(forms);
  write_keys(f, keys, n_keys, &status);
  for (int j = 0; j < n_cols && !status && n_rows > 0; j++) {
    /* a string column holds one string a row, whatever its width */
    LONGLONG n = (LONGLONG)n_rows * (cols[j].s ? 1 : cols[j].repeat);
    if (n == 0) continue;
    if (cols[j].s)
      fits_write_col(f, TSTRING, j + 1, 1, 1, n, (void *)cols[j].s, &status);
    else if (cols[j].j)
      fits_write_col(f, TINT, j + 1, 1, 1, n, (void *)cols[j].j, &status);
    else if (cols[j].b)
      fits_write_col(f, TBYTE, j + 1, 1, 1, n, (void *)cols[j].b, &status);
    else
      fits_write_col(f, TDOUBLE, j + 1, 1, 1, n, (void *)cols[j].d, &status);
  }
  return finish_hdu(f, status, "table", extname, msg, msg_len);
}

int wt_fits_write_image(void *fptr, const char *extname, long long n_rows,
                        long long n_cols, const double *rows,
                        const wt_fits_key *keys, int n_keys, char *msg,
                        size_t msg_len)
{
  fitsfile *f = fptr;
  int status = 0;
  /* NAXIS1 runs along a row: astropy's data[i, j] is row i, column j */
  LONGLONG naxes[2] = {n_cols, n_rows};
  fits_create_imgll(f, DOUBLE_IMG, 2, naxes, &status);
  fits_update_key_str(f, "EXTNAME", (char *)extname, "name of this HDU",
                      &status);
  write_keys(f, keys, n_keys, &status);
  if (n_rows > 0 && n_cols > 0)
    fits_write_img(f, TDOUBLE, 1, (LONGLONG)n_rows * n_cols, (void *)rows,
                   &status);
  return finish_hdu(f, status, "image", extname, msg, msg_len);
}

int wt_fits_finish(void *fptr, const char *tmp, const char *path, char *msg,
                   size_t msg_len)
{
  int status = 0;
  if (fptr) fits_close_file((fitsfile *)fptr, &status);
  if (status) {
    fits_fail(status, msg, msg_len, "cannot finish the file");
    remove(tmp);
    return WT_ERR_FITS;
  }
  errno = 0;
  if (rename(tmp, path) != 0) {
    snprintf(msg, msg_len, "cannot rename the finished file \"%.200s\" to "
             "it: %s", tmp, strerror(errno));
    remove(tmp);
    return WT_ERR_FITS;
  }
  return WT_OK;
}

void wt_fits_abandon(void *fptr, const char *tmp)
{
  int status = 0;
  if (fptr) fits_close_file((fitsfile *)fptr, &status);
  fits_clear_errmsg();
  remove(tmp);
}

/* ---- images (read) ---------------------------------------------------------- */

int wt_fits_read_image(const char *path, const char *extname,
                       long long *n_rows, long long *n_cols, double **out,
                       char *msg, size_t msg_len)
{
  int status = 0, type = 0, naxis = 0, anynul = 0;
  fitsfile *f = NULL;
  LONGLONG naxes[2] = {0, 0};
  *out = NULL;
  *n_rows = *n_cols = 0;
  fits_open_diskfile(&f, path, READONLY, &status);
  if (status) return fits_fail(status, msg, msg_len, "cannot open the file");
  fits_movnam_hdu(f, ANY_HDU, (char *)extname, 0, &status);
  if (status == BAD_HDU_NUM) {
    snprintf(msg, msg_len, "the file has no HDU with EXTNAME \"%s\"", extname);
    status = 0;
    fits_close_file(f, &status);
    fits_clear_errmsg();
    return WT_ERR_ARG;
  }
  fits_get_hdu_type(f, &type, &status);
  if (!status && type != IMAGE_HDU) {
    snprintf(msg, msg_len, "HDU %s is a table, not an image", extname);
    fits_close_file(f, &status);
    fits_clear_errmsg();
    return WT_ERR_ARG;
  }
  fits_get_img_dim(f, &naxis, &status);
  if (!status && naxis != 2) {
    snprintf(msg, msg_len, "image %s has %d axes, not 2", extname, naxis);
    fits_close_file(f, &status);
    fits_clear_errmsg();
    return WT_ERR_ARG;
  }
  fits_get_img_sizell(f, 2, naxes, &status);
  if (!status && naxes[0] > 0 && naxes[1] > 0) {
    double *v = malloc((size_t)naxes[0] * (size_t)naxes[1] * sizeof(double));
    if (!v) {
      fits_close_file(f, &status);
      return WT_ERR_NOMEM;
    }
    double nan_val = NAN;
    fits_read_img(f, TDOUBLE, 1, naxes[0] * naxes[1], &nan_val, v, &anynul,
                  &status);
    if (status) free(v); else *out = v;
  }
  if (status) {
    char what[120];
    snprintf(what, sizeof what, "cannot read the image %s", extname);
    fits_fail(status, msg, msg_len, what);
    status = 0;
    fits_close_file(f, &status);
    fits_clear_errmsg();
    return WT_ERR_FITS;
  }
  *n_rows = naxes[1];
  *n_cols = naxes[0];
  fits_close_file(f, &status);
  fits_clear_errmsg();
  return WT_OK;
}

/* ---- headers (read) --------------------------------------------------------- */

int wt_fits_header(const char *path, int hdu, int *n_hdus, char **cards,
                   int *n_cards, char *msg, size_t msg_len)
{
  int status = 0, type = 0;
  fitsfile *f = NULL;
  *cards = NULL;
  *n_cards = 0;
  *n_hdus = 0;
  fits_open_diskfile(&f, path, READONLY, &status);
  if (status) return fits_fail(status, msg, msg_len, "cannot open the file");
  fits_get_num_hdus(f, n_hdus, &status);
  if (!status && (hdu < 0 || hdu >= *n_hdus)) {
    snprintf(msg, msg_len, "the file has %d HDU(s), numbered 0 to %d; "
             "there is no HDU %d", *n_hdus, *n_hdus - 1, hdu);
    fits_close_file(f, &status);
    fits_clear_errmsg();
    return WT_ERR_ARG;
  }
  fits_movabs_hdu(f, hdu + 1, &type, &status);
  /* every card but COMMENT and HISTORY, 80 characters each, in order */
  char *exclude[] = {"COMMENT", "HISTORY"};
  if (!status) fits_hdr2str(f, 0, exclude, 2, cards, n_cards, &status);
  if (status) {
    int s2 = 0;
    if (*cards) fits_free_memory(*cards, &s2);
    *cards = NULL;
    *n_cards = 0;
    fits_fail(status, msg, msg_len, "cannot read the header");
    status = 0;
    fits_close_file(f, &status);
    fits_clear_errmsg();
    return WT_ERR_FITS;
  }
  fits_close_file(f, &status);
  fits_clear_errmsg();
  return WT_OK;
}

void wt_fits_free_header(char *cards)
{
  int status = 0;
  if (cards) fits_free_memory(cards, &status);
}
