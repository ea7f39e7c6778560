/* The CPU engine's driver: work items, per-thread histograms, the choice
 * of kernel, and the loop that hands out chunks and polls between them.
 * See engine.h for the design. */
#include "engine.h"
#include "floor/team.h"

/* The count form's counters (wt_ctx.pip_count: copies of n_slots x K,
 * K = pip_k, the counter of slot s and popcount q at s * K + q) into the
 * work item's counts and weight sums: per slot, n[q] summed over the
 * copies (exact), then acc[s] += sum_q n[q] and wacc[s] += sum_q n[q]
 * by_count[q], q ascending: a fixed order, so the sums are the same on
 * every run and thread count. */
static void flush_count(const wt_ctx *c, wt_thread *t)
{
  const int K = c->pip_k;
  const size_t per_copy = (size_t)c->n_slots * K;
  const double *by = c->pip->by_count;
  for (int s = 0; s < c->n_slots; s++) {
    uint64_t n_s = 0;
    double v = 0.0;
    for (int q = 0; q < K; q++) {
      uint64_t n = 0;
      for (int k = 0; k < c->copies; k++) {
        uint32_t *p = t->h + (size_t)k * per_copy + (size_t)s * K + q;
        n += *p;
        *p = 0;
      }
      if (n == 0) continue;
      n_s += n;
      double w = (double)n * by[q];
      WT_UNFUSED(w);
      v += w;
    }
    t->acc[s] += n_s;
    t->wacc[s] += v;
  }
  t->pending = 0;
}

static void flush(const wt_ctx *c, wt_thread *t)
{
  if (c->pip_count) {
    flush_count(c, t);
    return;
  }
  /* in vectors: a labelled job's copies hold La Lb histograms each, and
   * its many small work items flush them all (restrict: the counters and
   * the record never overlap) */
  const int hist = c->hist;
  uint64_t *restrict acc = t->acc;
  for (int k = 0; k < c->copies; k++) {
    uint32_t *restrict h = t->h + (size_t)k * hist;
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int s = 0; s < hist; s++) {
      acc[s] += h[s];
      h[s] = 0;
    }
  }
  t->pending = 0;
}

/* Adds the double sums of the copies, h (laid out as the counters), into
 * the work item's sums acc, in a fixed order, and clears them. */
static void flush_sums(const wt_ctx *c, double *h, double *acc)
{
  for (int s = 0; s < c->hist; s++) {
    double v = 0.0;
    for (int k = 0; k < c->copies; k++) {
      double *p = h + (size_t)k * c->hist + s;
      v += *p;
      *p = 0.0;
    }
    acc[s] += v;
  }
}

/* The weight sums and the angle sums (mean_theta) of the copies into the
 * work item's sums. Called at least every WT_WFLUSH such pairs, so that no
 * double running sum takes more than a few thousand terms. */
static void flush_w(const wt_ctx *c, wt_thread *t)
{
  if (t->wh) flush_sums(c, t->wh, t->wacc);
  if (t->th) flush_sums(c, t->th, t->thacc);
  t->wpending = 0;
}

/* see engine.h */
void wt_cpu_tile_floats(float *tile, int64_t stride, const double *x,
                        const double *y, const double *z, int64_t n)
{
  for (int64_t j = 0; j < n; j++) {
    tile[j] = (float)x[j];
    tile[stride + j] = (float)y[j];
    tile[2 * stride + j] = (float)z[j];
  }
}

/* The ragged end [j, j1) of a row group's columns, fewer than a vector of
 * `lanes` but at least a quarter of one, through the vector kernel instead
 * of plain C: the columns are copied into a block of one vector (t->pad,
 * and t->pad_tile as floats), the rest of which repeats the last column at
 * weight 0. The block is kept for the next row groups of the same columns
 * (t->pad_j, pad_j1, pad_lanes). Each row's pairs with the repeats fall in
 * the slot of its pair with the last column (slot_of(), as every kernel
 * decides), and are taken off the work item's counts there: 64-bit
 * unsigned arithmetic, exact once the counters are flushed in. The repeats
 * add w_i * 0 to the weight sums, which leaves them unchanged. Returns the
 * columns done (0: too few for a vector to pay). */
