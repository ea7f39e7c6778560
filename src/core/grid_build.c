/* Pruning by the largest angle and exact bulk counting of cell pairs: the
 * per-catalog stage. The per-pair stage, the walk, is in grid_walk.c.
 *
 * The points of every range of a catalog (its patches, or all of it) are
 * sorted by a key: a cell of a grid on the sphere (declination bands of
 * height h cut in right ascension), then a Morton code of the position
 * inside the cell (10 bits per axis). Each cell is the root of a tree
 * whose nodes are runs of one key prefix, so every node is a contiguous
 * range of points; a node has a bounding cap (the normalised mean of its
 * points and the largest angle from it).
 *
 * Nothing here depends on the other catalog, the bins or the engine: the
 * sorted points and the trees depend on the points and the cell size
 * alone, so a catalog keeps them (catalog.c) for every count it enters
 * with that cell size (DD, DR and RR in one wtheta() call). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"
#include "threads.h"
#include "floor/team.h"
#include "floor/pages.h"

#define DEG (M_PI / 180.0)
#define MORTON_BITS WT_MORTON_BITS
#define LEAF 64                      /* points in a node that is not split */

typedef wt_grid_shape grid_shape;
typedef wt_grid_node node;
typedef wt_grid_tree range_tree;

int wt_grid_shape_init(grid_shape *g, double h)
{
  g->h = h;
  g->n_bands = (int)ceil(180.0 / h);
  if (g->n_bands < 1) g->n_bands = 1;
  g->n_ra = malloc((size_t)g->n_bands * sizeof *g->n_ra);
  g->first = malloc(((size_t)g->n_bands + 1) * sizeof *g->first);
  if (!g->n_ra || !g->first) return WT_ERR_NOMEM;
  int64_t k = 0;
  for (int b = 0; b < g->n_bands; b++) {
    double d0 = -90.0 + b * h, d1 = d0 + h > 90.0 ? 90.0 : d0 + h;
    double dmin = d0 <= 0.0 && d1 >= 0.0 ? 0.0 : fmin(fabs(d0), fabs(d1));
    int n = (int)floor(360.0 * cos(dmin * DEG) / h);
    g->n_ra[b] = n < 1 ? 1 : n;
    g->first[b] = k;
    k += g->n_ra[b];
  }
  g->first[g->n_bands] = k;
  g->n_cells = k;
  return WT_OK;
}

void wt_grid_shape_free(grid_shape *g)
{
  free(g->n_ra);
  free(g->first);
}

static void node_cap(node *nd, const double *x, const double *y,
                     const double *z, const double *w)
{
  double s[3] = {0, 0, 0}, sw = 0, sw2 = 0;
  for (int64_t i = nd->start; i < nd->end; i++) {
    s[0] += x[i];
    s[1] += y[i];
    s[2] += z[i];
    double wi = w ? w[i] : 1.0;
    sw += wi;
    sw2 += wi * wi;
  }
  double len = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
  if (len > 0) {
    for (int k = 0; k < 3; k++) nd->c[k] = s[k] / len;
  } else {
    nd->c[0] = x[nd->start];
    nd->c[1] = y[nd->start];
    nd->c[2] = z[nd->start];
  }
  double m = 0;
  for (int64_t i = nd->start; i < nd->end; i++) {
    double dx = x[i] - nd->c[0], dy = y[i] - nd->c[1], dz = z[i] - nd->c[2];
    double d2 = dx * dx + dy * dy + dz * dz;
    if (d2 > m) m = d2;
  }
  /* distances are those between the double vectors in R^3, where the
   * triangle inequality bounds every pair exactly; d2 rounds relatively */
  nd->r = sqrt(m) * (1.0 + 1e-12);
  nd->ang = 2.0 * asin(fmin(1.0, nd->r / 2.0));
  nd->w = sw;
  nd->w2 = sw2;
}

/* a node more in t's array, grown by doubling from 4: each cell's tree
 * starts in its own array (sort_range()), and where the cells are sparse
 * most hold one node; a first array of 256 nodes (22 KB) made 4 KB of
 * touched memory a point (10^6 points with a last edge of 0.01 degree
 * took 4.4 GB) */
