/* Resampling arithmetic on plain arrays: patch arrays and their margins
 * from the per-task histograms, jackknife replicates, and the stable
 * counting sort that groups a catalog by patch. r/patches.c wraps them for R. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "floor/team.h"
#include "floor/pages.h"

/* Histogram h of a patched count's patch pair h = a + b P (0-based; the
 * histogram of the task of patches a + 1 and b + 1): inv[h] (NULL: h
 * itself; -1: none, the pair lay beyond the last edge and its in-range
 * slots are zero) */
static int64_t hist_of(const int64_t *inv, size_t h)
{
  return inv ? inv[h] : (int64_t)h;
}

/* in-range slot s of histogram i (-1: zero) of counts or wsums */
static double slot_value(const uint64_t *counts, const double *wsums,
                         int64_t i, size_t n_row, size_t s)
{
  if (i < 0) return 0.0;
  return counts ? (double)counts[(size_t)i * n_row + s]
                : wsums[(size_t)i * n_row + s];
}

/* the value [a, b] of a patch array in in-range slot s, from histogram ih
 * of the pair and, in an auto count off the diagonal (mirror), it of its
 * transpose */
static double pair_value(const uint64_t *counts, const double *wsums,
                         int64_t ih, int mirror, int64_t it, size_t n_row,
                         size_t s)
{
  double v = slot_value(counts, wsums, ih, n_row, s);
  if (mirror) v += slot_value(counts, wsums, it, n_row, s);
  return v;
}

/* The counts of a patched count as an n_patches x n_patches x n_bins
 * array [a, b, bin] of the in-range slots, into o; the histogram of patch
 * pair a + b P is inv[a + b P] (see hist_of()). In an auto count the
 * tasks filled a <= b only: the transpose is added off the diagonal, so
 * that [a, b] and [b, a] both hold the pairs between patches a and b. From
 * counts (exact 64-bit) when counts is not NULL, else from weight sums. */
void wt_patch_array(const uint64_t *counts, const double *wsums,
                    const int64_t *inv, int n_patches, int n_bins,
                    int is_auto, double *o)
{
  const size_t P = (size_t)n_patches, n_row = (size_t)n_bins + 2;
  for (size_t b = 0; b < P; b++)
    for (size_t a = 0; a < P; a++) {
      const size_t h = a + b * P, t = b + a * P;
      const int mirror = is_auto && a != b;
      const int64_t ih = hist_of(inv, h), it = mirror ? hist_of(inv, t) : -1;
      for (size_t k = 0; k < (size_t)n_bins; k++)
        o[h + k * P * P] = pair_value(counts, wsums, ih, mirror, it, n_row,
                                      k + 1);
    }
}

/* The margins of a patch array (the layout of wt_patch_array), which are
 * all a jackknife needs: per bin k, rows[a + k P] = sum_b S[a, b, k],
 * cols[b + k P] = sum_a S[a, b, k], diag[a + k P] = S[a, a, k] and
 * total[k] = sum S[, , k] (rows, cols, diag: P x n_bins, column-major).
 * Each sum runs in the order wt_patch_array's array is laid out (b outer,
 * a inner), whether it is read from the array S or straight from the
 * histograms (counts or wsums and inv, as wt_patch_array reads them, with
 * S NULL), so both give the same numbers bit for bit. Patch pairs without
 * a histogram are skipped (adding zero changes no sum). */
void wt_patch_margins(const double *S, const uint64_t *counts,
                      const double *wsums, const int64_t *inv, int n_patches,
                      int n_bins, int is_auto, double *rows, double *cols,
                      double *diag, double *total)
{
  const size_t P = (size_t)n_patches, nb = (size_t)n_bins,
               n_row = nb + 2;
  memset(rows, 0, P * nb * sizeof *rows);
  memset(cols, 0, P * nb * sizeof *cols);
  memset(diag, 0, P * nb * sizeof *diag);
  memset(total, 0, nb * sizeof *total);
  for (size_t b = 0; b < P; b++)
    for (size_t a = 0; a < P; a++) {
      const size_t h = a + b * P, t = b + a * P;
      const int mirror = is_auto && a != b;
      const int64_t ih = S ? 0 : hist_of(inv, h),
                    it = S || !mirror ? -1 : hist_of(inv, t);
      if (!S && ih < 0 && it < 0) continue;
      for (size_t k = 0; k < nb; k++) {
        const double v = S ? S[h + k * P * P]
                           : pair_value(counts, wsums, ih, mirror, it,
                                        n_row, k + 1);
        rows[a + k * P] += v;
        cols[b + k * P] += v;
        total[k] += v;
        if (a == b) diag[a + k * P] = v;
      }
    }
}

