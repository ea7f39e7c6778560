/* core/grid_build.c and core/grid_walk.c: pruning by the largest angle in
 * two stages (the method is described in grid_build.c).
 *
 *   per catalog (grid_build.c): the points sorted by cell inside each of
 *     the catalog's ranges and one tree per cell: a wt_grid_stage, built
 *     once for a cell size and cached in the wt_catalog (catalog.c);
 *   per pair of catalogs (grid_walk.c): the walk over the two stages'
 *     trees that turns a job's tasks into tasks of node pairs for the
 *     engine and pair counts added in bulk.
 *
 * The policy (grid_policy.c) decides when the grid pays and with which
 * cells, and plans one count through both stages.
 *
 * Private to core/: the dispatcher (count.c), the policy and the catalog
 * (catalog.c) use it; no engine does. */
#ifndef WT_GRID_H
#define WT_GRID_H
#include "wt.h"

#define WT_MORTON_BITS 10            /* per axis, inside a cell */

/* the cells: declination bands of height h cut in right ascension */
typedef struct {
  int n_bands;
  double h;                          /* band height, degrees */
  int *n_ra;                         /* cells per band */
  int64_t *first;                    /* first cell id of each band */
  int64_t n_cells;
} wt_grid_shape;

/* a node: a run of points sharing a key prefix, and its bounding cap */
typedef struct {
  int64_t start, end;                /* points, after sorting */
  int32_t child[4];                  /* node indices, -1 for none */
  double c[3];                       /* cap centre */
  double r;                          /* cap radius as a chord (R^3 distance) */
  double ang;                        /* ... and as an angle, radians */
  double w, w2;                      /* sums of weights and of squares */
} wt_grid_node;

/* the trees of one range [r0, r1) of one catalog */
typedef struct {
  int64_t r0, r1;
  wt_grid_node *nodes;
  int64_t n_nodes, cap_nodes;
  int64_t *root_of;                  /* for each non-empty cell: its root */
  int64_t *cell_id;                  /* ... and its id */
  int64_t n_cells;
} wt_grid_tree;

/* the per-catalog stage (wt_grid_stage is declared in wt.h) */
struct wt_grid_stage {
  double cell_deg;                   /* the cell size it was built for */
  wt_grid_shape shape;
  double *mem;                       /* the sorted copies of the points */
  uint32_t *bits_mem;                /* and of their bitwise words (PIP),
                                        or NULL */
  int32_t *lab_mem;                  /* and of their sample labels, or
                                        NULL */
  wt_points sorted;                  /* the points, sorted by cell inside
                                        each range; the others in place */
  wt_grid_tree *trees;               /* one per range of the catalog, in
                                        the catalog's order (sorted) */
  int64_t n_trees;
};

/* grid_build.c: sorts the points of each range of cat by cell of cell_deg
 * degrees and builds the trees; WT_OK or WT_ERR_NOMEM (nothing kept) */
int wt_grid_stage_build(const wt_catalog *cat, double cell_deg,
                        int n_threads, wt_grid_stage **out);
void wt_grid_stage_free(wt_grid_stage *s);
/* the tree of range [r0, r1), or NULL when it is not a range of the
 * stage's catalog (binary search: the catalog's ranges are sorted) */
const wt_grid_tree *wt_grid_stage_tree(const wt_grid_stage *s, int64_t r0,
                                       int64_t r1);

/* grid_build.c: the cells of a band height of h degrees (WT_OK or
 * WT_ERR_NOMEM), and their release */
int wt_grid_shape_init(wt_grid_shape *g, double h);
void wt_grid_shape_free(wt_grid_shape *g);

/* grid_keys.c: a point's sort key (its cell id, then its Morton code in
 * the cell) by the C library's asin() and atan2(); the keys of n points
 * the same, by AVX2 where vector is nonzero and the CPU has it (returns
 * how many points near a cell's or a Morton digit's edge went to
 * wt_grid_key_of() instead); whether the CPU and WTHETA_CPU_ISA allow
 * AVX2 */
uint64_t wt_grid_key_of(const wt_grid_shape *g, double x, double y, double z);
int64_t wt_grid_keys(const wt_grid_shape *g, const double *x, const double *y,
                     const double *z, int64_t n, uint64_t *key, int vector);
int wt_grid_keys_vector(void);

/* grid_sort.c: (key, order)[0, n) sorted by the low `bits` bits of key,
 * stably (the same order on any number of threads), on at most n_threads
 * threads, with (k2, o2) of n as scratch; WT_OK or WT_ERR_NOMEM (nothing
 * changed) */
int wt_grid_sort_keys(uint64_t *key, int64_t *order, int64_t n, int bits,
                      int n_threads, uint64_t *k2, int64_t *o2);
/* the stripes a pass over n sorted keys splits into on n_threads: one a
 * thread, each of at least 2^16 keys (the sort's, and the search for the
 * cells' runs in grid_build.c) */
int wt_grid_stripes(int64_t n, int n_threads);

/* grid_build.c: the non-empty cells of a grid of cells of cell_deg
 * degrees that an even sample of at most 2^15 of p's points finds (on at
 * most n_threads threads): all of them for smaller catalogs, else at most
 * all; -1 when the grid has too many cells to count (over 2^24) or memory
 * runs out, 0 for no points */
