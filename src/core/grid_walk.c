/* The per-pair stage of the grid: the walk over the trees of two
 * catalogs' stages (grid_build.c), for one job.
 *
 * A task becomes a walk over pairs of nodes. For a node pair the caps give
 * the least and greatest possible separation of its pairs. When both fall
 * in the same slot (with a margin far above rounding), every pair of the
 * node pair lies in that slot: n_a n_b pairs (and W_a W_b of weight) are
 * added to it without visiting them. That covers pruning (the slot beyond
 * the last edge) and bulk counting inside a bin. Otherwise the walk splits
 * the larger node while the pairs are many and a split may pay, and hands
 * the rest to the engine as tasks. Counts stay exactly those of brute
 * force. In WT_WALK_FIXED mode (PIP on the CPU) a node pair inside one bin
 * is split as for bulk counting but handed to the engine as a task of
 * that one slot (slo == shi), whose pairs it visits for their weights
 * only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"
#include "labels.h"
#include "floor/team.h"

#define DEG (M_PI / 180.0)

typedef wt_grid_shape grid_shape;
typedef wt_grid_node node;
typedef wt_grid_tree range_tree;

typedef struct {                     /* what the walk writes */
  const double *upper;               /* c2 bounds of the slots */
  int n_slots, bulk;
  int fixed;                         /* WT_WALK_FIXED: node pairs inside
                                        one bin become tasks of one slot */
  double min_split;                  /* pairs below which a node pair is a
                                        task, unless bulk counting beckons */
  double min_bulk;                   /* pairs above which a node pair is
                                        split when its quarters would lie
                                        inside one bin */
  wt_task *t;
  int64_t n_tasks, cap_tasks;
  double *bulk_n, *bulk_w;           /* histograms out0, out0 + 1, ... of
                                        n_slots each */
  int32_t out0;
  /* the grouped walk (walk_groups): bulk counts as a list, in the order
   * made, instead of into bulk_n and bulk_w */
  struct bulk_entry *e;
  int64_t n_e, cap_e;
  const wt_task_sink *sink;          /* tasks fed to it in rounds, not kept */
  int64_t n_fed;
} walk;

typedef struct bulk_entry {
  int32_t out, slot;
  double n, w;
} bulk_entry;

static double clamp1(double v) { return v > 1.0 ? 1.0 : v < -1.0 ? -1.0 : v; }

static double chord(const double *a, const double *b)
{
  double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return sqrt(dx * dx + dy * dy + dz * dz);
}

/* room for at least `need` tasks */
static int reserve(walk *wk, int64_t need)
{
  if (need <= wk->cap_tasks) return WT_OK;
  int64_t cap = wk->cap_tasks ? 2 * wk->cap_tasks : 1024;
  if (cap < need) cap = need;
  wt_task *t = realloc(wk->t, (size_t)cap * sizeof *t);
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
static int merge_task(wt_task *l, const wt_task *t, int fixed)
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
  if (wk->n_tasks > 0 && merge_task(&wk->t[wk->n_tasks - 1], &t, wk->fixed))
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
  const int nb = wk->n_slots - 2;
  double v[2] = {lo2 * (1.0 - 1e-9), hi2 * (1.0 + 1e-9) + 1e-300};
  int out[2];
  for (int q = 0; q < 2; q++) {
    /* slot = number of bounds upper[0..nb] at or below the value */
    int a = 0, b = nb + 1;
    while (a < b) {
      int m = (a + b) / 2;
      if (wk->upper[m] <= v[q]) a = m + 1; else b = m;
    }
    out[q] = a;
  }
  *slo = out[0];
  *shi = out[1];
}

static int add_bulk(walk *wk, int32_t out, int slot, double n, double w)
{
  if (wk->bulk_n == NULL) {
    if (wk->n_e == wk->cap_e) {
      int64_t cap = wk->cap_e ? 2 * wk->cap_e : 256;
      bulk_entry *e = realloc(wk->e, (size_t)cap * sizeof *e);
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

/* pair_nodes() of a root pair wholly beyond the last edge: nothing
 * added; the caller leaves its pairs to those never looked at */
#define WALK_BEYOND (-1)

/* the pairs between node ia of A and node ib of B (the same node of the
 * same tree when diag: its unordered pairs); root: a pair of cell roots,
 * which returns WALK_BEYOND instead of a bulk entry beyond the last edge */
static int pair_nodes(walk *wk, const range_tree *A, int64_t ia,
                      const range_tree *B, int64_t ib, int diag, int32_t out,
                      int root)
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
  if (wk->upper[above - 1] <= (lo * lo) * (1.0 - 1e-9))
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
    return add_bulk(wk, out, slot, pairs, w);
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
        status = pair_nodes(wk, A, a->child[i], A, a->child[j], i == j, out,
                            0);
      }
    }
    return status;
  }
  if (!a_leaf && (b_leaf || na >= nb)) {
    for (int i = 0; i < 4 && status == WT_OK; i++)
      if (a->child[i] >= 0)
        status = pair_nodes(wk, A, a->child[i], B, ib, 0, out, 0);
  } else {
    for (int j = 0; j < 4 && status == WT_OK; j++)
      if (b->child[j] >= 0)
        status = pair_nodes(wk, A, ia, B, b->child[j], 0, out, 0);
  }
  return status;
}

