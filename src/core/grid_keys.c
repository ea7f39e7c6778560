/* The grid's sort keys (grid_build.c): a point's cell, then its Morton
 * code in the cell. wt_grid_key_of() is the definition, with the C
 * library's asin() and atan2(); on CPUs with AVX2 four points at a time
 * take their angles from polynomials instead, and keep the key only where
 * it is provably the same: each point whose key the polynomials could
 * change gets wt_grid_key_of()'s. The keys, and so the grids, do not
 * depend on the path.
 * No R API. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "wt.h"
#include "grid.h"

#if defined(__GNUC__) && defined(__x86_64__)
#define WT_KEYS_AVX2 1
#include <immintrin.h>
#endif

#define DEG (M_PI / 180.0)
#define MORTON_BITS WT_MORTON_BITS

static double clamp1(double v) { return v > 1.0 ? 1.0 : v < -1.0 ? -1.0 : v; }

/* 10 bits to the even bits of 20, by shifts and masks (a loop over the
 * bits took a fifth of a point's key); good for up to 16 bits */
typedef char morton_bits_fit_spread[MORTON_BITS <= 16 ? 1 : -1];
static uint32_t spread(uint32_t v)
{
  v &= (1u << MORTON_BITS) - 1u;
  v = (v | (v << 8)) & 0x00ff00ffu;
  v = (v | (v << 4)) & 0x0f0f0f0fu;
  v = (v | (v << 2)) & 0x33333333u;
  v = (v | (v << 1)) & 0x55555555u;
  return v;
}

/* whether x * 2^MORTON_BITS lies within `near` of a whole number (or is
 * not a number): where a key's floors could go either way */
static int near_floor(double x, double near)
{
  const double s = x * (double)(1 << MORTON_BITS);
  const double f = s - floor(s);
  return !(f >= near && f <= 1.0 - near);
}

/* the key from fb (the declination in band heights from the south pole)
 * and ra (degrees, in [0, 360]); 0 without a key when near >= 0 and fb or
 * the right ascension's cells are within near of a floor (near_floor()) */
static int key_tail(const wt_grid_shape *g, double fb, double ra,
                    double near, uint64_t *key)
{
  int b = (int)floor(fb);
  if (b < 0) b = 0;
  if (b >= g->n_bands) b = g->n_bands - 1;
  double fr = ra / 360.0 * g->n_ra[b];
  if (near >= 0.0 && (near_floor(fb, near) || near_floor(fr, near)))
    return 0;
  int k = (int)floor(fr);
  if (k < 0) k = 0;
  if (k >= g->n_ra[b]) k = g->n_ra[b] - 1;
  const double scale = (double)(1 << MORTON_BITS);
  double u = (fr - k) * scale, v = (fb - b) * scale;
  uint32_t iu = u < 0 ? 0 : u >= scale ? (1u << MORTON_BITS) - 1 : (uint32_t)u;
  uint32_t iv = v < 0 ? 0 : v >= scale ? (1u << MORTON_BITS) - 1 : (uint32_t)v;
  uint64_t cell = (uint64_t)(g->first[b] + k);
  *key = (cell << (2 * MORTON_BITS)) | spread(iu) | (spread(iv) << 1);
  return 1;
}

/* the sort key of a point: cell id, then its Morton code in the cell */
uint64_t wt_grid_key_of(const wt_grid_shape *g, double x, double y, double z)
{
  double dec = asin(clamp1(z)) / DEG;
  double fb = (dec + 90.0) / g->h;
  double ra = atan2(y, x) / DEG;
  if (ra < 0) ra += 360.0;
  uint64_t key = 0;
  key_tail(g, fb, ra, -1.0, &key);
  return key;
}

#ifdef WT_KEYS_AVX2
/* Taylor coefficients: asin t = sum ASIN_C[n] t^(2n + 1), (2n)! / (4^n
 * n!^2 (2n + 1)), for t <= 1/2 (the first term left out is below 2e-16
 * of the sum there); atan u = sum ATAN_C[n] u^(2n + 1), (-1)^n / (2n +
 * 1), for |u| <= tan(pi / 8) (below 2e-17) */
static const double ASIN_C[23] = {
  1.0, 1.0 / 6, 3.0 / 40, 5.0 / 112, 35.0 / 1152, 63.0 / 2816,
  231.0 / 13312, 143.0 / 10240, 6435.0 / 557056, 12155.0 / 1245184,
  46189.0 / 5505024, 88179.0 / 12058624, 676039.0 / 104857600,
  1300075.0 / 226492416, 5014575.0 / 973078528,
  9694845.0 / 2080374784, 100180065.0 / 23622320128.0,
  116680311.0 / 30064771072.0, 2268783825.0 / 635655159808.0,
  1472719325.0 / 446676598784.0, 34461632205.0 / 11269994184704.0,
  67282234305.0 / 23639499997184.0, 17534158031.0 / 6597069766656.0};
