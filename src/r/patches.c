/* Sky patches and resampling: k-means and nearest centres (R/patches.R),
 * catalogs grouped by patch (R/pair_counts.R), and jackknife replicate
 * counts (R/wtheta.R); a count's weight totals by patch (R/pair_counts.R). */
#include <limits.h>
#include <string.h>
#include "boundary.h"
#include "floor/pages.h"

/* xyz: n x 3 unit vectors; centres: k x 3 */
SEXP wt_r_nearest_centre(SEXP xyz, SEXP centres, SEXP threads)
{
  wt_points p, c;
  wtr_points_of(xyz, &p);
  wtr_points_of(centres, &c);
  if (c.n < 1 || c.n > INT_MAX) error("wtheta internal: centres");
  SEXP out = PROTECT(allocVector(INTSXP, (R_xlen_t)p.n));
  wt_nearest_centre(p.x, p.y, p.z, p.n, c.x, c.y, c.z, (int)c.n,
                    INTEGER(out),
                    wtr_team_of(threads, p.n * c.n, WT_NEAREST_GRAIN));
  UNPROTECT(1);
  return out;
}

/* A catalog grouped by patch (a stable counting sort) is a list of the
 * unit vectors (n x 3), the labels (1..P), the weights (or NULL) in the
 * new order, and the points per patch. group_alloc makes the list
 * (unprotected); group_fill fills it from plain arrays with labels already
 * checked to lie in 1..P, using `at` (P values) as scratch; it calls
 * nothing that can raise an R error. */
static SEXP group_alloc(R_xlen_t n, int P, int weighted)
{
  const char *names[] = {"xyz", "labels", "weights", "counts", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, allocMatrix(REALSXP, (int)n, 3));
  wt_advise_big(REAL(VECTOR_ELT(out, 0)), (size_t)n * 3 * sizeof(double));
  SET_VECTOR_ELT(out, 1, allocVector(INTSXP, n));
  if (weighted) SET_VECTOR_ELT(out, 2, allocVector(REALSXP, n));
  SET_VECTOR_ELT(out, 3, allocVector(INTSXP, P));
  UNPROTECT(1);
  return out;
}

static void group_fill(SEXP out, const double *x, const double *y,
                       const double *z, const int *lab, const double *wv,
                       R_xlen_t n, int P, int64_t *at, int threads)
{
  double *ox = REAL(VECTOR_ELT(out, 0));
  wt_group_by_label(x, y, z, lab, wv, (int64_t)n, P, INTEGER(VECTOR_ELT(out, 3)),
                    at, ox, ox + n, ox + 2 * n, INTEGER(VECTOR_ELT(out, 1)),
                    wv ? REAL(VECTOR_ELT(out, 2)) : NULL, threads);
}

/* a catalog's unit vectors grouped by the given patch labels (1..n_patches) */
SEXP wt_r_group_patches(SEXP xyz, SEXP labels, SEXP n_patches, SEXP w)
{
  wt_points p;
  wtr_points_of(xyz, &p);
  const R_xlen_t n = (R_xlen_t)p.n;
  const int P = asInteger(n_patches);
  if (XLENGTH(labels) != n || TYPEOF(labels) != INTSXP || P < 1)
    error("wtheta internal: patch labels");
  const int *lab = INTEGER(labels);
  for (R_xlen_t i = 0; i < n; i++)
    if (lab[i] < 1 || lab[i] > P) error("wtheta internal: patch label range");
  const double *wv = isNull(w) ? NULL : wtr_real_or_die(w, "weights");
  SEXP out = PROTECT(group_alloc(n, P, wv != NULL));
  int64_t *at = (int64_t *)R_alloc((size_t)P, sizeof *at);
  group_fill(out, p.x, p.y, p.z, lab, wv, n, P, at, 1);
  UNPROTECT(1);
  return out;
}

/* unit vectors of ra, dec (degrees), labelled by their nearest centre and
 * grouped by it, in one call (see wt_patch_vectors: C scratch of one
 * column, not the ungrouped catalog; nothing extra on R's heap). The
 * result of group_patches. */
