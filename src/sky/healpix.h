/* HEALPix pixel arithmetic (healpix.c, through chealpix; healpix_stub.c
 * when chealpix is absent or WTHETA_HEALPIX=0). Plain C: status codes, no
 * R. Angles in degrees; pixel numbers as doubles (exact below 2^53). A
 * rotation `rot` is a 3 x 3 row-major matrix applied to unit vectors, or
 * NULL for none. */
#ifndef WT_HEALPIX_H
#define WT_HEALPIX_H
#include <stdint.h>

/* nside of the finest pixels the drawing uses: 2^29, the largest the
 * 64-bit chealpix interface takes (pixels of 0.39 milliarcseconds) */
#define WT_HEALPIX_FINE_ORDER 29

int wt_healpix_compiled(void);

/* pixel of each (ra, dec), in the frame rot * v */
int wt_healpix_pixels(int64_t nside, int nest, const double *ra,
                      const double *dec, int64_t n, const double *rot,
                      double *pix, int threads);

/* centre of each pixel, rotated by rot into (ra, dec) */
int wt_healpix_centres(int64_t nside, int nest, const double *pix,
                       int64_t n, const double *rot, double *ra,
                       double *dec, int threads);

/* ring <-> nested numbering (to_nest = 1: ring to nested) */
int wt_healpix_renumber(int64_t nside, int to_nest, const double *in,
                        int64_t n, double *out);

/* Vose's alias table of the k weights w (>= 0, total > 0); work holds 2 k
 * int64 of scratch */
int wt_alias_build(const double *w, int64_t k, double *prob, int64_t *alias,
                   int64_t *work);

/* A set of k pixels (increasing numbers, in one ordering) as n_runs runs
 * of consecutive numbers: run r starts at pixel start[r] and holds the
 * pixels of indices first[r] to first[r + 1] - 1 (first[0] = 0; the last
 * run ends at k). Masks are mostly runs, in either ordering. Two bucket
 * tables, made by wt_runs_build(), find the run of an index or of a pixel
 * number in a step or two: by_index[b] is the last run with first <=
 * b << index_shift, by_pixel[b] the last run with start <= b <<
 * pixel_shift (0 when none). */
typedef struct {
  const double *start, *first;
  int64_t n_runs, k, npix;
  int index_shift, pixel_shift;
  int64_t *by_index, *by_pixel;
} wt_runs;

/* the runs of k increasing pixel numbers pix (whole numbers >= 0): returns
 * how many there are, and fills start and first (one per run, as in
 * wt_runs) unless they are NULL; -1 when pix is not so */
int64_t wt_runs_find(const double *pix, int64_t k, double *start,
                     double *first);

/* for runs of k pixels among npix: sets start, first, n_runs, k, npix and
 * the shifts, and the lengths of the two tables to allocate; WT_ERR_ARG
 * when the runs are not increasing or do not fit */
int wt_runs_plan(wt_runs *r, const double *start, const double *first,
                 int64_t n_runs, int64_t k, int64_t npix,
                 int64_t *n_by_index, int64_t *n_by_pixel);
/* fills the tables (by_index, by_pixel, allocated by the caller) */
void wt_runs_build(wt_runs *r);

/* Points first .. first + n - 1 of a stream drawn from the k nested
 * pixels at `nside` given as runs (wt_runs). Indices are equally likely
 * when prob is NULL, else drawn through the alias table (prob, alias) of
 * wt_alias_build(). Point i takes its pixel and a uniform sub-pixel of
 * order fine_order (WT_HEALPIX_FINE_ORDER; tests take less) inside it
 * from a counter-based hash of (seed, i), so the stream
 * does not depend on the number of threads nor on how it is cut into
 * calls; the point is the sub-pixel's centre, computed from the HEALPix
 * formulas for z and phi without a unit vector (through one when rot is
 * given). */
int wt_healpix_draw(int64_t nside, const wt_runs *runs, const double *prob,
                    const int64_t *alias, uint64_t seed, int64_t first,
                    int64_t n, const double *rot, int fine_order, double *ra,
                    double *dec, int threads);

/* 1 where the pixel of (ra, dec) is among the runs' pixels, else 0 (pixel
 * numbers in the ordering `nest`, points rotated by rot first) */
int wt_healpix_on_map(int64_t nside, int nest, const double *ra,
                      const double *dec, int64_t n, const double *rot,
                      const wt_runs *runs, int *out, int threads);
#endif
