/* The CPU engine (private to src/cpu/): the package's teams of threads
 * (floor/team.c) over work items, per-thread histograms.
 *
 * Every count is the double-precision answer of wt.h: a pair's slot is that
 * of d2 = ((xi-xj)^2 + (yi-yj)^2) + (zi-zj)^2 in IEEE double (separate
 * multiplies and adds, no FMA) against the double edges upper[]. It comes
 * from a table lookup on the high bits of d2 and exact comparisons with the
 * edges, with no acos and no bin search.
 *
 * A job is a list of tasks (wt.h); work items are blocks of rows of one task
 * (WT_BLOCK rows, or a multiple for tasks with few columns, see
 * item_rows()), or runs of whole small tasks of one histogram, handed out
 * dynamically, so a list of many small tasks
 * (jackknife patches) keeps every thread busy as one large task does. An
 * item walks its task's columns in tiles of WT_TILE, and each tile is
 * counted against the item's groups of WT_ROWS rows while it is in cache.
 * Within a tile, on x86-64 (kernels chosen at run time):
 *  - AVX-512 with a float prefilter (wt_cpu_f32): the columns are rounded to
 *    float once per count (wt_ctx.fb; per item for catalogs of more than
 *    WT_FLOAT_COPY_MAX points) and d2 is computed in float (fused
 *    multiply-adds), 16
 *    pairs per vector; a private table turns the float d2 into a slot with
 *    one lookup, one add and one shift, and flags the pairs whose float d2
 *    is too close to an edge for the float result to be trusted (a
 *    rigorous error bound, see wt_cpu_f32_table()), or too small for the
 *    table; those pairs, rare, are redone in double. The lookup is a
 *    gather, or for six unweighted rows two permutes of registers when the
 *    table has at most 64 cells (wt_ctx.f32_small: log bins of a factor
 *    1.19 or more). For
 *    unweighted jobs of at most 32 slots, unlabelled or labelled on their
 *    rows only, the sliced form (kernels_sliced.c) counts without a
 *    per-pair increment: one-hot words added in carry-save bit planes.
 *  - otherwise AVX-512 or AVX2 in double (wt_cpu_avx512, wt_cpu_avx2), 8 or 4
 *    pairs per vector, with gathers from private forms of the table.
 *  - AVX-512, narrow tasks (wt_cpu_f32_narrow): a grid task whose pairs the
 *    walk proved to lie in at most `narrow` slots (wt_task.slo, .shi) skips
 *    the table and the ring: the float d2 is compared with each edge inside
 *    the range (and the range's ends) under margins (wt_cpu_narrow_edges()),
 *    mask counts add into per-edge totals, and slot counts are their
 *    differences; pairs too close to an edge or outside the range are
 *    redone in double; one row a call, six, or two to five (the end of
 *    an item, or a run of one label). AVX2 (and AVX-512 jobs without the
 *    float kernel)
 *    does the same in double with exact comparisons (wt_cpu_avx2_narrow).
 *    Unweighted jobs only (weighted ones take the other kernels); see
 *    bench/kernel/kernel-notes.md for the measured widths.
 * The vector kernels write the histogram indices of each group of columns to
 * a small ring and increment those counters two groups later, so that the
 * vector work and the scattered increments overlap. The AVX-512 float
 * kernels take a tile's last, short vector with its lanes past the end
 * masked. For the others the ragged end of a tile's columns, from a
 * quarter of a vector, goes through the same kernel padded to a whole
 * vector with repeats of its last column at weight 0, whose pairs the
 * driver takes off again (count_tail() in driver.c). Plain C does the
 * rest: other CPUs, shorter ends, binnings too fine for a table, and
 * calls of fewer columns than a double vector outside a tile. The
 * diagonal task of an auto job (a range against itself) takes each work
 * item's own triangle so: each group of rows' small triangle in plain C,
 * the group against the item's later rows from those rows as floats, then
 * the columns after the item in tiles (do_item()).
 *
 * Weighted jobs take the same path with the same slot decisions; the
 * kernels also compute w_i w_j in double, keep it in the ring beside the
 * index, and add it to a double histogram laid out as the counters.
 * PIP jobs (wt_job.pip, pair weights from bitwise words and an angular
 * table) take on AVX-512 a kernel of their own, wt_cpu_avx512_pip (the
 * double kernel's slots, each pair's weight times its factor by popcount
 * of the ANDed words, read from registers for up to two words); other
 * CPUs, the ragged ends and mean_theta go through kernels_pip.c, one pair
 * at a time with a hardware popcount where the CPU has one. No narrow
 * or bulk counting for them, and no float kernel but in the count form
 * (below); but a task of one slot (slo == shi,
 * from the grid walk's WT_WALK_FIXED: a node pair that bulk counting
 * would have added to that bin) goes, without an angular table or angle
 * sums, to a kernel that computes no d2 and no slot: the task's pairs add
 * to that slot's count by number and their factors (w_j by_count[popcount]
 * summed per row, times w_i) to its weight sum (do_fixed() in driver.c;
 * wt_ctx.fixed_fn: kernels_fixed.h on AVX-512, with VPOPCNTDQ where the
 * CPU has it, kernels_pip.c elsewhere).
 * PIP jobs whose individual weights are all 1 (none given: R passes
 * units; checked by one scan of the weights per job, pip_count_form() in
 * driver.c), with words, no angular table and no angle sums, the usual
 * DD count, take the count form (wt_ctx.pip_count; while slots x K stays
 * within WT_PIP_COUNT_MAX): a pair's weight is
 * then by_count[c] alone, c the popcount of its ANDed words, so the
 * kernels (on AVX-512 wt_cpu_f32_pip, the float prefilter kernel where
 * the job builds the float table, and wt_cpu_avx512_pip, with VPOPCNTD/Q
 * where the CPU has it; kernels_pip.c elsewhere and for ragged ends)
 * compute no weight: each pair increments the 32-bit
 * counter slot * K + c (K = 32 n_words + 1 counters a slot, WT_PIP_COPIES
 * copies of n_slots x K, then the sink) through the same ring as an
 * unweighted kernel, and every flush of the counters (flush_count())
 * adds to each slot's count sum_c n[c] and to its weight sum
 * sum_c n[c] by_count[c], c ascending: the same terms in the same order
 * on every run and thread count. Tasks of one slot still take fixed_fn.
 * Labelled jobs (wt_job.n_lab: the samples of wtheta_multi() counted as
 * one catalog) take the same kernels but the narrow one (which takes
 * jobs labelled on their rows only, a row or a run of rows of one label
 * per call): a pair's index
 * gets a row offset (the row's label times Lb n_slots) and a column offset
 * (the column's label times n_slots), one broadcast per row and one vector
 * load per column group, into counters of La Lb n_slots a copy
 * (wt_ctx.hist); an item's record, and the histograms it adds into, are
 * then the task's block of La Lb histograms. The engine makes the offsets
 * once per job (wt_cpu_run_alloc() in setup.c) and hands the kernels its own
 * points (wt_ctx.pa, pb) whose lab hold them. Two forms of their own:
 * tasks of one slot (the grid walk's node pairs inside one bin,
 * WT_WALK_FIXED) add each row's tally of the columns by label, with no
 * pair visited (wt_cpu_labelled_fixed() in labelled.c); and in an unweighted
 * job labelled on its rows only (the samples against shared randoms) an
 * item's rows are copied in label order and counted in runs of one label,
 * so that the sliced form takes them (wt_ctx.sorted_rows; up to six rows
 * a call, fewer at a run's end).
 * Jobs that sum the pairs' angles (wt_job.thsum, mean_theta) run in plain
 * C only (ctx_init() picks no vector kernel): an asin per pair costs far
 * more than the lookup the vector kernels speed up.
 *
 * Each thread keeps WT_COPIES interleaved copies of its histogram and
 * neighbouring pairs count into different copies, so runs of pairs in one bin
 * do not serialise on store-to-load forwarding. Counters are 32-bit and are
 * flushed into the work item's 64-bit sums well before they could overflow,
 * and at the end of the item; weight sums are flushed into the item's double
 * sums every WT_WFLUSH pairs or so (see wt_count_cpu() for the rest).
 *
 * No R API is used here. */
