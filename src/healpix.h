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

/* Points first .. first + n - 1 of a stream drawn from the nested pixels
 * `pix` (k of them, at `nside`) with probabilities proportional to the
 * increments of `cum` (cumulative weights, cum[k - 1] the total): point i
 * takes its pixel and a uniform sub-pixel of order 29 inside it from a
 * counter-based hash of (seed, i), so the stream does not depend on the
 * number of threads nor on how it is cut into calls. */
int wt_healpix_draw(int64_t nside, const double *pix, const double *cum,
                    int64_t k, uint64_t seed, int64_t first, int64_t n,
                    const double *rot, double *ra, double *dec, int threads);
#endif