int64_t wt_grid_cells_found(const wt_points *p, double cell_deg,
                            int n_threads);

/* what the walk over two stages makes */
typedef struct {
  wt_task *tasks;          /* one task per kept pair of nodes, in the
                              sorted points of the stages */
  int64_t n_tasks;
  /* pairs counted without visiting them, n_hist x (n_bins + 2) slots like
   * wt_job.slots, and their weight sums: n_hist the tasks' histograms
   * (wt_job.n_out, or n_out / (La Lb) in a labelled job) */
  double *bulk_n, *bulk_w;
  int64_t n_hist;
} wt_grid;

/* A consumer of the walk's tasks as the walk makes them (the CUDA engine,
 * which counts while the walk goes on): open() once the catalogs' points
 * are sorted, with the engine's job (no tasks yet; it reads the job and
 * its points until close()); feed() with each run of tasks, in the order
 * a walk without a sink lists them, readable only during the call;
 * close() once, after a successful open: it finishes the count into the
 * job (abort: stops it) and returns its status. open() and feed() return
 * a WT_* status; any other than WT_OK stops the plan with it. */
typedef struct {
  int (*open)(void *ctx, wt_job *sub);
  int (*feed)(void *ctx, const wt_task *tasks, int64_t n);
  int (*close)(void *ctx, int abort);
  void *ctx;
} wt_task_sink;

/* what the walk does with a node pair proved inside one bin (a node pair
 * beyond the last edge is always counted in bulk) */
enum {
  WT_WALK_PRUNE = 0,       /* a task like any other */
  WT_WALK_BULK = 1,        /* counted in bulk (n_a n_b pairs, W_a W_b) */
  WT_WALK_FIXED = 2        /* split as for bulk counting, then a task whose
                              slot range is that one slot (slo == shi):
                              for pair weights that do not factorise over
                              a cell pair (PIP), which the CPU engine
                              counts without a slot per pair */
};
/* grid_walk.c: the node pairs of job's tasks between stage a and stage b
 * (b == a for an auto job) for a last edge of theta_max_deg, treating the
 * node pairs inside one bin as bulk (a WT_WALK_* mode) says, and
 * splitting node pairs that may be pruned down to min_split pairs, and
 * those of more than min_bulk pairs whose quarters would each lie inside
 * one bin (bulk counting two levels down);
 * WT_ERR_ARG when a task's range is not a range of its catalog (then
 * count without a grid) or the stages' cells differ. With a sink (not
 * NULL) the tasks go to sink->feed() in rounds as they are made, not into
 * gr (gr->tasks NULL, gr->n_tasks the number fed) */
int wt_grid_walk(const wt_job *job, const wt_grid_stage *a,
                 const wt_grid_stage *b, double theta_max_deg, int bulk,
                 double min_split, double min_bulk, wt_grid *gr,
                 const wt_task_sink *sink);
void wt_grid_free(wt_grid *gr);

/* grid_policy.c: the grid's plan of one count */
typedef struct {
  int gridded;             /* 0: the job is counted as given, without a
                              grid (walk and stages empty) */
  int opened;              /* the sink is open: the caller closes it
                              before wt_grid_plan_free() */
  wt_grid walk;            /* the walk's tasks and bulk sums */
  wt_job sub;              /* the engine's job: the catalogs' sorted
                              points and the walk's tasks (the job itself
                              when not gridded) */
  wt_catalog *ca, *cb;     /* the catalogs whose stages it holds */
} wt_grid_plan;
/* The plan of job between ca and cb (NULL: no grid), whose tasks hold
 * `pairs` pairs: gridded when the grid pays (the thresholds, the cells,
 * bulk counting and the split size are decided here); then the catalogs'
 * stages are held (built unless cached) and walked, job->plan_s set and
 * build_s, walk_s (may be NULL) get the two stages' seconds. With a sink
 * (may be NULL), a gridded plan opens it once the stages are built
 * (gp->opened; closed again, aborting, when the plan fails) and feeds it
 * the walk's tasks as they come: the engine counts while the walk goes
 * on. WT_OK (also when not gridded),
 * WT_ERR_ARG (a catalog's stage of another cell size in use, with
 * job->message; or a walk refused), WT_ERR_NOMEM, or the sink's status.
 * The caller calls wt_grid_plan_free() in any case. */
int wt_grid_plan_make(wt_job *job, double pairs, wt_catalog *ca,
                      wt_catalog *cb, wt_grid_plan *gp, double *build_s,
                      double *walk_s, const wt_task_sink *sink);
/* adds the pairs counted in bulk into job's histograms (with labels,
 * into pairs_skipped only: core/labels.c fills their slot) */
void wt_grid_plan_add_bulk(const wt_grid_plan *gp, wt_job *job);
/* frees the walk and lets go of the catalogs' stages */
void wt_grid_plan_free(wt_grid_plan *gp);

/* catalog.c: orders (start, end) pairs of int64_t by start, then end
 * (qsort; the dispatcher sorts the ranges of tasks with it too) */
int wt_range_cmp(const void *x, const void *y);
#endif