typedef struct {
  const uint64_t *counts;
  const double *wsums;
  const int64_t *inv;
  const int *is_auto;
  int n_patches, n_bins;
  const wt_part_out *out;
  uint64_t *scratch;
} patch_parts_ctx;

/* parts [lo, hi) of wt_patch_parts(), each with its own counters */
static void patch_parts(void *arg, int64_t lo, int64_t hi, int tid)
{
  const patch_parts_ctx *p = (const patch_parts_ctx *)arg;
  const uint64_t *counts = p->counts;
  const double *wsums = p->wsums;
  const int n_patches = p->n_patches, n_bins = p->n_bins;
  const size_t n_h = (size_t)n_patches * (size_t)n_patches,
               n_row = (size_t)n_bins + 2;
  (void)tid;
  for (int64_t k = lo; k < hi; k++) {
    const int64_t *iv = p->inv + (size_t)k * n_h;
    const wt_part_out *o = &p->out[k];
    const int is_auto = p->is_auto[k];
    uint64_t *c = p->scratch + (size_t)k * n_row;
    for (size_t s = 0; s < n_row; s++) {
      c[s] = 0;
      if (o->wtot) o->wtot[s] = 0.0;
    }
    for (size_t h = 0; h < n_h; h++) {
      if (iv[h] < 0) continue;
      const size_t at = (size_t)iv[h] * n_row;
      for (size_t s = 0; s < n_row; s++) c[s] += counts[at + s];
      if (o->wtot)
        for (size_t s = 0; s < n_row; s++) o->wtot[s] += wsums[at + s];
    }
    for (size_t s = 0; s < n_row; s++) o->tot[s] = (double)c[s];
    if (o->m[0]) {
      wt_patch_margins(NULL, counts, NULL, iv, n_patches, n_bins, is_auto,
                       o->m[0], o->m[1], o->m[2], o->m[3]);
      if (o->wm[0])
        wt_patch_margins(NULL, NULL, wsums, iv, n_patches, n_bins, is_auto,
                         o->wm[0], o->wm[1], o->wm[2], o->wm[3]);
    } else {
      wt_patch_array(counts, NULL, iv, n_patches, n_bins, is_auto, o->arr);
      if (o->warr)
        wt_patch_array(NULL, wsums, iv, n_patches, n_bins, is_auto, o->warr);
    }
  }
}

/* The unweighted parts of a labelled count with margins, read from its
 * blocks: what patch_parts() makes of them (the same numbers), without
 * the P^2 index of each part, whose scan took most of that time (a
 * six-sample tomography: 27 parts of 10^4 pairs of patches, 600 of them
 * within reach). Counts are whole numbers, added exactly in any order
 * (in 64 bits, and in doubles below 2^53, as there). */
typedef struct {
  const uint64_t *counts;
  const int *map;
  int64_t n_map;
  int P, n_bins, La, Lb, is_auto;
  const int *ps, *pt;
  int64_t n;
  const wt_part_out *out;
  uint64_t *scratch, *acc;
} label_margins_ctx;

