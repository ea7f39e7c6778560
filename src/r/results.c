/* A count's histograms as the lists R reads (count_result() in
 * R/pair_counts.R): each histogram, its patch arrays or their margins, and
 * a labelled count split into what each of its separate counts returns.
 * pending.c hands a finished count's job here (pending_result()). */
#include <stdlib.h>
#include <string.h>
#include "boundary.h"

/* a patch array (see wt_patch_array) as an R array */
static SEXP patch_array(const uint64_t *counts, const double *wsums,
                        const int64_t *inv, int n_patches, int n_bins,
                        int is_auto)
{
  SEXP out = PROTECT(alloc3DArray(REALSXP, n_patches, n_patches, n_bins));
  wt_patch_array(counts, wsums, inv, n_patches, n_bins, is_auto, REAL(out));
  UNPROTECT(1);
  return out;
}

/* the margins of a patch array (see wt_patch_margins) straight from the
 * histograms, without the array: list(rows, cols, diag, total), three
 * P x n_bins matrices and n_bins values */
static SEXP patch_margins(const uint64_t *counts, const double *wsums,
                          const int64_t *inv, int n_patches, int n_bins,
                          int is_auto)
{
  SEXP out = PROTECT(wtr_margins_new(n_patches, n_bins));
  wt_patch_margins(NULL, counts, wsums, inv, n_patches, n_bins, is_auto,
                   REAL(VECTOR_ELT(out, 0)), REAL(VECTOR_ELT(out, 1)),
                   REAL(VECTOR_ELT(out, 2)), REAL(VECTOR_ELT(out, 3)));
  UNPROTECT(1);
  return out;
}


wtr_patch_form wtr_patch_form_of(SEXP patches)
{
  wtr_patch_form f = {0, 0, NULL, 0};
  if (isNull(patches) || XLENGTH(patches) < 1) return f;
  if (TYPEOF(patches) == VECSXP) {
    if (XLENGTH(patches) != 3) error("wtheta internal: patches");
    f.n = asInteger(VECTOR_ELT(patches, 0));
    f.margins = asInteger(VECTOR_ELT(patches, 1)) == 1;
    SEXP map = VECTOR_ELT(patches, 2);
    if (!isNull(map)) {
      if (TYPEOF(map) != INTSXP) error("wtheta internal: patch map");
      f.map = INTEGER(map);
      f.n_map = XLENGTH(map);
    }
  } else {
    f.n = asInteger(patches);
  }
  if (f.n == NA_INTEGER || f.n < 0) error("wtheta internal: patches");
  const int64_t n_h = (int64_t)f.n * f.n;
  for (int64_t i = 0; i < f.n_map; i++)
    if (f.map[i] < 0 || f.map[i] >= n_h || (i > 0 && f.map[i] <= f.map[i - 1]))
      error("wtheta internal: patch map");
  return f;
}

/* where each pair of patches has its histogram: the inverse of f's map (P^2
 * values, -1: none), on R's stack; NULL without a map (pair h, histogram
 * h) */
int64_t *wtr_patch_inv(wtr_patch_form f)
{
  if (!f.map) return NULL;
  const size_t n_h = (size_t)f.n * (size_t)f.n;
  int64_t *inv = (int64_t *)R_alloc(n_h > 0 ? n_h : 1, sizeof *inv);
  for (size_t h = 0; h < n_h; h++) inv[h] = -1;
  for (int64_t i = 0; i < f.n_map; i++) inv[f.map[i]] = i;
  return inv;
}

/* The list of a count's result that wtr_count_list() fills (see it for
 * the elements), with the job's gpu_ms, pairs_skipped and plan_s set and
 * the rest NULL; margins: whether the patch elements hold margins */
static SEXP count_list_new(int margins, const wt_job *job)
{
  const char *names[] = {"slots", "wsum", "gpu_ms", "pairs_skipped", "total",
                         "wtotal",
                         margins ? "patch_margins" : "patch_counts",
                         margins ? "patch_margins_weighted" : "patch_weighted",
                         "plan_s", "thtotal", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 2, ScalarReal(job->gpu_ms));
  SET_VECTOR_ELT(out, 3, ScalarReal(job->pairs_skipped));
  SET_VECTOR_ELT(out, 8, ScalarReal(job->plan_s));
  UNPROTECT(1);
  return out;
}

/* What a count returns to R from its histograms: n_out of them, n_edges
 * + 1 slots each, at slots (and weight sums wsum, angle sums thsum, or
 * NULL): the list count_result() reads (see pending_result()); job: its
 * gpu_ms, pairs_skipped and plan_s. With patches (n_patches of them),
 * their patch arrays, or with `margins` their margins only; the histogram
 * of patch pair h is inv[h] (see wt_patch_array; NULL: h, all P^2 of
 * them). */
