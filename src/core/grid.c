/* Pruning by the largest angle and exact bulk counting of cell pairs.
 *
 * The points of every task range are sorted by a key: a cell of a grid on
 * the sphere (declination bands of height h cut in right ascension), then
 * a Morton code of the position inside the cell (10 bits per axis). Each
 * cell is the root of a tree whose nodes are runs of one key prefix, so
 * every node is a contiguous range of points; a node has a bounding cap
 * (the normalised mean of its points and the largest angle from it).
 *
 * A task becomes a walk over pairs of nodes. For a node pair the caps give
 * the least and greatest possible separation of its pairs. When both fall
 * in the same slot (with a margin far above rounding), every pair of the
 * node pair lies in that slot: n_a n_b pairs (and W_a W_b of weight) are
 * added to it without visiting them. That covers pruning (the slot beyond
 * the last edge) and bulk counting inside a bin. Otherwise the walk splits
 * the larger node while the pairs are many and a split may pay, and hands
 * the rest to the engine as tasks. Counts stay exactly those of brute
 * force. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"

#define DEG (M_PI / 180.0)
#define MORTON_BITS 10               /* per axis, inside a cell */
#define LEAF 64                      /* points in a node that is not split */
#define MIN_BULK ((double)(1 << 14)) /* pairs below which it always is */

typedef struct {
  int n_bands;
  double h;                          /* band height, degrees */
  int *n_ra;                         /* cells per band */
  int64_t *first;                    /* first cell id of each band */
  int64_t n_cells;
} grid_shape;

typedef struct {
  int64_t start, end;                /* points, after sorting */
  int32_t child[4];                  /* node indices, -1 for none */
  double c[3];                       /* cap centre */
  double r;                          /* cap radius as a chord (R^3 distance) */
  double ang;                        /* ... and as an angle, radians */
  double w, w2;                      /* sums of weights and of squares */
} node;

typedef struct {                     /* one range of one catalog */
  int64_t r0, r1;
  node *nodes;
  int64_t n_nodes, cap_nodes;
  int64_t *root_of;                  /* for each non-empty cell: its root */
  int64_t *cell_id;                  /* ... and its id */
  int64_t n_cells;
} range_tree;

typedef struct {                     /* what the walk writes */
  const double *upper;               /* c2 bounds of the slots */
  int n_slots, bulk;
  double min_split;                  /* pairs below which a node pair is a
                                        task, unless bulk counting beckons */
  wt_task *t;
  int64_t n_tasks, cap_tasks;
  double *bulk_n, *bulk_w;           /* histograms out0, out0 + 1, ... of
                                        n_slots each */
  int32_t out0;
} walk;

static double clamp1(double v) { return v > 1.0 ? 1.0 : v < -1.0 ? -1.0 : v; }

static int shape_init(grid_shape *g, double h)
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

static void shape_free(grid_shape *g)
{
  free(g->n_ra);
  free(g->first);
}

static uint32_t spread(uint32_t v)   /* 10 bits to the even bits of 20 */
{
  uint32_t r = 0;
  for (int k = 0; k < MORTON_BITS; k++) r |= ((v >> k) & 1u) << (2 * k);
  return r;
}