static void label_margins(void *arg, int id, int nt)
{
  const label_margins_ctx *q = (const label_margins_ctx *)arg;
  const size_t P = (size_t)q->P, nb = (size_t)q->n_bins, n_row = nb + 2;
  const size_t Lb = (size_t)q->Lb, per_block = (size_t)q->La * Lb * n_row;
  const size_t per_part = (3 * P + 1) * nb;
  /* this thread's parts, each block's histograms then read in turn (the
   * blocks in memory order: the parts of a block share its lines), into
   * 64-bit counters by patch (a bin's P margins apart, as R has them,
   * the writes took most of the time), turned into R's layout at the end */
  const int64_t lo = (int64_t)q->n * id / nt;
  const int64_t hi = (int64_t)q->n * (id + 1) / nt;
  memset(q->scratch + (size_t)lo * n_row, 0,
         (size_t)(hi - lo) * n_row * sizeof *q->scratch);
  memset(q->acc + (size_t)lo * per_part, 0,
         (size_t)(hi - lo) * per_part * sizeof *q->acc);
  for (int64_t i = 0; i < q->n_map; i++) {
    const size_t h = (size_t)q->map[i], a = h % P, b = h / P;
    const uint64_t *blk = q->counts + (size_t)i * per_block;
    for (int64_t k = lo; k < hi; k++) {
      const size_t s = (size_t)q->ps[k], t = (size_t)q->pt[k];
      /* D_s D_s of an auto count: the block, and its mirror [b, a] off
       * the diagonal; D_s D_t (s < t) of an auto count: [b, a] from the
       * block with the labels swapped; a cross count's D_s B_t: the
       * block */
      const int twice = q->is_auto && s == t && a != b;
      const uint64_t *x = blk + (s * Lb + t) * n_row;
      const uint64_t *y = q->is_auto && s != t && a != b
        ? blk + (t * Lb + s) * n_row : NULL;
      uint64_t *all = q->scratch + (size_t)k * n_row;
      uint64_t *R = q->acc + (size_t)k * per_part, *C = R + P * nb;
      uint64_t *D = C + P * nb, *T = D + P * nb;
      uint64_t *ra = R + a * nb, *cb = C + b * nb;
      for (size_t j = 0; j < n_row; j++) all[j] += x[j] + (y ? y[j] : 0);
      for (size_t j = 0; j < nb; j++) {
        ra[j] += x[j + 1];
        cb[j] += x[j + 1];
        T[j] += x[j + 1];
      }
      if (a == b) {
        for (size_t j = 0; j < nb; j++) D[a * nb + j] = x[j + 1];
      } else if (twice || y) {
        const uint64_t *v = twice ? x : y;
        uint64_t *rb = R + b * nb, *ca = C + a * nb;
        for (size_t j = 0; j < nb; j++) {
          rb[j] += v[j + 1];
          ca[j] += v[j + 1];
          T[j] += v[j + 1];
        }
      }
    }
  }
  for (int64_t k = lo; k < hi; k++) {
    const wt_part_out *o = &q->out[k];
    const uint64_t *R = q->acc + (size_t)k * per_part, *C = R + P * nb;
    const uint64_t *D = C + P * nb, *T = D + P * nb;
    for (size_t a = 0; a < P; a++)
      for (size_t j = 0; j < nb; j++) {
        o->m[0][a + j * P] = (double)R[a * nb + j];
        o->m[1][a + j * P] = (double)C[a * nb + j];
        o->m[2][a + j * P] = (double)D[a * nb + j];
      }
    for (size_t j = 0; j < nb; j++) o->m[3][j] = (double)T[j];
    for (size_t j = 0; j < n_row; j++)
      o->tot[j] = (double)q->scratch[(size_t)k * n_row + j];
  }
}

int wt_label_part_margins(const uint64_t *counts, const int *map,
                          int64_t n_map, int n_patches, int n_bins, int La,
                          int Lb, int is_auto, const int *ps, const int *pt,
                          int n, const wt_part_out *out, uint64_t *scratch,
                          int T)
{
  const size_t per_part = (3 * (size_t)n_patches + 1) * (size_t)n_bins;
  uint64_t *acc = (uint64_t *)wt_alloc_big((n > 0 ? (size_t)n : 1) * per_part *
                                     sizeof *acc);
  if (acc == NULL) return WT_ERR_NOMEM;
  label_margins_ctx q = {counts, map, n_map, n_patches, n_bins, La, Lb,
                         is_auto, ps, pt, n, out, scratch, acc};
  wt_team_run(T < n ? T : n, label_margins, &q);
  free(acc);
  return WT_OK;
}

