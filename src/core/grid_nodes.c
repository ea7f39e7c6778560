/* The node pairs of the grid's walk (grid_nodes.h): what the walk of one
 * task at a time (grid_walk.c) and the grouped walk (grid_groups.c) share:
 * the test of a pair of nodes, which counts it in bulk, hands it to the
 * engine as a task or splits it; the window of cells within reach of a
 * cell; the walk's lists of tasks and bulk counts, and the joining of the
 * parallel units' lists in unit order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"
#include "grid_nodes.h"
#include "floor/slots.h"
#include "floor/team.h"
#include "floor/pages.h"

static double clamp1(double v) { return v > 1.0 ? 1.0 : v < -1.0 ? -1.0 : v; }


/* room for at least `need` tasks */
static int reserve(walk *wk, int64_t need)
{
  if (need <= wk->cap_tasks) return WT_OK;
  int64_t cap = wk->cap_tasks ? 2 * wk->cap_tasks : 1024;
  if (cap < need) cap = need;
  wt_task *t = wt_realloc_big(wk->t, (size_t)cap * sizeof *t);
  if (!t) return WT_ERR_NOMEM;
  wk->t = t;
  wk->cap_tasks = cap;
  return WT_OK;
}

/* a task of one known slot */
static int one_slot(const wt_task *t)
{
  return t->shi > 0 && t->slo == t->shi;
}

/* Extends task l by t when t has l's rows and histogram and its columns
 * start where l's end (the next cell of a band, whose points follow in
 * the sorted catalog), neither being a diagonal task (a0 == b0): b stays
 * after a. The slot range becomes the union (unknown if either is).
 * fixed (WT_WALK_FIXED): a task of one slot merges only with one of the
 * same slot, so stays one. Returns 1 when merged. Sparse catalogs, whose
 * cells hold a few points, would otherwise make a task of a few pairs per
 * cell pair. */
int wt_walk_merge_task(wt_task *l, const wt_task *t, int fixed)
{
  if (l->out != t->out || l->a0 != t->a0 || l->a1 != t->a1 ||
      l->b1 != t->b0 || l->a0 == l->b0 || t->a0 == t->b0)
    return 0;
  if (fixed && (one_slot(l) || one_slot(t)) &&
      (l->slo != t->slo || l->shi != t->shi))
    return 0;
  l->b1 = t->b1;
  int known = l->shi > 0 && t->shi > 0;
  l->slo = (int16_t)(known ? (t->slo < l->slo ? t->slo : l->slo) : 0);
  l->shi = (int16_t)(known ? (t->shi > l->shi ? t->shi : l->shi) : 0);
  return 1;
}

static int push(walk *wk, int64_t a0, int64_t a1, int64_t b0, int64_t b1,
                int32_t out, int slo, int shi)
{
  wt_task t = {.a0 = a0, .a1 = a1, .b0 = b0, .b1 = b1, .out = out};
  /* the slot range, when it fits (shi == 0: unknown) */
  int known = slo >= 0 && shi > 0 && shi <= INT16_MAX;
  t.slo = (int16_t)(known ? slo : 0);
  t.shi = (int16_t)(known ? shi : 0);
  if (wk->n_tasks > 0 &&
      wt_walk_merge_task(&wk->t[wk->n_tasks - 1], &t, wk->fixed))
    return WT_OK;
  if (wk->n_tasks == wk->cap_tasks) {
    int status = reserve(wk, wk->n_tasks + 1);
    if (status != WT_OK) return status;
  }
  wk->t[wk->n_tasks++] = t;
  return WT_OK;
}

/* the slots of the least and greatest d2 a node pair can hold, with
 * margins that dwarf the rounding of d2 (relative, a few 1e-16) */
