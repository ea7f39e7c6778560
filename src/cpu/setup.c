/* The CPU engine's set-up for a job: the kernels it takes and their private
 * tables (ctx_init()), and the buffers of one run (wt_cpu_run_alloc()):
 * per-thread counters and tiles, label offsets, items and their records.
 * Called once per job by driver.c's wt_count_cpu(); see engine.h for the
 * design. */
#include "engine.h"
#include "floor/pages.h"
#include "floor/team.h"

/* Host allocations, the large ones on huge pages (floor/pages.h); all
 * fail under WT_FAULT_ALLOC (tests). */
static void *cpu_malloc(const wt_job *job, size_t bytes)
{
  return job->fault & WT_FAULT_ALLOC ? NULL : wt_alloc_big(bytes);
}

static void *cpu_calloc(const wt_job *job, size_t n, size_t size)
{
  return job->fault & WT_FAULT_ALLOC ? NULL : wt_calloc_big(n, size);
}

/* The widest slot range the narrow kernel takes: WTHETA_CPU_NARROW (0, off,
 * to WT_NARROW), for benchmarks and tests, or WT_NARROW_DEFAULT. */
int wt_cpu_narrow_chosen(int *narrow, char *msg, size_t len)
{
  const char *v = getenv("WTHETA_CPU_NARROW");
  *narrow = WT_NARROW_DEFAULT;
  if (v == NULL || *v == '\0') return WT_OK;
  if (v[0] >= '0' && v[0] <= '0' + WT_NARROW && v[1] == '\0') {
    *narrow = v[0] - '0';
    return WT_OK;
  }
  snprintf(msg, len, "WTHETA_CPU_NARROW must be a digit from 0 to %d or "
           "empty, not \"%.60s\"", WT_NARROW, v);
  return WT_ERR_ISA;
}

/* every weight of p is 1 (or p has none) */
static int unit_weights(const wt_points *p)
{
  if (p->w == NULL) return 1;
  for (int64_t i = 0; i < p->n; i++)
    if (p->w[i] != 1.0) return 0;
  return 1;
}

/* Whether a PIP job takes the count form (wt_ctx.pip_count): words, no
 * angular table, no angle sums, and every individual weight 1 (the
 * usual DD count: R passes unit weights when none are given), so that a
 * pair's weight is by_count[popcount] alone and the kernels count pairs
 * by slot and popcount; one scan of the weights per job. Not when a
 * histogram copy would pass WT_PIP_COUNT_MAX counters (many words and
 * many bins): each work item flushes them all. */
static int pip_count_form(const wt_job *job)
{
  const wt_pip *p = job->pip;
  return p && p->n_words > 0 && p->n_ang == 0 && !job->thsum &&
    job->wsum &&
    (double)(job->bins->n_bins + 2) * (32.0 * p->n_words + 1) <=
      WT_PIP_COUNT_MAX &&
    unit_weights(&job->a) &&
    (job->is_auto || unit_weights(&job->b));
}

/* La Lb: the histograms of a task's block in a labelled job */
int wt_cpu_label_blocks(const wt_job *job)
{
  int la, lb;
  wt_labels_sizes(job, &la, &lb);
  return la * lb;
}

/* Picks the kernels of instruction set isa (one this CPU can run) and
 * builds the private tables they need, into *mem (one block for the caller
 * to free). pairs: the job's pairs, over all tasks. */