/* The parts of a labelled count with P patches (n of them, on T
 * threads): part k's histogram of the pair of patches h (P^2 of them) is
 * histogram inv[k P^2 + h] of counts and wsums (n_row = n_bins + 2 slots
 * each; -1: none), an auto count when is_auto[k]. For each part, what
 * wtr_count_list() in src/r/results.c returns of its histograms gathered in
 * the order of h: into out[k], tot (n_row totals of all slots, exact in
 * 64 bits), wtot (weight sums, in that order; NULL: unweighted), and the
 * margins of its patch array (m: rows, cols, diag, total; wm of the
 * weight sums) or, when m[0] is NULL, the arrays (arr, warr). scratch:
 * n n_row counters. */
void wt_patch_parts(const uint64_t *counts, const double *wsums,
                    const int64_t *inv, const int *is_auto, int n,
                    int n_patches, int n_bins, const wt_part_out *out,
                    uint64_t *scratch, int T)
{
  patch_parts_ctx p = {counts, wsums, inv, is_auto,
                       n_patches, n_bins, out, scratch};
  wt_team_for(T, n, 1, patch_parts, &p);
}

/* Jackknife replicate counts from the margins of a patch array
 * (wt_patch_margins): leaving patch r out keeps all pairs less row r and
 * column r of each bin, plus S[r, r] that both removed. For an auto count
 * (pairs between two patches at [a, b] and [b, a], pairs inside a patch
 * once) the diagonal is added again and the sum halved. Into o, an n_bins x P
 * matrix, column r divided by norm[r] when norm (P values, the
 * replicates' normalisers) is not NULL. */
void wt_jackknife_margins(const double *rows, const double *cols,
                          const double *diag, const double *total, int P,
                          int nb, int is_auto, const double *norm, double *o)
{
  for (int k = 0; k < nb; k++) {
    const double *rk = rows + (size_t)k * P, *ck = cols + (size_t)k * P,
                 *dk = diag + (size_t)k * P;
    double dsum = 0.0;
    for (int r = 0; r < P; r++) dsum += dk[r];
    for (int r = 0; r < P; r++) {
      double c = total[k] - rk[r] - ck[r] + dk[r];
      if (is_auto) c = (c + dsum - dk[r]) / 2.0;
      o[k + (size_t)r * nb] = norm ? c / norm[r] : c;
    }
  }
}

/* The jackknife replicates' sums of per-patch values s (P finite ones):
 * o[r] = the sum of s[a] over every patch a but r, added in the order of
 * a in long double, as R's colSums() of (1 - diag(P)) * s adds them (its
 * zero term changes no sum), so both give the same numbers bit for bit.
 * The replicates' normalisers are made of these. */
void wt_jackknife_sums(const double *s, int P, double *o)
{
  /* whole numbers whose sum is below 2^53 (point counts): every partial
   * sum is exact, so the total less s[r] is the same number, in O(P) */
  double total = 0.0;
  int whole = 1;
  for (int a = 0; a < P && whole; a++) {
    whole = s[a] >= 0.0 && s[a] == floor(s[a]);
    total += s[a];
  }
  if (whole && total < 0x1p53) {
    for (int r = 0; r < P; r++) o[r] = total - s[r];
    return;
  }
  for (int r = 0; r < P; r++) {
    long double acc = 0.0L;
    for (int a = 0; a < P; a++)
      if (a != r) acc += s[a];
    o[r] = (double)acc;
  }
}

typedef struct {
  const double *d;
  int64_t n, k;
  double scale;
  double *o;
} row_products_ctx;

