/* Built in place of healpix.c when chealpix is absent or WTHETA_HEALPIX=0:
 * the same symbols, each reporting that HEALPix support is not compiled
 * in (the R layer checks wt_healpix_compiled() first). */
#include <stdint.h>
#include "wt.h"
#include "healpix.h"

int wt_healpix_compiled(void) { return 0; }

int wt_healpix_pixels(int64_t nside, int nest, const double *ra,
                      const double *dec, int64_t n, const double *rot,
                      double *pix, int threads)
{
  (void)nside; (void)nest; (void)ra; (void)dec; (void)n; (void)rot;
  (void)pix; (void)threads;
  return WT_ERR_NO_HEALPIX;
}

int wt_healpix_centres(int64_t nside, int nest, const double *pix,
                       int64_t n, const double *rot, double *ra,
                       double *dec, int threads)
{
  (void)nside; (void)nest; (void)pix; (void)n; (void)rot; (void)ra;
  (void)dec; (void)threads;
  return WT_ERR_NO_HEALPIX;
}

int wt_healpix_renumber(int64_t nside, int to_nest, const double *in,
                        int64_t n, double *out)
{
  (void)nside; (void)to_nest; (void)in; (void)n; (void)out;
  return WT_ERR_NO_HEALPIX;
}

int wt_alias_build(const double *w, int64_t k, double *prob, int64_t *alias,
                   int64_t *work)
{
  (void)w; (void)k; (void)prob; (void)alias; (void)work;
  return WT_ERR_NO_HEALPIX;
}

int64_t wt_runs_find(const double *pix, int64_t k, double *start,
                     double *first)
{
  (void)pix; (void)k; (void)start; (void)first;
  return 0;   /* wt_runs_plan() then says there is no HEALPix support */
}

int wt_runs_plan(wt_runs *r, const double *start, const double *first,
                 int64_t n_runs, int64_t k, int64_t npix,
                 int64_t *n_by_index, int64_t *n_by_pixel)
{
  (void)r; (void)start; (void)first; (void)n_runs; (void)k; (void)npix;
  (void)n_by_index; (void)n_by_pixel;
  return WT_ERR_NO_HEALPIX;
}

void wt_runs_build(wt_runs *r) { (void)r; }

int wt_healpix_draw(int64_t nside, const wt_runs *runs, const double *prob,
                    const int64_t *alias, uint64_t seed, int64_t first,
                    int64_t n, const double *rot, int fine_order, double *ra,
                    double *dec, int threads)
{
  (void)nside; (void)runs; (void)prob; (void)alias; (void)seed;
  (void)first; (void)n; (void)rot; (void)fine_order; (void)ra; (void)dec;
  (void)threads;
  return WT_ERR_NO_HEALPIX;
}

int wt_healpix_on_map(int64_t nside, int nest, const double *ra,
                      const double *dec, int64_t n, const double *rot,
                      const wt_runs *runs, int *out, int threads)
{
  (void)nside; (void)nest; (void)ra; (void)dec; (void)n; (void)rot;
  (void)runs; (void)out; (void)threads;
  return WT_ERR_NO_HEALPIX;
}