static void slot_range(const walk *wk, double lo2, double hi2, int *slo,
                       int *shi)
{
  /* slot = number of bounds upper[0..n_slots - 2] at or below the value:
   * wt_slot_of(), by the bins' table (slot_of(): the same slot for every
   * value, in a lookup and a step or two instead of two binary searches) */
  *slo = slot_of(wk->bins, lo2 * (1.0 - 1e-9));
  *shi = slot_of(wk->bins, hi2 * (1.0 + 1e-9) + 1e-300);
}

int wt_walk_add_bulk(walk *wk, int32_t out, int slot, double n, double w)
{
  if (wk->bulk_n == NULL) {
    if (wk->n_e == wk->cap_e) {
      int64_t cap = wk->cap_e ? 2 * wk->cap_e : 256;
      bulk_entry *e = wt_realloc_big(wk->e, (size_t)cap * sizeof *e);
      if (!e) return WT_ERR_NOMEM;
      wk->e = e;
      wk->cap_e = cap;
    }
    bulk_entry *e = &wk->e[wk->n_e++];
    e->out = out;
    e->slot = slot;
    e->n = n;
    e->w = w;
    return WT_OK;
  }
  size_t at = (size_t)(out - wk->out0) * (size_t)wk->n_slots + (size_t)slot;
  wk->bulk_n[at] += n;
  wk->bulk_w[at] += w;
  return WT_OK;
}


/* the pairs between node ia of A and node ib of B (the same node of the
 * same tree when diag: its unordered pairs); root: a pair of cell roots,
 * which returns WALK_BEYOND instead of a bulk entry beyond the last edge */
int wt_walk_pair_nodes(walk *wk, const range_tree *A, int64_t ia,
                       const range_tree *B, int64_t ib, int diag,
                       int32_t out, int root)
{
  const node *a = &A->nodes[ia], *b = &B->nodes[ib];
  double na = (double)(a->end - a->start), nb = (double)(b->end - b->start);
  double pairs = diag ? na * (na - 1.0) / 2.0 : na * nb;
  if (pairs == 0.0) return WT_OK;
  double lo, hi;                      /* chords */
  if (diag) {
    lo = 0.0;
    hi = 2.0 * a->r;
  } else {
    double s = chord(a->c, b->c);
    lo = fmax(0.0, s - a->r - b->r);
    hi = s + a->r + b->r;
  }
  int slo, shi;
  const int above = wk->n_slots - 1;
  /* beyond the last edge (most root pairs of a window): the slots that
   * slot_range() would find, without its two searches */
  if (beyond_last_edge(wk, lo))
    slo = shi = above;
  else
    slot_range(wk, lo * lo, hi * hi, &slo, &shi);
  const int slot = slo;
  if (slo == shi && (wk->bulk || slot == above)) {
    if (root && slot == above) return WALK_BEYOND;
    /* WT_WALK_FIXED: a task of that slot; below the first edge (slot 0)
     * too, as a task of unknown slots (the weight sums keep slot 0) */
    if (wk->fixed && slot != above)
      return diag ? push(wk, a->start, a->end, a->start, a->end, out, slo, shi)
                  : push(wk, a->start, a->end, b->start, b->end, out, slo,
                         shi);
    double w = diag ? (a->w * a->w - a->w2) / 2.0 : a->w * b->w;
    return wt_walk_add_bulk(wk, out, slot, pairs, w);
  }
  int a_leaf = a->child[0] < 0 && a->child[1] < 0 && a->child[2] < 0 &&
               a->child[3] < 0;
  int b_leaf = b->child[0] < 0 && b->child[1] < 0 && b->child[2] < 0 &&
               b->child[3] < 0;
  /* split while it may prune, or while nodes a quarter the size would lie
   * inside one bin (bulk counting two levels down) */
  int hopeful = 0;
  if (wk->bulk && !diag && pairs > wk->min_bulk) {
    double s = chord(a->c, b->c), q = (a->r + b->r) / 4.0;
    int qlo, qhi;
    slot_range(wk, fmax(0.0, s - q) * fmax(0.0, s - q), (s + q) * (s + q),
               &qlo, &qhi);
    hopeful = qlo == qhi;
  }
  int split = !(a_leaf && b_leaf) &&
              (hopeful || (pairs > wk->min_split && shi == above));
  if (!split) {
    if (diag)
      return push(wk, a->start, a->end, a->start, a->end, out, slo, shi);
    return push(wk, a->start, a->end, b->start, b->end, out, slo, shi);
  }
  int status = WT_OK;
  if (diag) {
    for (int i = 0; i < 4 && status == WT_OK; i++) {
      if (a->child[i] < 0) continue;
      for (int j = i; j < 4 && status == WT_OK; j++) {
        if (a->child[j] < 0) continue;
        status = wt_walk_pair_nodes(wk, A, a->child[i], A, a->child[j],
                                    i == j, out, 0);
      }
    }
    return status;
  }
  if (!a_leaf && (b_leaf || na >= nb)) {
    for (int i = 0; i < 4 && status == WT_OK; i++)
      if (a->child[i] >= 0)
        status = wt_walk_pair_nodes(wk, A, a->child[i], B, ib, 0, out, 0);
  } else {
    for (int j = 0; j < 4 && status == WT_OK; j++)
      if (b->child[j] >= 0)
        status = wt_walk_pair_nodes(wk, A, ia, B, b->child[j], 0, out, 0);
  }
  return status;
}

