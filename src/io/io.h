/* Plain-C API of the readers (no SEXP): text catalogs held in memory
 * (text.c) and FITS tables through cfitsio (fits.c, or fits_stub.c when the
 * package is built without it). Functions return WT_OK or a WT_ERR_* status
 * (wt.h) and never call R; r/text.c and r/fits.c turn statuses into R errors. */
#ifndef WT_IO_H
#define WT_IO_H
#include <stddef.h>
#include <stdint.h>

/* ---- text ---------------------------------------------------------------
 * A text file is one byte buffer. A content line is a line (ends LF, CRLF
 * or CR) with everything from '#' removed and spaces/tabs trimmed; blank
 * content lines are skipped. A UTF-8 byte-order mark at offset 0 is
 * skipped. sep 0 splits fields on runs of spaces and tabs, any other byte
 * splits on that byte (fields trimmed of spaces and tabs). */

/* next content line from *pos: 1 and [*s, *e) when there is one, else 0 */
int wt_text_next(const char *buf, int64_t len, int64_t *pos, int64_t *s,
                 int64_t *e);
/* number of content lines; *nul = offset of the first NUL byte or -1 */
int64_t wt_text_count(const char *buf, int64_t len, int64_t *nul);
/* the physical line holding offset off: its number (from 1) and bounds
 * (without the line end) */
void wt_text_line_at(const char *buf, int64_t len, int64_t off,
                     int64_t *line_no, int64_t *ls, int64_t *le);
/* field k (from 0) of the content line [s, e): 1 and [*fs, *fe) or 0 */
int wt_text_field(const char *buf, int64_t s, int64_t e, int sep, int k,
                  int64_t *fs, int64_t *fe);
/* the whole of [s, e) as a number: 1 and *v, else 0; "NA" and empty
 * fields are 2 with *v = NaN */
int wt_parse_number(const char *s, const char *e, double *v);

/* Parses columns cols[0..ncol) (from 0) of the n_rows content lines that
 * follow the first `skip` ones into out[j][0..n_rows). For each column,
 * bad[j] is the first row (from 0) whose field is not a number, na[j] the
 * first that is NA/empty/non-finite, each -1 when none; *short_row is the
 * first row with too few fields (parsing stops there) or -1. */
int wt_text_parse(const char *buf, int64_t len, int sep, int64_t skip,
                  int64_t n_rows, int ncol, const int *cols, double **out,
                  int64_t *bad, int64_t *na, int64_t *short_row);
/* the offset where content line `row` after `skip` lines starts, or -1 */
int64_t wt_text_row_offset(const char *buf, int64_t len, int64_t skip,
                           int64_t row);

/* ---- FITS -------------------------------------------------------------- */
enum {
  WT_ERR_FITS = 20,        /* cfitsio failed: see msg */
  WT_ERR_NO_FITS = 21      /* built without cfitsio */
};

/* what a column becomes: double (E, D, unsigned J, scaled), integer
 * (B, I, J, unsigned I), logical (L), character (A), 64-bit integer (K,
 * and K with TZERO = 2^63, unsigned: int64_t values, INT64_MIN for nulls,
 * as bit64's integer64 holds them); 0: not readable (variable-length
 * arrays, bits, complex numbers) */
enum { WT_COL_NONE = 0, WT_COL_DOUBLE = 1, WT_COL_INT = 2,
       WT_COL_LOGICAL = 3, WT_COL_STRING = 4, WT_COL_INT64 = 5 };

typedef struct {
  char name[72];           /* TTYPEn */
  char unit[72];           /* TUNITn, "" when absent */
  int typecode;            /* cfitsio's equivalent type code (scaling
                              applied); < 0 for variable-length arrays */
  int kind;                /* WT_COL_*: how the column reaches R */
  long long repeat;        /* elements per row (characters for strings) */
  long long width;         /* bytes per element */
  int scaled;              /* TSCALn/TZEROn other than 1 and 0 */
  int u64;                 /* K with TZERO = 2^63: unsigned 64-bit */
  double tscal, tzero;
  char tform[72];
  /* the fast path: an unscaled scalar D, E, K, J, I or B column of a
   * binary table is decoded from the raw row bytes */
  int fast;
  int raw_code;            /* cfitsio's stored type code */
  long long offset;        /* byte offset in the row */
  int has_tnull;
  long long tnull;
} wt_fits_col;

typedef struct {
  void *fptr;              /* fitsfile *, opaque here */
  int hdu;                 /* the HDU read, counted from 0 (primary) */
  int ascii;               /* ASCII table rather than binary */
  long long n_rows;
  int n_cols;
  wt_fits_col *cols;
  char extname[72];
  long long row_bytes;     /* NAXIS1 of a binary table */
  char path[4096];
  long long file_bytes;    /* the file's size when opened (decompressed) */
  int gzip;                /* gzip compressed (cfitsio reads it in memory) */
} wt_fits_table;

int wt_fits_compiled(void);
/* opens path and moves to HDU `hdu` (from 0) or, hdu < 0, to the one
 * named extname, or, extname NULL, to the first table extension */
int wt_fits_open(const char *path, int hdu, const char *extname,
                 wt_fits_table *t, char *msg, size_t msg_len);
void wt_fits_close(wt_fits_table *t);
/* opening checks what the header claims against the file: the rows of
 * NAXIS2 x NAXIS1 bytes must be in it (WT_ERR_ARG otherwise, before
 * anything is allocated for them), and a header cfitsio cannot parse is
 * named as broken, with cfitsio's reason, not taken for the end of the
 * file. A read that fails because the file shrank since it was opened
 * says so. */
