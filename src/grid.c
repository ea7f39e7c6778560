/* Pruning by the largest angle: a grid of cells on the sphere (declination
 * bands cut in right ascension). The points of every task range are sorted
 * by cell, each cell gets a bounding cap (its points' normalised mean and
 * the largest angle from it), and a task becomes one task per pair of
 * cells whose caps can come closer than the last edge. The pairs of the
 * other cell pairs all lie at or beyond the last edge: their number (and
 * weight sums) go to the slot above the last edge without being visited.
 * Counts stay exactly those of brute force. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"

#define DEG (M_PI / 180.0)

typedef struct {
  int n_bands;
  double h;                /* band height, degrees */
  int *n_ra;               /* cells per band */
  int64_t *first;          /* first cell id of each band */
  int64_t n_cells;
} grid_shape;

typedef struct {           /* one non-empty cell of one range */
  int64_t id, start, end;  /* cell id; points [start, end) after sorting */
  double c[3];             /* cap centre */
  double r;                /* cap radius, radians */
  double w;                /* sum of weights (or points) */
} cell;

typedef struct {           /* the cells of one range, by cell id */
  int64_t r0, r1;          /* the range */
  cell *cells;
  int64_t n;
} range_cells;

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

static int band_of(const grid_shape *g, double z)
{
  double dec = asin(clamp1(z)) / DEG;
  int b = (int)floor((dec + 90.0) / g->h);
  return b < 0 ? 0 : b >= g->n_bands ? g->n_bands - 1 : b;
}

static int ra_cell_of(const grid_shape *g, int b, double x, double y)
{
  double ra = atan2(y, x) / DEG;
  if (ra < 0) ra += 360.0;
  int k = (int)floor(ra / 360.0 * g->n_ra[b]);
  return k < 0 ? 0 : k >= g->n_ra[b] ? g->n_ra[b] - 1 : k;
}

/* sorts points [r0, r1) of p (copied into q) by cell and fills its cells */
static int sort_range(const grid_shape *g, const wt_points *p, double *qx, double *qy, double *qz, double *qw,
                      int64_t r0, int64_t r1, range_cells *rc)
{
  const int64_t n = r1 - r0;
  rc->r0 = r0;
  rc->r1 = r1;
  rc->cells = NULL;
  rc->n = 0;
  if (n == 0) return WT_OK;
  int64_t *id = malloc((size_t)n * sizeof *id);
  int64_t *order = malloc((size_t)n * sizeof *order);
  if (!id || !order) {
    free(id);
    free(order);
    return WT_ERR_NOMEM;
  }
  for (int64_t i = 0; i < n; i++) {
    double x = p->x[r0 + i], y = p->y[r0 + i], z = p->z[r0 + i];
    int b = band_of(g, z);
    id[i] = g->first[b] + ra_cell_of(g, b, x, y);
  }
  /* counting sort on the distinct ids present: sort (id, index) pairs */
  for (int64_t i = 0; i < n; i++) order[i] = i;
  /* radix sort by id, 16 bits at a time (ids < 2^48) */
  int64_t *tmp = malloc((size_t)n * sizeof *tmp);
  int64_t *cnt = malloc(65537 * sizeof *cnt);
  if (!tmp || !cnt) {
    free(id);
    free(order);
    free(tmp);
    free(cnt);
    return WT_ERR_NOMEM;
  }
  for (int pass = 0; pass < 3; pass++) {
    int sh = 16 * pass;
    if (pass > 0 && (g->n_cells >> sh) == 0) break;
    memset(cnt, 0, 65537 * sizeof *cnt);
    for (int64_t i = 0; i < n; i++) cnt[((id[order[i]] >> sh) & 0xFFFF) + 1]++;
    for (int k = 0; k < 65536; k++) cnt[k + 1] += cnt[k];
    for (int64_t i = 0; i < n; i++)
      tmp[cnt[(id[order[i]] >> sh) & 0xFFFF]++] = order[i];
    memcpy(order, tmp, (size_t)n * sizeof *order);
  }
  free(tmp);
  free(cnt);
  int64_t n_cells = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t s = order[i];
    qx[r0 + i] = p->x[r0 + s];
    qy[r0 + i] = p->y[r0 + s];
    qz[r0 + i] = p->z[r0 + s];
    if (qw) qw[r0 + i] = p->w[r0 + s];
    if (i == 0 || id[order[i]] != id[order[i - 1]]) n_cells++;
  }
  rc->cells = calloc((size_t)n_cells, sizeof *rc->cells);
  if (!rc->cells) {
    free(id);
    free(order);
    return WT_ERR_NOMEM;
  }
  int64_t c = -1;
  for (int64_t i = 0; i < n; i++) {
    int64_t cid = id[order[i]];
    if (c < 0 || rc->cells[c].id != cid) {
      c++;
      rc->cells[c].id = cid;
      rc->cells[c].start = r0 + i;
    }
    rc->cells[c].end = r0 + i + 1;
  }
  rc->n = n_cells;
  free(id);
  free(order);
  for (int64_t k = 0; k < n_cells; k++) {
    cell *ce = &rc->cells[k];
    double s[3] = {0, 0, 0}, w = 0;
    for (int64_t i = ce->start; i < ce->end; i++) {
      s[0] += qx[i];
      s[1] += qy[i];
      s[2] += qz[i];
      w += qw ? qw[i] : 1.0;
    }
    double len = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    if (len > 0) {
      ce->c[0] = s[0] / len;
      ce->c[1] = s[1] / len;
      ce->c[2] = s[2] / len;
    } else {
      ce->c[0] = qx[ce->start];
      ce->c[1] = qy[ce->start];
      ce->c[2] = qz[ce->start];
    }
    double m = 0;
    for (int64_t i = ce->start; i < ce->end; i++) {
      double dx = qx[i] - ce->c[0], dy = qy[i] - ce->c[1],
             dz = qz[i] - ce->c[2];
      double d2 = dx * dx + dy * dy + dz * dz;
      if (d2 > m) m = d2;
    }
    ce->r = 2.0 * asin(fmin(1.0, sqrt(m) / 2.0));
    ce->w = w;
  }
  return WT_OK;
}