/* Calls visit(ctx, id) for the id of every cell of g that may hold a
 * point within reach of the cap of node ca, found by band and a window in
 * right ascension (every other cell lies beyond reach), in band order and
 * within a band in right ascension order; stops at the first status that
 * is not WT_OK and returns it. */

int wt_walk_window_cells(const grid_shape *g, const node *ca, double reach,
                         cell_fn visit, void *ctx)
{
  double dec_a = asin(clamp1(ca->c[2]));
  double ra_a = atan2(ca->c[1], ca->c[0]);
  double far = reach + ca->ang;
  /* only the bands that can pass the test below, with a band to spare on
   * either side for rounding: a loop over every band cost 60% of a count
   * of 10^6 points with a last edge of 0.01 degree (9,000 bands) */
  const double x0 = floor(((dec_a - far) / DEG + 90.0) / g->h) - 1.0;
  const double x1 = floor(((dec_a + far) / DEG + 90.0) / g->h) + 1.0;
  const int b0 = x0 > 0.0 ? (x0 < g->n_bands ? (int)x0 : g->n_bands) : 0;
  const int b1 = x1 < g->n_bands - 1.0 ? (x1 > 0.0 ? (int)x1 : 0)
                                       : g->n_bands - 1;
  for (int band = b0; band <= b1; band++) {
    double d0 = (-90.0 + band * g->h) * DEG, d1 = d0 + g->h * DEG;
    if (d1 > M_PI / 2) d1 = M_PI / 2;
    if (dec_a - far > d1 || dec_a + far < d0) continue;
    double dmax = fmax(fabs(d0), fabs(d1));
    int nr = g->n_ra[band];
    int64_t lo = 0, hi = nr - 1;
    double s = cos(dmax) > 0 ? sin(fmin(far, M_PI / 2)) / cos(dmax) : 2.0;
    if (far < M_PI / 2 && s < 1.0) {
      /* a point within far of a's centre differs from it in right
       * ascension by at most asin(sin(far) / cos(dec)) */
      double half = asin(s), cw = 2.0 * M_PI / nr;
      lo = (int64_t)floor((ra_a - half) / cw) - 1;
      hi = (int64_t)floor((ra_a + half) / cw) + 1;
      if (hi - lo + 1 >= nr) {
        lo = 0;
        hi = nr - 1;
      }
    }
    for (int64_t k = lo; k <= hi; k++) {
      int st = visit(ctx, g->first[band] + ((k % nr) + nr) % nr);
      if (st != WT_OK) return st;
    }
  }
  return WT_OK;
}

