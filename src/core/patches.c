/* Patches on the sphere for jackknife and bootstrap errors: the nearest
 * centre of each point, and spherical k-means (Lloyd's iterations) that
 * finds the centres. No R API. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wt.h"
#include "floor/team.h"

#if defined(__GNUC__) && defined(__x86_64__)
#define WT_NEAREST_AVX2 1
#include <immintrin.h>
#endif

/* the nearest centre of points [i0, i1): the centre of largest dot product
 * (x cx + y cy) + z cz, the first one on ties; labels are 1-based */
static void nearest_plain(const double *x, const double *y, const double *z,
                          int64_t i0, int64_t i1, const double *cx,
                          const double *cy, const double *cz, int k,
                          int *label)
{
  for (int64_t i = i0; i < i1; i++) {
    double best = -INFINITY;
    int at = 0;
    for (int c = 0; c < k; c++) {
      double d = (x[i] * cx[c] + y[i] * cy[c]) + z[i] * cz[c];
      if (d > best) {
        best = d;
        at = c;
      }
    }
    label[i] = at + 1;
  }
}

#ifdef WT_NEAREST_AVX2
/* the same, eight points side by side in two AVX2 vectors: each lane makes
 * the plain loop's products and sums in its order (no fused multiply-add:
 * the target has none), and moves to a centre only on a strictly larger
 * dot product (ordered >, false with NaN like C's), so the labels are
 * the plain loop's. The plain loop's branch on d > best mispredicts a few
 * times a point; here there is no branch. Returns the first point not
 * done (fewer than eight are left), after clearing the upper halves of the
 * vector registers, which would slow the plain code that follows. */
__attribute__((target("avx2"))) static int64_t
nearest_avx2(const double *x, const double *y, const double *z, int64_t i0,
             int64_t i1, const double *cx, const double *cy,
             const double *cz, int k, int *label)
{
  int64_t i = i0;
  const __m128i one = _mm_set1_epi32(1);
  for (; i + 8 <= i1; i += 8) {
    const __m256d x0 = _mm256_loadu_pd(x + i), x1 = _mm256_loadu_pd(x + i + 4);
    const __m256d y0 = _mm256_loadu_pd(y + i), y1 = _mm256_loadu_pd(y + i + 4);
    const __m256d z0 = _mm256_loadu_pd(z + i), z1 = _mm256_loadu_pd(z + i + 4);
    __m256d b0 = _mm256_set1_pd(-INFINITY), b1 = b0;
    __m256d a0 = _mm256_setzero_pd(), a1 = a0;
    for (int c = 0; c < k; c++) {
      const __m256d ux = _mm256_set1_pd(cx[c]), uy = _mm256_set1_pd(cy[c]);
      const __m256d uz = _mm256_set1_pd(cz[c]), uc = _mm256_set1_pd(c);
      const __m256d d0 = _mm256_add_pd(
        _mm256_add_pd(_mm256_mul_pd(x0, ux), _mm256_mul_pd(y0, uy)),
        _mm256_mul_pd(z0, uz));
      const __m256d d1 = _mm256_add_pd(
        _mm256_add_pd(_mm256_mul_pd(x1, ux), _mm256_mul_pd(y1, uy)),
        _mm256_mul_pd(z1, uz));
      const __m256d m0 = _mm256_cmp_pd(d0, b0, _CMP_GT_OQ);
      const __m256d m1 = _mm256_cmp_pd(d1, b1, _CMP_GT_OQ);
      b0 = _mm256_blendv_pd(b0, d0, m0);
      b1 = _mm256_blendv_pd(b1, d1, m1);
      a0 = _mm256_blendv_pd(a0, uc, m0);
      a1 = _mm256_blendv_pd(a1, uc, m1);
    }
    /* the centres are whole numbers below 2^31: exact as doubles */
    _mm_storeu_si128((__m128i *)(label + i),
                     _mm_add_epi32(_mm256_cvttpd_epi32(a0), one));
    _mm_storeu_si128((__m128i *)(label + i + 4),
                     _mm_add_epi32(_mm256_cvttpd_epi32(a1), one));
  }
  _mm256_zeroupper();
  return i;
}

