/* FITS tables through cfitsio (Debian's libcfitsio-dev); built when
 * configure finds cfitsio, else fits_stub.c. No R here: statuses and a
 * message in msg (cfitsio's own words). Columns are read in chunks of rows
 * that fit cfitsio's buffers, so a table is read once and never held twice
 * (r/fits.c drives the chunks). Writing is fits_write.c; whole HDUs
 * (images, headers, checksums) fits_hdu.c. */
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
#include <sys/stat.h>
#include "wt.h"
#include "io.h"
#include "fits_int.h"

int wt_fits_compiled(void) { return 1; }

int wt_fits_fail(int status, char *msg, size_t msg_len, const char *what)
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

/* cfitsio counts HDUs up to the first one whose header it cannot parse,
 * so a broken header looks like the end of the file. Moving one HDU past
 * the last counted tells them apart: the end of the file, or the reason
 * that HDU is broken (a card cfitsio refused: "Illegal TFORM", "NAXIS2 <
 * 0"), into msg as "HDU k's header is broken: ..."; 1 when broken. */
static int broken_hdu(fitsfile *f, int n_hdus, char *msg, size_t msg_len)
{
  int status = 0, type = 0;
  fits_clear_errmsg();
  fits_movabs_hdu(f, n_hdus + 1, &type, &status);
  if (status == 0 || status == END_OF_FILE) {
    fits_clear_errmsg();
    return 0;
  }
  char what[200], first[FLEN_ERRMSG] = "", detail[FLEN_ERRMSG];
  /* cfitsio's messages, oldest first, are read by fits_fail: look for the
   * card they name before that */
  int card = 0;
  {
    char all[4 * FLEN_ERRMSG] = "";
    size_t used = 0;
    while (fits_read_errmsg(detail) && used + strlen(detail) + 2 < sizeof all) {
      if (!first[0]) strncpy(first, detail, sizeof first - 1);
      used += (size_t)snprintf(all + used, sizeof all - used, "%s\n", detail);
    }
    const char *k = strstr(all, "keyword no. ");
    if (k) card = atoi(k + 12);
    fits_clear_errmsg();
  }
  /* the card itself, read from the file (uncompressed files): the broken
   * HDU starts where the last one cfitsio counted ends; failing a card
   * named, a TFORMn whose repeat count overflows */
  char text[81] = "", name[16] = "";
  {
    LONGLONG head = 0, data = 0, end = 0;
    int s2 = 0;
    fits_movabs_hdu(f, n_hdus, &type, &s2);
    fits_get_hduaddrll(f, &head, &data, &end, &s2);
    fits_clear_errmsg();
    FILE *fp = s2 ? NULL : fopen(f->Fptr->filename, "rb");
    unsigned char m2[2] = {0, 0};
    if (fp && fread(m2, 1, 2, fp) == 2 && !(m2[0] == 0x1f && m2[1] == 0x8b) &&
        fseek(fp, (long)end, SEEK_SET) == 0) {
      char c[80];
      for (int k = 1; k <= 100000 && fread(c, 1, 80, fp) == 80; k++) {
        if (!memcmp(c, "END     ", 8)) break;
        int pick = k == card;
        if (!card && !memcmp(c, "TFORM", 5)) {
          /* a repeat count of more digits than any table could hold */
          const char *v = memchr(c, '\'', 80);
          int digits = 0;
          for (v = v ? v + 1 : c + 80; v < c + 80 && *v >= '0' && *v <= '9'; v++)
            digits++;
          if (digits > 15) pick = 1, card = k;
        }
        if (pick) {
          memcpy(text, c, 80);
          for (int e = 79; e >= 0 && text[e] == ' '; e--) text[e] = '\0';
          memcpy(name, c, 8);
          for (int e = 7; e >= 0 && name[e] == ' '; e--) name[e] = '\0';
          break;
        }
      }
    }
    if (fp) fclose(fp);
  }
  if (text[0])
    snprintf(what, sizeof what, "HDU %d's header is broken at card %d, %s "
             "(\"%.80s\")", n_hdus, card, name, text);
  else
    snprintf(what, sizeof what, "HDU %d's header is broken", n_hdus);
  if (first[0]) ffpmsg(first);     /* cfitsio's reason, for fits_fail */
  wt_fits_fail(status, msg, msg_len, what);
  return 1;
}

/* whether path can no longer hold `need` bytes: it shrank while it was
 * read (another process truncated or rewrote it); its size in *now */
