/* The CPU engine: OpenMP over blocks of rows, per-thread histograms.
 *
 * Each pair's squared chord is computed in double exactly as wt.h states,
 * and its slot is found by a table lookup on the high bits of d2 followed by
 * table_steps branch-free compare-and-step rounds against the exact edges, so
 * the result is the double-precision answer with no acos and no bin search.
 * No R API is used here. */
#include <stdlib.h>
#include <string.h>
#include "wt.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define WT_ROWS 4                 /* rows of the first catalog per block */
#define WT_FLUSH (1u << 30)       /* flush 32-bit counters before this */

typedef struct {
  const wt_bins *bins;
  int n_slots;
} kernel_ctx;

static inline uint64_t d2_bits(double d2)
{
  uint64_t u;
  memcpy(&u, &d2, sizeof u);
  return u;
}

static inline int slot_lookup(const wt_bins *bins, double d2)
{
  int64_t key = (int64_t)(d2_bits(d2) >> bins->table_shift) - bins->table_base;
  if (key < 0) key = 0;
  if (key >= bins->table_size) key = bins->table_size - 1;
  int s = bins->table[key];
  for (int r = 0; r < bins->table_steps; r++) s += d2 >= bins->upper[s];
  return s;
}

/* Rows [i0, i0 + nr) of a against columns [j0, j1) of b; counts into h
 * (nr interleaved 32-bit histograms, WT_ROWS * n_slots long). */
static void block_rows(const wt_bins *bins, int n_slots,
                       const wt_points *a, int64_t i0, int nr,
                       const wt_points *b, int64_t j0, int64_t j1,
                       uint32_t *h)
{
  const double *bx = b->x, *by = b->y, *bz = b->z;
  if (bins->table == NULL) {
    for (int r = 0; r < nr; r++) {
      double xi = a->x[i0 + r], yi = a->y[i0 + r], zi = a->z[i0 + r];
      for (int64_t j = j0; j < j1; j++) {
        double dx = xi - bx[j], dy = yi - by[j], dz = zi - bz[j];
        double d2 = dx * dx + dy * dy;
        d2 = d2 + dz * dz;
        h[wt_slot_of(bins, d2)]++;
      }
    }
    return;
  }
  const uint16_t *table = bins->table;
  const double *upper = bins->upper;
  const int shift = bins->table_shift, steps = bins->table_steps;
  const int64_t base = bins->table_base, top = bins->table_size - 1;
  if (nr == WT_ROWS) {
    double xi[WT_ROWS], yi[WT_ROWS], zi[WT_ROWS];
    for (int r = 0; r < WT_ROWS; r++) {
      xi[r] = a->x[i0 + r]; yi[r] = a->y[i0 + r]; zi[r] = a->z[i0 + r];
    }
    for (int64_t j = j0; j < j1; j++) {
      double xj = bx[j], yj = by[j], zj = bz[j];
      for (int r = 0; r < WT_ROWS; r++) {
        double dx = xi[r] - xj, dy = yi[r] - yj, dz = zi[r] - zj;
        double d2 = dx * dx + dy * dy;
        d2 = d2 + dz * dz;
        int64_t key = (int64_t)(d2_bits(d2) >> shift) - base;
        key = key < 0 ? 0 : key;
        key = key > top ? top : key;
        int s = table[key];
        for (int t = 0; t < steps; t++) s += d2 >= upper[s];
        h[r * n_slots + s]++;
      }
    }
    return;
  }
  for (int r = 0; r < nr; r++) {
    double xi = a->x[i0 + r], yi = a->y[i0 + r], zi = a->z[i0 + r];
    for (int64_t j = j0; j < j1; j++) {
      double dx = xi - bx[j], dy = yi - by[j], dz = zi - bz[j];
      double d2 = dx * dx + dy * dy;
      d2 = d2 + dz * dz;
      h[r * n_slots + slot_lookup(bins, d2)]++;
    }
  }
}

static void flush(uint32_t *h, uint64_t *acc, int n_slots)
{
  for (int r = 0; r < WT_ROWS; r++)
    for (int s = 0; s < n_slots; s++) {
      acc[s] += h[r * n_slots + s];
      h[r * n_slots + s] = 0;
    }
}