/* The same with AVX-512, 32 points side by side in four vectors, where the
 * engine runs AVX-512: each lane makes the plain loop's products and sums
 * in its order (the empty asm keeps each product from fusing into an FMA,
 * which the AVX-512 target has) and moves to a centre only on a strictly
 * larger dot product, so the labels are the plain loop's. */
#define WT_NEAREST_LANES 32
__attribute__((target("avx512f"))) static int64_t
nearest_avx512(const double *x, const double *y, const double *z, int64_t i0,
               int64_t i1, const double *cx, const double *cy,
               const double *cz, int k, int *label)
{
  int64_t i = i0;
  const __m256i one = _mm256_set1_epi32(1);
  for (; i + WT_NEAREST_LANES <= i1; i += WT_NEAREST_LANES) {
    __m512d px[4], py[4], pz[4], best[4], at[4];
    for (int v = 0; v < 4; v++) {
      px[v] = _mm512_loadu_pd(x + i + 8 * v);
      py[v] = _mm512_loadu_pd(y + i + 8 * v);
      pz[v] = _mm512_loadu_pd(z + i + 8 * v);
      best[v] = _mm512_set1_pd(-INFINITY);
      at[v] = _mm512_setzero_pd();
    }
    for (int c = 0; c < k; c++) {
      const __m512d ux = _mm512_set1_pd(cx[c]), uy = _mm512_set1_pd(cy[c]);
      const __m512d uz = _mm512_set1_pd(cz[c]), uc = _mm512_set1_pd(c);
      for (int v = 0; v < 4; v++) {
        __m512d mx = _mm512_mul_pd(px[v], ux), my = _mm512_mul_pd(py[v], uy);
        __m512d mz = _mm512_mul_pd(pz[v], uz);
        __asm__("" : "+v"(mx), "+v"(my), "+v"(mz));
        const __m512d d = _mm512_add_pd(_mm512_add_pd(mx, my), mz);
        const __mmask8 gt = _mm512_cmp_pd_mask(d, best[v], _CMP_GT_OQ);
        best[v] = _mm512_mask_mov_pd(best[v], gt, d);
        at[v] = _mm512_mask_mov_pd(at[v], gt, uc);
      }
    }
    /* the centres are whole numbers below 2^31: exact as doubles */
    for (int v = 0; v < 4; v++)
      _mm256_storeu_si256((__m256i *)(label + i + 8 * v),
                          _mm256_add_epi32(_mm512_cvttpd_epi32(at[v]), one));
  }
  _mm256_zeroupper();
  return i;
}
#endif

typedef struct {
  const double *x, *y, *z, *cx, *cy, *cz;
  int64_t n;
  int k, vector;               /* 0, WT_ISA_AVX2 or WT_ISA_AVX512 */
  int *label;
} nearest_blocks_ctx;

/* blocks [lo, hi) of 1024 points of wt_nearest_centre() */
static void nearest_blocks(void *arg, int64_t lo, int64_t hi, int tid)
{
  const nearest_blocks_ctx *c = (const nearest_blocks_ctx *)arg;
  (void)tid;
  for (int64_t b = lo; b < hi; b++) {
    int64_t i0 = b * 1024;
    const int64_t i1 = i0 + 1024 < c->n ? i0 + 1024 : c->n;
#ifdef WT_NEAREST_AVX2
    if (c->vector == WT_ISA_AVX512)
      i0 = nearest_avx512(c->x, c->y, c->z, i0, i1, c->cx, c->cy, c->cz,
                          c->k, c->label);
    if (c->vector)
      i0 = nearest_avx2(c->x, c->y, c->z, i0, i1, c->cx, c->cy, c->cz, c->k,
                        c->label);
#endif
    nearest_plain(c->x, c->y, c->z, i0, i1, c->cx, c->cy, c->cz, c->k,
                  c->label);
  }
}

/* for each unit vector, the centre of largest dot product (x cx + y cy)
 * + z cz, the first one on ties; labels are 1-based. With AVX-512 (and
 * WTHETA_CPU_ISA neither "avx2" nor "plain") 32 points at a time, then
 * with AVX2 eight, the same labels. */