#ifndef WT_CPU_ENGINE_H
#define WT_CPU_ENGINE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "floor/slots.h"


#if defined(__GNUC__) && defined(__x86_64__)
#define WT_X86 1
#include <immintrin.h>
#endif

#define WT_ROWS 6                 /* rows per kernel call (a row group) */
#define WT_BLOCK 48               /* rows per work unit; a multiple of WT_ROWS */
#define WT_TILE 2048              /* columns per tile; a multiple of 16 */
#define WT_COPIES 8               /* histogram copies, at most */
#define WT_PIP_COPIES 4           /* ... in the PIP count form (measured:
                                     4 and 8 alike, 2 and 1 slower) */
#define WT_PIP_COUNT_MAX 65536    /* counters a copy of the count form, at
                                     most (slots x (32 words + 1)) */
#define WT_COPY_BYTES (1 << 18)   /* fewer copies when they outgrow this */
#define WT_LAG 2                  /* column groups from computing to counting */
#define WT_RING (2 * WT_LAG)
#define WT_SINK (WT_ROWS * 16)    /* spare counters: a ring group's entries */
#define WT_FLUSH (1u << 30)       /* flush 32-bit counters before this */
#define WT_WFLUSH (1u << 14)      /* flush weight sums at least this often */
#define WT_ITEM_PAIRS (1 << 18)   /* pairs a work item aims at, at least */
#define WT_CHUNK_PAIRS (1 << 26)  /* pairs per thread between polls */
#define WT_RECORD_BYTES (1 << 24) /* items' sums per chunk, at most (mostly) */
#define WT_F32_EMIN (-20)         /* the float table spans d2 in [2^-20, 4): */
#define WT_F32_BINADES 22         /* 22 binades (at most 32), 2^m cells each, */
#define WT_F32_MMAX 9             /* m <= WT_F32_MMAX */
#define WT_F32_CELLS (WT_F32_BINADES << WT_F32_MMAX)
#define WT_F32_MIN_PAIRS 4194304.0 /* smaller jobs skip building its table */
#define WT_PAD 16                 /* columns of the widest vector */
#define WT_FLOAT_COPY_MAX (1 << 23) /* columns of a count rounded to float
                                       once, at most (else per item) */