/* pairs visited by row block g (rows g*WT_ROWS ...) */
static int64_t block_pairs(const wt_job *job, int64_t g)
{
  int64_t na = job->a.n, i0 = g * WT_ROWS;
  int64_t nr = na - i0 < WT_ROWS ? na - i0 : WT_ROWS;
  if (!job->is_auto) return nr * job->b.n;
  /* rows i0..i0+nr-1, each against j > i */
  int64_t s = 0;
  for (int64_t r = 0; r < nr; r++) s += na - (i0 + r) - 1;
  return s;
}

/* one row block: the whole rectangle for cross, the part j > i for auto */
static void do_block(const wt_job *job, int n_slots, int64_t g, uint32_t *h,
                     uint64_t *acc, uint64_t *pending)
{
  const wt_points *a = &job->a;
  const wt_points *b = job->is_auto ? &job->a : &job->b;
  int64_t i0 = g * WT_ROWS;
  int nr = (int)(a->n - i0 < WT_ROWS ? a->n - i0 : WT_ROWS);
  int64_t j_start = job->is_auto ? i0 + nr : 0;
  /* the small triangle inside the block (auto only) */
  if (job->is_auto)
    for (int r = 0; r < nr - 1; r++)
      block_rows(job->bins, n_slots, a, i0 + r, 1, b, i0 + r + 1, i0 + nr,
                 h + r * n_slots);
  /* the rectangle, in column tiles so 32-bit counters cannot overflow */
  const int64_t tile = WT_FLUSH / 2;
  for (int64_t j0 = j_start; j0 < b->n; j0 += tile) {
    int64_t j1 = b->n - j0 < tile ? b->n : j0 + tile;
    if (*pending + (uint64_t)(j1 - j0) + WT_ROWS >= WT_FLUSH) {
      flush(h, acc, n_slots);
      *pending = 0;
    }
    block_rows(job->bins, n_slots, a, i0, nr, b, j0, j1, h);
    *pending += (uint64_t)(j1 - j0) + WT_ROWS;
  }
}

int wt_count_cpu(wt_job *job)
{
  const int n_slots = job->bins->n_bins + 2;
  int nt = job->n_threads < 1 ? 1 : job->n_threads;
  int64_t n_blocks = (job->a.n + WT_ROWS - 1) / WT_ROWS;
  if (n_blocks < nt) nt = n_blocks < 1 ? 1 : (int)n_blocks;
  size_t per = (size_t)WT_ROWS * n_slots;
  uint32_t *h = calloc((size_t)nt * per, sizeof *h);
  uint64_t *acc = calloc((size_t)nt * n_slots, sizeof *acc);
  if (!h || !acc) {
    free(h);
    free(acc);
    return WT_ERR_NOMEM;
  }
  /* chunks of row blocks holding about 2^27 pairs: a chunk takes well under
   * a second, and the main thread checks for interrupts between chunks */
  const int64_t chunk_pairs = (int64_t)1 << 27;
  int status = WT_OK;
  int64_t g = 0;
  while (g < n_blocks) {
    int64_t g_end = g, pairs = 0;
    while (g_end < n_blocks && (pairs < chunk_pairs || g_end - g < 4 * nt)) {
      pairs += block_pairs(job, g_end);
      g_end++;
    }
    const int64_t g_first = g;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
#ifdef _OPENMP
      int t = omp_get_thread_num();
#else
      int t = 0;
#endif
      uint32_t *ht = h + (size_t)t * per;
      uint64_t *at = acc + (size_t)t * n_slots;
      uint64_t pending = 0;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
      for (int64_t k = g_first; k < g_end; k++)
        do_block(job, n_slots, k, ht, at, &pending);
      flush(ht, at, n_slots);
    }
    g = g_end;
    if (g < n_blocks && job->interrupted && job->interrupted()) {
      status = WT_ERR_INTERRUPTED;
      break;
    }
  }
  if (status == WT_OK) {
    for (int s = 0; s < n_slots; s++) {
      uint64_t sum = 0;
      for (int t = 0; t < nt; t++) sum += acc[(size_t)t * n_slots + s];
      job->slots[s] = sum;
    }
  }
  free(h);
  free(acc);
  return status;
}
