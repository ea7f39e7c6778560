/* Private to the cfitsio files of io/ (fits.c, fits_write.c, fits_hdu.c):
 * cfitsio's status and its oldest message as one of ours. */
#ifndef WT_FITS_INT_H
#define WT_FITS_INT_H
#include <stddef.h>

/* status into msg as "<what>: <cfitsio's words> (cfitsio status N); ...",
 * cfitsio's message stack cleared; returns WT_ERR_FITS */
int wt_fits_fail(int status, char *msg, size_t msg_len, const char *what);

#endif