static double cap_angle(const double *a, const double *b)
{
  double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return 2.0 * asin(fmin(1.0, sqrt(dx * dx + dy * dy + dz * dz) / 2.0));
}

/* a growing task list */
typedef struct {
  wt_task *t;
  int64_t n, cap;
} task_list;

static int push(task_list *l, int64_t a0, int64_t a1, int64_t b0, int64_t b1,
                int32_t out)
{
  if (l->n == l->cap) {
    int64_t cap = l->cap ? 2 * l->cap : 1024;
    wt_task *t = realloc(l->t, (size_t)cap * sizeof *t);
    if (!t) return WT_ERR_NOMEM;
    l->t = t;
    l->cap = cap;
  }
  wt_task *t = &l->t[l->n++];
  t->a0 = a0;
  t->a1 = a1;
  t->b0 = b0;
  t->b1 = b1;
  t->out = out;
  return WT_OK;
}

static const range_cells *find_range(const range_cells *rs, int n, int64_t r0,
                                     int64_t r1)
{
  for (int k = 0; k < n; k++)
    if (rs[k].r0 == r0 && rs[k].r1 == r1) return &rs[k];
  return NULL;
}

/* cell pairs of one task: kept ones as tasks, the rest into skipped */
static int refine_task(const grid_shape *g, const wt_task *t, int diagonal,
                       const range_cells *ra, const range_cells *rb,
                       const int64_t *index_b, double reach, task_list *out,
                       double *skipped_n, double *skipped_w)
{
  for (int64_t i = 0; i < ra->n; i++) {
    const cell *ca = &ra->cells[i];
    double na = (double)(ca->end - ca->start);
    /* all cells of b that may be within reach: bands, then a window in
     * right ascension; everything else in b is skipped */
    double kept_n = 0, kept_w = 0;
    double dec_a = asin(clamp1(ca->c[2]));
    double ra_a = atan2(ca->c[1], ca->c[0]);
    double far = reach + ca->r;         /* radians, from a's centre */
    for (int b = 0; b < g->n_bands; b++) {
      double d0 = (-90.0 + b * g->h) * DEG, d1 = d0 + g->h * DEG;
      if (d1 > M_PI / 2) d1 = M_PI / 2;
      /* the band's nearest declination to a's centre */
      if (dec_a - far > d1 || dec_a + far < d0) continue;
      double dmax = fmax(fabs(d0), fabs(d1));
      int nr = g->n_ra[b];
      int64_t lo = 0, hi = nr - 1;
      double s = cos(dmax) > 0 ? sin(fmin(far, M_PI / 2)) / cos(dmax) : 2.0;
      if (far < M_PI / 2 && s < 1.0) {
        double half = asin(s);
        double cw = 2.0 * M_PI / nr;
        double from = ra_a - half, to = ra_a + half;
        lo = (int64_t)floor(from / cw) - 1;
        hi = (int64_t)floor(to / cw) + 1;
        if (hi - lo + 1 >= nr) {
          lo = 0;
          hi = nr - 1;
        }
      }
      for (int64_t k = lo; k <= hi; k++) {
        int64_t kk = ((k % nr) + nr) % nr;
        int64_t j = index_b[g->first[b] + kk];
        if (j < 0) continue;
        const cell *cb = &rb->cells[j];
        if (diagonal && j < i) continue;    /* each cell pair once */
        if (cap_angle(ca->c, cb->c) - ca->r - cb->r > reach) continue;
        int st;
        if (diagonal && j == i)
          st = push(out, ca->start, ca->end, ca->start, ca->end, t->out);
        else
          st = push(out, ca->start, ca->end, cb->start, cb->end, t->out);
        if (st != WT_OK) return st;
        double nb = (double)(cb->end - cb->start);
        kept_n += diagonal && j == i ? na * (na - 1.0) / 2.0 : na * nb;
        kept_w += diagonal && j == i ? 0.0 : ca->w * cb->w;
      }
    }
    /* skipped: every pair of a's cell with the rest of b */
    if (diagonal) {
      /* pairs with cells j > i, plus none inside (the cell itself is kept:
       * its own cap always reaches itself) */
      double nb_after = 0, wb_after = 0;
      for (int64_t j = i + 1; j < rb->n; j++) {
        nb_after += (double)(rb->cells[j].end - rb->cells[j].start);
        wb_after += rb->cells[j].w;
      }
      double self_kept_n = na * (na - 1.0) / 2.0;
      skipped_n[t->out] += na * nb_after - (kept_n - self_kept_n);
      skipped_w[t->out] += ca->w * wb_after - kept_w;
    } else {
      double nb_all = (double)(rb->r1 - rb->r0), wb_all = 0;
      for (int64_t j = 0; j < rb->n; j++) wb_all += rb->cells[j].w;
      skipped_n[t->out] += na * nb_all - kept_n;
      skipped_w[t->out] += ca->w * wb_all - kept_w;
    }
  }
  return WT_OK;
}