#define WT_SLICED_MIN 32          /* columns of a call of the sliced form,
                                     at least: below, its flush of the
                                     planes per call outweighs the
                                     increments it saves (kernel notes,
                                     2026-11-28 seventh session; it was
                                     128, and a jackknife's short tasks
                                     went to the table kernel) */
#define WT_LABELS_TALLY 64        /* labels of a side the forms of
                                     labelled.c take, at most */
#define WT_SORTED_MIN 12          /* rows of an item sorted by label, at
                                     least (wt_ctx.sorted_rows) */
#define WT_NARROW 8               /* widest slot range of the narrow kernel */
#define WT_NARROW_DEFAULT 8       /* ... taken by default (WTHETA_CPU_NARROW) */
#define WT_NARROW_MIN (0x1p-19f)  /* the narrow kernel decides float d2 in */
#define WT_NARROW_MAX 3.99f       /* [WT_NARROW_MIN, WT_NARROW_MAX) only */

/* The empty asm pins a product in a register, so the compiler cannot fuse it
 * with the following add into an FMA (GCC fuses across statements whenever
 * the target has FMA, as AVX-512 targets do). It emits no instruction. */
#if defined(__GNUC__) && defined(__x86_64__)
#define WT_UNFUSED(v) __asm__("" : "+x"(v))
#elif defined(__GNUC__) && defined(__aarch64__)
#define WT_UNFUSED(v) __asm__("" : "+w"(v))
#else
#define WT_UNFUSED(v) ((void)0)
#endif