SEXP wtr_count_list(const uint64_t *hist, const double *wsum,
                    const double *thsum, int n_out, int n_edges,
                    int is_auto, int n_patches, int margins,
                    const int64_t *inv, const wt_job *job)
{
  const int weighted = wsum != NULL, angles = thsum != NULL;
  const size_t n_all = ((size_t)n_edges + 1) * (size_t)n_out;
  /* every histogram (n_edges + 1 slots each), unless patch arrays replace
   * them */
  SEXP slots = R_NilValue;
  if (n_patches <= 0) {
    slots = allocMatrix(REALSXP, n_edges + 1, n_out);
    for (size_t s = 0; s < n_all; s++) REAL(slots)[s] = (double)hist[s];
  }
  PROTECT(slots);
  SEXP ws = R_NilValue;
  if (weighted && n_patches <= 0) {
    ws = PROTECT(allocMatrix(REALSXP, n_edges + 1, n_out));
    memcpy(REAL(ws), wsum, n_all * sizeof(double));
  } else {
    PROTECT(ws);
  }
  /* the sum over histograms (exact in 64 bits), and of the weight sums */
  const size_t n_row = (size_t)n_edges + 1;
  SEXP total = PROTECT(allocVector(REALSXP, (R_xlen_t)n_row));
  SEXP wtotal = weighted ? allocVector(REALSXP, (R_xlen_t)n_row) : R_NilValue;
  PROTECT(wtotal);
  /* and of the angle sums (radians), in histogram order */
  SEXP thtotal = angles ? allocVector(REALSXP, (R_xlen_t)n_row) : R_NilValue;
  PROTECT(thtotal);
  /* histogram by histogram, in memory order (a slot at a time strode
   * through all of them once per slot: the most time of a count with a
   * thousand patches); each slot's sums still run in histogram order */
  uint64_t *c = (uint64_t *)R_alloc(n_row, sizeof(uint64_t));
  double *wt = weighted ? REAL(wtotal) : NULL;
  double *tht = angles ? REAL(thtotal) : NULL;
  for (size_t s = 0; s < n_row; s++) {
    c[s] = 0;
    if (wt) wt[s] = 0.0;
    if (tht) tht[s] = 0.0;
  }
  for (size_t h = 0; h < (size_t)n_out; h++) {
    const size_t at = h * n_row;
    for (size_t s = 0; s < n_row; s++) c[s] += hist[at + s];
    if (wt)
      for (size_t s = 0; s < n_row; s++) wt[s] += wsum[at + s];
    if (tht)
      for (size_t s = 0; s < n_row; s++) tht[s] += thsum[at + s];
  }
  for (size_t s = 0; s < n_row; s++) REAL(total)[s] = (double)c[s];
  /* per patch pair [a, b, bin] arrays (see patch_array), or their
   * margins */
  SEXP pcounts = R_NilValue, pweights = R_NilValue;
  if (n_patches > 0) {
    if (!inv && (int64_t)n_patches * n_patches != n_out)
      error("wtheta internal: n_out is not n_patches^2");
    pcounts = margins
              ? patch_margins(hist, NULL, inv, n_patches, n_edges - 1, is_auto)
              : patch_array(hist, NULL, inv, n_patches, n_edges - 1, is_auto);
  }
  PROTECT(pcounts);
  if (n_patches > 0 && weighted)
    pweights = margins
               ? patch_margins(NULL, wsum, inv, n_patches, n_edges - 1,
                               is_auto)
               : patch_array(NULL, wsum, inv, n_patches, n_edges - 1,
                             is_auto);
  PROTECT(pweights);
  SEXP out = PROTECT(count_list_new(margins, job));
  SET_VECTOR_ELT(out, 6, pcounts);
  SET_VECTOR_ELT(out, 7, pweights);
  SET_VECTOR_ELT(out, 9, thtotal);
  SET_VECTOR_ELT(out, 0, slots);
  SET_VECTOR_ELT(out, 1, ws);
  SET_VECTOR_ELT(out, 4, total);
  SET_VECTOR_ELT(out, 5, wtotal);
  UNPROTECT(8);
  return out;
}

/* The list wtr_count_list() returns for a count with patches, its numbers
 * unset: where they go in *o (wt_patch_parts() fills them) */
