/* Writing FITS results through cfitsio (built with fits.c when configure
 * finds cfitsio). No R here: statuses and a message in msg. */
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
  return wt_fits_fail(status, msg, msg_len, what);
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
    return wt_fits_fail(status, msg, msg_len, what);
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
    wt_fits_fail(status, msg, msg_len, "cannot finish the file");
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