SEXP wt_r_patch_vectors(SEXP ra, SEXP dec, SEXP centres, SEXP w,
                        SEXP threads)
{
  const R_xlen_t n = XLENGTH(ra);
  if (XLENGTH(dec) != n) error("wtheta internal: ra and dec lengths differ");
  if (n > INT_MAX)
    error("wtheta: catalogs of more than %d points are not supported",
          INT_MAX);
  wt_points c;
  wtr_points_of(centres, &c);
  if (c.n < 1 || c.n > INT_MAX) error("wtheta internal: centres");
  const double *r = wtr_real_or_die(ra, "ra"), *d = wtr_real_or_die(dec, "dec");
  const double *wv = isNull(w) ? NULL : wtr_real_or_die(w, "weights");
  if (wv && XLENGTH(w) != n) error("wtheta internal: weights length");
  /* the nearest of k centres is k dot products a point: a team by those
   * (the light grain by points gave a catalog of 10^5 points 4 threads
   * of 16, and one of 2 x 10^4 one) */
  const int t = wtr_team_of(threads, (int64_t)n * c.n, WT_NEAREST_GRAIN);
  SEXP out = PROTECT(group_alloc(n, (int)c.n, wv != NULL));
  double *ox = REAL(VECTOR_ELT(out, 0));
  int status = wt_patch_vectors(r, d, wv, (int64_t)n, c.x, c.y, c.z,
                                (int)c.n, INTEGER(VECTOR_ELT(out, 3)), ox,
                                ox + n, ox + 2 * n,
                                INTEGER(VECTOR_ELT(out, 1)),
                                wv ? REAL(VECTOR_ELT(out, 2)) : NULL, t);
  if (status != WT_OK)
    error("wtheta: out of memory grouping a catalog by patch");
  UNPROTECT(1);
  return out;
}

/* the replicates' normalisers: NULL, or P values */
static const double *jackknife_norm(SEXP total, int P)
{
  if (isNull(total)) return NULL;
  const double *tot = wtr_real_or_die(total, "total");
  if (XLENGTH(total) != P) error("wtheta internal: total length");
  return tot;
}

/* jackknife replicate counts (see wt_jackknife_counts): an n_bins x P
 * matrix, each column r divided by total[r] (the replicates' normalisers,
 * P values) when total is not NULL */
SEXP wt_r_jackknife_counts(SEXP arr, SEXP is_auto, SEXP total)
{
  SEXP dim = getAttrib(arr, R_DimSymbol);
  if (TYPEOF(arr) != REALSXP || XLENGTH(dim) != 3)
    error("wtheta internal: patch array");
  const int P = INTEGER(dim)[0], nb = INTEGER(dim)[2];
  if (INTEGER(dim)[1] != P) error("wtheta internal: patch array shape");
  const double *tot = jackknife_norm(total, P);
  SEXP out = PROTECT(allocMatrix(REALSXP, nb, P));
  double *scratch = (double *)R_alloc(((size_t)3 * P + 1) * (size_t)nb,
                                      sizeof(double));
  wt_jackknife_counts(REAL(arr), P, nb, asLogical(is_auto), tot, scratch,
                      REAL(out));
  UNPROTECT(1);
  return out;
}

/* each jackknife replicate's sum of the per-patch values s: P values
 * (wt_jackknife_sums) */
SEXP wt_r_jackknife_sums(SEXP s)
{
  const double *v = wtr_real_or_die(s, "s");
  if (XLENGTH(s) > INT_MAX) error("wtheta internal: too many patches");
  const int P = (int)XLENGTH(s);
  SEXP out = PROTECT(allocVector(REALSXP, P));
  wt_jackknife_sums(v, P, REAL(out));
  UNPROTECT(1);
  return out;
}

/* the pairs of the far pairs of patches p, q (1-based) for every pair of
 * labels: an La x Lb matrix (wt_far_pairs) from x (P x La) and y (P x Lb)
 * (no BLAS: a multithreaded one left spinning threads between counts, and
 * the next count ran at a third of its speed on 16 cores) */
