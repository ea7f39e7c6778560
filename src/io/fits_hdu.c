/* Whole HDUs of a FITS file through cfitsio (built with fits.c when
 * configure finds cfitsio): an image read into doubles, the header cards
 * of any HDU, the CHECKSUM/DATASUM of every HDU verified. No R here. */
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

/* ---- images (read) ---------------------------------------------------------- */

/* closes f (whatever the status of the steps before), clears cfitsio's
 * message stack and returns ret: every way out of the functions below */
static int close_with(fitsfile *f, int ret)
{
  int status = 0;
  fits_close_file(f, &status);
  fits_clear_errmsg();
  return ret;
}

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
  if (status) return wt_fits_fail(status, msg, msg_len, "cannot open the file");
  fits_movnam_hdu(f, ANY_HDU, (char *)extname, 0, &status);
  if (status == BAD_HDU_NUM) {
    snprintf(msg, msg_len, "the file has no HDU with EXTNAME \"%s\"", extname);
    return close_with(f, WT_ERR_ARG);
  }
  fits_get_hdu_type(f, &type, &status);
  if (!status && type != IMAGE_HDU) {
    snprintf(msg, msg_len, "HDU %s is a table, not an image", extname);
    return close_with(f, WT_ERR_ARG);
  }
  fits_get_img_dim(f, &naxis, &status);
  if (!status && naxis != 2) {
    snprintf(msg, msg_len, "image %s has %d axes, not 2", extname, naxis);
    return close_with(f, WT_ERR_ARG);
  }
  fits_get_img_sizell(f, 2, naxes, &status);
  if (!status && naxes[0] > 0 && naxes[1] > 0) {
    double *v = malloc((size_t)naxes[0] * (size_t)naxes[1] * sizeof(double));
    if (!v) return close_with(f, WT_ERR_NOMEM);
    double nan_val = NAN;
    fits_read_img(f, TDOUBLE, 1, naxes[0] * naxes[1], &nan_val, v, &anynul,
                  &status);
    if (status) free(v); else *out = v;
  }
  if (status) {
    char what[120];
    snprintf(what, sizeof what, "cannot read the image %s", extname);
    wt_fits_fail(status, msg, msg_len, what);
    return close_with(f, WT_ERR_FITS);
  }
  *n_rows = naxes[1];
  *n_cols = naxes[0];
  return close_with(f, WT_OK);
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
  if (status) return wt_fits_fail(status, msg, msg_len, "cannot open the file");
  fits_get_num_hdus(f, n_hdus, &status);
  if (!status && (hdu < 0 || hdu >= *n_hdus)) {
    snprintf(msg, msg_len, "the file has %d HDU(s), numbered 0 to %d; "
             "there is no HDU %d", *n_hdus, *n_hdus - 1, hdu);
    return close_with(f, WT_ERR_ARG);
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
    wt_fits_fail(status, msg, msg_len, "cannot read the header");
    return close_with(f, WT_ERR_FITS);
  }
  return close_with(f, WT_OK);
}

void wt_fits_free_header(char *cards)
{
  int status = 0;
  if (cards) fits_free_memory(cards, &status);
}

/* ---- checksums (read) ------------------------------------------------------- */

int wt_fits_verify(const char *path, int *bad_hdu, char *msg, size_t msg_len)
{
  int status = 0, n_hdus = 0, type = 0;
  fitsfile *f = NULL;
  *bad_hdu = -1;
  fits_open_diskfile(&f, path, READONLY, &status);
  if (status) return wt_fits_fail(status, msg, msg_len, "cannot open the file");
  fits_get_num_hdus(f, &n_hdus, &status);
  for (int k = 1; k <= n_hdus && !status; k++) {
    int data_ok = 0, hdu_ok = 0;
    fits_movabs_hdu(f, k, &type, &status);
    /* 1: right, 0: no keyword, -1: wrong */
    if (!status) fits_verify_chksum(f, &data_ok, &hdu_ok, &status);
    if (!status && (data_ok < 0 || hdu_ok < 0)) {
      char ext[FLEN_VALUE] = "";
      int s2 = 0;
      fits_read_key(f, TSTRING, "EXTNAME", ext, NULL, &s2);
      snprintf(msg, msg_len, "HDU %d%s%s%s fails its %s check: the file "
               "changed after it was written", k - 1, s2 ? "" : " (",
               s2 ? "" : ext, s2 ? "" : ")",
               data_ok < 0 ? "DATASUM" : "CHECKSUM");
      *bad_hdu = k - 1;
      return close_with(f, WT_ERR_ARG);
    }
  }
  if (status) {
    wt_fits_fail(status, msg, msg_len, "cannot verify the checksums");
    return close_with(f, WT_ERR_FITS);
  }
  return close_with(f, WT_OK);
}
