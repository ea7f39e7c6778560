/* HEALPix through chealpix (Debian libchealpix-dev): pixel lookups,
 * pixel centres, renumbering and random points drawn from a set of
 * pixels. No R here: status codes back to glue_healpix.c. */
#include <math.h>
#include <stdint.h>
#include <chealpix.h>
#include "wt.h"
#include "healpix.h"

#define DEG (180.0 / M_PI)

int wt_healpix_compiled(void) { return 1; }

static void rotate(const double *rot, double *v)
{
  if (!rot) return;
  double a = v[0], b = v[1], c = v[2];
  v[0] = rot[0] * a + rot[1] * b + rot[2] * c;
  v[1] = rot[3] * a + rot[4] * b + rot[5] * c;
  v[2] = rot[6] * a + rot[7] * b + rot[8] * c;
}

static void vec_to_radec(const double *v, double *ra, double *dec)
{
  double r = atan2(v[1], v[0]) * DEG;
  if (r < 0) r += 360.0;
  if (r >= 360.0) r -= 360.0;
  *ra = r;
  *dec = atan2(v[2], hypot(v[0], v[1])) * DEG;
}

int wt_healpix_pixels(int64_t nside, int nest, const double *ra,
                      const double *dec, int64_t n, const double *rot,
                      double *pix, int threads)
{
  if (nside < 1) return WT_ERR_ARG;
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (int64_t i = 0; i < n; i++) {
    double a = ra[i] / DEG, d = dec[i] / DEG, v[3];
    v[0] = cos(d) * cos(a);
    v[1] = cos(d) * sin(a);
    v[2] = sin(d);
    rotate(rot, v);
    int64_t p;
    if (nest) vec2pix_nest64(nside, v, &p); else vec2pix_ring64(nside, v, &p);
    pix[i] = (double)p;
  }
  return WT_OK;
}

int wt_healpix_centres(int64_t nside, int nest, const double *pix,
                       int64_t n, const double *rot, double *ra,
                       double *dec)
{
  if (nside < 1) return WT_ERR_ARG;
  int64_t npix = nside2npix64(nside);
  for (int64_t i = 0; i < n; i++) {
    if (!(pix[i] >= 0 && pix[i] < (double)npix)) return WT_ERR_ARG;
    double v[3];
    if (nest) pix2vec_nest64(nside, (int64_t)pix[i], v);
    else pix2vec_ring64(nside, (int64_t)pix[i], v);
    rotate(rot, v);
    vec_to_radec(v, ra + i, dec + i);
  }
  return WT_OK;
}

int wt_healpix_renumber(int64_t nside, int to_nest, const double *in,
                        int64_t n, double *out)
{
  if (nside < 1 || (nside & (nside - 1))) return WT_ERR_ARG;
  int64_t npix = nside2npix64(nside);
  for (int64_t i = 0; i < n; i++) {
    if (!(in[i] >= 0 && in[i] < (double)npix)) return WT_ERR_ARG;
    int64_t p;
    if (to_nest) ring2nest64(nside, (int64_t)in[i], &p);
    else nest2ring64(nside, (int64_t)in[i], &p);
    out[i] = (double)p;
  }
  return WT_OK;
}

/* a 64-bit mixing function of a counter (the finaliser of a Weyl
 * sequence): distinct counters give independent-looking outputs */
static uint64_t mix64(uint64_t x)
{
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

/* Vose's alias method: for weights w (k of them, total > 0), prob[i] and
 * alias[i] such that drawing i uniformly and keeping it with probability
 * prob[i], else taking alias[i], picks i with probability w[i] / total.
 * work: 2 k int64 of scratch. */
int wt_alias_build(const double *w, int64_t k, double *prob, int64_t *alias,
                   int64_t *work)
{
  double total = 0;
  for (int64_t i = 0; i < k; i++) {
    if (!(w[i] >= 0) || !isfinite(w[i])) return WT_ERR_ARG;
    total += w[i];
  }
  if (!(total > 0)) return WT_ERR_ARG;
  int64_t *small = work, *large = work + k, ns = 0, nl = 0;
  for (int64_t i = 0; i < k; i++) {
    prob[i] = w[i] * (double)k / total;
    alias[i] = i;
    if (prob[i] < 1) small[ns++] = i; else large[nl++] = i;
  }
  while (ns > 0 && nl > 0) {
    int64_t a = small[--ns], b = large[--nl];
    alias[a] = b;
    prob[b] = (prob[b] + prob[a]) - 1;
    if (prob[b] < 1) small[ns++] = b; else large[nl++] = b;
  }
  while (nl > 0) prob[large[--nl]] = 1;
  while (ns > 0) prob[small[--ns]] = 1;   /* rounding leftovers */
  return WT_OK;
}

int wt_healpix_draw(int64_t nside, const double *run_start,
                    const double *run_end, int64_t n_runs, const double *prob,
                    const int64_t *alias, uint64_t seed, int64_t first,
                    int64_t n, const double *rot, double *ra, double *dec,
                    int threads)
{
  if (nside < 1 || (nside & (nside - 1)) || n_runs < 1) return WT_ERR_ARG;
  const int64_t k = (int64_t)run_end[n_runs - 1];
  if (k < 1) return WT_ERR_ARG;
  int order = 0;
  while ((INT64_C(1) << order) < nside) order++;
  int depth = WT_HEALPIX_FINE_ORDER - order;
  if (depth < 0) return WT_ERR_ARG;
  const int64_t fine = INT64_C(1) << WT_HEALPIX_FINE_ORDER;
  const uint64_t golden = UINT64_C(0x9e3779b97f4a7c15);
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (int64_t j = 0; j < n; j++) {
    uint64_t c = (uint64_t)(first + j);
    uint64_t h1 = mix64(seed + (3 * c + 1) * golden);
    uint64_t h2 = mix64(seed + (3 * c + 2) * golden);
    int64_t i = (int64_t)((double)(h1 >> 11) * 0x1.0p-53 * (double)k);
    if (i >= k) i = k - 1;
    if (prob) {
      uint64_t h3 = mix64(seed + (3 * c + 3) * golden);
      if ((double)(h3 >> 11) * 0x1.0p-53 >= prob[i]) i = alias[i];
    }
    int64_t lo = 0, hi = n_runs - 1;      /* the run holding index i */
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (run_end[mid] > (double)i) hi = mid; else lo = mid + 1;
    }
    int64_t before = lo > 0 ? (int64_t)run_end[lo - 1] : 0;
    int64_t pixel = (int64_t)run_start[lo] + (i - before);
    uint64_t sub = depth > 0 ? h2 >> (64 - 2 * depth) : 0;
    int64_t p = (pixel << (2 * depth)) + (int64_t)sub;
    double v[3];
    pix2vec_nest64(fine, p, v);
    rotate(rot, v);
    vec_to_radec(v, ra + j, dec + j);
  }
  return WT_OK;
}
