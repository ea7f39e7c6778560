/* Labelled counts (wt_job.n_lab, wt.h; issue 33): wtheta_multi() counts
 * the pairs of S samples as one catalog whose points carry their sample's
 * label, each pair into the histogram of its two labels. The engine
 * (cpu/) routes the pairs it visits; the dispatcher (count.c) checks the
 * job here first and, after the engine, folds the diagonal blocks and
 * fills the last slot.
 *
 * Why the last slot is filled here: the grid prunes node pairs beyond the
 * last edge and counts them in bulk per task histogram, not per label
 * pair (a node's labels are mixed). A labelled job is walked without bulk
 * counts inside a bin (node pairs inside one bin become tasks of one slot
 * on the CPU, which the engine adds by label, grid_policy.c) and those
 * beyond the last edge are dropped (still reported in pairs_skipped);
 * every pair of a histogram lies in one of its slots,
 * so slot n_bins + 1 is the histogram's total, from the label counts of
 * its task's ranges, less its other slots. Counted without a grid, the
 * engine's own count there is the same number.
 *
 * Why the fold: in an auto job, a diagonal task (a0 == b0) counts the
 * pairs i < j of one range, where the order of i and j says nothing, and
 * the grid's node pairs reorder them anyway; so in the histograms of a
 * block `out` holding a diagonal task, (s, t) and (t, s), s < t, are one
 * label pair: both add into (s, t) and (t, s) becomes 0. The totals are
 * folded alike, so a block that also held tasks of two disjoint ranges
 * would stay consistent (wt_r_patch_plan() in r/patches.c makes none
 * such). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"
#include "labels.h"
#include "floor/pages.h"

static int refuse(wt_job *job, const char *why)
{
  snprintf(job->message, sizeof job->message,
           "labelled counts (n_lab = %d) %s", job->n_lab, why);
  return WT_ERR_ARG;
}

/* the first label of p outside [0, n_lab), or -1 */
static int64_t bad_label(const wt_points *p, int n_lab)
{
  for (int64_t i = 0; i < p->n; i++)
    if (p->lab[i] < 0 || p->lab[i] >= n_lab) return i;
  return -1;
}

int wt_labels_check(wt_job *job)
{
  if (job->n_lab < 0) return refuse(job, "need n_lab >= 0");
  if (job->n_lab == 0) return WT_OK;
  if (job->backend != WT_BACKEND_CPU)
    return refuse(job, "run on the CPU engine only, not this backend");
  if (job->pip) return refuse(job, "cannot carry PIP pair weights (pip)");
  if (job->thsum)
    return refuse(job, "cannot sum angles (thsum, mean_theta)");
  if (job->self_pairs) return refuse(job, "cannot add self pairs");
  if (!job->a.lab) return refuse(job, "need labels on catalog a");
  /* b's labels, when given, are checked in a cross job only (an auto job
   * reads a's on both sides) */
  const wt_points *side[2] = {&job->a, job->is_auto ? NULL : &job->b};
  for (int k = 0; k < 2; k++) {
    if (!side[k] || !side[k]->lab) continue;
    int64_t i = bad_label(side[k], job->n_lab);
    if (i >= 0) {
      snprintf(job->message, sizeof job->message,
               "labelled counts: catalog %c's point %lld (from 1) has "
               "label %d, outside [0, %d)", k ? 'b' : 'a', (long long)i + 1,
               (int)side[k]->lab[i], job->n_lab);
      return WT_ERR_ARG;
    }
  }
  int la, lb;
  wt_labels_sizes(job, &la, &lb);
  const int64_t per_task = (int64_t)la * lb;   /* up to 2^40: no int */
  if (per_task > job->n_out || job->n_out % per_task != 0) {
    snprintf(job->message, sizeof job->message,
             "labelled counts: n_out = %d is not the tasks' histograms "
             "times La Lb = %d x %d", job->n_out, la, lb);
    return WT_ERR_ARG;
  }
  return WT_OK;
}

/* per-label sums over distinct ranges of one catalog */
typedef struct {
  int64_t *r;              /* m sorted distinct [start, end) pairs */
  int64_t m;
  int n_lab;               /* labels per range (1: the side has none) */
  uint64_t *n;             /* m x n_lab points */
  double *w, *w2;          /* m x n_lab sums of weights and squares, or
                              NULL (unweighted) */
} range_sums;