static int64_t count_tail(const wt_ctx *c, wt_thread *t, const wt_points *a,
                          int64_t i0, int nr, const wt_points *b, int64_t j,
                          int64_t j1, int f32, int slo, int span)
{
  const int lanes = span > 0 ? c->narrow_lanes
                    : f32 ? c->vec32_lanes : c->vec_lanes;
  const int64_t rem = j1 - j;
  const int floats = f32 || (span > 0 && c->vec32);
  if (t->pad == NULL || lanes == 0 || rem >= lanes || 4 * rem < lanes)
    return 0;
  double *px = t->pad, *py = px + WT_PAD, *pz = py + WT_PAD;
  double *pw = pz + WT_PAD;
  int32_t *pl = t->pad_lab;
  if (t->pad_j != j || t->pad_j1 != j1 || t->pad_lanes != lanes ||
      t->pad_floats < floats) {
    for (int l = 0; l < lanes; l++) {
      const int64_t k = l < rem ? j + l : j1 - 1;
      px[l] = b->x[k];
      py[l] = b->y[k];
      pz[l] = b->z[k];
      pw[l] = l < rem && b->w ? b->w[k] : 0.0;
      if (b->lab) pl[l] = b->lab[k];
    }
    if (floats)
      wt_cpu_tile_floats(t->pad_tile, c->tile_stride, px, py, pz, lanes);
    t->pad_j = j;
    t->pad_j1 = j1;
    t->pad_lanes = lanes;
    t->pad_floats = floats;
  }
  wt_points pb;
  memset(&pb, 0, sizeof pb);
  pb.x = px;
  pb.y = py;
  pb.z = pz;
  pb.w = b->w ? pw : NULL;
  pb.lab = b->lab ? pl : NULL;
  pb.n = lanes;
#ifdef WT_X86
  if (span > 0)
    c->narrow_fn(c, t->h + (c->narrow_rows ? a->lab[i0] : 0), t->pad_tile,
                 a, i0, nr, &pb, 0, lanes, slo, span);
  else
#endif
    (f32 ? c->vec32 : c->vec)(c, t->h, t->wh, t->pad_tile, a, i0, nr, &pb, 0,
                              lanes);
  for (int r = 0; r < nr; r++)
    t->acc[(b->lab ? a->lab[i0 + r] + pl[lanes - 1] : 0) +
           slot_of(c->bins, pair_d2(a->x[i0 + r], a->y[i0 + r],
                                    a->z[i0 + r], px[lanes - 1],
                                    py[lanes - 1], pz[lanes - 1]))] -=
      (uint64_t)(lanes - rem);
  return rem;
}

/* n more pairs into the thread's 32-bit counters (and double sums): the
 * counters are flushed first where they could overflow */
static void account(const wt_ctx *c, wt_thread *t, uint64_t n)
{
  if (t->pending + n >= WT_FLUSH) flush(c, t);
  t->pending += n;
  if (t->wh || t->th) {
    if (t->wpending + n > WT_WFLUSH) flush_w(c, t);
    t->wpending += n;
  }
}

/* Counts the pairs of rows [i0, i0 + nr) and columns [j0, j1), at most
 * WT_ROWS * WT_TILE of them: a vector kernel takes whole vectors, then the
 * ragged end padded to a vector (count_tail()) or plain C. tile: columns
 * [j0, j1) as floats (wt_cpu_tile_floats()), or NULL. Without it, fewer columns
 * than a double vector go to plain C: the kernel would count none of
 * them, and count_tail() a vector of mostly repeats and then take them
 * off again (a diagonal block's small triangles, do_item(), cost about
 * 100 cycles a pair so). */