/* columns [lo, hi) of wt_row_products(): each column's entries i <= j */
static void row_products(void *arg, int64_t lo, int64_t hi, int tid)
{
  const row_products_ctx *c = (const row_products_ctx *)arg;
  const double *d = c->d;
  const int64_t n = c->n, k = c->k;
  const double scale = c->scale;
  (void)tid;
  for (int64_t j = lo; j < hi; j++) {
    double *restrict oj = c->o + j * n;
    for (int64_t i = 0; i <= j; i++) oj[i] = 0.0;
    int64_t l = 0;
    /* four columns of d a pass over oj, added one after another */
    for (; l + 4 <= k; l += 4) {
      const double *restrict d0 = d + l * n, *restrict d1 = d0 + n,
                             *restrict d2 = d1 + n, *restrict d3 = d2 + n;
      const double t0 = d0[j], t1 = d1[j], t2 = d2[j], t3 = d3[j];
#ifdef _OPENMP
#pragma omp simd
#endif
      for (int64_t i = 0; i <= j; i++) {
        double v = oj[i];
        v += t0 * d0[i];
        v += t1 * d1[i];
        v += t2 * d2[i];
        v += t3 * d3[i];
        oj[i] = v;
      }
    }
    for (; l < k; l++) {
      const double *restrict dl = d + l * n;
      const double t = dl[j];
      for (int64_t i = 0; i <= j; i++) oj[i] += t * dl[i];
    }
    for (int64_t i = 0; i <= j; i++) oj[i] *= scale;
  }
}

/* The products of the rows of d (n rows, k columns, column-major):
 * o[i + j n] = scale * sum_l d[i + l n] d[j + l n], an n x n symmetric
 * matrix. Each entry sums its k products in the order of l, whatever T,
 * so a block of rows gives the same numbers as a matrix of those rows
 * alone (a joint covariance's diagonal blocks are the correlations' own,
 * bit for bit). Columns j on T threads; each column's entries i <= j
 * side by side, then mirrored. */
void wt_row_products(const double *d, int64_t n, int64_t k, double scale,
                     double *o, int T)
{
  row_products_ctx c = {d, n, k, scale, o};
  wt_team_for(T, n, 4, row_products, &c);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = j + 1; i < n; i++) o[i + j * n] = o[j + i * n];
}

/* Jackknife replicate counts from a patch array S (P x P x n_bins, the
 * layout of wt_patch_array), as wt_jackknife_margins from its margins;
 * scratch: (3 P + 1) nb doubles */
void wt_jackknife_counts(const double *S, int P, int nb, int is_auto,
                         const double *norm, double *scratch, double *o)
{
  double *rows = scratch, *cols = rows + (size_t)P * nb,
         *diag = cols + (size_t)P * nb, *total = diag + (size_t)P * nb;
  wt_patch_margins(S, NULL, NULL, NULL, P, nb, is_auto, rows, cols, diag,
                   total);
  wt_jackknife_margins(rows, cols, diag, total, P, nb, is_auto, norm, o);
}

typedef struct {
  const int *lab;
  int64_t n, *part;
  int P, T;
} block_counts_ctx;

/* blocks [lo, hi) of block_starts(): the points of each patch in block b
 * into part[b P + k] */
static void block_counts(void *arg, int64_t lo, int64_t hi, int tid)
{
  const block_counts_ctx *c = (const block_counts_ctx *)arg;
  const int64_t n = c->n, T = c->T;
  (void)tid;
  for (int64_t b = lo; b < hi; b++) {
    int64_t *cb = c->part + (size_t)b * (size_t)c->P;
    memset(cb, 0, (size_t)c->P * sizeof *cb);
    const int64_t i0 = n * b / T, i1 = n * (b + 1) / T;
    for (int64_t i = i0; i < i1; i++) cb[c->lab[i] - 1]++;
  }
}

/* The first pass of a stable counting sort by label (1..P) on T threads:
 * block b holds points [n b / T, n (b + 1) / T); part[b P + k] becomes
 * where its first point of patch k + 1 goes (after those of the blocks
 * before it, so the order is the serial one), cnt[k] the points of patch
 * k + 1 */
static void block_starts(const int *lab, int64_t n, int P, int T,
                         int64_t *part, int *cnt)
{
  block_counts_ctx c = {lab, n, part, P, T};
  wt_team_for(T, T, 1, block_counts, &c);
  int64_t run = 0;
  for (int k = 0; k < P; k++) {
    int64_t in_k = 0;
    for (int b = 0; b < T; b++) {
      int64_t m = part[(size_t)b * (size_t)P + k];
      part[(size_t)b * (size_t)P + k] = run + in_k;
      in_k += m;
    }
    cnt[k] = (int)in_k;
    run += in_k;
  }
}

