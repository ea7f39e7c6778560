/* The grouped walk (grid_walk.h): the walk of a job of many tasks
 * (patch pairs, samples) over two stages' trees, each a-side cell once
 * for all the tasks that pair its tree. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"
#include "grid_nodes.h"
#include "floor/team.h"
#include "floor/pages.h"

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
 * beyond the last edge, by the cap that holds theirs: then
 * wt_walk_pair_nodes() would find each root pair there beyond
 * (WALK_BEYOND). Its least
 * separation is at most that of any one root pair (triangle inequality,
 * in chords); a margin of 1e-12 in chord, far above the rounding of
 * either, keeps the test on the side of looking. */
static int id_beyond(const walk *wk, const groups *G, const node *a,
                     int64_t e0)
{
  const double *cap = G->id_cap + 4 * e0;
  const double lo = chord(a->c, cap) - a->r - cap[3] - 1e-12;
  return lo > 0.0 && beyond_last_edge(wk, lo);
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
    int st = wt_walk_pair_nodes(c->wk, c->ta, c->ta->root_of[c->i], tb,
                                tb->root_of[j], diagonal && j == c->i,
                                t->out, 1);
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
    int st = wt_walk_window_cells(&G->a->shape, ca, G->reach, group_visit,
                                  &c);
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
    int st = wt_walk_add_bulk(wk, t->out, wk->n_slots - 1, above[2 * m],
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

/* t[0, n) in task_before() order, stably, through scratch s of n tasks
 * and k of 4 n words: by histogram first (wt_grid_sort_keys(), the grid
 * build's stable radix sort, on the bits in which the outs differ), then
 * each run of one histogram, which the walk mostly made in order already,
 * by sort_tasks() where it is not. The same order as sort_tasks() of the
 * whole (both stable, and out is task_before()'s first key), in a pass or
 * two over the tasks. Returns s, which then holds them, or NULL (out of
 * memory, t unchanged). */
static wt_task *sort_by_out(wt_task *t, wt_task *s, uint64_t *k, int64_t n)
{
  uint64_t *key = k, *k2 = k + n;
  int64_t *order = (int64_t *)(k + 2 * n), *o2 = (int64_t *)(k + 3 * n);
  uint32_t differ = 0;
  for (int64_t i = 0; i < n; i++) {
    /* out is a histogram number, >= 0 */
    key[i] = (uint32_t)t[i].out;
    order[i] = i;
    differ |= (uint32_t)t[i].out ^ (uint32_t)t[0].out;
  }
  /* the higher bits, which all outs share, leave the order as it is */
  int bits = 0;
  while (bits < 32 && (differ >> bits) != 0) bits++;
  if (bits > 0 && wt_grid_sort_keys(key, order, n, bits, 1, k2, o2) != WT_OK)
    return NULL;
  for (int64_t i = 0; i < n; i++) s[i] = t[order[i]];
  /* each histogram's run in order, where it is not already; through the
   * first part of t as scratch (a run is at most n tasks) */
  for (int64_t r0 = 0; r0 < n;) {
    int64_t r1 = r0 + 1;
    int sorted = 1;
    while (r1 < n && s[r1].out == s[r0].out) {
      if (task_before(&s[r1], &s[r1 - 1])) sorted = 0;
      r1++;
    }
    if (!sorted) {
      wt_task *at = sort_tasks(s + r0, t, r1 - r0);
      if (at != s + r0)
        memcpy(s + r0, at, (size_t)(r1 - r0) * sizeof *s);
    }
    r0 = r1;
  }
  return s;
}

/* tests: n pseudo-random tasks (seed) of n_out histograms, rows and
 * columns drawn from narrow ranges (ties in every key), in runs that are
 * sometimes in order already, put in task_before() order by sort_tasks()
 * and by sort_by_out(): 1 when the two orders are the same, 0 when not;
 * -1 out of memory */
int wt_walk_sort_check(int64_t n, uint32_t seed, int32_t n_out)
{
  if (n < 1 || n_out < 1) return -1;
  wt_task *a = wt_alloc_big((size_t)n * sizeof *a);
  wt_task *b = wt_alloc_big((size_t)n * sizeof *b);
  wt_task *s = wt_alloc_big((size_t)n * sizeof *s);
  uint64_t *k = wt_alloc_big((size_t)(4 * n) * sizeof *k);
  int same = -1;
  if (a && b && s && k) {
    uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;
    for (int64_t i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      memset(&a[i], 0, sizeof a[i]);
      /* one task in eight in a rising run, the others anywhere */
      const int rising = (x & 7u) == 0u;
      a[i].out = (int32_t)((x >> 8) % (uint64_t)n_out);
      a[i].a0 = rising ? i : (int64_t)((x >> 24) % 16u);
      a[i].a1 = a[i].a0 + (int64_t)((x >> 30) % 3u);
      a[i].b0 = (int64_t)((x >> 34) % 8u);
      a[i].b1 = a[i].b0 + (int64_t)((x >> 40) % 3u);
      a[i].slo = (int16_t)((x >> 44) % 4u);
      a[i].shi = (int16_t)(a[i].slo + (int16_t)((x >> 48) % 2u));
    }
    memcpy(b, a, (size_t)n * sizeof *a);
    const wt_task *p = sort_tasks(a, s, n);
    if (p != a) memcpy(a, p, (size_t)n * sizeof *a);
    const wt_task *q = sort_by_out(b, s, k, n);
    if (q != NULL) same = memcmp(a, q, (size_t)n * sizeof *a) == 0;
  }
  free(a);
  free(b);
  free(s);
  free(k);
  return same;
}

/* A unit's tasks ordered by histogram (then rows, columns), and those of
 * the same rows against adjacent columns merged (wt_walk_merge_task(), as
 * push() in grid_walk.c merges them as they come). The grouped walk visits
 * the patches' trees of a cell by turns, so its tasks alternate between
 * histograms: in this order, the
 * engine's work items take runs of small tasks of one histogram, and the
 * merges broken by the turns are made. */
static int order_tasks(walk *w)
{
  if (w->n_tasks < 2) return WT_OK;
  const int64_t n = w->n_tasks;
  wt_task *s = wt_alloc_big((size_t)n * sizeof *s);
  /* without memory for the keys, the comparison sort alone */
  uint64_t *k = wt_alloc_big((size_t)(4 * n) * sizeof *k);
  if (s == NULL) {
    free(k);
    return WT_ERR_NOMEM;
  }
  wt_task *sorted = k != NULL ? sort_by_out(w->t, s, k, n) : NULL;
  if (sorted == NULL) sorted = sort_tasks(w->t, s, n);
  if (sorted != w->t)
    memcpy(w->t, sorted, (size_t)n * sizeof *w->t);
  free(k);
  free(s);
  int64_t m = 1;
  for (int64_t k = 1; k < w->n_tasks; k++)
    if (!wt_walk_merge_task(&w->t[m - 1], &w->t[k], w->fixed))
      w->t[m++] = w->t[k];
  w->n_tasks = m;
  return WT_OK;
}

/* The grouped walk of job's tasks into wk (bulk counts into wk's dense
 * sums, out0 = 0); *fallback = 1 (and nothing done) when two tasks share
 * both trees, which the per-task walk handles. */
/* one round of wt_walk_groups()'s units, taken in turn by the team's
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
  double *scratch = wt_alloc_big((size_t)(4 * R->max_m + 1) * sizeof *scratch);
  for (;;) {
    const int64_t k = __atomic_fetch_add(&R->next, 1, __ATOMIC_RELAXED);
    if (k >= R->r1) break;
    walk *w = &R->parts[k];
    wt_walk_part_of(w, R->wk);
    const int64_t *uk = R->u + 3 * k;
    int st = scratch ? group_unit(R->G, w, uk[0], uk[1], uk[2], scratch,
                                  scratch + 2 * R->max_m)
                     : WT_ERR_NOMEM;
    if (st == WT_OK) st = order_tasks(w);
    if (st != WT_OK) __atomic_store_n(&R->failed, st, __ATOMIC_RELAXED);
  }
  free(scratch);
}

int wt_walk_groups(const wt_job *job, const wt_grid_stage *a,
                   const wt_grid_stage *b, double reach, walk *wk,
                   int n_threads, int *fallback)
{
  const int64_t n = job->n_tasks, n_ta = a->n_trees, n_tb = b->n_trees;
  const grid_shape *g = &a->shape;
  *fallback = 0;
  groups G;
  memset(&G, 0, sizeof G);
  int64_t *ta_of = wt_alloc_big((size_t)(n > 0 ? n : 1) * sizeof *ta_of);
  int64_t *tb_of = wt_alloc_big((size_t)(n > 0 ? n : 1) * sizeof *tb_of);
  int64_t *order = wt_alloc_big((size_t)(n > 0 ? n : 1) * sizeof *order);
  int64_t *g_start = wt_calloc_big((size_t)(n_ta + 2), sizeof *g_start);
  int64_t *g_tree = wt_alloc_big((size_t)(n_ta + 1) * sizeof *g_tree);
  int64_t *cell_at = wt_alloc_big((size_t)(n_ta + 1) * sizeof *cell_at);
  int64_t *csr_at = wt_calloc_big((size_t)g->n_cells + 1, sizeof *csr_at);
  double *tot = wt_calloc_big((size_t)(2 * n_tb + 1), sizeof *tot);
  char *used = wt_calloc_big((size_t)(n_tb + 1), 1);
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
    int64_t *fill = wt_alloc_big((size_t)(n_ta + 1) * sizeof *fill);
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
  map = wt_alloc_big((size_t)(n_groups > 0 ? n_groups : 1) * (size_t)n_tb *
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
    wt_walk_tree_totals(tr, &tot[t], &tot[n_tb + t]);
    for (int64_t j = 0; j < tr->n_cells; j++) csr_at[tr->cell_id[j] + 1]++;
  }
  for (int64_t c = 0; c < g->n_cells; c++) csr_at[c + 1] += csr_at[c];
  csr_tree = wt_alloc_big((size_t)(csr_at[g->n_cells] + 1) * sizeof *csr_tree);
  csr_cell = wt_alloc_big((size_t)(csr_at[g->n_cells] + 1) * sizeof *csr_cell);
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
  id_cap = wt_alloc_big((size_t)(4 * csr_at[g->n_cells] + 1) * sizeof *id_cap);
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
  before = wt_alloc_big((size_t)(2 * cell_at[n_ta] + 1) * sizeof *before);
  if (!before) {
    status = WT_ERR_NOMEM;
    goto done;
  }
  for (int64_t t = 0; t < n_ta; t++)
    wt_walk_cells_before(&a->trees[t], before + 2 * cell_at[t]);
  /* the units: runs of WALK_CHUNK cells of a group's tree */
  for (int64_t q = 0; q < n_groups; q++)
    n_units += (a->trees[g_tree[q]].n_cells + WALK_CHUNK - 1) / WALK_CHUNK;
  u = wt_alloc_big((size_t)(3 * n_units + 1) * sizeof *u);
  parts = wt_calloc_big((size_t)(n_units + 1), sizeof *parts);
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
  const int64_t per = wt_walk_round_len(wk, n_units);
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
    status = wt_walk_join_parts(wk, parts + r0, r1 - r0, n_threads);
    for (int64_t k = r0; k < r1 && status == WT_OK; k++)
      for (int64_t e = 0; e < parts[k].n_e; e++) {
        const bulk_entry *be = &parts[k].e[e];
        wt_walk_add_bulk(wk, be->out, be->slot, be->n, be->w);
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