static int64_t new_node(range_tree *t)
{
  if (t->n_nodes == t->cap_nodes) {
    int64_t cap = t->cap_nodes ? 2 * t->cap_nodes : 4;
    node *m = realloc(t->nodes, (size_t)cap * sizeof *m);
    if (!m) return -1;
    t->nodes = m;
    t->cap_nodes = cap;
  }
  return t->n_nodes++;
}

/* the node of points [start, end) sharing key >> shift; returns its index
 * or -1 when memory runs out */
static int64_t build(range_tree *t, const uint64_t *key, int64_t koff,
                     int64_t start, int64_t end, int shift, const double *x,
                     const double *y, const double *z, const double *w)
{
  int64_t id = new_node(t);
  if (id < 0) return -1;
  node *nd = &t->nodes[id];
  nd->start = start;
  nd->end = end;
  for (int k = 0; k < 4; k++) nd->child[k] = -1;
  node_cap(nd, x, y, z, w);
  if (end - start <= LEAF || shift == 0) return id;
  int64_t s = start;
  for (int k = 0; k < 4 && s < end; k++) {
    uint64_t want = ((key[start - koff] >> shift) << 2) | (uint64_t)k;
    int64_t e = s;
    while (e < end && (key[e - koff] >> (shift - 2)) == want) e++;
    if (e > s) {
      int64_t c = build(t, key, koff, s, e, shift - 2, x, y, z, w);
      if (c < 0) return -1;
      t->nodes[id].child[k] = (int32_t)c;
    }
    s = e;
  }
  return id;
}

/* points ahead that the gather prefetches: 13% off the gather of 10^7
 * points (2-core VM) */
#define GATHER_AHEAD 16

/* the keys of a range's points, and their order before the sort */
typedef struct {
  const grid_shape *g;
  const wt_points *p;
  int64_t r0;
  uint64_t *key;
  int64_t *order;
  int vector;                        /* wt_grid_keys_vector() */
} range_keys;

static void range_keys_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const range_keys *K = (const range_keys *)arg;
  const wt_points *p = K->p;
  const int64_t r0 = K->r0;
  (void)tid;
  wt_grid_keys(K->g, p->x + r0 + lo, p->y + r0 + lo, p->z + r0 + lo, hi - lo,
               K->key + lo, K->vector);
  for (int64_t i = lo; i < hi; i++) K->order[i] = i;
}

/* the gather of a range's points (and their words and labels) into q* in
 * the sorted order */
typedef struct {
  const wt_points *p;
  double *qx, *qy, *qz, *qw;
  uint32_t *qb;
  int32_t *ql;
  int64_t r0, n;
  const int64_t *order;
} range_gather;

static void range_gather_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const range_gather *G = (const range_gather *)arg;
  const wt_points *p = G->p;
  const int64_t r0 = G->r0, n = G->n;
  const int64_t *order = G->order;
  (void)tid;
  for (int64_t i = lo; i < hi; i++) {
    /* the points come from all over the catalog: ask for them early */
    if (i + GATHER_AHEAD < n) {
      const int64_t f = r0 + order[i + GATHER_AHEAD];
      __builtin_prefetch(p->x + f);
      __builtin_prefetch(p->y + f);
      __builtin_prefetch(p->z + f);
    }
    int64_t s = r0 + order[i];
    G->qx[r0 + i] = p->x[s];
    G->qy[r0 + i] = p->y[s];
    G->qz[r0 + i] = p->z[s];
    if (G->qw) G->qw[r0 + i] = p->w[s];
    /* bitwise words (PIP) travel with their point */
    for (int k = 0; G->qb && k < p->n_words; k++)
      G->qb[(int64_t)k * p->n + r0 + i] = p->bits[(int64_t)k * p->n + s];
    /* and so do sample labels */
    if (G->ql) G->ql[r0 + i] = p->lab[s];
  }
}

/* The cells of a range's sorted keys: the runs of one cell id. Stripes
 * of the keys count the runs that start in them, in parallel, then write
 * each run's start and cell id from their offsets (at 10^8 points one
 * serial pass each took 0.27-0.35 s of a 1.0-1.1 s build on 32 threads).
 * The same cells on any number of stripes. */