/* reads n_rows rows from first_row (from 0) of column col (from 0) as
 * `kind` (WT_COL_DOUBLE into double, WT_COL_INT into int, WT_COL_LOGICAL
 * into char, WT_COL_INT64 into int64_t: for an unsigned column, uint64_t
 * with nulls required), row-major for vector
 * columns: n_rows * repeat values; nulls[k] is 1 for a null (TNULLn or an
 * IEEE NaN); with nulls NULL (double, int, signed int64), nulls are
 * written as NaN (double), INT_MIN (int) or INT64_MIN. A failed chunk is
 * read again row by row, so the error names the row that failed */
int wt_fits_read(wt_fits_table *t, int col, long long first_row,
                 long long n_rows, int kind, void *out, char *nulls,
                 char *msg, size_t msg_len);
/* the raw bytes of n_rows whole rows from first_row (from 0) */
int wt_fits_read_rows(wt_fits_table *t, long long first_row, long long n_rows,
                      unsigned char *buf, char *msg, size_t msg_len);
/* column col (a fast one) of n_rows raw rows into out: double (`na` for
 * NaN and nulls) for WT_COL_DOUBLE, int (INT_MIN for TNULLn) for
 * WT_COL_INT, int64_t (INT64_MIN for TNULLn) for WT_COL_INT64 */
void wt_fits_decode(const wt_fits_table *t, int col, const unsigned char *rows,
                    long long n_rows, void *out, double na);
/* strings: out holds n_rows pointers to buffers of repeat + 1 bytes */
int wt_fits_read_strings(wt_fits_table *t, int col, long long first_row,
                         long long n_rows, char **out, char *msg,
                         size_t msg_len);
/* rows to read at once for cfitsio's buffers to serve a whole chunk */
long long wt_fits_chunk_rows(wt_fits_table *t);
/* header keyword number k (from 1) of the current HDU: 1 and its name,
 * value (as written) and comment; 0 past the last */
int wt_fits_keyword(wt_fits_table *t, int k, char *name, char *value,
                    char *comment);
/* ---- FITS writing ----------------------------------------------------------
 * wt_fits_create() makes a new file (never over an existing one) with a
 * primary HDU that holds only keywords; the write functions append HDUs;
 * wt_fits_finish() closes the file and renames it from tmp to path, and
 * wt_fits_abandon() closes and removes it after a failure. Each HDU gets
 * CHECKSUM and DATASUM. */
enum { WT_KEY_STRING = 0, WT_KEY_LOGICAL = 1, WT_KEY_INT = 2,
       WT_KEY_DOUBLE = 3 };
typedef struct {
  const char *name;        /* at most 8 characters */
  int type;                /* WT_KEY_* */
  const char *s;           /* the value of the one type */
  int l;
  long long i;
  double d;
  const char *comment;     /* what the keyword is */
} wt_fits_key;

typedef struct {
  const char *name;        /* TTYPEn */
  const char *unit;        /* TUNITn, "" or NULL for none */
  long long repeat;        /* elements per row */
  const double *d;         /* n_rows * repeat doubles, row after row (D) */
  const unsigned char *b;  /* or bytes (B) */
  const int *j;            /* or 32-bit integers (J) */
  const char *const *s;    /* or n_rows strings of at most repeat bytes
                              (A): exactly one of d, b, j, s is not NULL */
} wt_fits_wcol;

int wt_fits_create(const char *path, void **fptr, const wt_fits_key *keys,
                   int n_keys, char *msg, size_t msg_len);
int wt_fits_write_table(void *fptr, const char *extname, long long n_rows,
                        const wt_fits_wcol *cols, int n_cols,
                        const wt_fits_key *keys, int n_keys, char *msg,
                        size_t msg_len);
/* a 2-d double image of n_rows x n_cols, `rows` row after row */
int wt_fits_write_image(void *fptr, const char *extname, long long n_rows,
                        long long n_cols, const double *rows,
                        const wt_fits_key *keys, int n_keys, char *msg,
                        size_t msg_len);
int wt_fits_finish(void *fptr, const char *tmp, const char *path, char *msg,
                   size_t msg_len);
void wt_fits_abandon(void *fptr, const char *tmp);
/* the 2-d image HDU named extname: *out (malloc'ed, the caller frees) holds
 * n_rows x n_cols doubles row after row (NULL when empty); nulls NaN */
int wt_fits_read_image(const char *path, const char *extname,
                       long long *n_rows, long long *n_cols, double **out,
                       char *msg, size_t msg_len);
/* the header of HDU hdu (from 0) as *n_cards cards of 80 characters,
 * COMMENT and HISTORY left out: *cards (free with wt_fits_free_header);
 * *n_hdus the HDUs in the file */
int wt_fits_header(const char *path, int hdu, int *n_hdus, char **cards,
                   int *n_cards, char *msg, size_t msg_len);
void wt_fits_free_header(char *cards);
/* the CHECKSUM and DATASUM of every HDU (fits_verify_chksum): WT_OK when
 * each is right or absent (a file from a tool that writes none), else
 * WT_ERR_ARG, *bad_hdu the first HDU (from 0) that fails and msg which
 * keyword and the HDU's EXTNAME */
int wt_fits_verify(const char *path, int *bad_hdu, char *msg, size_t msg_len);
#endif