static void count_tile(const wt_ctx *c, wt_thread *t, const wt_points *a,
                       int64_t i0, int nr, const wt_points *b, int64_t j0,
                       int64_t j1, const float *tile, int slo, int span)
{
  const int in_tile = tile != NULL;
  account(c, t, (uint64_t)nr * (uint64_t)(j1 - j0));
  /* the count form's canary (tests): a false pair in slot 1, popcount 0 */
  if (c->pip_count_fault) t->h[c->pip_k]++;
  wt_vec_fn vec = in_tile && c->vec32 ? c->vec32 : c->vec;
  /* see narrow_span(); the float one needs the tile */
  int narrow = span > 0 && (in_tile || c->vec32 == NULL);
  if (!in_tile && !narrow && j1 - j0 < c->vec_lanes) vec = NULL;
#ifdef WT_X86
  /* fewer than WT_ROWS rows through the sliced form in one call, not row
   * by row (the rows at the end of a work item: row by row through the
   * table kernel they took about 3 cycles a pair against 1); in a job
   * labelled on its rows only, rows of one label (a run of do_item()'s
   * rows in label order) at their offset */
  if (in_tile && !narrow && nr > 1 && nr < WT_ROWS &&
      j1 - j0 >= WT_SLICED_MIN && vec == c->vec32 && c->f32_sliced &&
      !c->pip && !t->wh && !t->th &&
      (c->sorted_rows ? wt_same_label(a->lab + i0, nr) : a->lab == NULL)) {
    wt_cpu_f32_sliced(c, t->h + (a->lab ? a->lab[i0] : 0), tile, a, i0, nr,
                      b, j0, j1 - j0);
    return;
  }
#endif
  /* rows per kernel call: a group of WT_ROWS, or one; the float narrow
   * kernel takes any group, in a job labelled on its rows only
   * (wt_ctx.narrow_rows: each row's histograms at its offset) when its
   * rows share a label (do_item()'s runs), else one row a call */
  int step = vec && nr != WT_ROWS ? 1 : nr;
  if (narrow) {
#ifdef WT_X86
    const int any = c->narrow_fn == wt_cpu_f32_narrow;
#else
    const int any = 0;
#endif
    if (c->narrow_rows)
      step = any && wt_same_label(a->lab + i0, nr) ? nr : 1;
    else if (any)
      step = nr;
  }
  for (int r = 0; r < nr; r += step) {
    int64_t j = j0;
#ifdef WT_X86
    if (narrow) {
      j += c->narrow_fn(c, t->h + (c->narrow_rows ? a->lab[i0 + r] : 0),
                        tile, a, i0 + r, step, b, j0, j1 - j0, slo, span);
      t->h[slo] += (uint32_t)c->narrow_fault;
    } else
#endif
    if (vec)
      j += vec(c, t->h, t->wh, tile, a, i0 + r, step, b, j0, j1 - j0);
    /* PIP: the padded end would need padded words; plain C takes it */
    if (vec && j < j1 && !c->pip)
      j += count_tail(c, t, a, i0 + r, step, b, j, j1, vec == c->vec32, slo,
                      narrow ? span : 0);
    if (c->pip_fn)
      c->pip_fn(c, t->h, t->wh, t->th, a, i0 + r, step, b, j, j1);
    else
      wt_cpu_plain(c, t->h, t->wh, t->th, a, i0 + r, step, b, j, j1);
  }
}

static int task_is_diagonal(const wt_job *job, const wt_task *t)
{
  return job->is_auto && t->a0 == t->b0;
}

/* Rows per work item of a task: blocks of WT_BLOCK rows, as many as make
 * about WT_ITEM_PAIRS pairs against the task's columns. This depends on the
 * task only, never on the thread count, so every item's sums (and the
 * weighted results) are the same on any number of threads. */
static int64_t item_rows(const wt_task *t)
{
  int64_t cols = t->b1 - t->b0;
  int64_t blocks = cols > 0 ? WT_ITEM_PAIRS / ((int64_t)WT_BLOCK * cols) : 1;
  return (blocks < 1 ? 1 : blocks) * WT_BLOCK;
}