typedef struct {
  const uint64_t *key;
  int64_t n;
  int stripes;
  int64_t *first;                 /* per stripe: its runs, then their offset */
  int64_t *cell_start, *cell_id;  /* NULL while counting */
} cell_runs;

static int starts_cell(const uint64_t *key, int64_t i)
{
  return i == 0 || (key[i] >> (2 * MORTON_BITS)) !=
    (key[i - 1] >> (2 * MORTON_BITS));
}

static void cell_runs_part(void *arg, int tid, int nt)
{
  const cell_runs *C = (const cell_runs *)arg;
  for (int t = tid; t < C->stripes; t += nt) {
    const int64_t i0 = C->n * t / C->stripes,
                  i1 = C->n * (t + 1) / C->stripes;
    if (C->cell_start == NULL) {
      int64_t m = 0;
      for (int64_t i = i0; i < i1; i++) m += starts_cell(C->key, i);
      C->first[t] = m;
    } else {
      int64_t c = C->first[t];
      for (int64_t i = i0; i < i1; i++)
        if (starts_cell(C->key, i)) {
          C->cell_start[c] = i;
          C->cell_id[c] = (int64_t)(C->key[i] >> (2 * MORTON_BITS));
          c++;
        }
    }
  }
}

/* each cell's tree built in its own node array; failed set (atomically)
 * when memory runs out */
typedef struct {
  range_tree *part;
  const uint64_t *key;
  const int64_t *cell_start;
  int64_t r0;
  const double *qx, *qy, *qz, *qw;
  int failed;
} cell_trees;

static void cell_trees_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  cell_trees *C = (cell_trees *)arg;
  (void)tid;
  for (int64_t cc = lo; cc < hi; cc++) {
    if (build(&C->part[cc], C->key, C->r0, C->r0 + C->cell_start[cc],
              C->r0 + C->cell_start[cc + 1], 2 * MORTON_BITS, C->qx, C->qy,
              C->qz, C->qw) < 0)
      __atomic_store_n(&C->failed, 1, __ATOMIC_RELAXED);
  }
}

/* the cells' trees copied in cell order into the range's one array, their
 * child indices shifted */
typedef struct {
  range_tree *t;
  const range_tree *part;
} cell_copies;

static void cell_copies_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const cell_copies *C = (const cell_copies *)arg;
  range_tree *t = C->t;
  const range_tree *part = C->part;
  (void)tid;
  for (int64_t cc = lo; cc < hi; cc++) {
    node *dst = t->nodes + t->root_of[cc];
    const int32_t off = (int32_t)t->root_of[cc];
    memcpy(dst, part[cc].nodes, (size_t)part[cc].n_nodes * sizeof *dst);
    for (int64_t q = 0; q < part[cc].n_nodes; q++)
      for (int k = 0; k < 4; k++)
        if (dst[q].child[k] >= 0) dst[q].child[k] += off;
  }
}

/* sorts points [r0, r1) of p into q* by key and builds one tree per cell
 * (qb: bitwise words, ql: labels, or NULL; vector: the keys by AVX2,
 * wt_grid_keys_vector(), asked once per build) */