/* Calls visit(ctx, id) for the id of every cell of g that may hold a
 * point within reach of the cap of node ca, found by band and a window in
 * right ascension (every other cell lies beyond reach), in band order and
 * within a band in right ascension order; stops at the first status that
 * is not WT_OK and returns it. */
typedef int (*cell_fn)(void *ctx, int64_t id);

static int window_cells(const grid_shape *g, const node *ca, double reach,
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

/* one cell of a task's walk (walk_cell) */
typedef struct {
  walk *wk;
  const wt_task *t;
  int diagonal;
  const range_tree *ta, *tb;
  const int64_t *index_b;
  int64_t i;
  double na, wa, kept_n, kept_w;
} cell_walk;

static int cell_visit(void *ctx, int64_t id)
{
  cell_walk *c = ctx;
  int64_t j = c->index_b[id];
  if (j < 0 || (c->diagonal && j < c->i)) return WT_OK;   /* each pair once */
  const range_tree *ta = c->ta, *tb = c->tb;
  int st = pair_nodes(c->wk, ta, ta->root_of[c->i], tb, tb->root_of[j],
                      c->diagonal && j == c->i, c->t->out, 1);
  /* beyond the last edge: with the pairs never looked at (walk_cell()) */
  if (st == WALK_BEYOND) return WT_OK;
  if (st != WT_OK || (c->diagonal && j == c->i)) return st;
  const node *cb = &tb->nodes[tb->root_of[j]];
  c->kept_n += c->na * (double)(cb->end - cb->start);
  c->kept_w += c->wa * cb->w;
  return WT_OK;
}

/* the pairs of cell i of ta with the cells of tb within reach (the rest
 * of tb lies beyond the last edge); before_n, before_w: points and weight
 * of the cells of ta before cell i (used when diagonal, tb being ta) */
static int walk_cell(const grid_shape *g, walk *wk, const wt_task *t,
                     int diagonal, const range_tree *ta, const range_tree *tb,
                     const int64_t *index_b, double reach, int64_t i,
                     double tot_n, double tot_w, double before_n,
                     double before_w)
{
  const node *ca = &ta->nodes[ta->root_of[i]];
  cell_walk c = {wk, t, diagonal, ta, tb, index_b, i,
                 (double)(ca->end - ca->start), ca->w, 0.0, 0.0};
  int st = window_cells(g, ca, reach, cell_visit, &c);
  if (st != WT_OK) return st;
  /* the pairs of a's cell with cells never looked at: beyond reach; for
   * the diagonal, with the cells after it (each cell pair once) */
  double nb_rest = diagonal ? tot_n - before_n - c.na : tot_n;
  double wb_rest = diagonal ? tot_w - before_w - ca->w : tot_w;
  return add_bulk(wk, t->out, wk->n_slots - 1, c.na * nb_rest - c.kept_n,
                  ca->w * wb_rest - c.kept_w);
}

/* points and weight of the cells of tree tr, in all */
static void tree_totals(const range_tree *tr, double *n, double *w)
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
static void cells_before(const range_tree *tr, double *before)
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

/* cells of A per unit of parallel work in refine_task: the units are the
 * same on any number of threads, so are the task list and the sums */
#define WALK_CHUNK 8

/* A task as tasks of node pairs and bulk counts. Runs of WALK_CHUNK cells
 * of A walk in parallel, each into its own task list and slot sums, which
 * are then joined in cell order: the same task list as one walk over all
 * cells. */
/* With a sink the parallel walks go in about WALK_ROUNDS rounds, each fed
 * to the sink before the next (the engine gets its first tasks after a
 * round's walk, not the whole walk's); without one, in one */
#define WALK_ROUNDS 32

static int64_t round_len(const walk *wk, int64_t n)
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

static int join_parts(walk *wk, walk *parts, int64_t m, int n_threads)
{
  int64_t total = wk->n_tasks;
  for (int64_t c = 0; c < m; c++) total += parts[c].n_tasks;
  int status = reserve(wk, total);
  int64_t *at = status == WT_OK ? malloc((size_t)(m + 1) * sizeof *at)
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
static void part_of(walk *w, const walk *wk)
{
  w->upper = wk->upper;
  w->n_slots = wk->n_slots;
  w->bulk = wk->bulk;
  w->fixed = wk->fixed;
  w->min_split = wk->min_split;
  w->min_bulk = wk->min_bulk;
}

/* one round of refine_task()'s chunks: chunk c walks cells
 * [c * WALK_CHUNK, ...) into parts[c] and its bulk sums */
typedef struct {
  const grid_shape *g;
  const walk *wk;
  const wt_task *t;
  int diagonal;
  const range_tree *ta, *tb;
  const int64_t *index_b;
  double reach, tot_n, tot_w;
  const double *before;
  walk *parts;
  double *sums;
  int *st;
  int64_t r0, n_cells;
} refine_round;

static void refine_chunks(void *v, int64_t k0, int64_t k1, int tid)
{
  const refine_round *R = (const refine_round *)v;
  const int n_slots = R->wk->n_slots;
  (void)tid;
  for (int64_t c = R->r0 + k0; c < R->r0 + k1; c++) {
    walk *w = &R->parts[c];
    part_of(w, R->wk);
    w->bulk_n = R->sums + (size_t)c * 2 * (size_t)n_slots;
    w->bulk_w = w->bulk_n + n_slots;
    w->out0 = R->t->out;
    R->st[c] = WT_OK;
    int64_t i1 = (c + 1) * WALK_CHUNK < R->n_cells ? (c + 1) * WALK_CHUNK
                                                    : R->n_cells;
    for (int64_t i = c * WALK_CHUNK; i < i1 && R->st[c] == WT_OK; i++)
      R->st[c] = walk_cell(R->g, w, R->t, R->diagonal, R->ta, R->tb,
                           R->index_b, R->reach, i, R->tot_n, R->tot_w,
                           R->before[2 * i], R->before[2 * i + 1]);
  }
}

static int refine_task(const grid_shape *g, walk *wk, const wt_task *t,
                       int diagonal, const range_tree *ta,
                       const range_tree *tb, const int64_t *index_b,
                       double reach, int n_threads)
{
  /* points and weight of b in all, and (diagonal: b is a) in the cells
   * before each cell, for the pairs no cell pair looked at */
  double tot_n, tot_w;
  tree_totals(tb, &tot_n, &tot_w);
  const int64_t n_cells = ta->n_cells;
  const int64_t n_chunks = (n_cells + WALK_CHUNK - 1) / WALK_CHUNK;
  const int n_slots = wk->n_slots;
  double *before = malloc((size_t)(2 * n_cells + 1) * sizeof *before);
  walk *parts = calloc((size_t)(n_chunks + 1), sizeof *parts);
  double *sums = calloc((size_t)(n_chunks + 1) * 2 * (size_t)n_slots,
                        sizeof *sums);
  int *st = malloc((size_t)(n_chunks + 1) * sizeof *st);
  int status = before && parts && sums && st ? WT_OK : WT_ERR_NOMEM;
  if (status == WT_OK) cells_before(ta, before);
  const int64_t per = round_len(wk, n_chunks);
  for (int64_t r0 = 0; r0 < n_chunks && status == WT_OK; r0 += per) {
    const int64_t r1 = r0 + per < n_chunks ? r0 + per : n_chunks;
    refine_round R = {g, wk, t, diagonal, ta, tb, index_b, reach,
                      tot_n, tot_w, before, parts, sums, st, r0, n_cells};
    wt_team_for(n_threads, r1 - r0, 1, refine_chunks, &R);
    /* the round's tasks joined in chunk order (fed to the sink) */
    for (int64_t c = r0; c < r1 && status == WT_OK; c++) status = st[c];
    if (status == WT_OK)
      status = join_parts(wk, parts + r0, r1 - r0, n_threads);
  }
  for (int64_t c = 0; c < n_chunks && status == WT_OK; c++) {
    const walk *w = &parts[c];
    for (int k = 0; k < n_slots; k++)
      add_bulk(wk, t->out, k, w->bulk_n[k], w->bulk_w[k]);
  }
  if (parts)
    for (int64_t c = 0; c < n_chunks; c++) free(parts[c].t);
  free(parts);
  free(sums);
  free(st);
  free(before);
  return status;
}

/* The grouped walk: a job of many tasks (patch pairs, samples) walks each
 * cell of each a-side tree once, against the cells within reach of every
 * b-side tree that a task pairs with it, instead of once per task. Each
 * cell id of the grid lists the cells of every b-side tree there (csr).
 * Tasks sharing an a-side tree form a group; a group's tasks are told
 * apart by their b-side tree (map). The work goes out in units of
 * WALK_CHUNK cells of one group's tree, all in one parallel loop (in
 * rounds with a sink); each unit writes its tasks and its bulk counts as
 * lists, joined in unit order: the same on any number of threads. */
typedef struct {
  const wt_job *job;
  const wt_grid_stage *a, *b;
  const int64_t *order;        /* task numbers, grouped by a-side tree */
  const int64_t *g_start;      /* group g: order[g_start[g], g_start[g+1]) */
  const int64_t *g_tree;       /* ... its a-side tree */
  const int32_t *map;          /* [g * n_tb + tree of b]: index in group */
  int64_t n_tb;
  const int64_t *tb_of;        /* per task number: its b-side tree */
  const int64_t *csr_at, *csr_tree, *csr_cell;   /* cell id -> b cells */
  /* at each cell id's first entry (csr_at[id]): a cap that holds the caps
   * of all its b cells' roots (centre, chord radius), so that a window
   * cell beyond the last edge is passed over once, not per tree there */
  const double *id_cap;        /* 4 per entry: centre, radius */
  const double *tot_n, *tot_w; /* per b-side tree */
  const double *before;        /* per a-side tree cell: 2 sums, at
                                  cell_at[tree] */
  const int64_t *cell_at;
  double reach;
} groups;

typedef struct {
  const groups *G;
  walk *wk;
  int64_t g, i;                /* group, cell of its a-side tree */
  const range_tree *ta;
  double na, wa;
  double *kept;                /* 2 per task of the group */
} group_cell;

/* whether every pair between node a and the b cells of cell id lies
 * beyond the last edge, by the cap that holds theirs: then pair_nodes()
 * would find each root pair there beyond (WALK_BEYOND). Its least
 * separation is at most that of any one root pair (triangle inequality,
 * in chords); a margin of 1e-12 in chord, far above the rounding of
 * either, keeps the test on the side of looking. */
static int id_beyond(const walk *wk, const groups *G, const node *a,
                     int64_t e0)
{
  const double *cap = G->id_cap + 4 * e0;
  const double lo = chord(a->c, cap) - a->r - cap[3] - 1e-12;
  return lo > 0.0 && wk->upper[wk->n_slots - 2] <= (lo * lo) * (1.0 - 1e-9);
}

static int group_visit(void *ctx, int64_t id)
{
  group_cell *c = ctx;
  const groups *G = c->G;
  if (G->csr_at[id] == G->csr_at[id + 1] ||
      id_beyond(c->wk, G, &c->ta->nodes[c->ta->root_of[c->i]],
                G->csr_at[id]))
    return WT_OK;
  for (int64_t e = G->csr_at[id]; e < G->csr_at[id + 1]; e++) {
    const int64_t tree = G->csr_tree[e], j = G->csr_cell[e];
    const int32_t m = G->map[c->g * G->n_tb + tree];
    if (m < 0) continue;
    const wt_task *t = &G->job->tasks[G->order[G->g_start[c->g] + m]];
    const range_tree *tb = &G->b->trees[tree];
    const int diagonal = G->job->is_auto && t->a0 == t->b0;
    if (diagonal && j < c->i) continue;               /* each pair once */
    int st = pair_nodes(c->wk, c->ta, c->ta->root_of[c->i], tb,
                        tb->root_of[j], diagonal && j == c->i, t->out, 1);
    /* a root pair beyond the last edge: left out of kept, so counted with
     * the pairs never looked at (group_unit()), without a bulk entry */
    if (st == WALK_BEYOND) continue;
    if (st != WT_OK) return st;
    if (diagonal && j == c->i) continue;
    const node *cb = &tb->nodes[tb->root_of[j]];
    c->kept[2 * m] += c->na * (double)(cb->end - cb->start);
    c->kept[2 * m + 1] += c->wa * cb->w;
  }
  return WT_OK;
}

/* cells [i0, i1) of group g's a-side tree into wk; kept: scratch of 2 per
 * task of the group, and above: 2 per task (the pairs beyond reach) */
static int group_unit(const groups *G, walk *wk, int64_t g, int64_t i0,
                      int64_t i1, double *kept, double *above)
{
  const int64_t n_m = G->g_start[g + 1] - G->g_start[g];
  const int64_t at = G->g_tree[g];
  const range_tree *ta = &G->a->trees[at];
  memset(above, 0, (size_t)n_m * 2 * sizeof *above);
  for (int64_t i = i0; i < i1; i++) {
    const node *ca = &ta->nodes[ta->root_of[i]];
    group_cell c = {G, wk, g, i, ta, (double)(ca->end - ca->start), ca->w,
                    kept};
    memset(kept, 0, (size_t)n_m * 2 * sizeof *kept);
    int st = window_cells(&G->a->shape, ca, G->reach, group_visit, &c);
    if (st != WT_OK) return st;
    const double *bf = G->before + 2 * (G->cell_at[at] + i);
    for (int64_t m = 0; m < n_m; m++) {
      const wt_task *t = &G->job->tasks[G->order[G->g_start[g] + m]];
      const int diagonal = G->job->is_auto && t->a0 == t->b0;
      const int64_t tree = G->tb_of[G->order[G->g_start[g] + m]];
      double nb = diagonal ? G->tot_n[tree] - bf[0] - c.na : G->tot_n[tree];
      double wb = diagonal ? G->tot_w[tree] - bf[1] - ca->w : G->tot_w[tree];
      above[2 * m] += c.na * nb - kept[2 * m];
      above[2 * m + 1] += ca->w * wb - kept[2 * m + 1];
    }
  }
  for (int64_t m = 0; m < n_m; m++) {
    const wt_task *t = &G->job->tasks[G->order[G->g_start[g] + m]];
    int st = add_bulk(wk, t->out, wk->n_slots - 1, above[2 * m],
                      above[2 * m + 1]);
    if (st != WT_OK) return st;
  }
  return WT_OK;
}

/* whether task a goes before task b: by histogram, rows, then columns */
static inline int task_before(const wt_task *a, const wt_task *b)
{
  if (a->out != b->out) return a->out < b->out;
  if (a->a0 != b->a0) return a->a0 < b->a0;
  if (a->a1 != b->a1) return a->a1 < b->a1;
  if (a->b0 != b->b0) return a->b0 < b->b0;
  return a->b1 < b->b1;
}

/* t[0, n) in task_before() order, stably (as qsort's merge sort was, and
 * with no call per comparison): runs of 16 by insertion, then merges
 * through scratch s of n tasks, back and forth. Returns where the sorted
 * tasks are, t or s. */
static wt_task *sort_tasks(wt_task *t, wt_task *s, int64_t n)
{
  const int64_t run = 16;
  for (int64_t r0 = 0; r0 < n; r0 += run) {
    const int64_t r1 = r0 + run < n ? r0 + run : n;
    for (int64_t i = r0 + 1; i < r1; i++) {
      const wt_task v = t[i];
      int64_t j = i;
      for (; j > r0 && task_before(&v, &t[j - 1]); j--) t[j] = t[j - 1];
      t[j] = v;
    }
  }
  wt_task *from = t, *to = s;
  for (int64_t w = run; w < n; w *= 2) {
    for (int64_t l = 0; l < n; l += 2 * w) {
      const int64_t m = l + w < n ? l + w : n;
      const int64_t e = l + 2 * w < n ? l + 2 * w : n;
      int64_t i = l, j = m, k = l;
      /* equal tasks: the left run's first (stable) */
      while (i < m && j < e)
        to[k++] = task_before(&from[j], &from[i]) ? from[j++] : from[i++];
      while (i < m) to[k++] = from[i++];
      while (j < e) to[k++] = from[j++];
    }
    wt_task *x = from;
    from = to;
    to = x;
  }
  return from;
}

/* A unit's tasks ordered by histogram (then rows, columns), and those of
 * the same rows against adjacent columns merged (merge_task(), as push()
 * merges them as they come). The grouped walk visits the patches' trees of a cell by
 * turns, so its tasks alternate between histograms: in this order, the
 * engine's work items take runs of small tasks of one histogram, and the
 * merges broken by the turns are made. */
static int order_tasks(walk *w)
{
  if (w->n_tasks < 2) return WT_OK;
  wt_task *s = malloc((size_t)w->n_tasks * sizeof *s);
  if (s == NULL) return WT_ERR_NOMEM;
  wt_task *sorted = sort_tasks(w->t, s, w->n_tasks);
  if (sorted != w->t)
    memcpy(w->t, sorted, (size_t)w->n_tasks * sizeof *w->t);
  free(s);
  int64_t m = 1;
  for (int64_t k = 1; k < w->n_tasks; k++)
    if (!merge_task(&w->t[m - 1], &w->t[k], w->fixed)) w->t[m++] = w->t[k];
  w->n_tasks = m;
  return WT_OK;
}

/* The grouped walk of job's tasks into wk (bulk counts into wk's dense
 * sums, out0 = 0); *fallback = 1 (and nothing done) when two tasks share
 * both trees, which the per-task walk handles. */
/* one round of walk_groups()'s units, taken in turn by the team's
 * threads, each with its own scratch */
typedef struct {
  const groups *G;
  const walk *wk;
  walk *parts;
  const int64_t *u;
  int64_t next, r1, max_m;
  int failed;
} group_round;

static void group_units(void *v, int tid, int nt)
{
  group_round *R = (group_round *)v;
  (void)tid;
  (void)nt;
  double *scratch = malloc((size_t)(4 * R->max_m + 1) * sizeof *scratch);
  for (;;) {
    const int64_t k = __atomic_fetch_add(&R->next, 1, __ATOMIC_RELAXED);
    if (k >= R->r1) break;
    walk *w = &R->parts[k];
    part_of(w, R->wk);
    const int64_t *uk = R->u + 3 * k;
    int st = scratch ? group_unit(R->G, w, uk[0], uk[1], uk[2], scratch,
                                  scratch + 2 * R->max_m)
                     : WT_ERR_NOMEM;
    if (st == WT_OK) st = order_tasks(w);
    if (st != WT_OK) __atomic_store_n(&R->failed, st, __ATOMIC_RELAXED);
  }
  free(scratch);
}

static int walk_groups(const wt_job *job, const wt_grid_stage *a,
                       const wt_grid_stage *b, double reach, walk *wk,
                       int n_threads, int *fallback)
{
  const int64_t n = job->n_tasks, n_ta = a->n_trees, n_tb = b->n_trees;
  const grid_shape *g = &a->shape;
  *fallback = 0;
  groups G;
  memset(&G, 0, sizeof G);
  int64_t *ta_of = malloc((size_t)(n > 0 ? n : 1) * sizeof *ta_of);
  int64_t *tb_of = malloc((size_t)(n > 0 ? n : 1) * sizeof *tb_of);
  int64_t *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
  int64_t *g_start = malloc((size_t)(n_ta + 2) * sizeof *g_start);
  int64_t *g_tree = malloc((size_t)(n_ta + 1) * sizeof *g_tree);
  int64_t *cell_at = malloc((size_t)(n_ta + 1) * sizeof *cell_at);
  int64_t *csr_at = calloc((size_t)g->n_cells + 1, sizeof *csr_at);
  double *tot = calloc((size_t)(2 * n_tb + 1), sizeof *tot);
  char *used = calloc((size_t)(n_tb + 1), 1);
  int32_t *map = NULL;
  int64_t *csr_tree = NULL, *csr_cell = NULL, *u = NULL;
  double *before = NULL, *id_cap = NULL;
  walk *parts = NULL;
  int64_t n_units = 0, n_groups = 0;
  int status = ta_of && tb_of && order && g_start && g_tree && cell_at &&
    csr_at && tot && used ? WT_OK : WT_ERR_NOMEM;
  if (status != WT_OK) goto done;
  /* the trees of each task; groups by a-side tree, in tree order, each
   * group's tasks in task order (a counting sort) */
  for (int64_t t = 0; t <= n_ta; t++) g_start[t] = 0;
  for (int64_t k = 0; k < n; k++) {
    const wt_task *t = &job->tasks[k];
    ta_of[k] = tb_of[k] = -1;
    if (t->a0 == t->a1 || t->b0 == t->b1) continue;
    ta_of[k] = wt_grid_stage_tree(a, t->a0, t->a1) - a->trees;
    tb_of[k] = wt_grid_stage_tree(b, t->b0, t->b1) - b->trees;
    g_start[ta_of[k] + 1]++;
    used[tb_of[k]] = 1;
  }
  for (int64_t t = 0; t < n_ta; t++) g_start[t + 1] += g_start[t];
  {
    int64_t *fill = malloc((size_t)(n_ta + 1) * sizeof *fill);
    if (!fill) {
      status = WT_ERR_NOMEM;
      goto done;
    }
    memcpy(fill, g_start, (size_t)(n_ta + 1) * sizeof *fill);
    for (int64_t k = 0; k < n; k++)
      if (ta_of[k] >= 0) order[fill[ta_of[k]]++] = k;
    free(fill);
  }
  /* the non-empty groups, compacted; the last ends at the tasks' total */
  const int64_t n_with_trees = g_start[n_ta];
  for (int64_t t = 0; t < n_ta; t++)
    if (g_start[t + 1] > g_start[t]) {
      g_tree[n_groups] = t;
      g_start[n_groups] = g_start[t];
      n_groups++;
    }
  g_start[n_groups] = n_with_trees;
  map = malloc((size_t)(n_groups > 0 ? n_groups : 1) * (size_t)n_tb *
               sizeof *map);
  if (!map) {
    status = WT_ERR_NOMEM;
    goto done;
  }
  for (int64_t q = 0; q < n_groups * n_tb; q++) map[q] = -1;
  for (int64_t q = 0; q < n_groups; q++)
    for (int64_t m = g_start[q]; m < g_start[q + 1]; m++) {
      int32_t *at = &map[q * n_tb + tb_of[order[m]]];
      if (*at >= 0) {
        *fallback = 1;
        goto done;
      }
      *at = (int32_t)(m - g_start[q]);
    }
  /* the cells of the b-side trees in use, by cell id; their totals */
  for (int64_t t = 0; t < n_tb; t++) {
    if (!used[t]) continue;
    const range_tree *tr = &b->trees[t];
    tree_totals(tr, &tot[t], &tot[n_tb + t]);
    for (int64_t j = 0; j < tr->n_cells; j++) csr_at[tr->cell_id[j] + 1]++;
  }
  for (int64_t c = 0; c < g->n_cells; c++) csr_at[c + 1] += csr_at[c];
  csr_tree = malloc((size_t)(csr_at[g->n_cells] + 1) * sizeof *csr_tree);
  csr_cell = malloc((size_t)(csr_at[g->n_cells] + 1) * sizeof *csr_cell);
  if (!csr_tree || !csr_cell) {
    status = WT_ERR_NOMEM;
    goto done;
  }
  for (int64_t t = 0; t < n_tb; t++) {
    if (!used[t]) continue;
    const range_tree *tr = &b->trees[t];
    for (int64_t j = 0; j < tr->n_cells; j++) {
      int64_t at = csr_at[tr->cell_id[j]]++;
      csr_tree[at] = t;
      csr_cell[at] = j;
    }
  }
  for (int64_t c = g->n_cells; c > 0; c--) csr_at[c] = csr_at[c - 1];
  csr_at[0] = 0;
  /* each cell id's cap of its b cells' roots, at its first entry: the
   * first root's centre, and the radius that reaches every root's cap
   * from it (a hair wider, for the rounding of the chords) */
  id_cap = malloc((size_t)(4 * csr_at[g->n_cells] + 1) * sizeof *id_cap);
  if (!id_cap) {
    status = WT_ERR_NOMEM;
    goto done;
  }
  for (int64_t c = 0; c < g->n_cells; c++) {
    const int64_t e0 = csr_at[c], e1 = csr_at[c + 1];
    if (e0 == e1) continue;
    const range_tree *t0 = &b->trees[csr_tree[e0]];
    const node *r0 = &t0->nodes[t0->root_of[csr_cell[e0]]];
    double r = 0.0;
    for (int64_t e = e0; e < e1; e++) {
      const range_tree *te = &b->trees[csr_tree[e]];
      const node *re = &te->nodes[te->root_of[csr_cell[e]]];
      r = fmax(r, chord(r0->c, re->c) + re->r);
    }
    memcpy(id_cap + 4 * e0, r0->c, 3 * sizeof *id_cap);
    id_cap[4 * e0 + 3] = r * (1.0 + 1e-12) + 1e-15;
  }
  /* points and weight of the cells before each cell of each a-side tree */
  cell_at[0] = 0;
  for (int64_t t = 0; t < n_ta; t++)
    cell_at[t + 1] = cell_at[t] + a->trees[t].n_cells;
  before = malloc((size_t)(2 * cell_at[n_ta] + 1) * sizeof *before);
  if (!before) {
    status = WT_ERR_NOMEM;
    goto done;
  }
  for (int64_t t = 0; t < n_ta; t++)
    cells_before(&a->trees[t], before + 2 * cell_at[t]);
  /* the units: runs of WALK_CHUNK cells of a group's tree */
  for (int64_t q = 0; q < n_groups; q++)
    n_units += (a->trees[g_tree[q]].n_cells + WALK_CHUNK - 1) / WALK_CHUNK;
  u = malloc((size_t)(3 * n_units + 1) * sizeof *u);
  parts = calloc((size_t)(n_units + 1), sizeof *parts);
  if (!u || !parts) {
    status = WT_ERR_NOMEM;
    goto done;
  }
  {
    int64_t k = 0;
    for (int64_t q = 0; q < n_groups; q++) {
      const int64_t nc = a->trees[g_tree[q]].n_cells;
      for (int64_t i = 0; i < nc; i += WALK_CHUNK) {
        u[3 * k] = q;
        u[3 * k + 1] = i;
        u[3 * k + 2] = i + WALK_CHUNK < nc ? i + WALK_CHUNK : nc;
        k++;
      }
    }
  }
  G = (groups){.job = job, .a = a, .b = b, .order = order,
               .g_start = g_start, .g_tree = g_tree, .map = map,
               .n_tb = n_tb, .tb_of = tb_of, .csr_at = csr_at,
               .csr_tree = csr_tree, .csr_cell = csr_cell, .id_cap = id_cap,
               .tot_n = tot,
               .tot_w = tot + n_tb, .before = before, .cell_at = cell_at,
               .reach = reach};
  int64_t max_m = 0;
  for (int64_t q = 0; q < n_groups; q++)
    if (g_start[q + 1] - g_start[q] > max_m) max_m = g_start[q + 1] - g_start[q];
  const int64_t per = round_len(wk, n_units);
  for (int64_t r0 = 0; r0 < n_units && status == WT_OK; r0 += per) {
    const int64_t r1 = r0 + per < n_units ? r0 + per : n_units;
    group_round R = {&G, wk, parts, u, r0, r1, max_m, 0};
    wt_team_run(r1 - r0 < n_threads ? (int)(r1 - r0) : n_threads,
                group_units, &R);
    if (R.failed) {
      status = R.failed;
      goto done;
    }
    /* the round's units' tasks joined in unit order (fed to the sink),
     * their bulk counts added in the same order */
    status = join_parts(wk, parts + r0, r1 - r0, n_threads);
    for (int64_t k = r0; k < r1 && status == WT_OK; k++)
      for (int64_t e = 0; e < parts[k].n_e; e++) {
        const bulk_entry *be = &parts[k].e[e];
        add_bulk(wk, be->out, be->slot, be->n, be->w);
      }
  }
done:
  if (parts)
    for (int64_t k = 0; k < n_units; k++) {
      free(parts[k].t);
      free(parts[k].e);
    }
  free(parts);
  free(u);
  free(before);
  free(csr_tree);
  free(csr_cell);
  free(id_cap);
  free(map);
  free(used);
  free(tot);
  free(csr_at);
  free(cell_at);
  free(g_tree);
  free(g_start);
  free(order);
  free(tb_of);
  free(ta_of);
  return status;
}

void wt_grid_free(wt_grid *gr)
{
  free(gr->tasks);
  free(gr->bulk_n);
  free(gr->bulk_w);
  memset(gr, 0, sizeof *gr);
}

int wt_grid_walk(const wt_job *job, const wt_grid_stage *a,
                 const wt_grid_stage *b, double theta_max_deg, int bulk,
                 double min_split, double min_bulk, wt_grid *gr,
                 const wt_task_sink *sink)
{
  memset(gr, 0, sizeof *gr);
  if (a->cell_deg != b->cell_deg || (job->is_auto && a != b))
    return WT_ERR_ARG;
  /* every task's ranges must be ranges of its catalog */
  for (int64_t k = 0; k < job->n_tasks; k++) {
    const wt_task *t = &job->tasks[k];
    if (t->a0 == t->a1 || t->b0 == t->b1) continue;
    if (!wt_grid_stage_tree(a, t->a0, t->a1) ||
        !wt_grid_stage_tree(b, t->b0, t->b1))
      return WT_ERR_ARG;
  }
  const grid_shape *g = &a->shape;
  const int n_slots = job->bins->n_bins + 2;
  walk wk;
  memset(&wk, 0, sizeof wk);
  wk.n_slots = n_slots;
  wk.bulk = bulk != WT_WALK_PRUNE;
  wk.fixed = bulk == WT_WALK_FIXED;
  wk.min_split = min_split;
  wk.min_bulk = min_bulk;
  wk.sink = sink;
  /* the tasks' histograms (labels: n_out is those times La Lb) */
  int la, lb;
  wt_labels_sizes(job, &la, &lb);
  gr->n_hist = job->n_out / ((int64_t)la * lb);
  const size_t n_all = (size_t)gr->n_hist * (size_t)n_slots;
  gr->bulk_n = calloc(n_all, sizeof *gr->bulk_n);
  gr->bulk_w = calloc(n_all, sizeof *gr->bulk_w);
  int64_t *index = malloc((size_t)g->n_cells * sizeof *index);
  int status = gr->bulk_n && gr->bulk_w && index ? WT_OK : WT_ERR_NOMEM;
  if (status == WT_OK) {
    for (int64_t c = 0; c < g->n_cells; c++) index[c] = -1;
    wk.upper = job->bins->upper;
    wk.bulk_n = gr->bulk_n;
    wk.bulk_w = gr->bulk_w;
  }
  const double reach = theta_max_deg * DEG * (1.0 + 1e-9) + 1e-12;
  /* many tasks (patch pairs): one grouped walk */
  int fallback = 1;
  if (status == WT_OK && job->n_tasks > 1)
    status = walk_groups(job, a, b, reach, &wk, job->n_threads, &fallback);
  const range_tree *indexed = NULL;
  for (int64_t k = 0; k < job->n_tasks && status == WT_OK && fallback; k++) {
    const wt_task *t = &job->tasks[k];
    if (t->a0 == t->a1 || t->b0 == t->b1) continue;
    const range_tree *ta = wt_grid_stage_tree(a, t->a0, t->a1);
    const range_tree *tb = wt_grid_stage_tree(b, t->b0, t->b1);
    /* index: the cells of tb by cell id */
    if (tb != indexed) {
      if (indexed)
        for (int64_t j = 0; j < indexed->n_cells; j++)
          index[indexed->cell_id[j]] = -1;
      for (int64_t j = 0; j < tb->n_cells; j++) index[tb->cell_id[j]] = j;
      indexed = tb;
    }
    status = refine_task(g, &wk, t, job->is_auto && t->a0 == t->b0, ta, tb,
                         index, reach, job->n_threads);
  }
  free(index);
  if (status != WT_OK) {
    free(wk.t);
    wt_grid_free(gr);
    return status;
  }
  if (sink) {
    free(wk.t);                      /* fed: nothing left in it */
    wk.t = NULL;
  }
  gr->tasks = wk.t;
  gr->n_tasks = sink ? wk.n_fed : wk.n_tasks;
  return WT_OK;
}