SEXP wt_r_far_pairs(SEXP x, SEXP y, SEXP p, SEXP q)
{
  SEXP dx = getAttrib(x, R_DimSymbol), dy = getAttrib(y, R_DimSymbol);
  if (TYPEOF(x) != REALSXP || TYPEOF(y) != REALSXP || XLENGTH(dx) != 2 ||
      XLENGTH(dy) != 2 || INTEGER(dx)[0] != INTEGER(dy)[0])
    error("wtheta internal: far pairs need two double matrices of P rows");
  if (TYPEOF(p) != INTSXP || TYPEOF(q) != INTSXP ||
      XLENGTH(p) != XLENGTH(q))
    error("wtheta internal: far pairs of patches");
  const int P = INTEGER(dx)[0], La = INTEGER(dx)[1], Lb = INTEGER(dy)[1];
  const R_xlen_t n = XLENGTH(p);
  int *p0 = (int *)R_alloc((size_t)(n > 0 ? n : 1), sizeof *p0);
  int *q0 = (int *)R_alloc((size_t)(n > 0 ? n : 1), sizeof *q0);
  for (R_xlen_t f = 0; f < n; f++) {
    p0[f] = INTEGER(p)[f] - 1;
    q0[f] = INTEGER(q)[f] - 1;
    if (p0[f] < 0 || p0[f] >= P || q0[f] < 0 || q0[f] >= P)
      error("wtheta internal: a far pair of patches outside 1..%d", P);
  }
  SEXP out = PROTECT(allocMatrix(REALSXP, La, Lb));
  wt_far_pairs(REAL(x), La, REAL(y), Lb, p0, q0, n, P, REAL(out));
  UNPROTECT(1);
  return out;
}

/* scale d d^T of a matrix d (wt_row_products), on up to `threads` CPU
 * threads (the counts' team: no BLAS threads of its own) */
SEXP wt_r_row_products(SEXP d, SEXP scale, SEXP threads)
{
  SEXP dim = getAttrib(d, R_DimSymbol);
  if (TYPEOF(d) != REALSXP || XLENGTH(dim) != 2)
    error("wtheta internal: row products need a double matrix");
  const int n = INTEGER(dim)[0], k = INTEGER(dim)[1];
  /* a thread per 2^21 products or so: 8 for a 420 x 420 joint
   * covariance of 100 replicates (16 were slower on a 16-core Xeon) */
  const int T = wtr_team_of(threads, (int64_t)n * n * k / 2, 1 << 20);
  SEXP out = PROTECT(allocMatrix(REALSXP, n, n));
  wt_row_products(REAL(d), n, k, asReal(scale), REAL(out), T);
  UNPROTECT(1);
  return out;
}

/* A new list(rows, cols, diag, total) for the margins of a patch array
 * (wt_patch_margins): three P x n_bins matrices and n_bins values, unset */