typedef struct wt_ctx wt_ctx;

/* A vector kernel: counts the pairs of rows [i0, i0 + nr) (nr is 1 or
 * WT_ROWS) and columns [j0, j0 + nj) of b into h, as far as whole vectors go,
 * and returns the columns done. tile holds those columns of b as floats
 * (x, then y, then z, c->tile_stride apart) for wt_cpu_f32; the others
 * ignore it.
 * When wh is not NULL (a->w and b->w are given) it also adds each pair's
 * weight w_i w_j to wh, which has the layout of h. */
typedef int64_t (*wt_vec_fn)(const wt_ctx *c, uint32_t *h, double *wh,
                             const float *tile, const wt_points *a,
                             int64_t i0, int nr, const wt_points *b,
                             int64_t j0, int64_t nj);

typedef double (*wt_fixed_fn)(const wt_ctx *c, const wt_points *a,
                              int64_t i0, int64_t i1, const wt_points *b,
                              int64_t j0, int64_t j1);

struct wt_ctx {
  const wt_bins *bins;
  int n_slots;
  /* counters of a copy's histogram block: n_slots, or La Lb n_slots in a
   * labelled job (wt_job.n_lab), where a pair counts into copy_off + slot
   * + a->lab[i] + b->lab[j]: the engine's own points pa and pb, whose lab
   * hold offsets, not labels (rows lab_a[i] Lb n_slots, columns lab_b[j]
   * n_slots, 0 for a side without labels); the kernels take a labelled
   * variant when b->lab is not NULL */
  int hist;
  const wt_points *pa, *pb;
  /* the columns as floats for the float kernels: b's points, x, y and z
   * tile_stride apart (fb, made once per count, and each thread's padded
   * vector after them), or each item's tile (fb NULL, tile_stride
   * WT_TILE) */
  const float *fb;
  int64_t tile_stride;
  int copies;                   /* histogram copies in use, 1..WT_COPIES */
  /* start of the copy that the k-th of neighbouring pairs counts into */
  int32_t copy_off[2 * WT_COPIES];
  uint32_t sink;                /* WT_SINK spare counters after the copies */
  wt_vec_fn vec;                /* double kernel; NULL: plain C only */
  wt_vec_fn vec32;              /* float-prefilter kernel, or NULL */
  int vec_lanes, vec32_lanes;   /* columns per vector of each */
  /* private forms of the table for the double kernels: packed, or else
   * slot32 and upper_pad */
  const uint64_t *packed;       /* table_steps <= 1: see wt_cpu_pack_table() */
  const int32_t *slot32;        /* table[] widened to int32 */
  const double *upper_pad;      /* upper[], then table_steps more +inf */
  int low_slot;                 /* packed: cell 0 (every d2 below the */
  double low_edge;              /* table) has slot low_slot, or + 1 from here */
  /* the float table: see wt_cpu_f32_table() */
  const uint32_t *f32;
  int f32_shift, f32_m;         /* key = (bits(d2f) >> f32_shift) - f32_base */
  int f32_small;                /* at most 64 cells: wt_cpu_f32 looks them
                                   up in registers, not by a gather */
  int f32_sliced;               /* f32_small, at most 32 slots, no
                                   labels or labels on the rows only: the
                                   sliced form of wt_cpu_f32 for calls of
                                   WT_SLICED_MIN columns */
  int sorted_rows;              /* f32_sliced in a job labelled on its rows
                                   only, unweighted: items' rows counted
                                   by label (do_item()) */
  int sliced_fault;             /* WTHETA_CPU_SLICED=canary: one false pair
                                   per call of the sliced form (tests) */
  int32_t f32_base;
  uint32_t f32_window[32];      /* per binade */
  /* the narrow kernel (wt_cpu_f32_narrow), for tasks whose slot range
   * [slo, shi] (from the grid walk) spans at most `narrow` slots; 0: off.
   * Thresholds on the float d2f, n_slots each, NaN where unusable (see
   * wt_cpu_narrow_edges()): d2f < edge_lo[s] proves d2 < upper[s] and
   * d2f >= edge_hi[s] proves d2 >= upper[s]; lo_of[s] <= d2f < hi_of[s]
   * proves slot >= s, resp. slot <= s, and d2f inside the range where
   * those proofs hold. */
  int narrow;
  /* wt_cpu_f32_narrow (needs the float tile) or wt_cpu_avx2_narrow */
  int64_t (*narrow_fn)(const wt_ctx *c, uint32_t *h, const float *tile,
                       const wt_points *a, int64_t i0, int nr,
                       const wt_points *b, int64_t j0, int64_t nj, int slo,
                       int span);
  int narrow_lanes;             /* columns per vector of narrow_fn */
  int narrow_rows;              /* a job labelled on its rows only: the
                                   narrow kernel one row per call, or a
                                   run of one label (sorted_rows), into h
                                   at the rows' offset (count_tile()) */
  int narrow_fault;             /* WT_FAULT_NARROW: one false pair per call */
  const float *edge_lo, *edge_hi, *lo_of, *hi_of;
  /* PIP jobs (wt_job.pip): the pair weights, and the kernel that takes
   * every pair in place of wt_cpu_plain (no vector kernel then) */
  const wt_pip *pip;
  /* pip->by_count of up to two words (65 values), padded with zeros to
   * 72 for the AVX-512 kernel's registers (by_count_regs()) */
  double pip_lut[72];
  void (*pip_fn)(const wt_ctx *c, uint32_t *h, double *wh, double *th,
                 const wt_points *a, int64_t i0, int nr,
                 const wt_points *b, int64_t j0, int64_t j1);
  /* PIP tasks of one slot (slo == shi, from the grid walk's
   * WT_WALK_FIXED), without an angular table or angle sums: the pairs of
   * rows [i0, i1) and columns [j0, j1) all lie in that slot, and this
   * returns their weight sum, sum_i w_i sum_j w_j by_count[popcount(b_i &
   * b_j)]; NULL: such tasks take the other kernels */
  wt_fixed_fn fixed_fn;
  int fixed_fault;              /* WT_FAULT_FIXED: one false pair per task */
  int lab_fixed;                /* a labelled job: tasks of one slot by the
                                   columns' tally per label (do_item()) */
  int lab_nb;                   /* ... Lb, the column labels */
  /* PIP jobs in count form (pip_count, see pip_count_form() in setup.c:
   * every individual weight 1, words, no angular table, no angle sums):
   * a pair's counter is slot * pip_k + c, c the popcount of its ANDed
   * words (pip_k = 32 * n_words + 1 counters a slot, 1 otherwise), and
   * the kernels compute no pair weight; flush() turns each slot's
   * counters into its count and its weight sum sum_c n[c] by_count[c] */
  int pip_count;
  int pip_k;
  int pip_vpopcnt;              /* count form on AVX-512: VPOPCNTQ */
  int pip_count_fault;          /* WT_FAULT_PIPCOUNT: one false pair per
                                   count_tile() call in count form */
};

