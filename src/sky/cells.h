/* The footprint check's equal-area cells (cells.c). Plain C: status codes,
 * no R, no HEALPix. */
#ifndef WT_CELLS_H
#define WT_CELLS_H
#include <stdint.h>

/* Level j of the grid cuts the sky into 2^(j+1) columns of right ascension
 * by 2^j rows of sin(declination), all of one area; cell id
 * col + 2^(j+1) row, zero based. A point's cell at level j comes from its
 * cell at the finest level `top` (<= WT_CELLS_TOP) by dropping top - j bits
 * of each coordinate, so every level nests in the finer ones. */
#define WT_CELLS_TOP 11

/* The search of footprint_check() (R/footprint_check.R), which documents
 * the rule: levels 0, 1, ... up to top; at each, the occupied cells (data
 * or randoms), the well-covered ones (randoms at least half the median
 * random count of the cells with randoms) and the median expected data
 * count E = R n_d / n_r over them. A level is kept when it has at least
 * min_well such cells of median E >= min_expected; the search stops after
 * the first level with stop_well of them or a median E below
 * min_expected. The randoms are read every `thin`-th point from the first
 * (n_r of them then). ra in [0, 360), dec in [-90, 90] degrees. */
typedef struct {
  int level;               /* the level kept, -1 when none */
  int64_t n_cells;         /* its occupied cells */
  double *id, *d, *r;      /* their ids (ascending) and counts; malloc'ed,
                              free with wt_cells_free() */
} wt_cells;

int wt_footprint_cells(const double *ra_d, const double *dec_d, int64_t n_d,
                       const double *ra_r, const double *dec_r,
                       int64_t n_r_all, int64_t thin, int top, int min_well,
                       double min_expected, int stop_well, int threads,
                       wt_cells *out);
void wt_cells_free(wt_cells *c);

/* The same search for several data sets against one set of randoms: the
 * randoms' keys and their coarse levels, made once
 * (wt_cells_randoms_make(), freed by wt_cells_randoms_free()), then
 * wt_footprint_cells_of() for each data set, whose result is
 * wt_footprint_cells()'s. */
typedef struct {
  int top, n_low_level;    /* finest level; levels 0..n_low_level kept */
  int64_t n;               /* randoms read (every thin-th) */
  uint32_t *key;           /* their finest cells */
  uint64_t *low;           /* their counts at levels 0..n_low_level */
} wt_cells_randoms;

int wt_cells_randoms_make(const double *ra_r, const double *dec_r,
                          int64_t n_r_all, int64_t thin, int top,
                          int threads, wt_cells_randoms *rr);
void wt_cells_randoms_free(wt_cells_randoms *rr);
int wt_footprint_cells_of(const wt_cells_randoms *rr, const double *ra_d,
                          const double *dec_d, int64_t n_d, int min_well,
                          double min_expected, int stop_well, int threads,
                          wt_cells *out);
#endif