void wt_grid_free(wt_grid *gr)
{
  free(gr->mem);
  free(gr->tasks);
  free(gr->skipped_n);
  free(gr->skipped_w);
  memset(gr, 0, sizeof *gr);
}

/* the distinct ranges of one side of the tasks, which must not overlap
 * unless identical; returns the count or -1 */
static int collect_ranges(const wt_job *job, int side, range_cells **out)
{
  int n = 0, cap = 16;
  range_cells *rs = malloc((size_t)cap * sizeof *rs);
  if (!rs) return -1;
  for (int64_t k = 0; k < job->n_tasks; k++) {
    const wt_task *t = &job->tasks[k];
    int64_t r0 = side ? t->b0 : t->a0, r1 = side ? t->b1 : t->a1;
    if (r0 == r1 || find_range(rs, n, r0, r1)) continue;
    for (int j = 0; j < n; j++) {
      if (r0 < rs[j].r1 && rs[j].r0 < r1) {   /* overlap, not identical */
        free(rs);
        return -1;
      }
    }
    if (n == cap) {
      cap *= 2;
      range_cells *m = realloc(rs, (size_t)cap * sizeof *rs);
      if (!m) {
        free(rs);
        return -1;
      }
      rs = m;
    }
    memset(&rs[n], 0, sizeof rs[n]);
    rs[n].r0 = r0;
    rs[n].r1 = r1;
    n++;
  }
  *out = rs;
  return n;
}