/* per-thread state */
typedef struct {
  uint32_t *h;                  /* copies * hist counters, then the sink */
  uint64_t *acc;                /* hist: the current work item's counts */
  double *wh;                   /* weighted: sums laid out as h, else NULL */
  double *wacc;                 /* weighted: the work item's hist sums */
  double *th;                   /* mean_theta: angle sums laid out as h */
  double *thacc;                /* mean_theta: the work item's hist sums */
  float *tile;                  /* 3 * WT_TILE: a tile of b as floats, when
                                   there is no wt_ctx.fb */
  /* the ragged end of a tile padded to one vector (count_tail()): x, y,
   * z, w of WT_PAD columns, and as floats tile_stride apart, as the tile
   * (in wt_ctx.fb after the points, or a buffer of its own) */
  double *pad;
  int32_t *pad_lab;             /* labelled jobs: the columns' lab */
  wt_points rows;               /* wt_ctx.sorted_rows: an item's rows in
                                   label order (x, y, z, lab; n: room) */
  float *pad_tile;
  int64_t pad_j, pad_j1;        /* the columns in pad now (pad_j -1: none) */
  int pad_lanes, pad_floats;
  uint64_t pending;             /* increments since the last flush */
  uint64_t wpending;            /* weighted (or mean_theta) pairs since
                                   the last flush_w */
} wt_thread;