/* points and weight of the cells of tree tr, in all */
void wt_walk_tree_totals(const range_tree *tr, double *n, double *w)
{
  *n = *w = 0.0;
  for (int64_t j = 0; j < tr->n_cells; j++) {
    const node *c = &tr->nodes[tr->root_of[j]];
    *n += (double)(c->end - c->start);
    *w += c->w;
  }
}

/* points and weight of the cells of tree tr before each cell: before[2 i]
 * and before[2 i + 1] for cell i */
void wt_walk_cells_before(const range_tree *tr, double *before)
{
  double bn = 0, bw = 0;
  for (int64_t i = 0; i < tr->n_cells; i++) {
    const node *c = &tr->nodes[tr->root_of[i]];
    before[2 * i] = bn;
    before[2 * i + 1] = bw;
    bn += (double)(c->end - c->start);
    bw += c->w;
  }
}


/* A task as tasks of node pairs and bulk counts. Runs of WALK_CHUNK cells
 * of A walk in parallel, each into its own task list and slot sums, which
 * are then joined in cell order: the same task list as one walk over all
 * cells. */

/* With a sink the parallel walks go in about WALK_ROUNDS rounds, each fed
 * to the sink before the next (the engine gets its first tasks after a
 * round's walk, not the whole walk's); without one, in one */
#define WALK_ROUNDS 32

int64_t wt_walk_round_len(const walk *wk, int64_t n)
{
  int64_t r = wk->sink ? (n + WALK_ROUNDS - 1) / WALK_ROUNDS : n;
  return r > 0 ? r : 1;
}

/* the tasks of parts[0, m) appended to wk's in part order (copied in
 * parallel: a walk at survey sizes makes millions of tasks), the parts'
 * lists freed; with a sink, wk's tasks are then fed to it and dropped */
typedef struct {
  walk *wk;
  const walk *parts;
  const int64_t *at;
} join_copy;

static void copy_parts(void *v, int64_t c0, int64_t c1, int tid)
{
  const join_copy *J = (const join_copy *)v;
  (void)tid;
  for (int64_t c = c0; c < c1; c++)
    if (J->parts[c].n_tasks > 0)
      memcpy(J->wk->t + J->at[c], J->parts[c].t,
             (size_t)J->parts[c].n_tasks * sizeof *J->wk->t);
}

int wt_walk_join_parts(walk *wk, walk *parts, int64_t m, int n_threads)
{
  int64_t total = wk->n_tasks;
  for (int64_t c = 0; c < m; c++) total += parts[c].n_tasks;
  int status = reserve(wk, total);
  int64_t *at = status == WT_OK ? wt_alloc_big((size_t)(m + 1) * sizeof *at)
                                : NULL;
  if (status == WT_OK && !at) status = WT_ERR_NOMEM;
  if (status == WT_OK) {
    at[0] = wk->n_tasks;
    for (int64_t c = 0; c < m; c++) at[c + 1] = at[c] + parts[c].n_tasks;
    join_copy J = {wk, parts, at};
    wt_team_for(n_threads, m, 16, copy_parts, &J);
    wk->n_tasks = total;
  }
  free(at);
  for (int64_t c = 0; c < m; c++) {
    free(parts[c].t);
    parts[c].t = NULL;
    parts[c].n_tasks = parts[c].cap_tasks = 0;
  }
  if (status == WT_OK && wk->sink && wk->n_tasks > 0) {
    status = wk->sink->feed(wk->sink->ctx, wk->t, wk->n_tasks);
    wk->n_fed += wk->n_tasks;
    wk->n_tasks = 0;
  }
  return status;
}

/* a part of wk's walk (one parallel unit): wk's slots and thresholds */
void wt_walk_part_of(walk *w, const walk *wk)
{
  w->bins = wk->bins;
  w->n_slots = wk->n_slots;
  w->bulk = wk->bulk;
  w->fixed = wk->fixed;
  w->min_split = wk->min_split;
  w->min_bulk = wk->min_bulk;
}