static void range_sums_free(range_sums *s)
{
  free(s->r);
  free(s->n);
  free(s->w);
  free(s->w2);
}

/* the distinct non-empty ranges of side 0 (a), 1 (b) or 2 (both, an auto
 * job) of the tasks, sorted, and their sums over p */
static int range_sums_make(const wt_job *job, int side, const wt_points *p,
                           int n_lab, range_sums *s)
{
  memset(s, 0, sizeof *s);
  const int64_t nt = job->n_tasks;
  s->r = wt_alloc_big((size_t)(2 * nt > 0 ? 2 * nt : 1) * 2 * sizeof *s->r);
  if (!s->r) return WT_ERR_NOMEM;
  int64_t k = 0;
  for (int64_t i = 0; i < nt; i++) {
    const wt_task *t = &job->tasks[i];
    if (side != 1 && t->a0 < t->a1) {
      s->r[2 * k] = t->a0;
      s->r[2 * k + 1] = t->a1;
      k++;
    }
    if (side != 0 && t->b0 < t->b1) {
      s->r[2 * k] = t->b0;
      s->r[2 * k + 1] = t->b1;
      k++;
    }
  }
  qsort(s->r, (size_t)k, 2 * sizeof *s->r, wt_range_cmp);
  int64_t m = 0;
  for (int64_t i = 0; i < k; i++)
    if (m == 0 || s->r[2 * i] != s->r[2 * m - 2] ||
        s->r[2 * i + 1] != s->r[2 * m - 1]) {
      s->r[2 * m] = s->r[2 * i];
      s->r[2 * m + 1] = s->r[2 * i + 1];
      m++;
    }
  s->m = m;
  s->n_lab = n_lab;
  const size_t cells = (size_t)(m > 0 ? m : 1) * (size_t)n_lab;
  s->n = wt_calloc_big(cells, sizeof *s->n);
  if (p->w) {
    s->w = wt_calloc_big(cells, sizeof *s->w);
    s->w2 = wt_calloc_big(cells, sizeof *s->w2);
  }
  if (!s->n || (p->w && (!s->w || !s->w2))) return WT_ERR_NOMEM;
  for (int64_t j = 0; j < m; j++) {
    const size_t at = (size_t)j * (size_t)n_lab;
    for (int64_t i = s->r[2 * j]; i < s->r[2 * j + 1]; i++) {
      const size_t c = at + (size_t)(n_lab > 1 ? p->lab[i] : 0);
      s->n[c]++;
      if (p->w) {
        s->w[c] += p->w[i];
        s->w2[c] += p->w[i] * p->w[i];
      }
    }
  }
  return WT_OK;
}

/* the index of range [r0, r1) in s (it is there: the tasks made s) */
static int64_t range_at(const range_sums *s, int64_t r0, int64_t r1)
{
  int64_t lo = 0, hi = s->m;
  const int64_t key[2] = {r0, r1};
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (wt_range_cmp(&s->r[2 * mid], key) < 0) lo = mid + 1; else hi = mid;
  }
  return lo;
}