static int ctx_init(wt_ctx *c, const wt_job *job, double pairs, int isa,
                    int narrow, void **mem)
{
  const wt_bins *bins = job->bins;
  memset(c, 0, sizeof *c);
  c->bins = bins;
  c->n_slots = bins->n_bins + 2;
  c->pip_k = 1;
  c->hist = c->n_slots;
  c->tile_stride = WT_TILE;
  if (job->n_lab > 0) {
    int la;
    c->hist = wt_cpu_label_blocks(job) * c->n_slots;
    wt_labels_sizes(job, &la, &c->lab_nb);
    c->lab_fixed = 1;
    c->fixed_fault = (job->fault & WT_FAULT_FIXED) != 0;
  }
  c->pip_count = pip_count_form(job);
  if (c->pip_count) {
    c->pip_k = 32 * job->pip->n_words + 1;
    c->pip_count_fault = (job->fault & WT_FAULT_PIPCOUNT) != 0;
  }
  /* the counters of a copy: hist, or n_slots x pip_k in count form */
  const size_t per_copy = (size_t)c->hist * c->pip_k;
  c->copies = c->pip_count ? WT_PIP_COPIES : WT_COPIES;
  while (c->copies > 1 &&
         (size_t)c->copies * per_copy * sizeof(uint32_t) > WT_COPY_BYTES)
    c->copies /= 2;
  for (int k = 0; k < 2 * WT_COPIES; k++)
    c->copy_off[k] = (int32_t)((size_t)(k % WT_COPIES % c->copies) * per_copy);
  c->sink = (uint32_t)(c->copies * per_copy);
  *mem = NULL;
  if (job->pip) {
    /* PIP: kernels_pip.c for what no vector kernel takes, with POPCNT
     * unless plain is asked for; on AVX-512 the vector kernel of its own
     * (below) */
    c->pip = job->pip;
    memset(c->pip_lut, 0, sizeof c->pip_lut);
    if (job->pip->n_words > 0 && job->pip->n_words <= 2)
      memcpy(c->pip_lut, job->pip->by_count,
             (size_t)(32 * job->pip->n_words + 1) * sizeof(double));
    c->pip_fn = wt_cpu_pip_plain;
#ifdef WT_X86
    if (isa != WT_ISA_PLAIN && __builtin_cpu_supports("popcnt"))
      c->pip_fn = wt_cpu_pip_popcnt;
#endif
    /* tasks of one slot (do_fixed()): without an angular table or angle
     * sums, whose values vary inside a bin; on AVX-512 with VPOPCNTDQ
     * where the CPU has it, unless WTHETA_CPU_VPOPCNT is "0" (tests) */
    if (job->pip->n_ang == 0 && !job->thsum) {
      c->fixed_fn = wt_cpu_pip_fixed_plain;
#ifdef WT_X86
      if (isa != WT_ISA_PLAIN && __builtin_cpu_supports("popcnt"))
        c->fixed_fn = wt_cpu_pip_fixed_popcnt;
      if (isa == WT_ISA_AVX512) {
        const char *v = getenv("WTHETA_CPU_VPOPCNT");
        const int vp = __builtin_cpu_supports("avx512vpopcntdq") &&
          !(v && strcmp(v, "0") == 0);
        c->fixed_fn = vp ? wt_cpu_avx512_fixed_vpopcnt : wt_cpu_avx512_fixed;
        /* and the count form's kernel (wt_cpu_avx512_pip) */
        c->pip_vpopcnt = vp && c->pip_count;
      }
#endif
      c->fixed_fault = (job->fault & WT_FAULT_FIXED) != 0;
    }
  }
#ifdef WT_X86
  /* sums of angles: plain C only (see engine.h); PIP: AVX-512 only */
  if (bins->table == NULL || isa == WT_ISA_PLAIN || job->thsum ||
      (job->pip && isa != WT_ISA_AVX512))
    return WT_OK;
  const int avx512 = isa == WT_ISA_AVX512;
  c->vec = avx512 ? wt_cpu_avx512 : wt_cpu_avx2;
  c->vec_lanes = avx512 ? 8 : 4;
  /* one block: the double kernel's tables, then the float table */
  const int sh = bins->table_shift, n = bins->table_size;
  const size_t n_up = (size_t)c->n_slots + bins->table_steps;
  const int packed = bins->table_steps <= 1 &&
    (uint64_t)c->n_slots < UINT64_C(1) << (63 - sh);
  size_t bytes = packed ? (size_t)n * sizeof(uint64_t)
    : n_up * sizeof(double) + (size_t)n * sizeof(int32_t);
  bytes = (bytes + 63) & ~(size_t)63;
  const size_t f32_bytes = avx512 ? WT_F32_CELLS * sizeof(uint32_t) : 0;
  char *m = cpu_malloc(job, bytes + f32_bytes +
                       (avx512 ? 4 * (size_t)c->n_slots * sizeof(float) : 0));
  if (m == NULL) return WT_ERR_NOMEM;
  *mem = m;
  if (packed) {
    wt_cpu_pack_table(bins, (uint64_t *)m);
    c->packed = (const uint64_t *)m;
    c->low_slot = bins->table[0];
    c->low_edge = bins->upper[c->low_slot];
  } else {
    double *up = (double *)m;
    int32_t *s32 = (int32_t *)(up + n_up);
    for (size_t s = 0; s < n_up; s++)
      up[s] = bins->upper[s < (size_t)c->n_slots ? s : (size_t)c->n_slots - 1];
    for (int k = 0; k < n; k++) s32[k] = bins->table[k];
    c->upper_pad = up;
    c->slot32 = s32;
  }
  if (avx512 && pairs >= WT_F32_MIN_PAIRS && wt_cpu_unit_norms(&job->a) &&
      (job->is_auto || wt_cpu_unit_norms(&job->b)) &&
      wt_cpu_f32_table(c, (uint32_t *)(m + bytes))) {
    c->f32 = (const uint32_t *)(m + bytes);
    c->vec32 = wt_cpu_f32;
    c->vec32_lanes = 16;
    /* the sliced form: jobs of at most 32 slots, unlabelled or labelled
     * on their rows only (sorted_rows: an item's rows taken in runs of one
     * label, do_item(); unweighted), unless
     * WTHETA_CPU_SLICED is "0" (benchmarks, tests); "canary" (tests): one
     * false pair in slot 0 per call, to show that a workload reaches it */
    const char *sv = getenv("WTHETA_CPU_SLICED");
    const int rows_only = job->n_lab > 0 && !job->is_auto &&
      job->b.lab == NULL;
    c->f32_sliced = c->f32_small && c->n_slots <= 32 &&
      (job->n_lab == 0 || rows_only) && !(sv && strcmp(sv, "0") == 0);
    c->sorted_rows = c->f32_sliced && rows_only && job->wsum == NULL &&
      job->n_lab <= WT_LABELS_TALLY;
    c->sliced_fault = sv && strcmp(sv, "canary") == 0;
    c->narrow_fn = wt_cpu_f32_narrow;
    c->narrow_lanes = 16;
    if (narrow) wt_cpu_narrow_edges(c, (float *)(m + bytes + f32_bytes));
  } else {
    c->narrow_fn = wt_cpu_avx2_narrow;   /* AVX-512 CPUs have AVX2 */
    c->narrow_lanes = 4;
  }
  /* labelled jobs: no narrow kernel (its per-edge totals know no
   * labels), but for jobs labelled on their rows only (a cross job whose
   * b has none: wtheta_multi()'s samples against shared randoms), one row
   * at a time at its offset, or a run of rows of one label (do_item()) */
  c->narrow_rows = job->n_lab > 0 && !job->is_auto && job->b.lab == NULL;
  c->narrow = job->n_lab > 0 && !c->narrow_rows ? 0 : narrow;
  c->narrow_fault = (job->fault & WT_FAULT_NARROW) != 0;
  if (job->pip) {
    /* the double kernel with pair factors; no narrow kernel, and the
     * float kernel in count form only */
    c->vec = wt_cpu_avx512_pip;
    c->vec32 = c->pip_count && c->vec32 ? wt_cpu_f32_pip : NULL;
    c->narrow = 0;
  }
#else
  (void)job;
  (void)pairs;
  (void)isa;
  (void)narrow;
#endif
  return WT_OK;
}



