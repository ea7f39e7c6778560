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
 * only.
 *
 * Here: the walk of one task at a time, and the walk's entry, which walks
 * a job of many tasks in one grouped walk (grid_groups.c) where it can.
 * The test of a node pair and the window of a cell are in grid_nodes.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"
#include "grid_nodes.h"
#include "labels.h"
#include "floor/team.h"
#include "floor/pages.h"

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
  int st = wt_walk_pair_nodes(c->wk, ta, ta->root_of[c->i], tb,
                              tb->root_of[j], c->diagonal && j == c->i,
                              c->t->out, 1);
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
  int st = wt_walk_window_cells(g, ca, reach, cell_visit, &c);
  if (st != WT_OK) return st;
  /* the pairs of a's cell with cells never looked at: beyond reach; for
   * the diagonal, with the cells after it (each cell pair once) */
  double nb_rest = diagonal ? tot_n - before_n - c.na : tot_n;
  double wb_rest = diagonal ? tot_w - before_w - ca->w : tot_w;
  return wt_walk_add_bulk(wk, t->out, wk->n_slots - 1,
                          c.na * nb_rest - c.kept_n,
                          ca->w * wb_rest - c.kept_w);
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
    wt_walk_part_of(w, R->wk);
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
  wt_walk_tree_totals(tb, &tot_n, &tot_w);
  const int64_t n_cells = ta->n_cells;
  const int64_t n_chunks = (n_cells + WALK_CHUNK - 1) / WALK_CHUNK;
  const int n_slots = wk->n_slots;
  double *before = wt_alloc_big((size_t)(2 * n_cells + 1) * sizeof *before);
  walk *parts = wt_calloc_big((size_t)(n_chunks + 1), sizeof *parts);
  double *sums = wt_calloc_big((size_t)(n_chunks + 1) * 2 * (size_t)n_slots,
                        sizeof *sums);
  int *st = wt_alloc_big((size_t)(n_chunks + 1) * sizeof *st);
  int status = before && parts && sums && st ? WT_OK : WT_ERR_NOMEM;
  if (status == WT_OK) wt_walk_cells_before(ta, before);
  const int64_t per = wt_walk_round_len(wk, n_chunks);
  for (int64_t r0 = 0; r0 < n_chunks && status == WT_OK; r0 += per) {
    const int64_t r1 = r0 + per < n_chunks ? r0 + per : n_chunks;
    refine_round R = {g, wk, t, diagonal, ta, tb, index_b, reach,
                      tot_n, tot_w, before, parts, sums, st, r0, n_cells};
    wt_team_for(n_threads, r1 - r0, 1, refine_chunks, &R);
    /* the round's tasks joined in chunk order (fed to the sink) */
    for (int64_t c = r0; c < r1 && status == WT_OK; c++) status = st[c];
    if (status == WT_OK)
      status = wt_walk_join_parts(wk, parts + r0, r1 - r0, n_threads);
  }
  for (int64_t c = 0; c < n_chunks && status == WT_OK; c++) {
    const walk *w = &parts[c];
    for (int k = 0; k < n_slots; k++)
      wt_walk_add_bulk(wk, t->out, k, w->bulk_n[k], w->bulk_w[k]);
  }
  if (parts)
    for (int64_t c = 0; c < n_chunks; c++) free(parts[c].t);
  free(parts);
  free(sums);
  free(st);
  free(before);
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
  gr->bulk_n = wt_calloc_big(n_all, sizeof *gr->bulk_n);
  gr->bulk_w = wt_calloc_big(n_all, sizeof *gr->bulk_w);
  int64_t *index = wt_alloc_big((size_t)g->n_cells * sizeof *index);
  int status = gr->bulk_n && gr->bulk_w && index ? WT_OK : WT_ERR_NOMEM;
  if (status == WT_OK) {
    for (int64_t c = 0; c < g->n_cells; c++) index[c] = -1;
    wk.bins = job->bins;
    wk.bulk_n = gr->bulk_n;
    wk.bulk_w = gr->bulk_w;
  }
  const double reach = theta_max_deg * DEG * (1.0 + 1e-9) + 1e-12;
  /* many tasks (patch pairs): one grouped walk */
  int fallback = 1;
  if (status == WT_OK && job->n_tasks > 1)
    status = wt_walk_groups(job, a, b, reach, &wk, job->n_threads, &fallback);
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