static int sort_range(const grid_shape *g, const wt_points *p, double *qx,
                      double *qy, double *qz, double *qw, uint32_t *qb,
                      int32_t *ql, int64_t r0,
                      int64_t r1, range_tree *t, int n_threads, int vector)
{
  const int64_t n = r1 - r0;
  t->r0 = r0;
  t->r1 = r1;
  if (n == 0) return WT_OK;
  uint64_t *key = wt_alloc_big((size_t)n * sizeof *key);
  int64_t *order = wt_alloc_big((size_t)n * sizeof *order);
  if (!key || !order) {
    free(key);
    free(order);
    return WT_ERR_NOMEM;
  }
  range_keys K = {g, p, r0, key, order, vector};
  wt_team_for(n_threads, n, 0, range_keys_part, &K);
  int bits = 2 * MORTON_BITS;
  while (bits < 64 && ((uint64_t)g->n_cells >> (bits - 2 * MORTON_BITS)) > 0)
    bits++;
  /* the sort's scratch: the range's part of qx and qy, written only by
   * the gather below (a catalog of 10^8 points spared 1.6 GB of fresh
   * pages) */
  int status = wt_grid_sort_keys(key, order, n, bits, n_threads,
                         (uint64_t *)(void *)(qx + r0),
                         (int64_t *)(void *)(qy + r0));
  if (status == WT_OK) {
    range_gather G = {p, qx, qy, qz, qw, qb, ql, r0, n, order};
    wt_team_for(n_threads, n, 0, range_gather_part, &G);
    /* the cells: runs of one cell id in the sorted keys */
    const int stripes = wt_grid_stripes(n, n_threads);
    int64_t *first = malloc((size_t)stripes * sizeof *first);
    if (!first) {
      free(key);
      free(order);
      return WT_ERR_NOMEM;
    }
    cell_runs R = {key, n, stripes, first, NULL, NULL};
    wt_team_run(stripes, cell_runs_part, &R);
    int64_t n_cells = 0;
    for (int k = 0; k < stripes; k++) {
      const int64_t m = first[k];
      first[k] = n_cells;
      n_cells += m;
    }
    t->root_of = wt_alloc_big((size_t)n_cells * sizeof *t->root_of);
    t->cell_id = wt_alloc_big((size_t)n_cells * sizeof *t->cell_id);
    int64_t *cell_start =
      wt_alloc_big((size_t)(n_cells + 1) * sizeof *cell_start);
    range_tree *part = wt_calloc_big((size_t)n_cells, sizeof *part);
    if (!t->root_of || !t->cell_id || !cell_start || !part)
      status = WT_ERR_NOMEM;
    if (status == WT_OK) {
      R.cell_start = cell_start;
      R.cell_id = t->cell_id;
      wt_team_run(stripes, cell_runs_part, &R);
      cell_start[n_cells] = n;
      /* each cell's tree in its own node array, in parallel; then all of
       * them in cell order into one array (child indices shifted): the
       * same tree as a serial build */
      cell_trees C = {part, key, cell_start, r0, qx, qy, qz, qw, 0};
      wt_team_for(n_threads, n_cells, 4, cell_trees_part, &C);
      if (__atomic_load_n(&C.failed, __ATOMIC_RELAXED)) status = WT_ERR_NOMEM;
      int64_t total = 0;
      for (int64_t cc = 0; cc < n_cells && status == WT_OK; cc++) {
        t->root_of[cc] = total;
        total += part[cc].n_nodes;
      }
      if (status == WT_OK && total > INT32_MAX) status = WT_ERR_NOMEM;
      if (status == WT_OK) {
        t->nodes = wt_alloc_big((size_t)total * sizeof *t->nodes);
        if (!t->nodes) status = WT_ERR_NOMEM;
      }
      if (status == WT_OK) {
        t->n_nodes = t->cap_nodes = total;
        cell_copies D = {t, part};
        wt_team_for(n_threads, n_cells, 0, cell_copies_part, &D);
        t->n_cells = n_cells;
      }
    }
    if (part)
      for (int64_t cc = 0; cc < n_cells; cc++) free(part[cc].nodes);
    free(part);
    free(cell_start);
    free(first);
  }
  free(key);
  free(order);
  return status;
}

static void tree_free(range_tree *t)
{
  free(t->nodes);
  free(t->root_of);
  free(t->cell_id);
  memset(t, 0, sizeof *t);
}


void wt_grid_stage_free(wt_grid_stage *s)
{
  if (!s) return;
  if (s->trees)
    for (int64_t k = 0; k < s->n_trees; k++) tree_free(&s->trees[k]);
  free(s->trees);
  free(s->mem);
  free(s->bits_mem);
  free(s->lab_mem);
  wt_grid_shape_free(&s->shape);
  free(s);
}

/* the ranges of a catalog sorted each on one thread; failed the status
 * of one that failed (stored atomically), else WT_OK */
