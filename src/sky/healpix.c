/* HEALPix through chealpix (Debian libchealpix-dev): pixel lookups,
 * pixel centres, renumbering and random points drawn from a set of
 * pixels. No R here: status codes back to r/sky.c. */
#include <math.h>
#include <stdint.h>
#include <chealpix.h>
#include "wt.h"
#include "healpix.h"
#include "floor/team.h"

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

static inline int64_t pixel_of(int64_t nside, int nest, double ra_deg,
                               double dec_deg, const double *rot)
{
  double a = ra_deg / DEG, d = dec_deg / DEG, v[3];
  v[0] = cos(d) * cos(a);
  v[1] = cos(d) * sin(a);
  v[2] = sin(d);
  rotate(rot, v);
  int64_t p;
  if (nest) vec2pix_nest64(nside, v, &p); else vec2pix_ring64(nside, v, &p);
  return p;
}

/* pixel lookups on a team */
typedef struct {
  int64_t nside;
  int nest;
  const double *ra, *dec, *rot;
  double *pix;
} pixels_pass;

static void pixels_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const pixels_pass *P = (const pixels_pass *)arg;
  (void)tid;
  const int64_t nside = P->nside;
  const int nest = P->nest;
  const double *ra = P->ra, *dec = P->dec, *rot = P->rot;
  double *pix = P->pix;
  for (int64_t i = lo; i < hi; i++)
    pix[i] = (double)pixel_of(nside, nest, ra[i], dec[i], rot);
}

int wt_healpix_pixels(int64_t nside, int nest, const double *ra,
                      const double *dec, int64_t n, const double *rot,
                      double *pix, int threads)
{
  if (nside < 1) return WT_ERR_ARG;
  pixels_pass pass = {nside, nest, ra, dec, rot, pix};
  wt_team_for(threads, n, 0, pixels_part, &pass);
  return WT_OK;
}

/* pixel centres on a team */
typedef struct {
  int64_t nside;
  int nest;
  const double *pix, *rot;
  double *ra, *dec;
} centres_pass;

static void centres_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const centres_pass *C = (const centres_pass *)arg;
  (void)tid;
  const int64_t nside = C->nside;
  const int nest = C->nest;
  const double *pix = C->pix, *rot = C->rot;
  double *ra = C->ra, *dec = C->dec;
  for (int64_t i = lo; i < hi; i++) {
    double v[3];
    if (nest) pix2vec_nest64(nside, (int64_t)pix[i], v);
    else pix2vec_ring64(nside, (int64_t)pix[i], v);
    rotate(rot, v);
    vec_to_radec(v, ra + i, dec + i);
  }
}