static const double ATAN_C[21] = {
  1.0, -1.0 / 3, 1.0 / 5, -1.0 / 7, 1.0 / 9, -1.0 / 11, 1.0 / 13, -1.0 / 15,
  1.0 / 17, -1.0 / 19, 1.0 / 21, -1.0 / 23, 1.0 / 25, -1.0 / 27, 1.0 / 29,
  -1.0 / 31, 1.0 / 33, -1.0 / 35, 1.0 / 37, -1.0 / 39, 1.0 / 41};

#define TAN_PI_8 0.41421356237309503

__attribute__((target("avx2"))) static inline __m256d
copysign4(__m256d mag, __m256d sgn)
{
  const __m256d sign = _mm256_set1_pd(-0.0);
  return _mm256_or_pd(_mm256_andnot_pd(sign, mag), _mm256_and_pd(sign, sgn));
}

/* asin(z) of four values in [-1, 1], within a few units in the last place
 * of the C library's: the series for |z| <= 1/2, else pi/2 - 2 asin(t)
 * with t = sqrt((1 - |z|) / 2) */
__attribute__((target("avx2"))) static inline __m256d asin4(__m256d z)
{
  const __m256d one = _mm256_set1_pd(1.0), half = _mm256_set1_pd(0.5);
  const __m256d a = _mm256_min_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), z),
                                  one);
  const __m256d big = _mm256_cmp_pd(a, half, _CMP_GT_OQ);
  const __m256d s = _mm256_sqrt_pd(_mm256_mul_pd(_mm256_sub_pd(one, a), half));
  const __m256d t = _mm256_blendv_pd(a, s, big);
  const __m256d t2 = _mm256_mul_pd(t, t);
  __m256d p = _mm256_set1_pd(ASIN_C[22]);
  for (int k = 21; k >= 0; k--)
    p = _mm256_add_pd(_mm256_mul_pd(p, t2), _mm256_set1_pd(ASIN_C[k]));
  p = _mm256_mul_pd(p, t);
  const __m256d r = _mm256_blendv_pd(
    p, _mm256_sub_pd(_mm256_set1_pd(M_PI_2), _mm256_add_pd(p, p)), big);
  return copysign4(r, z);
}

/* atan2(y, x) of four pairs, in [-pi, pi], within a few units in the last
 * place of the C library's: atan of t = min / max of |x| and |y| (t of
 * more than tan(pi/8) through pi/4 + atan((t - 1) / (t + 1))), then the
 * octant */
__attribute__((target("avx2"))) static inline __m256d
atan2_4(__m256d y, __m256d x)
{
  const __m256d sign = _mm256_set1_pd(-0.0), one = _mm256_set1_pd(1.0);
  const __m256d ax = _mm256_andnot_pd(sign, x), ay = _mm256_andnot_pd(sign, y);
  const __m256d sw = _mm256_cmp_pd(ay, ax, _CMP_GT_OQ);
  const __m256d mx = _mm256_blendv_pd(ax, ay, sw);
  const __m256d mn = _mm256_blendv_pd(ay, ax, sw);
  const __m256d pos = _mm256_cmp_pd(mx, _mm256_setzero_pd(), _CMP_GT_OQ);
  const __m256d t = _mm256_div_pd(mn, _mm256_blendv_pd(one, mx, pos));
  const __m256d red = _mm256_cmp_pd(t, _mm256_set1_pd(TAN_PI_8), _CMP_GT_OQ);
  const __m256d v = _mm256_div_pd(_mm256_sub_pd(t, one), _mm256_add_pd(t, one));
  const __m256d u = _mm256_blendv_pd(t, v, red);
  const __m256d u2 = _mm256_mul_pd(u, u);
  __m256d p = _mm256_set1_pd(ATAN_C[20]);
  for (int k = 19; k >= 0; k--)
    p = _mm256_add_pd(_mm256_mul_pd(p, u2), _mm256_set1_pd(ATAN_C[k]));
  p = _mm256_add_pd(_mm256_mul_pd(p, u),
                    _mm256_and_pd(red, _mm256_set1_pd(M_PI_4)));
  p = _mm256_blendv_pd(p, _mm256_sub_pd(_mm256_set1_pd(M_PI_2), p), sw);
  /* the left half plane by x's sign bit, as the C library's atan2()
   * takes x = -0 (blendv reads the mask's sign bit) */
  p = _mm256_blendv_pd(p, _mm256_sub_pd(_mm256_set1_pd(M_PI), p), x);
  return copysign4(p, y);
}