static SEXP part_list_new(int n_patches, int n_bins, int weighted,
                          int margins, const wt_job *job, wt_part_out *o)
{
  const R_xlen_t n_row = (R_xlen_t)n_bins + 2;
  SEXP out = PROTECT(count_list_new(margins, job));
  memset(o, 0, sizeof *o);
  SET_VECTOR_ELT(out, 4, allocVector(REALSXP, n_row));
  o->tot = REAL(VECTOR_ELT(out, 4));
  if (weighted) {
    SET_VECTOR_ELT(out, 5, allocVector(REALSXP, n_row));
    o->wtot = REAL(VECTOR_ELT(out, 5));
  }
  for (int w = 0; w <= weighted; w++) {
    SEXP v = margins ? wtr_margins_new(n_patches, n_bins)
                     : alloc3DArray(REALSXP, n_patches, n_patches, n_bins);
    SET_VECTOR_ELT(out, 6 + w, v);
    if (margins)
      for (int q = 0; q < 4; q++)
        (w ? o->wm : o->m)[q] = REAL(VECTOR_ELT(v, q));
    else
      *(w ? &o->warr : &o->arr) = REAL(v);
  }
  UNPROTECT(1);
  return out;
}

/* wtr_label_parts() with P patches: each part's histograms found where the
 * labelled count has them (no copies), the parts' totals and patch
 * margins or arrays made on the job's threads (wt_patch_parts(); in
 * series they took milliseconds of a six-sample tomography's 27 parts
 * with 100 patches). The numbers are wtr_count_list()'s of the part's
 * histograms gathered in order. Unweighted margins (a jackknife's) come
 * from wt_label_part_margins(), which reads the blocks in memory order
 * and needs no index: 5-7 ms of that tomography's auto count on two
 * threads, now 2. */
static SEXP label_parts_patched(const uint64_t *slots, const double *wsum,
                                int n_bins, int La, int Lb, int is_auto,
                                wtr_patch_form pf, int n_parts,
                                const wt_job *job)
{
  const size_t P = (size_t)pf.n, n_h = P * P, n_row = (size_t)n_bins + 2;
  int *autos = (int *)R_alloc((size_t)n_parts, sizeof *autos);
  int *ps = (int *)R_alloc((size_t)n_parts, sizeof *ps);
  int *pt = (int *)R_alloc((size_t)n_parts, sizeof *pt);
  wt_part_out *po = (wt_part_out *)R_alloc((size_t)n_parts, sizeof *po);
  uint64_t *scratch = (uint64_t *)R_alloc((size_t)n_parts * n_row,
                                          sizeof *scratch);
  SEXP out = PROTECT(allocVector(VECSXP, n_parts));
  int k = 0;
  for (int s = 0; s < La; s++)
    for (int t = is_auto ? s : 0; t < Lb; t++, k++) {
      autos[k] = is_auto && s == t;
      ps[k] = s;
      pt[k] = t;
      SET_VECTOR_ELT(out, k, part_list_new(pf.n, n_bins, wsum != NULL,
                                           pf.margins, job, &po[k]));
    }
  const int T = job->n_threads > 1 ? job->n_threads : 1;
  if (wsum == NULL && pf.margins && pf.map) {
    /* a jackknife's unweighted parts: their margins from the blocks, in
     * any order (whole numbers), with no index of pairs of patches */
    if (wt_label_part_margins(slots, pf.map, pf.n_map, pf.n, n_bins, La,
                              Lb, is_auto, ps, pt, n_parts, po, scratch,
                              T) != WT_OK)
      error("wtheta: out of memory splitting a labelled count into %d "
            "parts", n_parts);
    UNPROTECT(1);
    return out;
  }
  /* the block of each pair of patches (-1: none, beyond reach) */
  const int64_t *blk = wtr_patch_inv(pf);
  /* each part's histogram of each pair of patches: n_parts P^2 indices
   * (2.2 MB for the 27 parts of a six-sample tomography with 100
   * patches), from the C heap once every R object of the result is
   * made (nothing can jump past the free() then), so that they do not
   * bring R's next garbage collection nearer, as R_alloc() did */
  int64_t *inv = (int64_t *)malloc((size_t)n_parts * n_h * sizeof *inv);
  if (inv == NULL)
    error("wtheta: out of memory splitting a labelled count into %d parts",
          n_parts);
  k = 0;
  for (int s = 0; s < La; s++)
    for (int t = is_auto ? s : 0; t < Lb; t++, k++) {
      const int kind = !is_auto ? 2 : s == t ? 0 : 1;
      int64_t *iv = inv + (size_t)k * n_h;
      for (size_t b = 0; b < P; b++)
        for (size_t a = 0; a < P; a++) {
          const size_t h = a + b * P;
          /* the block and its label pair that hold this part's pairs of
           * patches a and b (as wtr_label_parts() says) */
          size_t from = h;
          int ls = s, lt = t;
          iv[h] = -1;
          if (kind == 0 && a > b) continue;
          if (kind == 1 && a > b) {
            from = b + a * P;
            ls = t;
            lt = s;
          }
          const int64_t c = blk ? blk[from] : (int64_t)from;
          if (c >= 0) iv[h] = ((int64_t)c * La + ls) * Lb + lt;
        }
    }
  wt_patch_parts(slots, wsum, inv, autos, n_parts, pf.n, n_bins, po, scratch,
                 T < n_parts ? T : n_parts);
  free(inv);
  UNPROTECT(1);
  return out;
}