static int64_t item_pairs(const wt_job *job, const wt_task *t, int64_t r0,
                          int64_t r1)
{
  int64_t nr = r1 - r0;
  /* diagonal: each row i against the columns j > i of the task */
  if (task_is_diagonal(job, t)) return nr * (t->a1 - 1 - r0) - nr * (nr - 1) / 2;
  return nr * (t->b1 - t->b0);
}

/* The slots a task's pairs span when the narrow kernel takes it (its
 * slot range from the grid walk spans at most c->narrow slots, every
 * threshold of the range is usable, and the job is unweighted), else 0. */
static int narrow_span(const wt_ctx *c, const wt_task *task, int weighted)
{
  const int slo = task->slo, shi = task->shi;
  if (c->narrow == 0 || weighted || shi <= 0 || slo < 0 || shi < slo ||
      shi >= c->n_slots || shi - slo + 1 > c->narrow)
    return 0;
  if (c->edge_lo == NULL) return shi - slo + 1;    /* exact, in double */
  if (isnan(c->lo_of[slo]) || isnan(c->hi_of[shi])) return 0;
  for (int s = slo; s < shi; s++)
    if (isnan(c->edge_lo[s]) || isnan(c->edge_hi[s])) return 0;
  return shi - slo + 1;
}

/* A work item of a PIP task of one slot (slo == shi > 0: the grid walk
 * proved every pair inside that bin, WT_WALK_FIXED), with c->fixed_fn:
 * its pairs (as do_item() takes them) add to the item's count of that
 * slot, their weights, as the fixed kernel sums them per column tile, to
 * its weight sum. No d2, no slot lookup, no counters: the pairs are the
 * same as the other kernels count, so are the counts; the weight sums
 * differ from theirs by the order of summation only. */
static void do_fixed(const wt_job *job, const wt_ctx *c, const wt_task *task,
                     int64_t i0, int64_t i1, wt_thread *t)
{
  const wt_points *a = &job->a;
  const wt_points *b = job->is_auto ? &job->a : &job->b;
  const int64_t b1 = task->b1;
  double w = 0.0;
  uint64_t n = 0;
  if (task_is_diagonal(job, task)) {
    for (int64_t i = i0; i < i1; i++) {
      for (int64_t j0 = i + 1; j0 < b1; j0 += WT_TILE)
        w += c->fixed_fn(c, a, i, i + 1, b, j0,
                         b1 - j0 < WT_TILE ? b1 : j0 + WT_TILE);
      n += (uint64_t)(b1 - i - 1);
    }
  } else {
    for (int64_t j0 = task->b0; j0 < b1; j0 += WT_TILE)
      w += c->fixed_fn(c, a, i0, i1, b, j0,
                       b1 - j0 < WT_TILE ? b1 : j0 + WT_TILE);
    n = (uint64_t)(i1 - i0) * (uint64_t)(b1 - task->b0);
  }
  t->acc[task->slo] += n + (uint64_t)c->fixed_fault;
  t->wacc[task->slo] += w;
}

/* One work item: for a diagonal task of an auto job the pairs i < j with i
 * in [i0, i1), otherwise the whole rectangle of those rows against the
 * task's columns. All row groups of the item take each column tile in turn,
 * so the tile is read from memory once per item (and rounded to float
 * here only when the count has no copy of its columns as floats). */