typedef struct {
  const double *x, *y, *z, *wv;
  const int *lab;
  int64_t n, *part;
  int P, T;
  double *ox, *oy, *oz, *ow;
  int *ol;
} group_blocks_ctx;

/* blocks [lo, hi) of wt_group_by_label(): block b's points to their
 * places, from part[b P + k] on for patch k + 1 */
static void group_blocks(void *arg, int64_t lo, int64_t hi, int tid)
{
  const group_blocks_ctx *g = (const group_blocks_ctx *)arg;
  const int64_t n = g->n, T = g->T;
  const int *lab = g->lab;
  (void)tid;
  for (int64_t b = lo; b < hi; b++) {
    int64_t *c = g->part + (size_t)b * (size_t)g->P;
    const int64_t i0 = n * b / T, i1 = n * (b + 1) / T;
    for (int64_t i = i0; i < i1; i++) {
      int64_t j = c[lab[i] - 1]++;
      g->ox[j] = g->x[i];
      g->oy[j] = g->y[i];
      g->oz[j] = g->z[i];
      g->ol[j] = lab[i];
      if (g->wv) g->ow[j] = g->wv[i];
    }
  }
}

/* A stable counting sort of n points by label (1..P, already checked):
 * cnt (P values) gets the points per patch, and ox, oy, oz, ol (and ow
 * when wv is given) the points in patch order; at is scratch of P values.
 * On n_threads > 1 each thread counts, then places, a contiguous block of
 * the points; a block's points of a patch go after those of the blocks
 * before it, so the order is the serial one. Without memory for the
 * threads' counts it runs serially. */
void wt_group_by_label(const double *x, const double *y, const double *z,
                       const int *lab, const double *wv, int64_t n, int P,
                       int *cnt, int64_t *at, double *ox, double *oy,
                       double *oz, int *ol, double *ow, int n_threads)
{
  const int T = n_threads;
  int64_t *part = T > 1 ? wt_alloc_big((size_t)T * (size_t)P * sizeof *part)
                        : NULL;
  if (!part) {
    memset(cnt, 0, (size_t)P * sizeof *cnt);
    for (int64_t i = 0; i < n; i++) cnt[lab[i] - 1]++;
    int64_t run = 0;
    for (int k = 0; k < P; k++) {
      at[k] = run;
      run += cnt[k];
    }
    for (int64_t i = 0; i < n; i++) {
      int64_t j = at[lab[i] - 1]++;
      ox[j] = x[i];
      oy[j] = y[i];
      oz[j] = z[i];
      ol[j] = lab[i];
      if (wv) ow[j] = wv[i];
    }
    return;
  }
  block_starts(lab, n, P, T, part, cnt);
  group_blocks_ctx g = {x, y, z, wv, lab, n, part, P, T, ox, oy, oz, ow, ol};
  wt_team_for(T, T, 1, group_blocks, &g);
  free(part);
}

typedef struct {
  int64_t *part, n;
  int P, T;
  int *ol;
} label_places_ctx;

/* blocks [lo, hi) of wt_patch_vectors(): each label replaced by where its
 * point goes, from part[b P + j] on for patch j + 1 in block b */
static void label_places(void *arg, int64_t lo, int64_t hi, int tid)
{
  const label_places_ctx *p = (const label_places_ctx *)arg;
  const int64_t n = p->n, T = p->T;
  int *ol = p->ol;
  (void)tid;
  for (int64_t b = lo; b < hi; b++) {
    int64_t *c = p->part + (size_t)b * (size_t)p->P;
    const int64_t i0 = n * b / T, i1 = n * (b + 1) / T;
    for (int64_t i = i0; i < i1; i++) ol[i] = (int)c[ol[i] - 1]++;
  }
}

typedef struct {
  const double *src;
  const int *place;
  double *col, *dst;
} column_move_ctx;

