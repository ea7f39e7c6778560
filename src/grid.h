/* grid.c: pruning by the largest angle (see grid.c) */
#ifndef WT_GRID_H
#define WT_GRID_H
#include "wt.h"

typedef struct {
  double *mem;             /* the sorted copies of the points */
  wt_points a, b;          /* the catalogs, sorted by cell inside each range */
  wt_task *tasks;          /* one task per kept pair of cells */
  int64_t n_tasks;
  double *skipped_n;       /* per histogram: pairs not visited, all at or */
  double *skipped_w;       /* beyond the last edge, and their weight sums */
} wt_grid;

/* plans the cell pairs of job's tasks for a last edge of theta_max_deg and
 * cells of cell_deg; WT_ERR_ARG when task ranges overlap without being
 * identical (then count without a grid) */
int wt_grid_plan(const wt_job *job, double theta_max_deg, double cell_deg,
                 wt_grid *gr);
void wt_grid_free(wt_grid *gr);
#endif