static inline double pair_d2(double xi, double yi, double zi,
                             double xj, double yj, double zj)
{
  double dx = xi - xj, dy = yi - yj, dz = zi - zj;
  double px = dx * dx, py = dy * dy, pz = dz * dz;
  WT_UNFUSED(px);
  WT_UNFUSED(py);
  WT_UNFUSED(pz);
  return (px + py) + pz;
}

/* whether the n label offsets at lab are one */
static inline int wt_same_label(const int32_t *lab, int n)
{
  int same = 1;
  for (int r = 1; r < n; r++) same &= lab[r] == lab[0];
  return same;
}

/* the angle of a pair in radians from its squared chord d2 (pair_d2()):
 * 2 asin(d / 2), d / 2 taken as 1 when rounding puts it a little above
 * (antipodal points); the CUDA exact kernel computes it the same way */
static inline double pair_angle(double d2)
{
  double h = sqrt(d2) * 0.5;
  return 2.0 * asin(h < 1.0 ? h : 1.0);
}

/* kernels_plain.c: plain C, every CPU and every binning; th (mean_theta,
 * or NULL) gets each pair's angle (times w_i w_j with wh) in the layout
 * of h */
void wt_cpu_plain(const wt_ctx *c, uint32_t *h, double *wh, double *th,
                  const wt_points *a, int64_t i0, int nr,
                  const wt_points *b, int64_t j0, int64_t j1);
/* the same for the pairs i < j of rows [i0, i0 + nr) among themselves
 * (nr <= WT_ROWS; b holds the same points as a, with the columns' label
 * offsets in a labelled job): a diagonal block's small triangle */
void wt_cpu_plain_triangle(const wt_ctx *c, uint32_t *h, double *wh,
                           double *th, const wt_points *a, int64_t i0,
                           int nr, const wt_points *b);
/* kernels_pip.c: PIP pair weights (wt_pip), every pair in plain C with
 * the slot of slot_of(); row r into copy r of h, wh and th (th: mean_theta
 * or NULL; wh is always given). _popcnt: built for the POPCNT
 * instruction (x86-64 CPUs that have it) */
void wt_cpu_pip_plain(const wt_ctx *c, uint32_t *h, double *wh, double *th,
                      const wt_points *a, int64_t i0, int nr,
                      const wt_points *b, int64_t j0, int64_t j1);
/* kernels_pip.c: the fixed_fn of wt_ctx in plain C (and with POPCNT) */
double wt_cpu_pip_fixed_plain(const wt_ctx *c, const wt_points *a,
                              int64_t i0, int64_t i1, const wt_points *b,
                              int64_t j0, int64_t j1);
#ifdef WT_X86
double wt_cpu_pip_fixed_popcnt(const wt_ctx *c, const wt_points *a,
                               int64_t i0, int64_t i1, const wt_points *b,
                               int64_t j0, int64_t j1);
/* kernels_avx512_pip.c: on AVX-512, with VPOPCNTDQ (_vpopcnt) or without */
double wt_cpu_avx512_fixed(const wt_ctx *c, const wt_points *a, int64_t i0,
                           int64_t i1, const wt_points *b, int64_t j0,
                           int64_t j1);