int wt_grid_plan(const wt_job *job, double theta_max_deg, double cell_deg,
                 wt_grid *gr)
{
  memset(gr, 0, sizeof *gr);
  grid_shape g;
  memset(&g, 0, sizeof g);
  int status = shape_init(&g, cell_deg);
  range_cells *rs[2] = {NULL, NULL};
  int n_rs[2] = {0, 0};
  int64_t *index = NULL;
  const int sides = job->is_auto ? 1 : 2;
  if (status == WT_OK) {
    for (int s = 0; s < sides && status == WT_OK; s++) {
      n_rs[s] = collect_ranges(job, s == 0 ? 0 : 1, &rs[s]);
      if (n_rs[s] < 0) status = WT_ERR_ARG;   /* overlapping ranges */
    }
    if (job->is_auto && status == WT_OK) {
      /* b ranges of an auto job are ranges of a too */
      for (int64_t k = 0; k < job->n_tasks && status == WT_OK; k++) {
        const wt_task *t = &job->tasks[k];
        if (t->b0 != t->b1 && !find_range(rs[0], n_rs[0], t->b0, t->b1))
          status = WT_ERR_ARG;
      }
    }
  }
  /* sorted copies of the points */
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
      /* points outside every range keep their place */
      memcpy(qx, src[s]->x, (size_t)n * sizeof *qx);
      memcpy(qy, src[s]->y, (size_t)n * sizeof *qy);
      memcpy(qz, src[s]->z, (size_t)n * sizeof *qz);
      if (qw) memcpy(qw, src[s]->w, (size_t)n * sizeof *qw);
      for (int k = 0; k < n_rs[s] && status == WT_OK; k++)
        status = sort_range(&g, src[s], qx, qy, qz, qw, rs[s][k].r0,
                            rs[s][k].r1, &rs[s][k]);
      q->x = qx;
      q->y = qy;
      q->z = qz;
      q->w = qw;
      q->n = n;
    }
  }
  if (status == WT_OK) {
    gr->skipped_n = calloc((size_t)job->n_out, sizeof *gr->skipped_n);
    gr->skipped_w = calloc((size_t)job->n_out, sizeof *gr->skipped_w);
    index = malloc((size_t)g.n_cells * sizeof *index);
    if (!gr->skipped_n || !gr->skipped_w || !index) status = WT_ERR_NOMEM;
    else for (int64_t c = 0; c < g.n_cells; c++) index[c] = -1;
  }
  task_list out = {NULL, 0, 0};
  /* an angle a little beyond the last edge: rounding in the caps cannot
   * skip a pair that belongs inside */
  const double reach = theta_max_deg * DEG * (1.0 + 1e-9) + 1e-12;
  const range_cells *rb_all = job->is_auto ? rs[0] : rs[1];
  const int n_rb = job->is_auto ? n_rs[0] : n_rs[1];
  const range_cells *indexed = NULL;
  for (int64_t k = 0; k < job->n_tasks && status == WT_OK; k++) {
    const wt_task *t = &job->tasks[k];
    if (t->a0 == t->a1 || t->b0 == t->b1) continue;
    const range_cells *ra = find_range(rs[0], n_rs[0], t->a0, t->a1);
    const range_cells *rb = find_range(rb_all, n_rb, t->b0, t->b1);
    if (rb != indexed) {
      if (indexed)
        for (int64_t j = 0; j < indexed->n; j++) index[indexed->cells[j].id] = -1;
      for (int64_t j = 0; j < rb->n; j++) index[rb->cells[j].id] = j;
      indexed = rb;
    }
    int diagonal = job->is_auto && t->a0 == t->b0;
    status = refine_task(&g, t, diagonal, ra, rb, index, reach, &out,
                         gr->skipped_n, gr->skipped_w);
  }
  for (int s = 0; s < 2; s++) {
    for (int k = 0; k < n_rs[s]; k++) free(rs[s][k].cells);
    free(rs[s]);
  }
  free(index);
  shape_free(&g);
  if (status != WT_OK) {
    free(out.t);
    wt_grid_free(gr);
    return status;
  }
  gr->tasks = out.t;
  gr->n_tasks = out.n;
  return WT_OK;
}
