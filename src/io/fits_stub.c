/* Built in place of fits.c when cfitsio is absent or WTHETA_FITS=0: the
 * same symbols, reporting that FITS support is not compiled in. */
#include <stdio.h>
#include <string.h>
#include "wt.h"
#include "io.h"

int wt_fits_compiled(void) { return 0; }

int wt_fits_open(const char *path, int hdu, const char *extname,
                 wt_fits_table *t, char *msg, size_t msg_len)
{
  (void)path; (void)hdu; (void)extname;
  memset(t, 0, sizeof *t);
  snprintf(msg, msg_len, "wtheta was built without cfitsio");
  return WT_ERR_NO_FITS;
}

void wt_fits_close(wt_fits_table *t) { (void)t; }

int wt_fits_read(wt_fits_table *t, int col, long long first_row,
                 long long n_rows, int kind, void *out, char *nulls,
                 char *msg, size_t msg_len)
{
  (void)t; (void)col; (void)first_row; (void)n_rows; (void)kind; (void)out;
  (void)nulls;
  snprintf(msg, msg_len, "wtheta was built without cfitsio");
  return WT_ERR_NO_FITS;
}

int wt_fits_read_strings(wt_fits_table *t, int col, long long first_row,
                         long long n_rows, char **out, char *msg,
                         size_t msg_len)
{
  (void)t; (void)col; (void)first_row; (void)n_rows; (void)out;
  snprintf(msg, msg_len, "wtheta was built without cfitsio");
  return WT_ERR_NO_FITS;
}

long long wt_fits_chunk_rows(wt_fits_table *t) { (void)t; return 1; }

int wt_fits_keyword(wt_fits_table *t, int k, char *name, char *value,
                    char *comment)
{
  (void)t; (void)k; (void)name; (void)value; (void)comment;
  return 0;
}

int wt_fits_read_rows(wt_fits_table *t, long long first_row, long long n_rows,
                      unsigned char *buf, char *msg, size_t msg_len)
{
  (void)t; (void)first_row; (void)n_rows; (void)buf;
  snprintf(msg, msg_len, "wtheta was built without cfitsio");
  return WT_ERR_NO_FITS;
}

void wt_fits_decode(const wt_fits_table *t, int col, const unsigned char *rows,
                    long long n_rows, void *out, double na)
{
  (void)t; (void)col; (void)rows; (void)n_rows; (void)out; (void)na;
}

int wt_fits_create(const char *path, void **fptr, const wt_fits_key *keys,
                   int n_keys, char *msg, size_t msg_len)
{
  (void)path; (void)keys; (void)n_keys;
  *fptr = NULL;
  snprintf(msg, msg_len, "wtheta was built without cfitsio");
  return WT_ERR_NO_FITS;
}

int wt_fits_write_table(void *fptr, const char *extname, long long n_rows,
                        const wt_fits_wcol *cols, int n_cols,
                        const wt_fits_key *keys, int n_keys, char *msg,
                        size_t msg_len)
{
  (void)fptr; (void)extname; (void)n_rows; (void)cols; (void)n_cols;
  (void)keys; (void)n_keys;
  snprintf(msg, msg_len, "wtheta was built without cfitsio");
  return WT_ERR_NO_FITS;
}

int wt_fits_write_image(void *fptr, const char *extname, long long n_rows,
                        long long n_cols, const double *rows,
                        const wt_fits_key *keys, int n_keys, char *msg,
                        size_t msg_len)
{
  (void)fptr; (void)extname; (void)n_rows; (void)n_cols; (void)rows;
  (void)keys; (void)n_keys;
  snprintf(msg, msg_len, "wtheta was built without cfitsio");
  return WT_ERR_NO_FITS;
}

int wt_fits_finish(void *fptr, const char *tmp, const char *path, char *msg,
                   size_t msg_len)
{
  (void)fptr; (void)tmp; (void)path;
  snprintf(msg, msg_len, "wtheta was built without cfitsio");
  return WT_ERR_NO_FITS;
}

void wt_fits_abandon(void *fptr, const char *tmp) { (void)fptr; (void)tmp; }

int wt_fits_read_image(const char *path, const char *extname,
                       long long *n_rows, long long *n_cols, double **out,
                       char *msg, size_t msg_len)
{
  (void)path; (void)extname;
  *n_rows = *n_cols = 0;
  *out = NULL;
  snprintf(msg, msg_len, "wtheta was built without cfitsio");
  return WT_ERR_NO_FITS;
}

int wt_fits_header(const char *path, int hdu, int *n_hdus, char **cards,
                   int *n_cards, char *msg, size_t msg_len)
{
  (void)path; (void)hdu;
  *n_hdus = 0;
  *cards = NULL;
  *n_cards = 0;
  snprintf(msg, msg_len, "wtheta was built without cfitsio");
  return WT_ERR_NO_FITS;
}

void wt_fits_free_header(char *cards) { (void)cards; }

int wt_fits_verify(const char *path, int *bad_hdu, char *msg, size_t msg_len)
{
  (void)path; (void)msg; (void)msg_len;
  *bad_hdu = -1;
  return WT_ERR_NO_FITS;
}