double wt_cpu_avx512_fixed_vpopcnt(const wt_ctx *c, const wt_points *a,
                                   int64_t i0, int64_t i1,
                                   const wt_points *b, int64_t j0,
                                   int64_t j1);
void wt_cpu_pip_popcnt(const wt_ctx *c, uint32_t *h, double *wh, double *th,
                       const wt_points *a, int64_t i0, int nr,
                       const wt_points *b, int64_t j0, int64_t j1);
#endif
#ifdef WT_X86
/* kernels_avx512.c (wt_cpu_avx512, wt_cpu_f32, wt_cpu_f32_narrow) and
 * kernels_avx2.c (wt_cpu_avx2, wt_cpu_avx2_narrow), with what they share
 * in kernels_x86.h: vector kernels of the signature wt_vec_fn, compiled
 * for their instruction set by target attributes and chosen at run time */
/* PIP jobs (wt_pip) on AVX-512 (kernels_avx512_pip.c): wt_cpu_avx512 with
 * each pair's factor */
int64_t wt_cpu_avx512_pip(const wt_ctx *c, uint32_t *h, double *wh,
                          const float *tile, const wt_points *a, int64_t i0,
                          int nr, const wt_points *b, int64_t j0, int64_t nj);
int64_t wt_cpu_avx512(const wt_ctx *c, uint32_t *h, double *wh,
                      const float *tile, const wt_points *a, int64_t i0,
                      int nr, const wt_points *b, int64_t j0, int64_t nj);
/* the PIP count form (wt_ctx.pip_count) with the float prefilter
 * (kernels_avx512_pip.c) */
int64_t wt_cpu_f32_pip(const wt_ctx *c, uint32_t *h, double *wh,
                       const float *tile, const wt_points *a, int64_t i0,
                       int nr, const wt_points *b, int64_t j0, int64_t nj);
int64_t wt_cpu_f32(const wt_ctx *c, uint32_t *h, double *wh,
                   const float *tile, const wt_points *a, int64_t i0, int nr,
                   const wt_points *b, int64_t j0, int64_t nj);
/* labelled.c: a work item of a task of one slot (slo == shi > 0) of a
 * labelled job added by the tally of its columns' labels; 0 when it
 * cannot be (a diagonal task, more than WT_LABELS_TALLY column labels),
 * for the kernels to count. And rows [i0, i1) of a (labelled on its rows
 * only, unweighted) into o (room: o->n) in label order, stably. */
int wt_cpu_labelled_fixed(const wt_job *job, const wt_ctx *c,
                          const wt_task *task, int64_t i0, int64_t i1,
                          wt_thread *t);
void wt_cpu_sort_rows(const wt_ctx *c, const wt_points *a, int64_t i0,
                      int64_t i1, wt_points *o);

/* driver.c: columns x, y, z [0, n) as floats into a tile (x, then y, then
 * z, `stride` apart), as the float kernels read them: an item's tile, a
 * padded vector, or (setup.c) a count's whole copy, wt_ctx.fb */
void wt_cpu_tile_floats(float *tile, int64_t stride, const double *x,
                        const double *y, const double *z, int64_t n);

/* kernels_sliced.c: wt_cpu_f32's sliced form (wt_ctx.f32_sliced), nr
 * rows (1 to WT_ROWS) of one label, unweighted; returns nj (every
 * column) */
int64_t wt_cpu_f32_sliced(const wt_ctx *c, uint32_t *h, const float *tile,
                          const wt_points *a, int64_t i0, int nr,
                          const wt_points *b, int64_t j0, int64_t nj);
int64_t wt_cpu_f32_narrow(const wt_ctx *c, uint32_t *h, const float *tile,
                          const wt_points *a, int64_t i0, int nr,
                          const wt_points *b, int64_t j0, int64_t nj,
                          int slo, int span);