typedef struct {
  const wt_catalog *cat;
  wt_grid_stage *s;
  double *qx, *qy, *qz, *qw;
  int vector;
  int failed;
} range_sorts;

static void range_sorts_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  range_sorts *R = (range_sorts *)arg;
  const wt_catalog *cat = R->cat;
  wt_grid_stage *s = R->s;
  (void)tid;
  for (int64_t k = lo; k < hi; k++) {
    int st = sort_range(&s->shape, &cat->p, R->qx, R->qy, R->qz, R->qw,
                        s->bits_mem, s->lab_mem, cat->ranges[2 * k],
                        cat->ranges[2 * k + 1], &s->trees[k], 1, R->vector);
    if (st != WT_OK) __atomic_store_n(&R->failed, st, __ATOMIC_RELAXED);
  }
}

int wt_grid_stage_build(const wt_catalog *cat, double cell_deg,
                        int n_threads, wt_grid_stage **out)
{
  *out = NULL;
  wt_grid_stage *s = calloc(1, sizeof *s);
  if (!s) return WT_ERR_NOMEM;
  s->cell_deg = cell_deg;
  int status = wt_grid_shape_init(&s->shape, cell_deg);
  const wt_points *p = &cat->p;
  const int64_t n = p->n;
  const int weighted = p->w != NULL;
  if (status == WT_OK) {
    s->trees = calloc(cat->n_ranges > 0 ? (size_t)cat->n_ranges : 1,
                      sizeof *s->trees);
    s->mem = wt_alloc_big((size_t)n * (weighted ? 4 : 3) * sizeof(double));
    if (p->bits && p->n_words > 0) {
      s->bits_mem =
        wt_alloc_big((size_t)n * (size_t)p->n_words * sizeof(uint32_t));
      if (!s->bits_mem) status = WT_ERR_NOMEM;
    }
    if (p->lab) {
      s->lab_mem = wt_alloc_big((size_t)n * sizeof(int32_t));
      if (!s->lab_mem) status = WT_ERR_NOMEM;
    }
    if (!s->trees || !s->mem) status = WT_ERR_NOMEM;
  }
  if (status == WT_OK) {
    s->n_trees = cat->n_ranges;
    double *qx = s->mem, *qy = qx + n, *qz = qx + 2 * n,
           *qw = weighted ? qx + 3 * n : NULL;
    /* points outside every range keep their place (sort_range writes the
     * others); the ranges are disjoint (wt_catalog_init) */
    int64_t covered = 0;
    for (int64_t k = 0; k < cat->n_ranges; k++)
      covered += cat->ranges[2 * k + 1] - cat->ranges[2 * k];
    if (covered < n) {
      memcpy(qx, p->x, (size_t)n * sizeof *qx);
      memcpy(qy, p->y, (size_t)n * sizeof *qy);
      memcpy(qz, p->z, (size_t)n * sizeof *qz);
      if (qw) memcpy(qw, p->w, (size_t)n * sizeof *qw);
      if (s->bits_mem)
        memcpy(s->bits_mem, p->bits,
               (size_t)n * (size_t)p->n_words * sizeof(uint32_t));
      if (s->lab_mem)
        memcpy(s->lab_mem, p->lab, (size_t)n * sizeof(int32_t));
    }
    const int vector = wt_grid_keys_vector();
    if (cat->n_ranges >= (int64_t)n_threads && n_threads > 1) {
      /* many ranges (patches): a range per thread at a time, each sorted
       * by one thread, rather than hundreds of small parallel regions
       * (whose threads spin, and stall on a busy machine); the same trees.
       * From one range a thread (two before): 100 patches of 10^8 points
       * on 64 threads took 6.2 s one range after another, against 1.2 s
       * for the same points as one range */
      range_sorts R = {cat, s, qx, qy, qz, qw, vector, WT_OK};
      wt_team_for(n_threads, cat->n_ranges, 1, range_sorts_part, &R);
      status = __atomic_load_n(&R.failed, __ATOMIC_RELAXED);
    } else {
      for (int64_t k = 0; k < cat->n_ranges && status == WT_OK; k++)
        status = sort_range(&s->shape, p, qx, qy, qz, qw, s->bits_mem,
                            s->lab_mem,
                            cat->ranges[2 * k],
                            cat->ranges[2 * k + 1], &s->trees[k], n_threads,
                            vector);
    }
    s->sorted.x = qx;
    s->sorted.y = qy;
    s->sorted.z = qz;
    s->sorted.w = qw;
    s->sorted.bits = s->bits_mem;
    s->sorted.n_words = s->bits_mem ? p->n_words : 0;
    s->sorted.lab = s->lab_mem;
    s->sorted.n = n;
  }
  if (status != WT_OK) {
    wt_grid_stage_free(s);
    return status;
  }
  *out = s;
  return WT_OK;
}