/* A labelled count (wt_job.n_lab) split into what each separate count of
 * a label pair returns (wtr_count_list()), in C: a list of them, for an
 * auto job the pairs s <= t (s outer), for a cross job every (s, t), s
 * outer.
 * The job's histogram of task histogram `out` and labels (s, t) is (out La
 * + s) Lb + t; with P patches (0: none, one task histogram), `out` is p +
 * q P (wt_r_patch_plan() in r/patches.c, p <= q in an auto job). A separate
 * count's histogram a + b P is then: D_s D_s (auto): (a + b P, s, s) for
 * a <= b, empty for a > b; D_s D_t, s < t (a cross count): (a + b P, s,
 * t) for a < b, (b + a P, t, s) for a > b, (a + a P, s, t) on the diagonal
 * (its blocks are folded, src/core/labels.c); a cross job's D_s B_t: (a +
 * b P, s, t). Gathered into one separate count's histograms at a time, so
 * R never holds the P^2 La Lb of them. */
SEXP wtr_label_parts(const uint64_t *slots, const double *wsum,
                     int n_out, int n_bins, int La, int Lb, int is_auto,
                     wtr_patch_form pf, const wt_job *job)
{
  const int n_patches = pf.n;
  const int P = n_patches > 0 ? n_patches : 1;
  const int n_edges = n_bins + 1;
  const size_t n_row = (size_t)n_edges + 1, n_h = (size_t)P * (size_t)P;
  const size_t n_blocks = pf.map ? (size_t)pf.n_map : n_h;
  if ((size_t)n_out != n_blocks * (size_t)La * (size_t)Lb ||
      (is_auto && La != Lb))
    error("wtheta internal: a labelled count of %d histograms, not %d x %d "
          "x %d", n_out, (int)n_blocks, La, Lb);
  const int n_parts = is_auto ? La * (La + 1) / 2 : La * Lb;
  if (n_patches > 0)
    return label_parts_patched(slots, wsum, n_bins, La, Lb, is_auto, pf,
                               n_parts, job);
  /* without patches each part is the one histogram of its label pair */
  SEXP out = PROTECT(allocVector(VECSXP, n_parts));
  int k = 0;
  for (int s = 0; s < La; s++)
    for (int t = is_auto ? s : 0; t < Lb; t++, k++) {
      const size_t src = (size_t)s * Lb + t;
      SET_VECTOR_ELT(out, k, wtr_count_list(slots + src * n_row,
                                            wsum ? wsum + src * n_row : NULL,
                                            NULL, 1, n_edges, is_auto && s == t,
                                            0, pf.margins, NULL, job));
    }
  UNPROTECT(1);
  return out;
}

/* wtr_label_parts() of raw histograms (tests): slots and wsum (NULL) are
 * (n_bins + 2) x n_out double matrices of a labelled count's histograms */
SEXP wt_r_label_parts(SEXP slots, SEXP wsum, SEXP n_bins, SEXP la, SEXP lb,
                      SEXP is_auto, SEXP patches)
{
  const double *v = wtr_real_or_die(slots, "slots");
  const int nb = asInteger(n_bins);
  const R_xlen_t n = XLENGTH(slots);
  if (nb < 1 || n % (nb + 2) != 0)
    error("wtheta internal: slots of %d bins", nb);
  if (!isNull(wsum) && XLENGTH(wsum) != n)
    error("wtheta internal: wsum unlike slots");
  uint64_t *h = (uint64_t *)R_alloc((size_t)n, sizeof *h);
  for (R_xlen_t i = 0; i < n; i++) h[i] = (uint64_t)v[i];
  wt_job job;
  memset(&job, 0, sizeof job);
  return wtr_label_parts(h, isNull(wsum) ? NULL : wtr_real_or_die(wsum, "wsum"),
                         (int)(n / (nb + 2)), nb, asInteger(la), asInteger(lb),
                         asLogical(is_auto) == TRUE, wtr_patch_form_of(patches),
                         &job);
}