int wt_healpix_centres(int64_t nside, int nest, const double *pix,
                       int64_t n, const double *rot, double *ra,
                       double *dec, int threads)
{
  if (nside < 1) return WT_ERR_ARG;
  int64_t npix = nside2npix64(nside);
  for (int64_t i = 0; i < n; i++)
    if (!(pix[i] >= 0 && pix[i] < (double)npix)) return WT_ERR_ARG;
  centres_pass pass = {nside, nest, pix, rot, ra, dec};
  wt_team_for(threads, n, 0, centres_part, &pass);
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

/* the bits 0, 2, 4, ... of x packed into the low half (the x or y index
 * of a nested pixel number) */
static inline uint64_t compress_bits(uint64_t x)
{
  x &= UINT64_C(0x5555555555555555);
  x = (x | (x >> 1)) & UINT64_C(0x3333333333333333);
  x = (x | (x >> 2)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
  x = (x | (x >> 4)) & UINT64_C(0x00ff00ff00ff00ff);
  x = (x | (x >> 8)) & UINT64_C(0x0000ffff0000ffff);
  x = (x | (x >> 16)) & UINT64_C(0x00000000ffffffff);
  return x;
}

/* ring and phi offsets of the 12 base pixels (HEALPix's jrll, jpll) */
static const int jrll[12] = {2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4};
static const int jpll[12] = {1, 3, 5, 7, 0, 2, 4, 6, 1, 3, 5, 7};

/* The centre of nested pixel p at nside 2^order as declination and right
 * ascension in degrees, straight from the HEALPix formulas (Gorski et al.
 * 2005, section 4; chealpix's pix2ang_nest64 does the same integer
 * arithmetic): the ring number jr and position in the ring of the centre
 * of (face, ix, iy) give z = cos(theta) and phi. In the polar caps
 * 1 - |z| = nr^2 / (3 nside^2) exactly, so the colatitude comes from
 * 2 asin(sqrt((1 - |z|) / 2)), accurate near the poles. */
static inline void nest_centre(int order, int64_t p, double *ra, double *dec)
{
  const int64_t ns = INT64_C(1) << order;
  const int face = (int)(p >> (2 * order));
  const uint64_t w = (uint64_t)p & ((UINT64_C(1) << (2 * order)) - 1);
  const int64_t ix = (int64_t)compress_bits(w);
  const int64_t iy = (int64_t)compress_bits(w >> 1);
  const int64_t jr = ((int64_t)jrll[face] << order) - ix - iy - 1;
  const double fact2 = 4.0 / (12.0 * (double)ns * (double)ns);
  int64_t nr;
  double d;
  if (jr < ns) {
    nr = jr;
    d = 90.0 - 2.0 * asin(sqrt(0.5 * (double)(nr * nr) * fact2)) * DEG;
  } else if (jr > 3 * ns) {
    nr = 4 * ns - jr;
    d = 2.0 * asin(sqrt(0.5 * (double)(nr * nr) * fact2)) * DEG - 90.0;
  } else {
    nr = ns;
    d = asin((double)(2 * ns - jr) * (2.0 * (double)ns * fact2)) * DEG;
  }
  int64_t t = (int64_t)jpll[face] * nr + ix - iy;
  if (t < 0) t += 8 * nr;
  else if (t >= 8 * nr) t -= 8 * nr;
  /* phi = pi t / (4 nr) in radians: 45 t / nr degrees */
  double r = 45.0 * (double)t / (double)nr;
  if (r >= 360.0) r -= 360.0;
  *ra = r;
  *dec = d;
}

/* the shift that gives a table of at most about 4 entries per run over
 * numbers 0 .. range - 1 */
static int bucket_shift(int64_t range, int64_t n_runs)
{
  int shift = 0;
  while (shift < 62 && ((range - 1) >> shift) + 2 > 4 * n_runs + 2) shift++;
  return shift;
}

int64_t wt_runs_find(const double *pix, int64_t k, double *start,
                     double *first)
{
  int64_t n = 0;
  for (int64_t i = 0; i < k; i++) {
    if (!(pix[i] >= 0) || pix[i] != floor(pix[i]) ||
        (i > 0 && !(pix[i] > pix[i - 1])))
      return -1;
    if (i == 0 || pix[i] != pix[i - 1] + 1) {
      if (start) {
        start[n] = pix[i];
        first[n] = (double)i;
      }
      n++;
    }
  }
  return n;
}

int wt_runs_plan(wt_runs *r, const double *start, const double *first,
                 int64_t n_runs, int64_t k, int64_t npix,
                 int64_t *n_by_index, int64_t *n_by_pixel)
{
  if (n_runs < 1 || k < n_runs || npix < k || first[0] != 0 ||
      !(start[0] >= 0))
    return WT_ERR_ARG;
  for (int64_t i = 1; i < n_runs; i++) {
    /* runs increasing, each of at least one pixel, not overlapping */
    if (!(first[i] > first[i - 1]) ||
        !(start[i] >= start[i - 1] + (first[i] - first[i - 1])))
      return WT_ERR_ARG;
  }
  if (!((double)k > first[n_runs - 1]) ||
      !(start[n_runs - 1] + ((double)k - first[n_runs - 1]) <= (double)npix))
    return WT_ERR_ARG;
  r->start = start;
  r->first = first;
  r->n_runs = n_runs;
  r->k = k;
  r->npix = npix;
  r->index_shift = bucket_shift(k, n_runs);
  r->pixel_shift = bucket_shift(npix, n_runs);
  *n_by_index = ((k - 1) >> r->index_shift) + 2;
  *n_by_pixel = ((npix - 1) >> r->pixel_shift) + 2;
  r->by_index = r->by_pixel = NULL;
  return WT_OK;
}

/* bucket[b]: the last r with key[r] <= b << shift (0 when none) */
static void fill_buckets(const double *key, int64_t n, int64_t range,
                         int shift, int64_t *bucket)
{
  int64_t nb = ((range - 1) >> shift) + 2, r = 0;
  for (int64_t b = 0; b < nb; b++) {
    double v = (double)(b << shift);
    while (r + 1 < n && key[r + 1] <= v) r++;
    bucket[b] = r;
  }
}

void wt_runs_build(wt_runs *r)
{
  fill_buckets(r->first, r->n_runs, r->k, r->index_shift, r->by_index);
  fill_buckets(r->start, r->n_runs, r->npix, r->pixel_shift, r->by_pixel);
}

/* The last r with key[r] <= x (0 <= x < range; 0 when none), searched
 * between the runs of x's bucket and of the next: a binary search without
 * branches (the halving is the same whatever the comparisons give, so the
 * compiler uses conditional moves), usually of one or two steps. */
static inline int64_t last_at_or_below(const double *key,
                                       const int64_t *bucket, int shift,
                                       int64_t x)
{
  int64_t b = x >> shift;
  int64_t lo = bucket[b], len = bucket[b + 1] - lo + 1;
  const double xd = (double)x;
  while (len > 1) {
    int64_t half = len >> 1;
    lo += key[lo + half] <= xd ? half : 0;
    len -= half;
  }
  return lo;
}

/* points drawn on a team: point j from counter first + j alone */
typedef struct {
  const wt_runs *runs;
  const double *prob;
  const int64_t *alias;
  uint64_t seed;
  int64_t first;
  const double *rot;
  int fine_order, depth;
  double *ra, *dec;
} draw_pass;

static void draw_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const draw_pass *D = (const draw_pass *)arg;
  (void)tid;
  const wt_runs *runs = D->runs;
  const double *prob = D->prob, *rot = D->rot;
  const int64_t *alias = D->alias;
  const uint64_t seed = D->seed;
  const int64_t first = D->first, k = runs->k;
  const int fine_order = D->fine_order, depth = D->depth;
  double *ra = D->ra, *dec = D->dec;
  const uint64_t golden = UINT64_C(0x9e3779b97f4a7c15);
  for (int64_t j = lo; j < hi; j++) {
    uint64_t c = (uint64_t)(first + j);
    uint64_t h1 = mix64(seed + (3 * c + 1) * golden);
    uint64_t h2 = mix64(seed + (3 * c + 2) * golden);
    int64_t i = (int64_t)((double)(h1 >> 11) * 0x1.0p-53 * (double)k);
    if (i >= k) i = k - 1;
    if (prob) {
      uint64_t h3 = mix64(seed + (3 * c + 3) * golden);
      if ((double)(h3 >> 11) * 0x1.0p-53 >= prob[i]) i = alias[i];
    }
    int64_t r = last_at_or_below(runs->first, runs->by_index,
                                 runs->index_shift, i);
    int64_t pixel = (int64_t)runs->start[r] + (i - (int64_t)runs->first[r]);
    uint64_t sub = depth > 0 ? h2 >> (64 - 2 * depth) : 0;
    int64_t p = (pixel << (2 * depth)) + (int64_t)sub;
    nest_centre(fine_order, p, ra + j, dec + j);
    if (rot) {
      double a = ra[j] / DEG, d = dec[j] / DEG, v[3];
      v[0] = cos(d) * cos(a);
      v[1] = cos(d) * sin(a);
      v[2] = sin(d);
      rotate(rot, v);
      vec_to_radec(v, ra + j, dec + j);
    }
  }
}

int wt_healpix_draw(int64_t nside, const wt_runs *runs, const double *prob,
                    const int64_t *alias, uint64_t seed, int64_t first,
                    int64_t n, const double *rot, int fine_order, double *ra,
                    double *dec, int threads)
{
  if (nside < 1 || (nside & (nside - 1)) || !runs || runs->k < 1 ||
      !runs->by_index)
    return WT_ERR_ARG;
  int order = 0;
  while ((INT64_C(1) << order) < nside) order++;
  int depth = fine_order - order;
  if (depth < 0 || fine_order > WT_HEALPIX_FINE_ORDER) return WT_ERR_ARG;
  draw_pass pass = {runs, prob, alias, seed, first, rot, fine_order, depth,
                    ra, dec};
  wt_team_for(threads, n, 0, draw_part, &pass);
  return WT_OK;
}

/* points looked up in a map's runs on a team */
typedef struct {
  int64_t nside;
  int nest;
  const double *ra, *dec, *rot;
  const wt_runs *runs;
  int *out;
} on_map_pass;

static void on_map_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const on_map_pass *M = (const on_map_pass *)arg;
  (void)tid;
  const int64_t nside = M->nside;
  const int nest = M->nest;
  const double *ra = M->ra, *dec = M->dec, *rot = M->rot;
  const wt_runs *runs = M->runs;
  int *out = M->out;
  const double *start = runs->start, *first = runs->first;
  const int64_t last = runs->n_runs - 1;
  for (int64_t i = lo; i < hi; i++) {
    int64_t p = pixel_of(nside, nest, ra[i], dec[i], rot);
    int64_t r = last_at_or_below(start, runs->by_pixel, runs->pixel_shift, p);
    int64_t off = p - (int64_t)start[r];
    int64_t len = (r < last ? (int64_t)first[r + 1] : runs->k) -
                  (int64_t)first[r];
    out[i] = off >= 0 && off < len;
  }
}

int wt_healpix_on_map(int64_t nside, int nest, const double *ra,
                      const double *dec, int64_t n, const double *rot,
                      const wt_runs *runs, int *out, int threads)
{
  if (nside < 1 || !runs || !runs->by_pixel ||
      runs->npix != nside2npix64(nside))
    return WT_ERR_ARG;
  on_map_pass pass = {nside, nest, ra, dec, rot, runs, out};
  wt_team_for(threads, n, 0, on_map_part, &pass);
  return WT_OK;
}