/* whether x * 2^MORTON_BITS of four lanes lies within near of a whole
 * number, or is not a number (near_floor()): all ones where so */
__attribute__((target("avx2"))) static inline __m256d
near_floor4(__m256d x, __m256d near, __m256d far)
{
  const __m256d s =
    _mm256_mul_pd(x, _mm256_set1_pd((double)(1 << MORTON_BITS)));
  const __m256d f = _mm256_sub_pd(s, _mm256_floor_pd(s));
  const __m256d ok = _mm256_and_pd(_mm256_cmp_pd(f, near, _CMP_GE_OQ),
                                   _mm256_cmp_pd(f, far, _CMP_LE_OQ));
  return _mm256_xor_pd(ok, _mm256_castsi256_pd(_mm256_set1_epi64x(-1)));
}

/* 10 bits of four 32-bit lanes to the even bits of 20 (spread()) */
__attribute__((target("avx2"))) static inline __m128i spread4(__m128i v)
{
  v = _mm_and_si128(v, _mm_set1_epi32((1 << MORTON_BITS) - 1));
  v = _mm_and_si128(_mm_or_si128(v, _mm_slli_epi32(v, 8)),
                    _mm_set1_epi32(0x00ff00ff));
  v = _mm_and_si128(_mm_or_si128(v, _mm_slli_epi32(v, 4)),
                    _mm_set1_epi32(0x0f0f0f0f));
  v = _mm_and_si128(_mm_or_si128(v, _mm_slli_epi32(v, 2)),
                    _mm_set1_epi32(0x33333333));
  v = _mm_and_si128(_mm_or_si128(v, _mm_slli_epi32(v, 1)),
                    _mm_set1_epi32(0x55555555));
  return v;
}

/* the keys of points [0, n), n a multiple of four, by the polynomials and
 * then key_tail()'s operations, four lanes at a time (floor() is exact, as
 * _mm256_floor_pd() is); a lane near a floor (near_floor()) gets no key
 * and a bit in aside (lane l of points i..i+3 at bit i + l - i0 of the
 * word of point i0 = i & ~63). */