void wt_nearest_centre(const double *x, const double *y, const double *z,
                       int64_t n, const double *cx, const double *cy,
                       const double *cz, int k, int *label, int n_threads)
{
  int vector = 0;
#ifdef WT_NEAREST_AVX2
  /* the labels do not depend on it */
  const int isa = wt_cpu_isa_light();
  if (isa >= WT_ISA_AVX2) vector = isa;
#endif
  /* blocks of 1024 points (whole vectors but the last), shared among the
   * threads; a point's label does not depend on its block */
  const int64_t n_blocks = (n + 1023) / 1024;
  nearest_blocks_ctx c = {x, y, z, cx, cy, cz, n, k, vector, label};
  wt_team_for(n_threads, n_blocks, 0, nearest_blocks, &c);
}

/* points per block of the centre sums: each block's sums are made in point
 * order and the blocks are added in block order, so the centres (and the
 * patches) do not depend on the number of threads */
#define KM_BLOCK 4096

typedef struct {
  const double *d2;
  int64_t n;
  double *bsum;
} block_sums_ctx;

/* the sums of d2 over blocks [lo, hi) of KM_BLOCK points, each in point
 * order, into bsum */
static void block_sums(void *arg, int64_t lo, int64_t hi, int tid)
{
  const block_sums_ctx *c = (const block_sums_ctx *)arg;
  (void)tid;
  for (int64_t b = lo; b < hi; b++) {
    int64_t i1 = (b + 1) * KM_BLOCK < c->n ? (b + 1) * KM_BLOCK : c->n;
    double s = 0.0;
    for (int64_t i = b * KM_BLOCK; i < i1; i++) s += c->d2[i];
    c->bsum[b] = s;
  }
}

typedef struct {
  const double *x, *y, *z;
  double cx, cy, cz;
  int first;
  double *d2;
} nearest_d2_ctx;

/* points [lo, hi): d2 becomes the squared distance to the new centre
 * where that is less (or where it is the first centre) */
static void nearest_d2(void *arg, int64_t lo, int64_t hi, int tid)
{
  const nearest_d2_ctx *c = (const nearest_d2_ctx *)arg;
  (void)tid;
  for (int64_t i = lo; i < hi; i++) {
    double dx = c->x[i] - c->cx, dy = c->y[i] - c->cy, dz = c->z[i] - c->cz;
    double d = dx * dx + dy * dy + dz * dz;
    if (c->first || d < c->d2[i]) c->d2[i] = d;
  }
}

/* k-means++ seeding: the first centre is point floor(draw[0] n), each next
 * one the point at which the running sum of d2 (squared distance to the
 * nearest centre so far) first exceeds draw[j] times the total; draw[]
 * holds k uniform numbers in [0, 1) from the caller's random stream. d2
 * is scratch of n + n / KM_BLOCK + 1 doubles. */
void wt_kmeanspp(const double *x, const double *y, const double *z,
                 int64_t n, int k, const double *draw, double *d2,
                 double *cx, double *cy, double *cz, int n_threads)
{
  const int64_t n_blocks = (n + KM_BLOCK - 1) / KM_BLOCK;
  double *bsum = d2 + n;
  int64_t pick = (int64_t)(draw[0] * (double)n);
  if (pick >= n) pick = n - 1;
  for (int j = 0; j < k; j++) {
    if (j > 0) {
      /* the running sum goes block by block: block sums (in parallel, each
       * in point order), then a scan inside the block where it crosses */
      block_sums_ctx bs = {d2, n, bsum};
      wt_team_for(n_threads, n_blocks, 0, block_sums, &bs);
      double total = 0.0;
      for (int64_t b = 0; b < n_blocks; b++) total += bsum[b];
      pick = -1;
      if (total > 0.0) {
        double target = draw[j] * total, run = 0.0;
        int64_t b = 0;
        while (b + 1 < n_blocks && run + bsum[b] <= target) run += bsum[b++];
        for (int64_t i = b * KM_BLOCK; i < n && pick < 0; i++) {
          run += d2[i];
          if (run > target && d2[i] > 0.0) pick = i;
        }
      }
      if (pick < 0) pick = (int64_t)(draw[j] * (double)n) % n;
    }
    cx[j] = x[pick];
    cy[j] = y[pick];
    cz[j] = z[pick];
    nearest_d2_ctx nd = {x, y, z, cx[j], cy[j], cz[j], j == 0, d2};
    wt_team_for(n_threads, n, 0, nearest_d2, &nd);
  }
}