int wt_labels_finish(wt_job *job)
{
  int la, lb;
  wt_labels_sizes(job, &la, &lb);
  const int n_slots = job->bins->n_bins + 2, last = n_slots - 1;
  const int n_hist = job->n_out;
  const int n_blocks = n_hist / (la * lb);
  const int weighted = job->wsum != NULL;
  range_sums sa, sb;
  memset(&sb, 0, sizeof sb);
  uint64_t *tot_n = wt_calloc_big((size_t)n_hist, sizeof *tot_n);
  double *tot_w =
    weighted ? wt_calloc_big((size_t)n_hist, sizeof *tot_w) : NULL;
  /* per block: 1 when a task counts into it, 2 when a diagonal one does */
  char *diag = wt_calloc_big((size_t)n_blocks, 1);
  int status = tot_n && diag && (!weighted || tot_w) ? WT_OK : WT_ERR_NOMEM;
  if (status == WT_OK)
    status = range_sums_make(job, job->is_auto ? 2 : 0, &job->a, la, &sa);
  else
    memset(&sa, 0, sizeof sa);
  if (status == WT_OK && !job->is_auto)
    status = range_sums_make(job, 1, &job->b, lb, &sb);
  const range_sums *pb = job->is_auto ? &sa : &sb;
  /* each task's totals into its histograms */
  for (int64_t k = 0; k < job->n_tasks && status == WT_OK; k++) {
    const wt_task *t = &job->tasks[k];
    if (t->a0 == t->a1 || t->b0 == t->b1) continue;
    const size_t ia = (size_t)range_at(&sa, t->a0, t->a1) * (size_t)la;
    const size_t ib = (size_t)range_at(pb, t->b0, t->b1) * (size_t)lb;
    const size_t h0 = (size_t)t->out * (size_t)la * (size_t)lb;
    const int is_diag = job->is_auto && t->a0 == t->b0;
    if (is_diag) diag[t->out] = 2;
    else if (!diag[t->out]) diag[t->out] = 1;
    for (int s = 0; s < la; s++)
      for (int u = 0; u < lb; u++) {
        const size_t h = h0 + (size_t)s * (size_t)lb + (size_t)u;
        const uint64_t ns = sa.n[ia + s], nu = pb->n[ib + u];
        if (!is_diag) {
          tot_n[h] += ns * nu;
          if (weighted) tot_w[h] += sa.w[ia + s] * pb->w[ib + u];
        } else if (s == u) {
          /* the pairs i < j of one label in one range */
          tot_n[h] += ns * (ns - (ns > 0)) / 2;
          if (weighted)
            tot_w[h] += (sa.w[ia + s] * sa.w[ia + s] - sa.w2[ia + s]) / 2.0;
        } else if (s < u) {
          tot_n[h] += ns * nu;
          if (weighted) tot_w[h] += sa.w[ia + s] * sa.w[ia + u];
        }
      }
  }
  /* the fold of blocks with a diagonal task (the totals alike) */
  for (int o = 0; o < n_blocks && status == WT_OK; o++) {
    if (diag[o] != 2) continue;
    const size_t h0 = (size_t)o * (size_t)la * (size_t)lb;
    for (int s = 0; s < la; s++)
      for (int u = s + 1; u < lb; u++) {
        const size_t hst = h0 + (size_t)s * (size_t)lb + (size_t)u,
                     hts = h0 + (size_t)u * (size_t)lb + (size_t)s;
        uint64_t *cst = job->slots + hst * (size_t)n_slots,
                 *cts = job->slots + hts * (size_t)n_slots;
        for (int q = 0; q < n_slots; q++) {
          cst[q] += cts[q];
          cts[q] = 0;
        }
        if (weighted) {
          double *wst = job->wsum + hst * (size_t)n_slots,
                 *wts = job->wsum + hts * (size_t)n_slots;
          for (int q = 0; q < n_slots; q++) {
            wst[q] += wts[q];
            wts[q] = 0.0;
          }
          tot_w[hst] += tot_w[hts];
          tot_w[hts] = 0.0;
        }
        tot_n[hst] += tot_n[hts];
        tot_n[hts] = 0;
      }
  }
  /* slot n_bins + 1: the total less the other slots, in the blocks that
   * tasks count into (the others stay 0, untouched: an auto count with
   * patches has blocks for p <= q only) */
  for (int h = 0; h < n_hist && status == WT_OK; h++) {
    if (!diag[h / (la * lb)]) continue;
    uint64_t *c = job->slots + (size_t)h * (size_t)n_slots;
    uint64_t in = 0;
    for (int q = 0; q < last; q++) in += c[q];
    if (in > tot_n[h]) {
      snprintf(job->message, sizeof job->message,
               "labelled counts: histogram %d holds %llu pairs below the "
               "last edge, more than its ranges' %llu", h,
               (unsigned long long)in, (unsigned long long)tot_n[h]);
      status = WT_ERR_ARG;
      break;
    }
    c[last] = tot_n[h] - in;
    if (weighted) {
      double *w = job->wsum + (size_t)h * (size_t)n_slots, win = 0.0;
      for (int q = 0; q < last; q++) win += w[q];
      w[last] = tot_w[h] - win;
    }
  }
  range_sums_free(&sa);
  range_sums_free(&sb);
  free(tot_n);
  free(tot_w);
  free(diag);
  return status;
}