static void do_item(const wt_job *job, const wt_ctx *c, const wt_task *task,
                    int64_t i0, int64_t i1, wt_thread *t)
{
  /* a task of one slot (the grid walk's WT_WALK_FIXED): PIP's kernel of
   * its own, or a labelled job's tally */
  const int one_slot = task->shi > 0 && task->slo == task->shi &&
    task->shi < c->n_slots;
  if (one_slot && c->fixed_fn) {
    do_fixed(job, c, task, i0, i1, t);
    return;
  }
  if (one_slot && c->lab_fixed &&
      wt_cpu_labelled_fixed(job, c, task, i0, i1, t))
    return;
  const wt_points *a = c->pa, *b = c->pb;
  int64_t j_start = task->b0;
  const int64_t j_end = task->b1;
  if (task_is_diagonal(job, task)) {
    /* the triangle inside the block: each group's own small triangle (a
     * few columns a row: plain C), then the group against
     * the rest of the block, whose columns are the block's rows: as
     * floats, when the float kernel takes the job, so that it counts
     * them (in double, they took 6 to 10 cycles a pair against 1 to 3) */
    const float *block = NULL;
    if (c->vec32 && i1 - i0 <= WT_TILE) {
      if (c->fb) {
        block = c->fb + i0;
      } else {
        wt_cpu_tile_floats(t->tile, WT_TILE, b->x + i0, b->y + i0,
                           b->z + i0, i1 - i0);
        block = t->tile;
      }
    }
    for (int64_t r0 = i0; r0 < i1; r0 += WT_ROWS) {
      int nr = (int)(i1 - r0 < WT_ROWS ? i1 - r0 : WT_ROWS);
      if (c->pip_fn == NULL) {
        account(c, t, (uint64_t)(nr * (nr - 1) / 2));
        wt_cpu_plain_triangle(c, t->h, t->wh, t->th, a, r0, nr, b);
      } else {
        for (int r = 0; r < nr - 1; r++)
          count_tile(c, t, a, r0 + r, 1, b, r0 + r + 1, r0 + nr, NULL, 0, 0);
      }
      count_tile(c, t, a, r0, nr, b, r0 + nr, i1,
                 block ? block + (r0 + nr - i0) : NULL, 0, 0);
    }
    j_start = i1;
  }
  const int span = narrow_span(c, task, t->wh != NULL);
  /* a job labelled on its rows only: rows of one label in each group,
   * from a copy of the item's rows in label order, so that the sliced
   * form, or the narrow kernel in a narrow task, takes them a group a
   * call (wt_ctx.sorted_rows) */
  const int sorted = c->sorted_rows &&
    i1 - i0 >= WT_SORTED_MIN && i1 - i0 <= t->rows.n &&
    j_end - j_start >= WT_SLICED_MIN;
  if (sorted) {
    wt_cpu_sort_rows(c, a, i0, i1, &t->rows);
    a = &t->rows;
    i1 -= i0;
    i0 = 0;
  }
  for (int64_t j0 = j_start; j0 < j_end; j0 += WT_TILE) {
    int64_t j1 = j_end - j0 < WT_TILE ? j_end : j0 + WT_TILE;
    /* the columns as floats: the count's copy, or rounded for this item */
    const float *tile = c->fb ? c->fb + j0 : t->tile;
    if (c->vec32 && !c->fb)
      wt_cpu_tile_floats(t->tile, WT_TILE, b->x + j0, b->y + j0,
                         b->z + j0, j1 - j0);
    for (int64_t r0 = i0; r0 < i1;) {
      int nr = (int)(i1 - r0 < WT_ROWS ? i1 - r0 : WT_ROWS);
      if (sorted)     /* the run of r0's label, up to WT_ROWS rows */
        for (int r = 1; r < nr; r++)
          if (a->lab[r0 + r] != a->lab[r0]) {
            nr = r;
            break;
          }
      count_tile(c, t, a, r0, nr, b, j0, j1, tile, task->slo, span);
      r0 += nr;
    }
  }
}

/* The next chunk of items, from task *task_at and row *row_at on: about
 * WT_CHUNK_PAIRS pairs per thread, at least 4 items per thread, at most
 * cap items. done: the pairs of the job before the chunk. Returns the
 * items, their pairs in *chunk. */