__attribute__((target("avx2"))) static void
keys4_avx2(const wt_grid_shape *g, const double *x, const double *y,
           const double *z, int64_t n, uint64_t *key, uint64_t *aside,
           double near)
{
  const __m256d deg = _mm256_set1_pd(DEG), h = _mm256_set1_pd(g->h);
  const __m256d d90 = _mm256_set1_pd(90.0), d360 = _mm256_set1_pd(360.0);
  const __m256d one = _mm256_set1_pd(1.0), m1 = _mm256_set1_pd(-1.0);
  const __m256d zero = _mm256_setzero_pd();
  const __m256d nr = _mm256_set1_pd(near), fr1 = _mm256_set1_pd(1.0 - near);
  const __m256d scale = _mm256_set1_pd((double)(1 << MORTON_BITS));
  const __m256d top = _mm256_set1_pd((double)((1 << MORTON_BITS) - 1));
  const __m128i bmax = _mm_set1_epi32(g->n_bands - 1);
  for (int64_t i = 0; i < n; i += 4) {
    const __m256d zz = _mm256_max_pd(_mm256_min_pd(_mm256_loadu_pd(z + i),
                                                   one), m1);
    const __m256d dec = _mm256_div_pd(asin4(zz), deg);
    const __m256d fb = _mm256_div_pd(_mm256_add_pd(dec, d90), h);
    __m256d ra = _mm256_div_pd(atan2_4(_mm256_loadu_pd(y + i),
                                       _mm256_loadu_pd(x + i)), deg);
    ra = _mm256_add_pd(ra, _mm256_and_pd(_mm256_cmp_pd(ra, zero, _CMP_LT_OQ),
                                         d360));
    /* b = (int)floor(fb), clamped to the bands (fb is a number here, or
     * the lane is set aside below) */
    const __m256d fbf = _mm256_floor_pd(fb);
    __m128i b = _mm256_cvttpd_epi32(_mm256_max_pd(fbf, m1));
    b = _mm_min_epi32(_mm_max_epi32(b, _mm_setzero_si128()), bmax);
    const __m128i nra = _mm_i32gather_epi32(g->n_ra, b, 4);
    const __m256d fr = _mm256_mul_pd(_mm256_div_pd(ra, d360),
                                     _mm256_cvtepi32_pd(nra));
    const __m256d bad = _mm256_or_pd(near_floor4(fb, nr, fr1),
                                     near_floor4(fr, nr, fr1));
    /* k = (int)floor(fr), clamped to the band's cells */
    __m128i k = _mm256_cvttpd_epi32(_mm256_max_pd(_mm256_floor_pd(fr), m1));
    k = _mm_min_epi32(_mm_max_epi32(k, _mm_setzero_si128()),
                      _mm_sub_epi32(nra, _mm_set1_epi32(1)));
    const __m256d u = _mm256_mul_pd(_mm256_sub_pd(fr, _mm256_cvtepi32_pd(k)),
                                    scale);
    const __m256d v = _mm256_mul_pd(_mm256_sub_pd(fb, _mm256_cvtepi32_pd(b)),
                                    scale);
    const __m128i iu = _mm256_cvttpd_epi32(_mm256_min_pd(_mm256_floor_pd(
      _mm256_max_pd(u, zero)), top));
    const __m128i iv = _mm256_cvttpd_epi32(_mm256_min_pd(_mm256_floor_pd(
      _mm256_max_pd(v, zero)), top));
    const __m256i first = _mm256_i32gather_epi64((const long long *)g->first,
                                                 b, 8);
    const __m256i cell = _mm256_add_epi64(first, _mm256_cvtepi32_epi64(k));
    const __m128i mort = _mm_or_si128(spread4(iu),
                                      _mm_slli_epi32(spread4(iv), 1));
    const __m256i kv = _mm256_or_si256(_mm256_slli_epi64(cell, 2 * MORTON_BITS),
                                       _mm256_cvtepu32_epi64(mort));
    _mm256_storeu_si256((__m256i *)(key + i), kv);
    const int m = _mm256_movemask_pd(bad);
    if (m) aside[i >> 6] |= (uint64_t)m << (i & 63);
  }
  _mm256_zeroupper();
}

/* keys of points [0, n) four at a time by keys4_avx2(), in blocks of 256;
 * by wt_grid_key_of() those it set aside and the last n % 4. Returns the
 * points set aside. */
static int64_t keys_avx2(const wt_grid_shape *g, const double *x,
                         const double *y, const double *z, int64_t n,
                         uint64_t *key, double near)
{
  int64_t missed = 0;
  const int64_t n4 = n & ~(int64_t)3;
  for (int64_t i = 0; i < n4; i += 256) {
    const int64_t m = n4 - i < 256 ? n4 - i : 256;
    uint64_t aside[4] = {0, 0, 0, 0};
    keys4_avx2(g, x + i, y + i, z + i, m, key + i, aside, near);
    for (int w = 0; w < 4; w++) {
      for (uint64_t a = aside[w]; a; a &= a - 1) {
        const int64_t j = i + 64 * w + __builtin_ctzll(a);
        key[j] = wt_grid_key_of(g, x[j], y[j], z[j]);
        missed++;
      }
    }
  }
  for (int64_t i = n4; i < n; i++) key[i] = wt_grid_key_of(g, x[i], y[i], z[i]);
  return missed;
}
/* How near a floor a key's fb or fr may come before the polynomials'
 * key is set aside. Their angles were within 4.4e-16 radians of the C
 * library's on 10^7 uniform points (a scratch comparison; the tests
 * compare the keys themselves); near allows 1e-12
 * radians, which moves fb and fr (in cells of h degrees, times 2^10 for
 * the Morton digits) by at most 1e-12 / DEG / h * 2^10, plus the
 * divisions' roundings, far smaller at any h the grid takes. */
static double near_of(const wt_grid_shape *g)
{
  return 1e-12 / DEG / g->h * (double)(1 << MORTON_BITS) + 1e-9;
}
#endif

int64_t wt_grid_keys(const wt_grid_shape *g, const double *x, const double *y,
                     const double *z, int64_t n, uint64_t *key, int vector)
{
#ifdef WT_KEYS_AVX2
  if (vector) return keys_avx2(g, x, y, z, n, key, near_of(g));
#else
  (void)vector;
#endif
  for (int64_t i = 0; i < n; i++) key[i] = wt_grid_key_of(g, x[i], y[i], z[i]);
  return 0;
}

int wt_grid_keys_vector(void)
{
#ifdef WT_KEYS_AVX2
  return wt_cpu_isa_light() >= WT_ISA_AVX2;
#else
  return 0;
#endif
}