/* points [lo, hi) of a column copied aside */
static void column_aside(void *arg, int64_t lo, int64_t hi, int tid)
{
  const column_move_ctx *m = (const column_move_ctx *)arg;
  (void)tid;
  for (int64_t i = lo; i < hi; i++) m->col[i] = m->src[i];
}

/* points [lo, hi) of the column aside scattered back to their places */
static void column_back(void *arg, int64_t lo, int64_t hi, int tid)
{
  const column_move_ctx *m = (const column_move_ctx *)arg;
  (void)tid;
  for (int64_t i = lo; i < hi; i++) m->dst[m->place[i]] = m->col[i];
}

typedef struct {
  const int64_t *first;
  const int *cnt;
  int *ol;
} label_fill_ctx;

/* patches [lo, hi): cnt[j] labels j + 1 from first[j] on */
static void label_fill(void *arg, int64_t lo, int64_t hi, int tid)
{
  const label_fill_ctx *f = (const label_fill_ctx *)arg;
  (void)tid;
  for (int64_t j = lo; j < hi; j++)
    for (int64_t a = f->first[j], e = a + f->cnt[j]; a < e; a++)
      f->ol[a] = (int)j + 1;
}

/* A catalog's unit vectors grouped by nearest centre with one column of
 * scratch: the unit vectors and labels go into the outputs in catalog
 * order, each label is replaced by where its point goes (the order of
 * wt_group_by_label: stable, the same on any number of threads), each
 * column in turn is copied aside and scattered back to those places, and
 * the labels are written from the counts. ra, dec in degrees; weights wv
 * (or NULL) into ow; k centres; cnt (k values) gets the points per patch;
 * n at most INT_MAX. Returns WT_OK, or WT_ERR_NOMEM with the outputs
 * undefined. */
int wt_patch_vectors(const double *ra, const double *dec, const double *wv,
                     int64_t n, const double *cx, const double *cy,
                     const double *cz, int k, int *cnt, double *ox,
                     double *oy, double *oz, int *ol, double *ow,
                     int n_threads)
{
  const int T = n_threads > 0 ? n_threads : 1, P = k;
  /* part[b P + j]: where block b's next point of patch j + 1 goes */
  int64_t *part = wt_alloc_big((size_t)T * (size_t)P * sizeof *part);
  double *col = wt_alloc_big((size_t)(n > 0 ? n : 1) * sizeof *col);
  if (!part || !col) {
    free(part);
    free(col);
    return WT_ERR_NOMEM;
  }
  wt_unit_vectors(ra, dec, n, ox, oy, oz, T);
  wt_nearest_centre(ox, oy, oz, n, cx, cy, cz, k, ol, T);
  block_starts(ol, n, P, T, part, cnt);
  label_places_ctx lp = {part, n, P, T, ol};
  wt_team_for(T, T, 1, label_places, &lp);
  /* each column copied aside and scattered back by all the threads (a
   * serial memcpy() of each column, the first also faulting in the
   * scratch, and the serial label fill below took about half of the call
   * on 32 threads at 10^8 points) */
  double *cols[4] = {ox, oy, oz, ow};
  for (int q = 0; q < (wv ? 4 : 3); q++) {
    double *dst = cols[q];
    const double *src = q < 3 ? dst : wv;
    /* two teams, the first done before the second starts: a point goes
     * anywhere in its column, over a value (of x, y, z) that another
     * thread may not have copied aside yet */
    column_move_ctx m = {src, ol, col, dst};
    wt_team_for(T, n, 0, column_aside, &m);
    wt_team_for(T, n, 0, column_back, &m);
  }
  /* the labels in patch order: cnt[j] times j + 1, a patch per thread at
   * a time from its first place (part's first P values, free now) */
  int64_t at = 0;
  for (int j = 0; j < P; j++) {
    part[j] = at;
    at += cnt[j];
  }
  label_fill_ctx f = {part, cnt, ol};
  wt_team_for(T, P, 1, label_fill, &f);
  free(part);
  free(col);
  return WT_OK;
}