static int shrank(const wt_fits_table *t, long long *now)
{
  struct stat st;
  if (t->file_bytes <= 0 || stat(t->path, &st) != 0) return 0;
  *now = (long long)st.st_size;
  return S_ISREG(st.st_mode) && !t->gzip && *now < t->file_bytes;
}

/* a failed read: the file shrank under us, or cfitsio's words */
static int read_fail(wt_fits_table *t, int status, char *msg, size_t msg_len,
                     const char *what)
{
  long long now = 0;
  if (shrank(t, &now)) {
    fits_clear_errmsg();
    snprintf(msg, msg_len, "%s: the file shrank from %lld to %lld bytes while "
             "it was read (another process truncated or rewrote it)", what,
             t->file_bytes, now);
    return WT_ERR_FITS;
  }
  return wt_fits_fail(status, msg, msg_len, what);
}

/* a failed read of column col (from 0) at first_row (from 0) */
static int column_fail(wt_fits_table *t, int col, long long first_row,
                       int status, char *msg, size_t msg_len)
{
  char what[160];
  snprintf(what, sizeof what, "cannot read column %d (\"%s\") at row %lld",
           col + 1, t->cols[col].name, first_row + 1);
  return read_fail(t, status, msg, msg_len, what);
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
  snprintf(t->path, sizeof t->path, "%s", path);
  /* the disk-file open takes the name literally: brackets or a leading
   * '-' are not read as cfitsio's extended file-name syntax */
  fits_open_diskfile(&f, path, READONLY, &status);
  if (status) return wt_fits_fail(status, msg, msg_len, "cannot open the file");
  t->fptr = f;
  fits_get_num_hdus(f, &n_hdus, &status);
  if (status) {
    wt_fits_fail(status, msg, msg_len, "cannot read the HDUs");
    wt_fits_close(t);
    return WT_ERR_FITS;
  }
  {
    /* the file's size (decompressed, for gzip), for the sizes headers
     * claim; whether it is compressed, so not read in place */
    unsigned char magic[2] = {0, 0};
    FILE *fp = fopen(path, "rb");
    if (fp) {
      t->gzip = fread(magic, 1, 2, fp) == 2 && magic[0] == 0x1f &&
        magic[1] == 0x8b;
      fclose(fp);
    }
    t->file_bytes = f->Fptr->logfilesize;
  }
  if (hdu >= 0) {
    if (hdu >= n_hdus && broken_hdu(f, n_hdus, msg, msg_len)) {
      wt_fits_close(t);
      return WT_ERR_ARG;
    }
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
      if (!broken_hdu(f, n_hdus, msg, msg_len))
        snprintf(msg, msg_len, "the file has no HDU with EXTNAME \"%s\"",
                 extname);
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
    if (!status && type == IMAGE_HDU && broken_hdu(f, n_hdus, msg, msg_len)) {
      wt_fits_close(t);
      return WT_ERR_ARG;
    }
    if (!status && type == IMAGE_HDU) {
      snprintf(msg, msg_len, "the file holds no table extension (%d HDU(s), "
               "all images)", n_hdus);
      wt_fits_close(t);
      return WT_ERR_ARG;
    }
  }
  if (status) {
    wt_fits_fail(status, msg, msg_len, "cannot move to the HDU");
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
    wt_fits_fail(status, msg, msg_len, "cannot read the table's size");
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
    case TLONGLONG: case TULONGLONG:
      /* K, or K with TZERO = 2^63 (unsigned): 64-bit integers, exact
       * (other scalings are real numbers: TDOUBLE here) */
      col->kind = WT_COL_INT64;
      col->u64 = col->typecode == TULONGLONG;
      break;
    case TULONG: case TFLOAT: case TDOUBLE: case TUINT:
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
        (col->kind == WT_COL_DOUBLE || col->kind == WT_COL_INT ||
         col->kind == WT_COL_INT64);
    }
    if (!ok || s2 || off != naxis1) {
      for (int c = 0; c < t->n_cols; c++) t->cols[c].fast = 0;
    } else {
      t->row_bytes = naxis1;
    }
  }
  fits_clear_errmsg();
  if (status) {
    wt_fits_fail(status, msg, msg_len, "cannot read the column descriptions");
    wt_fits_close(t);
    return WT_ERR_FITS;
  }
  /* the rows the header claims must be in the file before anything is
   * allocated for them: a lying NAXIS2 is the file's fault, not memory's */
  {
    LONGLONG head = 0, data = 0, end = 0;
    long long naxis1 = 0;
    int s2 = 0;
    fits_read_key(f, TLONGLONG, "NAXIS1", &naxis1, NULL, &s2);
    fits_get_hduaddrll(f, &head, &data, &end, &s2);
    fits_clear_errmsg();
    double need = (double)naxis1 * (double)t->n_rows;
    double have = (double)t->file_bytes - (double)data;
    if (!s2 && t->file_bytes > 0 && need > have) {
      snprintf(msg, msg_len, "HDU %d's header claims NAXIS2 = %lld rows of "
               "NAXIS1 = %lld bytes (%.0f bytes), but the file holds only "
               "%.0f bytes after that header%s: it is truncated or its header "
               "is wrong", t->hdu, t->n_rows, naxis1, need,
               have > 0 ? have : 0, t->gzip ? " (decompressed)" : "");
      wt_fits_close(t);
      return WT_ERR_ARG;
    }
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

static int read_values(wt_fits_table *t, int col, long long first_row,
                       long long n_rows, int type, void *out, char *nulls)
{
  int status = 0, anynul = 0;
  LONGLONG n = (LONGLONG)n_rows * t->cols[col].repeat;
  if (nulls) {
    fits_read_colnull((fitsfile *)t->fptr, type, col + 1, first_row + 1, 1, n,
                      out, nulls, &anynul, &status);
  } else {
    /* nulls become NaN (double), INT_MIN (int) or INT64_MIN (64-bit
     * integers: bit64's NA) in place */
    double nan_val = NAN;
    int int_null = INT_MIN;
    LONGLONG ll_null = INT64_MIN;
    fits_read_col((fitsfile *)t->fptr, type, col + 1, first_row + 1, 1, n,
                  type == TINT ? (void *)&int_null : type == TLONGLONG
                  ? (void *)&ll_null : (void *)&nan_val, out, &anynul,
                  &status);
  }
  return status;
}

int wt_fits_read(wt_fits_table *t, int col, long long first_row,
                 long long n_rows, int kind, void *out, char *nulls,
                 char *msg, size_t msg_len)
{
  int type = kind == WT_COL_INT ? TINT : kind == WT_COL_LOGICAL ? TLOGICAL
    : kind == WT_COL_INT64 ? (t->cols[col].typecode == TULONGLONG
                              ? TULONGLONG : TLONGLONG)
    : TDOUBLE;
  size_t size = type == TINT ? sizeof(int) : type == TLOGICAL ? 1 : 8;
  if ((LONGLONG)n_rows * t->cols[col].repeat == 0) return WT_OK;
  int status = read_values(t, col, first_row, n_rows, type, out, nulls);
  if (status && n_rows > 1) {
    /* which row of the chunk: read again one row at a time (a failure is
     * rare, and only this chunk is read again) */
    fits_clear_errmsg();
    size_t per_row = (size_t)t->cols[col].repeat;
    for (long long i = 0; i < n_rows; i++) {
      status = read_values(t, col, first_row + i, 1, type,
                           (char *)out + (size_t)i * per_row * size,
                           nulls ? nulls + (size_t)i * per_row : NULL);
      if (status) return column_fail(t, col, first_row + i, status, msg,
                                     msg_len);
    }
    /* every row read alone: the failure was not one row's */
    status = read_values(t, col, first_row, n_rows, type, out, nulls);
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
  for (long long i = 0; status && n_rows > 1 && i < n_rows; i++) {
    /* which row of the chunk (see wt_fits_read) */
    status = 0;
    fits_clear_errmsg();
    fits_read_col_str((fitsfile *)t->fptr, col + 1, first_row + i + 1, 1, 1,
                      "", out + i, &anynul, &status);
    if (status) return column_fail(t, col, first_row + i, status, msg,
                                   msg_len);
  }
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
    return read_fail(t, status, msg, msg_len, what);
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
  if (c->kind == WT_COL_INT64) {
    int64_t *d = out;                            /* K: exact, NA INT64_MIN */
    for (long long i = 0; i < n_rows; i++, p += w) {
      int64_t v = (int64_t)be64(p);
      d[i] = c->has_tnull && v == c->tnull ? INT64_MIN : v;
    }
  } else if (c->kind == WT_COL_DOUBLE) {
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
      } else {
        x = NAN;                                 /* not a fast double */
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