void wt_cpu_run_free(wt_run *r)
{
  free(r->lab_a);
  free(r->lab_b);
  free(r->pad_labs);
  free(r->rows_xyz);
  free(r->rows_lab);
  free(r->h);
  free(r->wh);
  free(r->tiles);
  free(r->pads);
  free(r->pad_tiles);
  free(r->fb);
  free(r->items);
  free(r->rec_n);
  free(r->rec_w);
  free(r->wchunk);
  free(r->th);
  free(r->rec_t);
  free(r->tchunk);
  free(r->outs);
  free(r->seen);
  free(r->acc_t);
  free(r->tables);
}

typedef struct {
  float *f;
  int64_t stride;
  const wt_points *p;
} float_columns_ctx;

static void float_columns_part(void *arg, int64_t lo, int64_t hi, int tid)
{
  const float_columns_ctx *q = (const float_columns_ctx *)arg;
  (void)tid;
  wt_cpu_tile_floats(q->f + lo, q->stride, q->p->x + lo, q->p->y + lo,
                     q->p->z + lo, hi - lo);
}

/* the points of p as floats into f (x, y, z stride apart), as the float
 * kernels read a tile, on nt threads */
static void float_columns(float *f, int64_t stride, const wt_points *p,
                          int nt)
{
  float_columns_ctx q = {f, stride, p};
  wt_team_for(nt, p->n, 0, float_columns_part, &q);
}

