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
                       double *dec);

/* ring <-> nested numbering (to_nest = 1: ring to nested) */
int wt_healpix_renumber(int64_t nside, int to_nest, const double *in,
                        int64_t n, double *out);

/* Vose's alias table of the k weights w (>= 0, total > 0); work holds 2 k
 * int64 of scratch */
int wt_alias_build(const double *w, int64_t k, double *prob, int64_t *alias,
                   int64_t *work);

/* Points first .. first + n - 1 of a stream drawn from k nested pixels at
 * `nside`, given as n_runs runs of consecutive pixel numbers: run r starts
 * at pixel run_start[r] and holds the pixels of indices run_end[r - 1] to
 * run_end[r] - 1 (run_end cumulative, run_end[n_runs - 1] = k; runs keep
 * the lookup in cache, masks being mostly contiguous in NESTED order).
 * Indices are equally likely when prob is NULL, else drawn through the
 * alias table (prob, alias) of wt_alias_build(). Point i takes its pixel
 * and a uniform sub-pixel of order 29 inside it from a counter-based hash
 * of (seed, i), so the stream does not depend on the number of threads
 * nor on how it is cut into calls. */
int wt_healpix_draw(int64_t nside, const double *run_start,
                    const double *run_end, int64_t n_runs, const double *prob,
                    const int64_t *alias, uint64_t seed, int64_t first,
                    int64_t n, const double *rot, double *ra, double *dec,
                    int threads);
#endif