static int64_t next_chunk(const wt_job *job, wt_run *r, int64_t *task_at,
                          int64_t *row_at, double done, double *chunk)
{
  const int nt = r->nt;
  const size_t cap = r->cap;
  wt_item *items = r->items;
  const double chunk_pairs = (double)WT_CHUNK_PAIRS * nt;
  int64_t task = *task_at, row = *row_at;
  /* the next chunk of items */
  int64_t n_items = 0;
  double pairs = 0.0;
  while (task < job->n_tasks && (size_t)n_items < cap &&
         (pairs < chunk_pairs || n_items < 4 * nt)) {
    const wt_task *t = &job->tasks[task];
    if (row >= t->a1) {
      if (++task < job->n_tasks) row = job->tasks[task].a0;
      continue;
    }
    int64_t r1 = t->a1 - row < item_rows(t) ? t->a1 : row + item_rows(t);
    int64_t p = item_pairs(job, t, row, r1);
    int64_t more = 0;
    if (row == t->a0 && r1 == t->a1) {
      /* a whole small task: the small tasks after it into the same item */
      while (task + more + 1 < job->n_tasks && p < WT_ITEM_PAIRS) {
        const wt_task *u = &job->tasks[task + more + 1];
        const int64_t q = item_pairs(job, u, u->a0, u->a1);
        if (u->out != t->out || u->a1 - u->a0 > item_rows(u) ||
            p + q > WT_ITEM_PAIRS)
          break;
        p += q;
        more++;
      }
    }
    if (p > 0) {
      wt_item *it = &items[n_items++];
      it->task = task;
      it->r0 = row;
      it->r1 = r1;
      it->n_more = more;
      it->start = done + pairs;
      it->pairs = p;
      pairs += (double)p;
    }
    if (more > 0) {
      task += more;
      row = job->tasks[task].a1;
      continue;
    }
    row = r1;
  }
  *task_at = task;
  *row_at = row;
  *chunk = pairs;
  return n_items;
}

/* a chunk's items, taken in turn by the team's threads (count_chunk()) */
typedef struct {
  wt_job *job;
  const wt_run *r;
  int64_t n_items, next;
  int fault_thread;
  double fault_at;
  int failed;
} chunk_team;

