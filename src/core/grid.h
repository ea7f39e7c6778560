/* core/grid.c: pruning by the largest angle (see grid.c) */
#ifndef WT_GRID_H
#define WT_GRID_H
#include "wt.h"

typedef struct {
  double *mem;             /* the sorted copies of the points */
  wt_points a, b;          /* the catalogs, sorted by cell inside each range */
  wt_task *tasks;          /* one task per kept pair of cells */
  int64_t n_tasks;
  /* pairs counted without visiting them, n_out x (n_bins + 2) slots like
   * wt_job.slots, and their weight sums */
  double *bulk_n, *bulk_w;
} wt_grid;

/* plans the node pairs of job's tasks for a last edge of theta_max_deg and
 * cells of cell_deg, counting in bulk the node pairs inside one bin when
 * bulk (beyond the last edge always), and splitting node pairs that may be
 * pruned down to min_split pairs; WT_ERR_ARG when task ranges overlap
 * without being identical (then count without a grid) */
int wt_grid_plan(const wt_job *job, double theta_max_deg, double cell_deg,
                 int bulk, double min_split, wt_grid *gr);
void wt_grid_free(wt_grid *gr);
#endif