typedef struct {
  const double *x, *y, *z;
  const int *label;
  int64_t n;
  int k;
  double *part;
} centre_sums_ctx;

/* the sums of the points of blocks [lo, hi) of KM_BLOCK points per centre
 * (x, y, z of centre c at 3 c of block b's k triples in part), each in
 * point order */
static void centre_sums(void *arg, int64_t lo, int64_t hi, int tid)
{
  const centre_sums_ctx *c = (const centre_sums_ctx *)arg;
  (void)tid;
  for (int64_t b = lo; b < hi; b++) {
    double *s = c->part + (size_t)b * (size_t)c->k * 3;
    memset(s, 0, (size_t)c->k * 3 * sizeof(double));
    int64_t i1 = (b + 1) * KM_BLOCK < c->n ? (b + 1) * KM_BLOCK : c->n;
    for (int64_t i = b * KM_BLOCK; i < i1; i++) {
      double *t = s + 3 * (c->label[i] - 1);
      t[0] += c->x[i];
      t[1] += c->y[i];
      t[2] += c->z[i];
    }
  }
}

/* Spherical k-means from the k starting centres c (overwritten with the
 * result): each point goes to the centre of largest dot product, each
 * centre moves to the normalised sum of its points, until no centre moves
 * by 1e-12 in any coordinate or after max_iter rounds. A centre left with
 * no points restarts at the point farthest from its own centre (least dot
 * product, the first on ties). label: the final patch (1-based) of every
 * point. Returns the rounds made, or -1 when memory ran out. */
int wt_kmeans(const double *x, const double *y, const double *z, int64_t n,
              double *cx, double *cy, double *cz, int k, int max_iter,
              int *label, int n_threads)
{
  int64_t n_blocks = (n + KM_BLOCK - 1) / KM_BLOCK;
  double *part = malloc((size_t)n_blocks * (size_t)k * 3 * sizeof(double));
  double *nx = malloc((size_t)k * 3 * sizeof(double));
  if (part == NULL || nx == NULL) {
    free(part);
    free(nx);
    return -1;
  }
  double *ny = nx + k, *nz = nx + 2 * k;
  int rounds = 0;
  for (int it = 0; it < max_iter; it++) {
    rounds++;
    wt_nearest_centre(x, y, z, n, cx, cy, cz, k, label, n_threads);
    centre_sums_ctx cs = {x, y, z, label, n, k, part};
    wt_team_for(n_threads, n_blocks, 0, centre_sums, &cs);
    for (int c = 0; c < k; c++) {
      double sx = 0.0, sy = 0.0, sz = 0.0;
      for (int64_t b = 0; b < n_blocks; b++) {
        const double *t = part + ((size_t)b * (size_t)k + (size_t)c) * 3;
        sx += t[0];
        sy += t[1];
        sz += t[2];
      }
      double len = sqrt(sx * sx + sy * sy + sz * sz);
      if (len > 0.0) {
        nx[c] = sx / len;
        ny[c] = sy / len;
        nz[c] = sz / len;
      } else {
        int64_t far = 0;
        double least = INFINITY;
        for (int64_t i = 0; i < n; i++) {
          int l = label[i] - 1;
          double d = (x[i] * cx[l] + y[i] * cy[l]) + z[i] * cz[l];
          if (d < least) {
            least = d;
            far = i;
          }
        }
        nx[c] = x[far];
        ny[c] = y[far];
        nz[c] = z[far];
      }
    }
    double moved = 0.0;
    for (int c = 0; c < k; c++) {
      double d = fmax(fabs(nx[c] - cx[c]),
                      fmax(fabs(ny[c] - cy[c]), fabs(nz[c] - cz[c])));
      if (d > moved) moved = d;
      cx[c] = nx[c];
      cy[c] = ny[c];
      cz[c] = nz[c];
    }
    if (moved < 1e-12) break;
  }
  wt_nearest_centre(x, y, z, n, cx, cy, cz, k, label, n_threads);
  free(part);
  free(nx);
  return rounds;
}

/* the angle (radians) between unit vectors u and v, from their chord:
 * accurate at small angles, where acos of the dot product is not */