/* one thread's part of count_chunk(): its own histograms and tiles */
static void count_items(void *v, int id, int nt)
{
  chunk_team *C = (chunk_team *)v;
  wt_job *job = C->job;
  const wt_run *r = C->r;
  const int n_slots = r->hist, weighted = r->weighted;
  const int angles = r->angles;
  const size_t per = r->per;
  const wt_item *items = r->items;
  const wt_ctx ctx = r->ctx;
  (void)nt;
  wt_thread t;
  memset(&t, 0, sizeof t);
  t.h = r->h + (size_t)id * per;
  t.wh = r->wh ? r->wh + (size_t)id * per : NULL;
  t.th = angles ? r->th + (size_t)id * per : NULL;
  t.tile = r->tiles ? r->tiles + (size_t)id * 3 * WT_TILE : NULL;
  t.pad = r->pads ? r->pads + (size_t)id * 4 * WT_PAD : NULL;
  t.pad_lab = r->pad_labs ? r->pad_labs + (size_t)id * WT_PAD : NULL;
  if (r->rows_xyz) {
    double *x = r->rows_xyz + (size_t)id * 3 * (size_t)r->rows_cap;
    t.rows.x = x;
    t.rows.y = x + r->rows_cap;
    t.rows.z = x + 2 * r->rows_cap;
    t.rows.lab = r->rows_lab + (size_t)id * (size_t)r->rows_cap;
    t.rows.n = r->rows_cap;
  }
  /* the padded vector as floats: in the count's copy, after its points,
   * or a buffer of the tile's shape */
  t.pad_tile = r->fb ? r->fb + r->pb.n + (size_t)id * WT_PAD
               : r->pad_tiles ? r->pad_tiles + (size_t)id * 3 * WT_TILE
               : NULL;
  t.pad_j = -1;
  for (;;) {
    const int64_t k = __atomic_fetch_add(&C->next, 1, __ATOMIC_RELAXED);
    if (k >= C->n_items) break;
    if (__atomic_load_n(&C->failed, __ATOMIC_RELAXED)) continue;
    const wt_item *it = &items[k];
    if (C->fault_thread && it->start <= C->fault_at &&
        C->fault_at < it->start + (double)it->pairs) {
      /* a worker that cannot go on: report and leave the item */
      int no = 0;
      if (__atomic_compare_exchange_n(&C->failed, &no, 1, 0,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        snprintf(job->message, sizeof job->message,
                 "injected fault in a CPU worker thread "
                 "(WTHETA_TEST_FAULT=thread)");
      continue;
    }
    /* direct: the thread's sums, zero between items */
    t.acc = r->direct ? r->acc_t + (size_t)id * n_slots
                      : r->rec_n + (size_t)k * n_slots;
    if (!r->direct) memset(t.acc, 0, (size_t)n_slots * sizeof *t.acc);
    t.pending = 0;
    if (weighted) {
      t.wacc = r->rec_w + (size_t)k * n_slots;
      memset(t.wacc, 0, (size_t)n_slots * sizeof *t.wacc);
    }
    if (angles) {
      t.thacc = r->rec_t + (size_t)k * n_slots;
      memset(t.thacc, 0, (size_t)n_slots * sizeof *t.thacc);
    }
    t.wpending = 0;
    do_item(job, &ctx, &job->tasks[it->task], it->r0, it->r1, &t);
    for (int64_t m = 1; m <= it->n_more; m++) {
      const wt_task *u = &job->tasks[it->task + m];
      do_item(job, &ctx, u, u->a0, u->a1, &t);
    }
    flush(&ctx, &t);
    if (weighted || angles) flush_w(&ctx, &t);
    if (r->direct) {
      /* the item's counts into its histogram, and the sums zeroed; other
       * threads may add into the same histogram meanwhile. Runs of eight
       * slots that stayed zero are passed over (a labelled job's item
       * touches a few slots of a few of its La Lb blocks) */
      uint64_t *dst = job->slots +
        (size_t)job->tasks[it->task].out * (size_t)n_slots;
      for (int s0 = 0; s0 < n_slots; s0 += 8) {
        const int s1 = s0 + 8 < n_slots ? s0 + 8 : n_slots;
        uint64_t any = 0;
        for (int s = s0; s < s1; s++) any |= t.acc[s];
        if (!any) continue;
        for (int s = s0; s < s1; s++)
          if (t.acc[s]) {
            __atomic_fetch_add(&dst[s], t.acc[s], __ATOMIC_RELAXED);
            t.acc[s] = 0;
          }
      }
    }
  }
}

/* Counts the chunk's items on the team, each into its record. Returns 1
 * when a worker failed (the message is in job->message). */
static int count_chunk(wt_job *job, wt_run *r, int64_t n_items,
                       int fault_thread, double fault_at)
{
  chunk_team C = {job, r, n_items, 0, fault_thread, fault_at, 0};
  wt_team_run(r->nt, count_items, &C);
  return C.failed;
}

/* Adds the chunk's records into the tasks' histograms, in item order. */
static void add_records(wt_job *job, wt_run *r, int64_t n_items)
{
  /* a record: the hist slots of the task's histogram block */
  const int n_slots = r->hist, weighted = r->weighted;
  const int angles = r->angles;
  const wt_item *items = r->items;
  const uint64_t *rec_n = r->rec_n;
  const double *rec_w = r->rec_w, *rec_t = r->rec_t;
  double *wchunk = r->wchunk, *tchunk = r->tchunk;
  int32_t *outs = r->outs;
  char *seen = r->seen;
  /* the records into the histograms, in item order; weight sums (and
   * angle sums) of the chunk first add up per histogram, then into the
   * job's */
  int n_seen = 0;
  for (int64_t k = 0; k < n_items; k++) {
    const int out = job->tasks[items[k].task].out;
    uint64_t *dst = job->slots + (size_t)out * n_slots;
    const uint64_t *src = rec_n + (size_t)k * n_slots;
    for (int s = 0; s < n_slots; s++) dst[s] += src[s];
    if (weighted || angles) {
      const size_t at = (size_t)out * n_slots, from = (size_t)k * n_slots;
      if (!seen[out]) {
        seen[out] = 1;
        outs[n_seen++] = out;
        if (weighted)
          memcpy(wchunk + at, rec_w + from, (size_t)n_slots * sizeof *wchunk);
        if (angles)
          memcpy(tchunk + at, rec_t + from, (size_t)n_slots * sizeof *tchunk);
      } else {
        if (weighted)
          for (int s = 0; s < n_slots; s++) wchunk[at + s] += rec_w[from + s];
        if (angles)
          for (int s = 0; s < n_slots; s++) tchunk[at + s] += rec_t[from + s];
      }
    }
  }
  for (int q = 0; q < n_seen; q++) {
    const size_t at = (size_t)outs[q] * n_slots;
    if (weighted)
      for (int s = 0; s < n_slots; s++) job->wsum[at + s] += wchunk[at + s];
    if (angles)
      for (int s = 0; s < n_slots; s++) job->thsum[at + s] += tchunk[at + s];
    seen[outs[q]] = 0;
  }
}

/* The engine. The job's tasks are cut into work items (a task and a range
 * of its rows, see item_rows()), which go out in chunks of about
 * WT_CHUNK_PAIRS pairs per thread, one item at a time, to whichever thread
 * is free. A thread counts an item into its own counters and writes the
 * item's slot counts (and weight sums) into the item's record; after each
 * chunk the main thread adds the records into the tasks' histograms in item
 * order, then reports progress and polls for an interrupt. Every sum thus
 * runs over the same terms in the same order whatever the thread count:
 * weighted results are the same on 1 or 64 threads, and a weight sum is a
 * sum of at most a few thousand terms at each of its levels (copies, item,
 * chunk, job). A job of counts alone (no weight or angle sums) keeps no
 * records: each thread adds an item's counts into the task's histogram
 * itself (wt_run.direct), as integers add up the same in any order. A
 * failed worker (only an injected one so far) stops the run: the other
 * threads skip their remaining items, and the call fails (whatever counts
 * were added already are not returned). */
int wt_count_cpu(wt_job *job)
{
  double total = wt_tasks_pairs(job);
  if (total == 0.0) return WT_OK;
  int isa;
  int narrow;
  if (wt_cpu_isa_chosen(&isa, job->message, sizeof job->message) != WT_OK ||
      wt_cpu_narrow_chosen(&narrow, job->message, sizeof job->message) != WT_OK)
    return WT_ERR_ISA;

  /* a labelled job's counters (copies x La Lb n_slots a thread, and the
   * ring's 32-bit indices) within 2^30 */
  if (job->n_lab > 0 && (double)wt_cpu_label_blocks(job) *
                        (job->bins->n_bins + 2) * WT_COPIES >
                        (double)(1 << 30)) {
    snprintf(job->message, sizeof job->message,
             "%d labels make too many histograms for the CPU engine",
             job->n_lab);
    return WT_ERR_ARG;
  }
  wt_run run;
  int status = wt_cpu_run_alloc(&run, job, total, isa, narrow);
  const int fault_thread = (job->fault & WT_FAULT_THREAD) != 0;
  const double fault_at = total / 2;   /* the pair whose item fails */
  int64_t task = 0, row = job->n_tasks > 0 ? job->tasks[0].a0 : 0;
  double done = 0.0;
  while (status == WT_OK) {
    double pairs = 0.0;
    const int64_t n_items = next_chunk(job, &run, &task, &row, done, &pairs);
    if (n_items == 0) break;
    if (count_chunk(job, &run, n_items, fault_thread, fault_at)) {
      status = WT_ERR_WORKER;
      break;
    }
    if (!run.direct) add_records(job, &run, n_items);
    done += pairs;
    if (done < total && job->poll && job->poll(job->poll_ctx, done, total))
      status = WT_ERR_INTERRUPTED;
  }
  wt_cpu_run_free(&run);
  return status;
}
