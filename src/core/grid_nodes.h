/* core/grid_nodes.c: the node pairs of the walk over two stages' trees
 * (grid.h), which the walk of one task at a time (grid_walk.c) and the
 * grouped walk of many tasks (grid_groups.c) share; and the grouped walk,
 * which grid_walk.c calls. Private to those three files. */
#ifndef WT_GRID_NODES_H
#define WT_GRID_NODES_H
#include <math.h>
#include "wt.h"
#include "grid.h"

#define DEG (M_PI / 180.0)

typedef wt_grid_shape grid_shape;
typedef wt_grid_node node;
typedef wt_grid_tree range_tree;

typedef struct {                     /* what the walk writes */
  const wt_bins *bins;               /* the slots: c2 bounds (upper) and
                                        the lookup table (slot_of()) */
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
  /* the grouped walk (wt_walk_groups): bulk counts as a list, in the order
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

/* wt_walk_pair_nodes() of a root pair wholly beyond the last edge: nothing
 * added; the caller leaves its pairs to those never looked at */
#define WALK_BEYOND (-1)
/* cells of A per unit of parallel work in refine_task: the units are the
 * same on any number of threads, so are the task list and the sums */
#define WALK_CHUNK 8

static inline double chord(const double *a, const double *b)
{
  double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return sqrt(dx * dx + dy * dy + dz * dz);
}

/* whether every pair of two nodes whose least separation is the chord
 * lo lies beyond the last edge: slot_range() (grid_nodes.c) would put lo,
 * with its margin of 1e-9, in the slot above the last edge */
static inline int beyond_last_edge(const walk *wk, double lo)
{
  return wk->bins->upper[wk->n_slots - 2] <= (lo * lo) * (1.0 - 1e-9);
}

/* grid_nodes.c (each described there) */
int wt_walk_merge_task(wt_task *l, const wt_task *t, int fixed);
int wt_walk_add_bulk(walk *wk, int32_t out, int slot, double n, double w);
int wt_walk_pair_nodes(walk *wk, const range_tree *A, int64_t ia,
                       const range_tree *B, int64_t ib, int diag,
                       int32_t out, int root);
typedef int (*cell_fn)(void *ctx, int64_t id);
int wt_walk_window_cells(const grid_shape *g, const node *ca, double reach,
                         cell_fn visit, void *ctx);
void wt_walk_tree_totals(const range_tree *tr, double *n, double *w);
void wt_walk_cells_before(const range_tree *tr, double *before);
int64_t wt_walk_round_len(const walk *wk, int64_t n);
int wt_walk_join_parts(walk *wk, walk *parts, int64_t m, int n_threads);
void wt_walk_part_of(walk *w, const walk *wk);

/* grid_groups.c: the grouped walk of job's tasks into wk (bulk counts into
 * wk's dense sums, out0 = 0); *fallback = 1 (and nothing done) when two
 * tasks share both trees, which the walk of one task at a time handles */
int wt_walk_groups(const wt_job *job, const wt_grid_stage *a,
                   const wt_grid_stage *b, double reach, walk *wk,
                   int n_threads, int *fallback);
#endif