int64_t wt_cpu_avx2_narrow(const wt_ctx *c, uint32_t *h, const float *tile,
                           const wt_points *a, int64_t i0, int nr,
                           const wt_points *b, int64_t j0, int64_t nj,
                           int slo, int span);
int64_t wt_cpu_avx2(const wt_ctx *c, uint32_t *h, double *wh,
                    const float *tile, const wt_points *a, int64_t i0, int nr,
                    const wt_points *b, int64_t j0, int64_t nj);
#endif
/* A work item: rows [r0, r1) of task `task`, against the task's columns;
 * or, when n_more > 0, the whole of tasks task, task + 1, ..., task +
 * n_more, small tasks of one histogram that follow each other (grid tasks
 * of a few hundred pairs each: one item each would flush the counters and
 * add a record per task). */
typedef struct {
  int64_t task, r0, r1, n_more;
  double start;                 /* pairs of the job before this item */
  int64_t pairs;
} wt_item;

/* The buffers of one run of the engine: per-thread counters and tiles,
 * the items of a chunk and their records, and the chunk's weight sums (and
 * angle sums) per histogram. */
typedef struct {
  wt_ctx ctx;
  void *tables;                 /* the kernels' private tables (ctx) */
  int n_slots, weighted, angles, n_out, nt;
  int hist;                     /* ctx.hist: an item's record */
  wt_points pa, pb;             /* the engine's points (ctx.pa, ctx.pb) */
  int32_t *lab_a, *lab_b;       /* labelled: their label offsets */
  int32_t *pad_labs;            /* per thread: WT_PAD, labelled */
  double *rows_xyz;             /* ctx.sorted_rows, per thread: 3 rows_cap */
  int32_t *rows_lab;            /* ... and rows_cap labels */
  int64_t rows_cap;
  size_t per;                   /* counters per thread, padded */
  size_t cap;                   /* items per chunk, at most */
  uint32_t *h;
  double *wh, *rec_w, *wchunk;
  double *th, *rec_t, *tchunk;  /* angles: as wh, rec_w, wchunk */
  float *tiles;
  double *pads;                 /* per thread: 4 * WT_PAD */
  float *pad_tiles;             /* per thread: 3 * WT_TILE, with vec32 */
  float *fb;                    /* wt_ctx.fb */
  wt_item *items;
  uint64_t *rec_n;
  int32_t *outs;
  char *seen;
  /* counts only (no weight or angle sums): each thread's item sums in
   * acc_t (hist a thread), added into the job's histograms by the thread
   * itself when the item ends, not kept as records for the main thread
   * to add between chunks (integer counts add up the same in any order;
   * the serial adds of a labelled job's records, La Lb n_slots each, held
   * its threads up) */
  int direct;
  uint64_t *acc_t;
} wt_run;

/* setup.c: a job's set-up, once per job (wt_count_cpu() in driver.c) */
/* WTHETA_CPU_NARROW (0, off, to WT_NARROW) or WT_NARROW_DEFAULT into
 * *narrow; WT_ERR_ISA with msg for any other value */
int wt_cpu_narrow_chosen(int *narrow, char *msg, size_t len);
/* La Lb: the histograms of a task's block in a labelled job */
int wt_cpu_label_blocks(const wt_job *job);
/* picks the kernels of isa (narrow: the widest slot range of the narrow
 * kernel) and allocates every buffer of a run; on failure the caller
 * still calls wt_cpu_run_free() */
int wt_cpu_run_alloc(wt_run *r, const wt_job *job, double total, int isa,
                     int narrow);
void wt_cpu_run_free(wt_run *r);

/* tables.c: the kernels' private forms of the bin table */
void wt_cpu_pack_table(const wt_bins *bins, uint64_t *e);
int wt_cpu_f32_table(wt_ctx *c, uint32_t *tab);
void wt_cpu_narrow_edges(wt_ctx *c, float *mem);
int wt_cpu_unit_norms(const wt_points *p);

#endif