/* tests: the keys of n points (seed) at a band height of h degrees, by
 * wt_grid_keys() on AVX2 (where the CPU has it) against wt_grid_key_of():
 * out[0] the points whose keys differ, out[1] the points set aside for
 * being near an edge, out[2] 1 when the AVX2 path ran. A third of the
 * points are uniform on the sphere; a third lie within a few units in the
 * last place of a band's or a cell's edge, or of a Morton digit's, where
 * the two paths' angles could round to different keys, and a third a
 * little further (2^-20 to 2^-49 of a Morton digit); and the
 * poles and the -180/180 degree seam (y = -0 and +0). WT_OK or
 * WT_ERR_NOMEM. */
int wt_grid_keys_check(int64_t n, uint32_t seed, double h, int64_t *out)
{
  wt_grid_shape g;
  out[0] = out[1] = out[2] = 0;
  if (n < 16 || wt_grid_shape_init(&g, h) != WT_OK) return WT_ERR_NOMEM;
  double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  double *z = malloc((size_t)n * sizeof *z);
  uint64_t *key = malloc((size_t)n * sizeof *key);
  int st = WT_ERR_NOMEM;
  if (x && y && z && key) {
    uint64_t s = 0x9e3779b97f4a7c15ull ^ seed;
#define NEXT (s ^= s << 13, s ^= s >> 7, s ^= s << 17, s)
#define UNIT ((double)(NEXT >> 11) * 0x1.0p-53)
    for (int64_t i = 0; i < n; i++) {
      double dec, ra;
      if (i % 3 == 0) {
        dec = asin(2.0 * UNIT - 1.0) / DEG;
        ra = 360.0 * UNIT;
      } else {
        /* an edge of a band or a Morton row, and of a cell or a Morton
         * column, moved by -4..4 units in the last place */
        const int b = (int)(NEXT % (uint64_t)g.n_bands);
        const int k = (int)(NEXT % (uint64_t)g.n_ra[b]);
        const double jb = (double)(NEXT % 1024u) / 1024.0;
        const double jr = (double)(NEXT % 1024u) / 1024.0;
        dec = -90.0 + ((double)b + jb) * g.h;
        ra = 360.0 * ((double)k + jr) / g.n_ra[b];
        if (i % 3 == 1) {
          for (int m = (int)(NEXT % 9u) - 4; m != 0; m += m > 0 ? -1 : 1)
            dec = nextafter(dec, m > 0 ? 180.0 : -180.0);
          for (int m = (int)(NEXT % 9u) - 4; m != 0; m += m > 0 ? -1 : 1)
            ra = nextafter(ra, m > 0 ? 720.0 : -720.0);
        } else {
          /* or by 2^-20 to 2^-49 of a Morton digit, either way: near the
           * set-aside points' bound, on both sides of it */
          const double e = ldexp(1.0, -20 - (int)(NEXT % 30u)) / 1024.0;
          dec += (NEXT & 1u ? e : -e) * g.h;
          ra += (NEXT & 1u ? e : -e) * 360.0 / g.n_ra[b];
        }
        if (dec > 90.0) dec = 90.0;
      }
      x[i] = cos(dec * DEG) * cos(ra * DEG);
      y[i] = cos(dec * DEG) * sin(ra * DEG);
      z[i] = sin(dec * DEG);
    }
#undef UNIT
#undef NEXT
    /* the poles (x = +0 and -0), the seam at 180 degrees from both sides,
     * and a z that a unit vector's rounding put just past 1 */
    const double sp[10][3] = {{0, 0, 1}, {0, 0, -1}, {-1, 0.0, 0},
                              {-1, -0.0, 0}, {-1, 1e-300, 0}, {-1, -1e-300, 0},
                              {1, -0.0, 0}, {0, 0, 1.0000000000000002},
                              {-0.0, 0.0, 1}, {-0.0, -0.0, -1}};
    for (int k = 0; k < 10; k++) {
      x[k] = sp[k][0];
      y[k] = sp[k][1];
      z[k] = sp[k][2];
    }
    out[2] = wt_grid_keys_vector();
    out[1] = wt_grid_keys(&g, x, y, z, n, key, (int)out[2]);
    for (int64_t i = 0; i < n; i++)
      out[0] += key[i] != wt_grid_key_of(&g, x[i], y[i], z[i]);
    st = WT_OK;
  }
  free(x);
  free(y);
  free(z);
  free(key);
  wt_grid_shape_free(&g);
  return st;
}