/* the sort key of a point: cell id, then its Morton code in the cell */
static uint64_t key_of(const grid_shape *g, double x, double y, double z)
{
  double dec = asin(clamp1(z)) / DEG;
  double fb = (dec + 90.0) / g->h;
  int b = (int)floor(fb);
  if (b < 0) b = 0;
  if (b >= g->n_bands) b = g->n_bands - 1;
  double ra = atan2(y, x) / DEG;
  if (ra < 0) ra += 360.0;
  double fr = ra / 360.0 * g->n_ra[b];
  int k = (int)floor(fr);
  if (k < 0) k = 0;
  if (k >= g->n_ra[b]) k = g->n_ra[b] - 1;
  const double scale = (double)(1 << MORTON_BITS);
  double u = (fr - k) * scale, v = (fb - b) * scale;
  uint32_t iu = u < 0 ? 0 : u >= scale ? (1u << MORTON_BITS) - 1 : (uint32_t)u;
  uint32_t iv = v < 0 ? 0 : v >= scale ? (1u << MORTON_BITS) - 1 : (uint32_t)v;
  uint64_t cell = (uint64_t)(g->first[b] + k);
  return (cell << (2 * MORTON_BITS)) | spread(iu) | (spread(iv) << 1);
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

static int64_t new_node(range_tree *t)
{
  if (t->n_nodes == t->cap_nodes) {
    int64_t cap = t->cap_nodes ? 2 * t->cap_nodes : 256;
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

/* Radix sort of (key, index) by key, 11 bits a pass, stable (LSD). Each
 * pass counts digits per stripe of points, in parallel, then every stripe
 * scatters its points from its own offsets: the order is the same on any
 * number of threads. */
#define RADIX_BITS 11
#define RADIX (1 << RADIX_BITS)
static int sort_keys(uint64_t *key, int64_t *order, int64_t n, int bits,
                     int n_threads)
{
  int stripes = n_threads < 1 ? 1 : n_threads;
  if (n < (int64_t)stripes * 65536) stripes = 1;   /* not worth it */
  uint64_t *k2 = malloc((size_t)n * sizeof *k2);
  int64_t *o2 = malloc((size_t)n * sizeof *o2);
  int64_t *cnt = malloc((size_t)stripes * RADIX * sizeof *cnt);
  if (!k2 || !o2 || !cnt) {
    free(k2);
    free(o2);
    free(cnt);
    return WT_ERR_NOMEM;
  }
  uint64_t *src_k = key, *dst_k = k2;
  int64_t *src_o = order, *dst_o = o2;
  for (int sh = 0; sh < bits; sh += RADIX_BITS) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(stripes) schedule(static, 1)
#endif
    for (int t = 0; t < stripes; t++) {
      int64_t *c = cnt + (size_t)t * RADIX;
      int64_t i0 = n * t / stripes, i1 = n * (t + 1) / stripes;
      memset(c, 0, RADIX * sizeof *c);
      for (int64_t i = i0; i < i1; i++) c[(src_k[i] >> sh) & (RADIX - 1)]++;
    }
    /* offsets: digit-major, stripe-minor */
    int64_t run = 0;
    for (int d = 0; d < RADIX; d++)
      for (int t = 0; t < stripes; t++) {
        int64_t v = cnt[(size_t)t * RADIX + d];
        cnt[(size_t)t * RADIX + d] = run;
        run += v;
      }
#ifdef _OPENMP
#pragma omp parallel for num_threads(stripes) schedule(static, 1)
#endif
    for (int t = 0; t < stripes; t++) {
      int64_t *c = cnt + (size_t)t * RADIX;
      int64_t i0 = n * t / stripes, i1 = n * (t + 1) / stripes;
      for (int64_t i = i0; i < i1; i++) {
        int64_t at = c[(src_k[i] >> sh) & (RADIX - 1)]++;
        dst_k[at] = src_k[i];
        dst_o[at] = src_o[i];
      }
    }
    uint64_t *tk = src_k; src_k = dst_k; dst_k = tk;
    int64_t *to = src_o; src_o = dst_o; dst_o = to;
  }
  if (src_k != key) {
    memcpy(key, src_k, (size_t)n * sizeof *key);
    memcpy(order, src_o, (size_t)n * sizeof *order);
  }
  free(k2);
  free(o2);
  free(cnt);
  return WT_OK;
}

/* sorts points [r0, r1) of p into q* by key and builds one tree per cell */
static int sort_range(const grid_shape *g, const wt_points *p, double *qx,
                      double *qy, double *qz, double *qw, int64_t r0,
                      int64_t r1, range_tree *t, int n_threads)
{
  const int64_t n = r1 - r0;
  t->r0 = r0;
  t->r1 = r1;
  if (n == 0) return WT_OK;
  uint64_t *key = malloc((size_t)n * sizeof *key);
  int64_t *order = malloc((size_t)n * sizeof *order);
  if (!key || !order) {
    free(key);
    free(order);
    return WT_ERR_NOMEM;
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(n_threads) schedule(static)
#endif
  for (int64_t i = 0; i < n; i++) {
    key[i] = key_of(g, p->x[r0 + i], p->y[r0 + i], p->z[r0 + i]);
    order[i] = i;
  }
  int bits = 2 * MORTON_BITS;
  while (bits < 64 && ((uint64_t)g->n_cells >> (bits - 2 * MORTON_BITS)) > 0)
    bits++;
  int status = sort_keys(key, order, n, bits, n_threads);
  if (status == WT_OK) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(n_threads) schedule(static)
#endif
    for (int64_t i = 0; i < n; i++) {
      int64_t s = r0 + order[i];
      qx[r0 + i] = p->x[s];
      qy[r0 + i] = p->y[s];
      qz[r0 + i] = p->z[s];
      if (qw) qw[r0 + i] = p->w[s];
    }
    /* the cells: runs of one cell id in the sorted keys */
    int64_t n_cells = 0;
    for (int64_t i = 0; i < n; i++)
      if (i == 0 || (key[i] >> (2 * MORTON_BITS)) !=
          (key[i - 1] >> (2 * MORTON_BITS)))
        n_cells++;
    t->root_of = malloc((size_t)n_cells * sizeof *t->root_of);
    t->cell_id = malloc((size_t)n_cells * sizeof *t->cell_id);
    int64_t *cell_start = malloc((size_t)(n_cells + 1) * sizeof *cell_start);
    range_tree *part = calloc((size_t)n_cells, sizeof *part);
    if (!t->root_of || !t->cell_id || !cell_start || !part)
      status = WT_ERR_NOMEM;
    if (status == WT_OK) {
      int64_t c = 0;
      for (int64_t i = 0; i < n; i++)
        if (i == 0 || (key[i] >> (2 * MORTON_BITS)) !=
            (key[i - 1] >> (2 * MORTON_BITS))) {
          cell_start[c] = i;
          t->cell_id[c] = (int64_t)(key[i] >> (2 * MORTON_BITS));
          c++;
        }
      cell_start[n_cells] = n;
      /* each cell's tree in its own node array, in parallel; then all of
       * them in cell order into one array (child indices shifted): the
       * same tree as a serial build */
      int failed = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(n_threads) schedule(dynamic, 4) \
    reduction(| : failed)
#endif
      for (int64_t cc = 0; cc < n_cells; cc++) {
        if (build(&part[cc], key, r0, r0 + cell_start[cc],
                  r0 + cell_start[cc + 1], 2 * MORTON_BITS, qx, qy, qz,
                  qw) < 0)
          failed = 1;
      }
      if (failed) status = WT_ERR_NOMEM;
      int64_t total = 0;
      for (int64_t cc = 0; cc < n_cells && status == WT_OK; cc++) {
        t->root_of[cc] = total;
        total += part[cc].n_nodes;
      }
      if (status == WT_OK && total > INT32_MAX) status = WT_ERR_NOMEM;
      if (status == WT_OK) {
        t->nodes = malloc((size_t)total * sizeof *t->nodes);
        if (!t->nodes) status = WT_ERR_NOMEM;
      }
      if (status == WT_OK) {
        t->n_nodes = t->cap_nodes = total;
#ifdef _OPENMP
#pragma omp parallel for num_threads(n_threads) schedule(static)
#endif
        for (int64_t cc = 0; cc < n_cells; cc++) {
          node *dst = t->nodes + t->root_of[cc];
          const int32_t off = (int32_t)t->root_of[cc];
          memcpy(dst, part[cc].nodes, (size_t)part[cc].n_nodes * sizeof *dst);
          for (int64_t q = 0; q < part[cc].n_nodes; q++)
            for (int k = 0; k < 4; k++)
              if (dst[q].child[k] >= 0) dst[q].child[k] += off;
        }
        t->n_cells = n_cells;
      }
    }
    if (part)
      for (int64_t cc = 0; cc < n_cells; cc++) free(part[cc].nodes);
    free(part);
    free(cell_start);
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

static double chord(const double *a, const double *b)
{
  double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return sqrt(dx * dx + dy * dy + dz * dz);
}

static int push(walk *wk, int64_t a0, int64_t a1, int64_t b0, int64_t b1,
                int32_t out)
{
  if (wk->n_tasks == wk->cap_tasks) {
    int64_t cap = wk->cap_tasks ? 2 * wk->cap_tasks : 1024;
    wt_task *t = realloc(wk->t, (size_t)cap * sizeof *t);
    if (!t) return WT_ERR_NOMEM;
    wk->t = t;
    wk->cap_tasks = cap;
  }
  wt_task *t = &wk->t[wk->n_tasks++];
  t->a0 = a0;
  t->a1 = a1;
  t->b0 = b0;
  t->b1 = b1;
  t->out = out;
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

static void add_bulk(walk *wk, int32_t out, int slot, double n, double w)
{
  size_t at = (size_t)(out - wk->out0) * (size_t)wk->n_slots + (size_t)slot;
  wk->bulk_n[at] += n;
  wk->bulk_w[at] += w;
}

/* the pairs between node ia of A and node ib of B (the same node of the
 * same tree when diag: its unordered pairs) */
static int pair_nodes(walk *wk, const range_tree *A, int64_t ia,
                      const range_tree *B, int64_t ib, int diag, int32_t out)
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
  slot_range(wk, lo * lo, hi * hi, &slo, &shi);
  const int above = wk->n_slots - 1, slot = slo;
  if (slo == shi && (wk->bulk || slot == above)) {
    double w = diag ? (a->w * a->w - a->w2) / 2.0 : a->w * b->w;
    add_bulk(wk, out, slot, pairs, w);
    return WT_OK;
  }
  int a_leaf = a->child[0] < 0 && a->child[1] < 0 && a->child[2] < 0 &&
               a->child[3] < 0;
  int b_leaf = b->child[0] < 0 && b->child[1] < 0 && b->child[2] < 0 &&
               b->child[3] < 0;
  /* split while it may prune, or while nodes a quarter the size would lie
   * inside one bin (bulk counting two levels down) */
  int hopeful = 0;
  if (wk->bulk && !diag && pairs > MIN_BULK) {
    double s = chord(a->c, b->c), q = (a->r + b->r) / 4.0;
    int qlo, qhi;
    slot_range(wk, fmax(0.0, s - q) * fmax(0.0, s - q), (s + q) * (s + q),
               &qlo, &qhi);
    hopeful = qlo == qhi;
  }
  int split = !(a_leaf && b_leaf) &&
              (hopeful || (pairs > wk->min_split && shi == above));
  if (!split) {
    if (diag) return push(wk, a->start, a->end, a->start, a->end, out);
    return push(wk, a->start, a->end, b->start, b->end, out);
  }
  int status = WT_OK;
  if (diag) {
    for (int i = 0; i < 4 && status == WT_OK; i++) {
      if (a->child[i] < 0) continue;
      for (int j = i; j < 4 && status == WT_OK; j++) {
        if (a->child[j] < 0) continue;
        status = pair_nodes(wk, A, a->child[i], A, a->child[j], i == j, out);
      }
    }
    return status;
  }
  if (!a_leaf && (b_leaf || na >= nb)) {
    for (int i = 0; i < 4 && status == WT_OK; i++)
      if (a->child[i] >= 0)
        status = pair_nodes(wk, A, a->child[i], B, ib, 0, out);
  } else {
    for (int j = 0; j < 4 && status == WT_OK; j++)
      if (b->child[j] >= 0)
        status = pair_nodes(wk, A, ia, B, b->child[j], 0, out);
  }
  return status;
}

/* the cells of b near cell ca of a, by band and a window in right
 * ascension; the rest of b lies beyond the last edge */
/* the pairs of cell i of ta with the cells of tb within reach; before_n,
 * before_w: points and weight of the cells of ta before cell i (used when
 * diagonal, tb being ta) */
static int walk_cell(const grid_shape *g, walk *wk, const wt_task *t,
                     int diagonal, const range_tree *ta, const range_tree *tb,
                     const int64_t *index_b, double reach, int64_t i,
                     double tot_n, double tot_w, double before_n,
                     double before_w)
{
  const node *ca = &ta->nodes[ta->root_of[i]];
  double na = (double)(ca->end - ca->start);
  double kept_n = 0, kept_w = 0;
  double dec_a = asin(clamp1(ca->c[2]));
  double ra_a = atan2(ca->c[1], ca->c[0]);
  double far = reach + ca->ang;
  for (int band = 0; band < g->n_bands; band++) {
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
      int64_t kk = ((k % nr) + nr) % nr;
      int64_t j = index_b[g->first[band] + kk];
      if (j < 0 || (diagonal && j < i)) continue;   /* each pair once */
      const node *cb = &tb->nodes[tb->root_of[j]];
      int st = pair_nodes(wk, ta, ta->root_of[i], tb, tb->root_of[j],
                          diagonal && j == i, t->out);
      if (st != WT_OK) return st;
      double nb = (double)(cb->end - cb->start);
      if (diagonal && j == i) continue;
      kept_n += na * nb;
      kept_w += ca->w * cb->w;
    }
  }
  /* the pairs of a's cell with cells never looked at: beyond reach; for
   * the diagonal, with the cells after it (each cell pair once) */
  double nb_rest = diagonal ? tot_n - before_n - na : tot_n;
  double wb_rest = diagonal ? tot_w - before_w - ca->w : tot_w;
  add_bulk(wk, t->out, wk->n_slots - 1, na * nb_rest - kept_n,
           ca->w * wb_rest - kept_w);
  return WT_OK;
}

/* cells of A per unit of parallel work in refine_task: the units are the
 * same on any number of threads, so are the task list and the sums */
#define WALK_CHUNK 8

/* A task as tasks of node pairs and bulk counts. Runs of WALK_CHUNK cells
 * of A walk in parallel, each into its own task list and slot sums, which
 * are then joined in cell order: the same task list as one walk over all
 * cells. */
static int refine_task(const grid_shape *g, walk *wk, const wt_task *t,
                       int diagonal, const range_tree *ta,
                       const range_tree *tb, const int64_t *index_b,
                       double reach, int n_threads)
{
  /* points and weight of b in all, and (diagonal: b is a) in the cells
   * before each cell, for the pairs no cell pair looked at */
  double tot_n = 0, tot_w = 0;
  for (int64_t j = 0; j < tb->n_cells; j++) {
    const node *cb = &tb->nodes[tb->root_of[j]];
    tot_n += (double)(cb->end - cb->start);
    tot_w += cb->w;
  }
  const int64_t n_cells = ta->n_cells;
  const int64_t n_chunks = (n_cells + WALK_CHUNK - 1) / WALK_CHUNK;
  const int n_slots = wk->n_slots;
  double *before = malloc((size_t)(2 * n_cells + 1) * sizeof *before);
  walk *parts = calloc((size_t)(n_chunks + 1), sizeof *parts);
  double *sums = calloc((size_t)(n_chunks + 1) * 2 * (size_t)n_slots,
                        sizeof *sums);
  int *st = malloc((size_t)(n_chunks + 1) * sizeof *st);
  int status = before && parts && sums && st ? WT_OK : WT_ERR_NOMEM;
  if (status == WT_OK) {
    double bn = 0, bw = 0;
    for (int64_t i = 0; i < n_cells; i++) {
      const node *ca = &ta->nodes[ta->root_of[i]];
      before[2 * i] = bn;
      before[2 * i + 1] = bw;
      bn += (double)(ca->end - ca->start);
      bw += ca->w;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(n_threads) schedule(dynamic, 1)
#endif
    for (int64_t c = 0; c < n_chunks; c++) {
      walk *w = &parts[c];
      w->upper = wk->upper;
      w->n_slots = n_slots;
      w->bulk = wk->bulk;
      w->min_split = wk->min_split;
      w->bulk_n = sums + (size_t)c * 2 * (size_t)n_slots;
      w->bulk_w = w->bulk_n + n_slots;
      w->out0 = t->out;
      st[c] = WT_OK;
      int64_t i1 = (c + 1) * WALK_CHUNK < n_cells ? (c + 1) * WALK_CHUNK
                                                   : n_cells;
      for (int64_t i = c * WALK_CHUNK; i < i1 && st[c] == WT_OK; i++)
        st[c] = walk_cell(g, w, t, diagonal, ta, tb, index_b, reach, i,
                          tot_n, tot_w, before[2 * i], before[2 * i + 1]);
    }
    for (int64_t c = 0; c < n_chunks && status == WT_OK; c++) {
      status = st[c];
      const walk *w = &parts[c];
      for (int64_t q = 0; q < w->n_tasks && status == WT_OK; q++)
        status = push(wk, w->t[q].a0, w->t[q].a1, w->t[q].b0, w->t[q].b1,
                      w->t[q].out);
      for (int k = 0; k < n_slots; k++)
        add_bulk(wk, t->out, k, w->bulk_n[k], w->bulk_w[k]);
    }
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
  free(gr->mem);
  free(gr->tasks);
  free(gr->bulk_n);
  free(gr->bulk_w);
  memset(gr, 0, sizeof *gr);
}

static const range_tree *find_range(const range_tree *rs, int n, int64_t r0,
                                    int64_t r1)
{
  for (int k = 0; k < n; k++)
    if (rs[k].r0 == r0 && rs[k].r1 == r1) return &rs[k];
  return NULL;
}

/* the distinct ranges of one side of the tasks, which must not overlap
 * unless identical; returns their number, -1 on overlap, -2 on memory */
static int collect_ranges(const wt_job *job, int side, range_tree **out)
{
  int n = 0, cap = 16;
  range_tree *rs = calloc((size_t)cap, sizeof *rs);
  if (!rs) return -2;
  for (int64_t k = 0; k < job->n_tasks; k++) {
    const wt_task *t = &job->tasks[k];
    int64_t r0 = side ? t->b0 : t->a0, r1 = side ? t->b1 : t->a1;
    if (r0 == r1 || find_range(rs, n, r0, r1)) continue;
    for (int j = 0; j < n; j++) {
      if (r0 < rs[j].r1 && rs[j].r0 < r1) {
        free(rs);
        return -1;
      }
    }
    if (n == cap) {
      range_tree *m = realloc(rs, (size_t)(2 * cap) * sizeof *rs);
      if (!m) {
        free(rs);
        return -2;
      }
      rs = m;
      memset(rs + cap, 0, (size_t)cap * sizeof *rs);
      cap *= 2;
    }
    rs[n].r0 = r0;
    rs[n].r1 = r1;
    n++;
  }
  *out = rs;
  return n;
}

int wt_grid_plan(const wt_job *job, double theta_max_deg, double cell_deg,
                 int bulk, double min_split, wt_grid *gr)
{
  memset(gr, 0, sizeof *gr);
  const int n_slots = job->bins->n_bins + 2;
  grid_shape g;
  memset(&g, 0, sizeof g);
  int status = shape_init(&g, cell_deg);
  range_tree *rs[2] = {NULL, NULL};
  int n_rs[2] = {0, 0};
  const int sides = job->is_auto ? 1 : 2;
  for (int s = 0; s < sides && status == WT_OK; s++) {
    n_rs[s] = collect_ranges(job, s, &rs[s]);
    if (n_rs[s] < 0) {
      status = n_rs[s] == -1 ? WT_ERR_ARG : WT_ERR_NOMEM;
      n_rs[s] = 0;
    }
  }
  if (job->is_auto && status == WT_OK) {
    for (int64_t k = 0; k < job->n_tasks && status == WT_OK; k++) {
      const wt_task *t = &job->tasks[k];
      if (t->b0 != t->b1 && !find_range(rs[0], n_rs[0], t->b0, t->b1))
        status = WT_ERR_ARG;
    }
  }
  const wt_points *src[2] = {&job->a, &job->b};
  const int weighted = job->a.w != NULL;
  size_t total = 0;
  for (int s = 0; s < sides; s++)
    total += (size_t)src[s]->n * (weighted ? 4 : 3);
  if (status == WT_OK) {
    gr->mem = malloc(total * sizeof(double));
    if (!gr->mem) status = WT_ERR_NOMEM;
  }
  if (status == WT_OK) {
    double *m = gr->mem;
    for (int s = 0; s < sides; s++) {
      int64_t n = src[s]->n;
      wt_points *q = s == 0 ? &gr->a : &gr->b;
      double *qx = m, *qy = m + n, *qz = m + 2 * n,
             *qw = weighted ? m + 3 * n : NULL;
      m += (size_t)n * (weighted ? 4 : 3);
      /* points outside every task range keep their place (sort_range
       * writes the others) */
      int64_t covered = 0;
      for (int k = 0; k < n_rs[s]; k++) covered += rs[s][k].r1 - rs[s][k].r0;
      if (covered < n) {
        memcpy(qx, src[s]->x, (size_t)n * sizeof *qx);
        memcpy(qy, src[s]->y, (size_t)n * sizeof *qy);
        memcpy(qz, src[s]->z, (size_t)n * sizeof *qz);
        if (qw) memcpy(qw, src[s]->w, (size_t)n * sizeof *qw);
      }
      for (int k = 0; k < n_rs[s] && status == WT_OK; k++)
        status = sort_range(&g, src[s], qx, qy, qz, qw, rs[s][k].r0,
                            rs[s][k].r1, &rs[s][k], job->n_threads);
      q->x = qx;
      q->y = qy;
      q->z = qz;
      q->w = qw;
      q->n = n;
    }
  }
  walk wk;
  memset(&wk, 0, sizeof wk);
  wk.n_slots = n_slots;
  wk.bulk = bulk;
  wk.min_split = min_split;
  int64_t *index = NULL;
  if (status == WT_OK) {
    size_t n_all = (size_t)job->n_out * (size_t)n_slots;
    gr->bulk_n = calloc(n_all, sizeof *gr->bulk_n);
    gr->bulk_w = calloc(n_all, sizeof *gr->bulk_w);
    index = malloc((size_t)g.n_cells * sizeof *index);
    if (!gr->bulk_n || !gr->bulk_w || !index)
      status = WT_ERR_NOMEM;
  }
  if (status == WT_OK) {
    for (int64_t c = 0; c < g.n_cells; c++) index[c] = -1;
    wk.upper = job->bins->upper;
    wk.bulk_n = gr->bulk_n;
    wk.bulk_w = gr->bulk_w;
  }
  const double reach = theta_max_deg * DEG * (1.0 + 1e-9) + 1e-12;
  const range_tree *rb_all = job->is_auto ? rs[0] : rs[1];
  const int n_rb = job->is_auto ? n_rs[0] : n_rs[1];
  const range_tree *indexed = NULL;
  for (int64_t k = 0; k < job->n_tasks && status == WT_OK; k++) {
    const wt_task *t = &job->tasks[k];
    if (t->a0 == t->a1 || t->b0 == t->b1) continue;
    const range_tree *ta = find_range(rs[0], n_rs[0], t->a0, t->a1);
    const range_tree *tb = find_range(rb_all, n_rb, t->b0, t->b1);
    if (tb != indexed) {
      if (indexed)
        for (int64_t j = 0; j < indexed->n_cells; j++)
          index[indexed->cell_id[j]] = -1;
      for (int64_t j = 0; j < tb->n_cells; j++) index[tb->cell_id[j]] = j;
      indexed = tb;
    }
    status = refine_task(&g, &wk, t, job->is_auto && t->a0 == t->b0, ta, tb,
                         index, reach, job->n_threads);
  }
  for (int s = 0; s < 2; s++) {
    for (int k = 0; k < n_rs[s]; k++) tree_free(&rs[s][k]);
    free(rs[s]);
  }
  free(index);
  shape_free(&g);
  if (status != WT_OK) {
    free(wk.t);
    wt_grid_free(gr);
    return status;
  }
  gr->tasks = wk.t;
  gr->n_tasks = wk.n_tasks;
  return WT_OK;
}