static double chord_angle(double ux, double uy, double uz, double vx,
                          double vy, double vz)
{
  const double dx = ux - vx, dy = uy - vy, dz = uz - vz;
  const double c = sqrt(dx * dx + dy * dy + dz * dz) / 2.0;
  return 2.0 * asin(c < 1.0 ? c : 1.0);
}

typedef struct {
  const double *x, *y, *z;
  const int64_t *r;
  double *cx, *cy, *cz, *rad;
} range_caps_ctx;

/* the caps of ranges [lo, hi) of wt_range_caps() */
static void range_caps(void *arg, int64_t lo, int64_t hi, int tid)
{
  const range_caps_ctx *c = (const range_caps_ctx *)arg;
  const double *x = c->x, *y = c->y, *z = c->z;
  double *cx = c->cx, *cy = c->cy, *cz = c->cz, *rad = c->rad;
  (void)tid;
  for (int64_t i = lo; i < hi; i++) {
    const int64_t i0 = c->r[2 * i], i1 = c->r[2 * i + 1];
    double sx = 0.0, sy = 0.0, sz = 0.0;
    for (int64_t j = i0; j < i1; j++) {
      sx += x[j];
      sy += y[j];
      sz += z[j];
    }
    const double len = sqrt(sx * sx + sy * sy + sz * sz);
    cx[i] = cy[i] = cz[i] = 0.0;
    if (i1 <= i0) {
      rad[i] = -1.0;
      continue;
    }
    if (!(len > 1e-3 * (double)(i1 - i0))) {
      rad[i] = M_PI;
      continue;
    }
    cx[i] = sx / len;
    cy[i] = sy / len;
    cz[i] = sz / len;
    double m = 0.0;
    for (int64_t j = i0; j < i1; j++) {
      const double a = chord_angle(cx[i], cy[i], cz[i], x[j], y[j], z[j]);
      if (a > m) m = a;
    }
    rad[i] = m;
  }
}

/* The bounding cap of each of k ranges [r[2 i], r[2 i + 1]) of unit
 * vectors (x, y, z): its centre (cx, cy, cz), the sum of its vectors made
 * unit, and radius rad (radians), the largest angle of one of them from
 * the centre. An empty range has radius -1; one whose vectors sum to
 * less than a thousandth of their number (spread over the sphere) radius
 * pi. */
void wt_range_caps(const double *x, const double *y, const double *z,
                   const int64_t *r, int k, double *cx, double *cy,
                   double *cz, double *rad, int n_threads)
{
  range_caps_ctx c = {x, y, z, r, cx, cy, cz, rad};
  wt_team_for(n_threads, k, 1, range_caps, &c);
}

/* Whether two caps (centre, radius: wt_range_caps) can hold a pair of
 * points within `reach` radians of each other: by the triangle
 * inequality a pair is at least the centres' angle less both radii apart;
 * a margin of 1e-9 radians, far above the rounding of these angles, keeps
 * every pair that could lie within reach. Empty caps hold no pair. */
int wt_caps_within(double ax, double ay, double az, double ar, double bx,
                   double by, double bz, double br, double reach)
{
  if (ar < 0.0 || br < 0.0) return 0;
  if (ar >= M_PI || br >= M_PI || reach >= M_PI) return 1;
  return chord_angle(ax, ay, az, bx, by, bz) - ar - br <= reach + 1e-9;
}

/* The pairs between the pairs of patches that no task counted (the far
 * ones: p[f], q[f], 0-based, f < n_far) for every pair of labels: out[s +
 * t La] = the sum over f of x[p[f] + s P] y[q[f] + t P], x and y the
 * points (or weight sums) per patch (rows) and label (columns), P x La
 * and P x Lb. Each product in double, added in the order of f in long
 * double, as R's sum(x[p, s] * y[q, t]) adds them: the same numbers. */
void wt_far_pairs(const double *x, int La, const double *y, int Lb,
                  const int *p, const int *q, int64_t n_far, int P,
                  double *out)
{
  for (int t = 0; t < Lb; t++)
    for (int s = 0; s < La; s++) {
      const double *xs = x + (size_t)s * P, *yt = y + (size_t)t * P;
      long double acc = 0.0L;
      for (int64_t f = 0; f < n_far; f++) {
        const double v = xs[p[f]] * yt[q[f]];
        acc += v;
      }
      out[s + (size_t)t * La] = (double)acc;
    }
}