SEXP wtr_margins_new(int P, int nb)
{
  const char *names[] = {"rows", "cols", "diag", "total", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  for (int k = 0; k < 3; k++)
    SET_VECTOR_ELT(out, k, allocMatrix(REALSXP, P, nb));
  SET_VECTOR_ELT(out, 3, allocVector(REALSXP, nb));
  UNPROTECT(1);
  return out;
}

/* the margins of a patch array (P x P x n_bins, as wt_patch_array lays it
 * out): those a count keeps for a jackknife (wtr_count_list() in results.c),
 * for the counts merged from a distributed count's blocks */
SEXP wt_r_patch_margins(SEXP arr)
{
  SEXP dim = getAttrib(arr, R_DimSymbol);
  if (TYPEOF(arr) != REALSXP || XLENGTH(dim) != 3 ||
      INTEGER(dim)[1] != INTEGER(dim)[0])
    error("wtheta internal: patch array");
  const int P = INTEGER(dim)[0], nb = INTEGER(dim)[2];
  SEXP out = PROTECT(wtr_margins_new(P, nb));
  wt_patch_margins(REAL(arr), NULL, NULL, NULL, P, nb, 0,
                   REAL(VECTOR_ELT(out, 0)), REAL(VECTOR_ELT(out, 1)),
                   REAL(VECTOR_ELT(out, 2)), REAL(VECTOR_ELT(out, 3)));
  UNPROTECT(1);
  return out;
}

/* the same from a count's patch margins (see wtr_count_list() in results.c):
 * list(rows, cols, diag, total), three P x n_bins matrices and n_bins
 * values */
SEXP wt_r_jackknife_margins(SEXP margins, SEXP is_auto, SEXP total)
{
  if (TYPEOF(margins) != VECSXP || XLENGTH(margins) != 4)
    error("wtheta internal: patch margins");
  SEXP rows = VECTOR_ELT(margins, 0), dim = getAttrib(rows, R_DimSymbol);
  if (TYPEOF(rows) != REALSXP || XLENGTH(dim) != 2)
    error("wtheta internal: patch margins' rows");
  const int P = INTEGER(dim)[0], nb = INTEGER(dim)[1];
  for (int k = 1; k < 4; k++) {
    SEXP v = VECTOR_ELT(margins, k);
    if (TYPEOF(v) != REALSXP ||
        XLENGTH(v) != (k < 3 ? (R_xlen_t)P * nb : (R_xlen_t)nb))
      error("wtheta internal: patch margins' shapes");
  }
  const double *tot = jackknife_norm(total, P);
  SEXP out = PROTECT(allocMatrix(REALSXP, nb, P));
  wt_jackknife_margins(REAL(rows), REAL(VECTOR_ELT(margins, 1)),
                       REAL(VECTOR_ELT(margins, 2)),
                       REAL(VECTOR_ELT(margins, 3)), P, nb,
                       asLogical(is_auto), tot, REAL(out));
  UNPROTECT(1);
  return out;
}

/* the caps of the k patch ranges of xyz (ranges: k x 2, [start, end)),
 * into R_alloc'd centres (3 k) and radii (k) */
static void range_caps(SEXP xyz, SEXP ranges, SEXP threads, int *k,
                       double **c, double **rad)
{
  wt_points p;
  wtr_points_of(xyz, &p);
  const int n_threads = wtr_team_of(threads, p.n, WT_LIGHT_GRAIN);
  const double *rv = wtr_real_or_die(ranges, "ranges");
  if (XLENGTH(ranges) % 2 != 0 || XLENGTH(ranges) / 2 > INT_MAX)
    error("wtheta internal: ranges must be a k x 2 matrix");
  *k = (int)(XLENGTH(ranges) / 2);
  int64_t *r = (int64_t *)R_alloc((size_t)2 * (*k) + 1, sizeof *r);
  for (int i = 0; i < *k; i++) {
    r[2 * i] = (int64_t)rv[i];
    r[2 * i + 1] = (int64_t)rv[i + *k];
    if (r[2 * i] < 0 || r[2 * i + 1] < r[2 * i] || r[2 * i + 1] > p.n)
      error("wtheta internal: a patch range outside the catalog");
  }
  *c = (double *)R_alloc((size_t)3 * (*k) + 1, sizeof **c);
  *rad = (double *)R_alloc((size_t)(*k) + 1, sizeof **rad);
  wt_range_caps(p.x, p.y, p.z, r, *k, *c, *c + *k, *c + 2 * (*k), *rad,
                n_threads);
}

/* near[i + j ka]: whether patch i of a and patch j of b (NULL: a's, an
 * auto count) can hold a pair of points within `reach` degrees (the last
 * edge) of each other (wt_caps_within), for the patch ranges (k x 2,
 * [start, end)); *ka, *kb: the patches; near is R_alloc'd */
static int *patch_near(SEXP xyz_a, SEXP ranges_a, SEXP xyz_b,
                       SEXP ranges_b, SEXP reach, SEXP threads, int *ka,
                       int *kb)
{
  double *ca, *ra, *cb, *rb;
  range_caps(xyz_a, ranges_a, threads, ka, &ca, &ra);
  if (isNull(xyz_b)) {
    *kb = *ka;
    cb = ca;
    rb = ra;
  } else {
    range_caps(xyz_b, ranges_b, threads, kb, &cb, &rb);
  }
  const double r = asReal(reach) * (M_PI / 180.0);
  if (!(r >= 0.0)) error("wtheta internal: reach");
  const int na = *ka, nb = *kb;
  int *o = (int *)R_alloc((size_t)na * (size_t)nb + 1, sizeof *o);
  for (int j = 0; j < nb; j++)
    for (int i = 0; i < na; i++)
      o[i + (size_t)j * na] = wt_caps_within(
          ca[i], ca[i + na], ca[i + 2 * na], ra[i], cb[j], cb[j + nb],
          cb[j + 2 * nb], rb[j], r);
  return o;
}

/* Which pairs of patches can hold a pair of points within `reach`
 * degrees of each other (patch_near()): a ka x kb logical matrix */
SEXP wt_r_patch_reach(SEXP xyz_a, SEXP ranges_a, SEXP xyz_b, SEXP ranges_b,
                      SEXP reach, SEXP threads)
{
  int ka, kb;
  const int *near = patch_near(xyz_a, ranges_a, xyz_b, ranges_b, reach,
                               threads, &ka, &kb);
  SEXP out = PROTECT(allocMatrix(LGLSXP, ka, kb));
  memcpy(LOGICAL(out), near, (size_t)ka * (size_t)kb * sizeof *near);
  UNPROTECT(1);
  return out;
}

/* The tasks of a count with patches (count_pairs()): one per pair of
 * patches (a, b) within reach of each other (patch_near()), for an auto
 * count (xyz_b NULL) those with a <= b, numbered as its histogram a + b ka
 * (0-based, the column-major [a, b] of the ka x kb matrix), in that order;
 * the first pair when none is within reach, so that the count has a
 * histogram. list(map: those numbers, far: the numbers of the other pairs
 * (for an auto count a <= b), tasks: an n x 5 double matrix of a's range
 * [start, end), b's range, and the task's histogram 0..n - 1). One pass
 * instead of R's logical P x P matrices, which() and cbind(): a jackknife
 * call over 100 patches (three counts) made 0.94 MB of them. */
SEXP wt_r_patch_plan(SEXP xyz_a, SEXP ranges_a, SEXP xyz_b, SEXP ranges_b,
                     SEXP reach, SEXP threads)
{
  int ka, kb;
  const int *near = patch_near(xyz_a, ranges_a, xyz_b, ranges_b, reach,
                               threads, &ka, &kb);
  const int is_auto = isNull(xyz_b);
  const double *ra = REAL(ranges_a);
  const double *rb = is_auto ? ra : REAL(ranges_b);
  int64_t n_run = 0, n_pairs = 0;
  for (int j = 0; j < kb; j++)
    for (int i = 0; i < (is_auto ? j + 1 : ka); i++) {
      n_pairs++;
      n_run += near[i + (size_t)j * ka] != 0;
    }
  const int none = n_run == 0;
  if (none) n_run = 1;
  if ((double)ka * (double)kb > INT_MAX)
    error("wtheta internal: too many pairs of patches");
  SEXP map = PROTECT(allocVector(INTSXP, (R_xlen_t)n_run));
  SEXP far = PROTECT(allocVector(INTSXP, (R_xlen_t)(n_pairs - n_run)));
  SEXP tasks = PROTECT(allocMatrix(REALSXP, (int)n_run, 5));
  int *m = INTEGER(map), *f = INTEGER(far);
  double *t = REAL(tasks);
  int64_t k = 0, q = 0;
  for (int j = 0; j < kb; j++)
    for (int i = 0; i < (is_auto ? j + 1 : ka); i++) {
      const int h = i + j * ka;
      if (!(near[h] || (none && h == 0))) {
        f[q++] = h;
        continue;
      }
      m[k] = h;
      t[k] = ra[i];
      t[k + n_run] = ra[i + ka];
      t[k + 2 * n_run] = rb[j];
      t[k + 3 * n_run] = rb[j + kb];
      t[k + 4 * n_run] = (double)k;
      k++;
    }
  const char *names[] = {"map", "far", "tasks", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, map);
  SET_VECTOR_ELT(out, 1, far);
  SET_VECTOR_ELT(out, 2, tasks);
  UNPROTECT(4);
  return out;
}

/* sky patches: k-means++ seeding from the k uniform draws, then spherical
 * k-means; a list of the centres (k x 3), the 1-based label of every point
 * and the rounds made */
SEXP wt_r_kmeans(SEXP xyz, SEXP draws, SEXP iter, SEXP threads)
{
  wt_points p;
  wtr_points_of(xyz, &p);
  const int k = (int)XLENGTH(draws);
  if (k < 1 || p.n < k) error("wtheta internal: k-means sizes");
  const double *draw = wtr_real_or_die(draws, "draws");
  const int n_threads = wtr_team_of(threads, p.n, WT_LIGHT_GRAIN);
  SEXP cen = PROTECT(allocMatrix(REALSXP, k, 3));
  SEXP lab = PROTECT(allocVector(INTSXP, (R_xlen_t)p.n));
  double *cv = REAL(cen);
  double *d2 = (double *)R_alloc((size_t)p.n + (size_t)p.n / 4096 + 1,
                                 sizeof(double));
  wt_kmeanspp(p.x, p.y, p.z, p.n, k, draw, d2, cv, cv + k, cv + 2 * k,
              n_threads);
  int rounds = wt_kmeans(p.x, p.y, p.z, p.n, cv, cv + k, cv + 2 * k, k,
                         asInteger(iter), INTEGER(lab), n_threads);
  if (rounds < 0) error("wtheta: out of memory in the k-means of sky_patches()");
  SEXP out = PROTECT(allocVector(VECSXP, 3));
  SET_VECTOR_ELT(out, 0, cen);
  SET_VECTOR_ELT(out, 1, lab);
  SET_VECTOR_ELT(out, 2, ScalarInteger(rounds));
  UNPROTECT(3);
  return out;
}

/* A count's weight totals (count_totals() in R/pair_counts.R) in one pass
 * without copies: w, n doubles; patch, NULL or n patch numbers 1..n_patches
 * (integers). list(sum, sum_sq: as R's sum(w) and sum(w^2), long double
 * accumulators in order; patch, patch_sq: NULL, or the same by patch as
 * rowsum() (doubles, in order)), so each value is the one R gave. */
SEXP wt_r_weight_sums(SEXP w, SEXP patch, SEXP n_patches)
{
  if (TYPEOF(w) != REALSXP) error("wtheta internal: weights");
  const R_xlen_t n = XLENGTH(w);
  const double *x = REAL(w);
  const int *p = NULL;
  const int P = asInteger(n_patches);
  if (!isNull(patch)) {
    if (TYPEOF(patch) != INTSXP || XLENGTH(patch) != n ||
        P == NA_INTEGER || P < 1)
      error("wtheta internal: patch numbers");
    p = INTEGER(patch);
  }
  const char *names[] = {"sum", "sum_sq", "patch", "patch_sq", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  double *ps = NULL, *ps2 = NULL;
  if (p) {
    SET_VECTOR_ELT(out, 2, allocVector(REALSXP, P));
    SET_VECTOR_ELT(out, 3, allocVector(REALSXP, P));
    ps = REAL(VECTOR_ELT(out, 2));
    ps2 = REAL(VECTOR_ELT(out, 3));
    for (int k = 0; k < P; k++) ps[k] = ps2[k] = 0.0;
  }
  long double s = 0.0, s2 = 0.0;   /* as R's sum() */
  for (R_xlen_t i = 0; i < n; i++) {
    const double v = x[i], v2 = v * v;
    s += v;
    s2 += v2;
    if (p) {
      if (p[i] < 1 || p[i] > P)
        error("wtheta internal: patch number %d of object %lld", p[i],
              (long long)i + 1);
      ps[p[i] - 1] += v;
      ps2[p[i] - 1] += v2;
    }
  }
  SET_VECTOR_ELT(out, 0, ScalarReal((double)s));
  SET_VECTOR_ELT(out, 1, ScalarReal((double)s2));
  UNPROTECT(1);
  return out;
}

/* patch_size() (R/patches.R): for each patch range of xyz (k x 2,
 * [start, end)), 2 sqrt(2) times the rms angle in degrees of at most 400
 * of its points, spread evenly over the range as seq(length.out = ) does,
 * from their normalised mean (the diameter of a uniform disc with that
 * rms); NA for a range of fewer than two points */
SEXP wt_r_patch_sizes(SEXP xyz, SEXP ranges)
{
  wt_points p;
  wtr_points_of(xyz, &p);
  const double *rv = wtr_real_or_die(ranges, "ranges");
  if (XLENGTH(ranges) % 2 != 0)
    error("wtheta internal: ranges must be a k x 2 matrix");
  const R_xlen_t k = XLENGTH(ranges) / 2;
  SEXP out = PROTECT(allocVector(REALSXP, k));
  double *o = REAL(out);
  for (R_xlen_t q = 0; q < k; q++) {
    const int64_t a = (int64_t)rv[q], b = (int64_t)rv[q + k], n = b - a;
    if (a < 0 || n < 0 || b > p.n)
      error("wtheta internal: a patch range outside the catalog");
    if (n < 2) {
      o[q] = NA_REAL;
      continue;
    }
    const int64_t m = n < 400 ? n : 400;
    const double by = (double)(n - 1) / (double)(m - 1);
    double s[3] = {0.0, 0.0, 0.0};
    for (int64_t j = 0; j < m; j++) {
      const int64_t i = a + (int64_t)nearbyint((double)j * by);
      s[0] += p.x[i];
      s[1] += p.y[i];
      s[2] += p.z[i];
    }
    const double len = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    double sa = 0.0;
    for (int64_t j = 0; j < m; j++) {
      const int64_t i = a + (int64_t)nearbyint((double)j * by);
      double d = (p.x[i] * s[0] + p.y[i] * s[1] + p.z[i] * s[2]) / len;
      d = d > 1.0 ? 1.0 : d < -1.0 ? -1.0 : d;
      const double ang = acos(d);
      sa += ang * ang;
    }
    o[q] = 2.0 * sqrt(2.0) * sqrt(sa / (double)m) * (180.0 / M_PI);
  }
  UNPROTECT(1);
  return out;
}