/* picks the kernels and allocates every buffer of a run; on failure the
 * caller still calls run_free() */
int wt_cpu_run_alloc(wt_run *r, const wt_job *job, double total, int isa,
                     int narrow)
{
  memset(r, 0, sizeof *r);
  const int n_slots = r->n_slots = job->bins->n_bins + 2;
  const int weighted = r->weighted = job->wsum != NULL;
  const int angles = r->angles = job->thsum != NULL;
  const int n_out = r->n_out = job->n_out;
  int status = ctx_init(&r->ctx, job, total, isa, narrow,
                        &r->tables);
  const int nt = r->nt = job->n_threads < 1 ? 1 : job->n_threads;
  const int hist = r->hist = r->ctx.hist;
  /* the engine's points: the job's, with label offsets in place of the
   * labels in a labelled job (see wt_ctx.hist) */
  r->pa = job->a;
  r->pb = job->is_auto ? job->a : job->b;
  r->pa.lab = r->pb.lab = NULL;
  r->ctx.pa = &r->pa;
  r->ctx.pb = &r->pb;
  if (status == WT_OK && job->n_lab > 0) {
    int La, Lb;
    wt_labels_sizes(job, &La, &Lb);
    const int32_t *lb = job->is_auto ? job->a.lab : job->b.lab;
    r->lab_a = cpu_malloc(job, (size_t)(r->pa.n > 0 ? r->pa.n : 1) *
                                 sizeof *r->lab_a);
    r->lab_b = cpu_malloc(job, (size_t)(r->pb.n > 0 ? r->pb.n : 1) *
                                 sizeof *r->lab_b);
    r->pad_labs = cpu_malloc(job, (size_t)nt * WT_PAD * sizeof *r->pad_labs);
    if (!r->lab_a || !r->lab_b || !r->pad_labs) return WT_ERR_NOMEM;
    for (int64_t i = 0; i < r->pa.n; i++)
      r->lab_a[i] = job->a.lab ? job->a.lab[i] * Lb * n_slots : 0;
    for (int64_t j = 0; j < r->pb.n; j++)
      r->lab_b[j] = lb ? lb[j] * n_slots : 0;
    r->pa.lab = r->lab_a;
    r->pb.lab = r->lab_b;
    if (r->ctx.sorted_rows) {
      /* the most rows of an item of WT_SLICED_MIN columns (item_rows()) */
      const int64_t blocks =
        WT_ITEM_PAIRS / ((int64_t)WT_BLOCK * WT_SLICED_MIN);
      r->rows_cap = (blocks < 1 ? 1 : blocks) * WT_BLOCK;
      r->rows_xyz = cpu_malloc(job, (size_t)nt * 3 * (size_t)r->rows_cap *
                                      sizeof *r->rows_xyz);
      r->rows_lab = cpu_malloc(job, (size_t)nt * (size_t)r->rows_cap *
                                      sizeof *r->rows_lab);
      if (!r->rows_xyz || !r->rows_lab) return WT_ERR_NOMEM;
    }
  }
  /* per thread: the copies and the sink, padded to a cache line */
  const size_t per = r->per =
    ((size_t)r->ctx.copies * hist * r->ctx.pip_k + WT_SINK + 15) &
    ~(size_t)15;
  const size_t rec_bytes = (size_t)hist *
    (sizeof(uint64_t) + (weighted + angles) * sizeof(double));
  size_t cap = WT_RECORD_BYTES / rec_bytes;
  if (cap < (size_t)4 * nt) cap = (size_t)4 * nt;
  r->cap = cap;
  if (status != WT_OK) return status;
  r->h = cpu_calloc(job, (size_t)nt * per, sizeof *r->h);
  r->items = cpu_malloc(job, cap * sizeof *r->items);
  r->direct = !weighted && !angles;
  if (r->direct)
    r->acc_t = cpu_calloc(job, (size_t)nt * hist, sizeof *r->acc_t);
  else
    r->rec_n = cpu_malloc(job, cap * hist * sizeof *r->rec_n);
  /* the columns as floats: rounded once for the whole count (small tasks,
   * a jackknife's, rounded the same columns for item after item), each
   * thread's padded vector after them; for the largest catalogs (and with
   * WTHETA_CPU_FLOAT_COPY=0, for tests and benchmarks) a tile per thread,
   * rounded per item, as when the copy finds no memory */
  const char *fc = getenv("WTHETA_CPU_FLOAT_COPY");
  if (r->ctx.vec32 && r->pb.n <= WT_FLOAT_COPY_MAX &&
      !(fc && strcmp(fc, "0") == 0)) {
    const int64_t stride = (r->pb.n + (int64_t)nt * WT_PAD + 15) & ~(int64_t)15;
    r->fb = cpu_malloc(job, (size_t)3 * (size_t)stride * sizeof *r->fb);
    if (r->fb) {
      float_columns(r->fb, stride, &r->pb, nt);
      r->ctx.fb = r->fb;
      r->ctx.tile_stride = stride;
    }
  }
  if (r->ctx.vec32 && !r->fb)
    r->tiles = cpu_malloc(job, (size_t)nt * 3 * WT_TILE * sizeof *r->tiles);
  if (r->ctx.vec) {
    r->pads = cpu_malloc(job, (size_t)nt * 4 * WT_PAD * sizeof *r->pads);
    if (r->ctx.vec32 && !r->fb)
      r->pad_tiles = cpu_malloc(job, (size_t)nt * 3 * WT_TILE *
                                       sizeof *r->pad_tiles);
  }
  if (weighted) {
    /* the count form makes its weight sums from the counters */
    if (!r->ctx.pip_count)
      r->wh = cpu_calloc(job, (size_t)nt * per, sizeof *r->wh);
    r->rec_w = cpu_malloc(job, cap * hist * sizeof *r->rec_w);
    r->wchunk = cpu_malloc(job, (size_t)n_out * n_slots * sizeof *r->wchunk);
  }
  if (angles) {
    r->th = cpu_calloc(job, (size_t)nt * per, sizeof *r->th);
    r->rec_t = cpu_malloc(job, cap * hist * sizeof *r->rec_t);
    r->tchunk = cpu_malloc(job, (size_t)n_out * n_slots * sizeof *r->tchunk);
  }
  if (weighted || angles) {
    r->outs = cpu_malloc(job, (size_t)n_out * sizeof *r->outs);
    r->seen = cpu_calloc(job, (size_t)n_out, 1);
  }
  if (!r->h || !r->items || (r->direct ? !r->acc_t : !r->rec_n) ||
      (r->ctx.vec32 && !r->tiles && !r->fb) ||
      (r->ctx.vec && !r->pads) ||
      (r->ctx.vec32 && r->ctx.vec && !r->pad_tiles && !r->fb) ||
      (weighted && ((!r->wh && !r->ctx.pip_count) || !r->rec_w ||
                    !r->wchunk)) ||
      (angles && (!r->th || !r->rec_t || !r->tchunk)) ||
      ((weighted || angles) && (!r->outs || !r->seen)))
    return WT_ERR_NOMEM;
  return WT_OK;
}