/* Points sampled per catalog by wt_grid_cells_found(): an even stride over
 * larger catalogs keeps the cost of a call's choice of cells small beside
 * its counts (a pass over 10^8 points would take a second) */
#define OCCUPANCY_SAMPLE ((int64_t)1 << 15)
/* grids of more cells than this are not counted (a bitmap of 2 MB) */
#define OCCUPANCY_MAX_CELLS ((int64_t)1 << 24)

/* the cells of m points spread evenly over p's */
typedef struct {
  const grid_shape *g;
  const wt_points *p;
  int64_t m;
  uint64_t *cell;
} sample_cells;

static void sample_cells_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const sample_cells *S = (const sample_cells *)arg;
  const wt_points *p = S->p;
  const int64_t m = S->m;
  (void)tid;
  for (int64_t s = lo; s < hi; s++) {
    /* the s-th of m points spread evenly over the catalog */
    const int64_t i = (int64_t)((double)s * (double)p->n / (double)m);
    S->cell[s] = wt_grid_key_of(S->g, p->x[i], p->y[i], p->z[i]) >>
                 (2 * MORTON_BITS);
  }
}

int64_t wt_grid_cells_found(const wt_points *p, double cell_deg,
                            int n_threads)
{
  if (p->n <= 0) return 0;
  grid_shape g;
  memset(&g, 0, sizeof g);
  if (wt_grid_shape_init(&g, cell_deg) != WT_OK ||
      g.n_cells > OCCUPANCY_MAX_CELLS) {
    wt_grid_shape_free(&g);
    return -1;
  }
  const int64_t m = p->n < OCCUPANCY_SAMPLE ? p->n : OCCUPANCY_SAMPLE;
  uint64_t *seen = calloc((size_t)(g.n_cells + 63) / 64, sizeof *seen);
  uint64_t *cell = malloc((size_t)m * sizeof *cell);
  if (!seen || !cell) {
    free(seen);
    free(cell);
    wt_grid_shape_free(&g);
    return -1;
  }
  /* the cells of the sample in parallel (the asin and atan2 of a key are
   * most of the cost: the light grain kept the 2^15 points of a sample on
   * one thread), then marked */
  const int nt = wt_threads_for(n_threads, m, WT_TRIG_GRAIN);
  sample_cells S = {&g, p, m, cell};
  wt_team_for(nt, m, 0, sample_cells_part, &S);
  int64_t cells = 0;
  for (int64_t s = 0; s < m; s++) {
    const uint64_t c = cell[s], bit = (uint64_t)1 << (c & 63);
    if (!(seen[c >> 6] & bit)) {
      seen[c >> 6] |= bit;
      cells++;
    }
  }
  free(cell);
  free(seen);
  wt_grid_shape_free(&g);
  return cells;
}

const wt_grid_tree *wt_grid_stage_tree(const wt_grid_stage *s, int64_t r0,
                                       int64_t r1)
{
  int64_t lo = 0, hi = s->n_trees;   /* first tree not before (r0, r1) */
  while (lo < hi) {
    int64_t m = lo + (hi - lo) / 2;
    const wt_grid_tree *t = &s->trees[m];
    if (t->r0 < r0 || (t->r0 == r0 && t->r1 < r1)) lo = m + 1; else hi = m;
  }
  if (lo < s->n_trees && s->trees[lo].r0 == r0 && s->trees[lo].r1 == r1)
    return &s->trees[lo];
  return NULL;
}
