/* wtheta core: the plain-C API shared by the dispatcher, the CPU engine and
 * the CUDA engine. Nothing here knows about R.
 *
 * Exactness contract (every backend honours it bit for bit):
 *   a point at (ra, dec) degrees becomes the unit vector
 *     x = cos(dec r) cos(ra r), y = cos(dec r) sin(ra r), z = sin(dec r),
 *     r = M_PI / 180, in IEEE double;
 *   a pair's squared chord is d2 = ((xi-xj)^2 + (yi-yj)^2) + (zi-zj)^2 in
 *   IEEE double, evaluated in that order with no fused multiply-add;
 *   an edge theta (degrees) becomes c2 = (4 s) s with s = sin(theta r / 2),
 *   and an edge of exactly 180 degrees becomes +infinity (no separation
 *   exceeds it, so the last bin is closed there);
 *   the pair falls in bin k when c2[k] <= d2 < c2[k+1].
 */
#ifndef WT_H
#define WT_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* status codes returned by every core function */
enum {
  WT_OK = 0,
  WT_ERR_NOMEM = 1,        /* host allocation failed */
  WT_ERR_INTERRUPTED = 2,  /* the user interrupted between chunks */
  WT_ERR_NO_CUDA = 3,      /* CUDA support was not compiled in */
  WT_ERR_NO_DEVICE = 4,    /* compiled with CUDA, but no usable GPU */
  WT_ERR_CUDA = 5,         /* a CUDA call failed: see wt_job.message */
  WT_ERR_ARG = 6,          /* an argument the R layer should have caught */
  WT_ERR_WORKER = 7,       /* a worker thread failed: see wt_job.message */
  WT_ERR_ISA = 8,          /* WTHETA_CPU_ISA names an instruction set this
                              CPU or build lacks: see wt_job.message */
  WT_ERR_NO_HEALPIX = 9    /* HEALPix support (chealpix) was not compiled in */
};

/* The enums below are mirrored on the R side from one place: r/backend.c's
 * wt_r_constants() hands their names and values to R (wt_constant() in
 * R/backend.R), so R never writes a raw code. */

/* which engine counts */
typedef enum { WT_BACKEND_CPU = 1, WT_BACKEND_CUDA = 2 } wt_backend;

/* pruning by the last edge and bulk counting of cell pairs (core/grid.h) */
typedef enum {
  WT_GRID_NEVER = 0,       /* count every pair */
  WT_GRID_AUTO = 1,        /* prune (and, on the CPU, count in bulk) when it
                              pays: see core/grid_policy.c */
  WT_GRID_ALWAYS = 2,      /* prune and count in bulk whenever the last edge
                              is below 180 degrees */
  WT_GRID_PRUNE = 3        /* always, but pruning only, no bulk counting */
} wt_grid_mode;

/* the CPU engine's kernels: the best the CPU has, or WTHETA_CPU_ISA */
typedef enum {
  WT_ISA_PLAIN = 0,        /* plain C, every CPU */
  WT_ISA_AVX2 = 1,         /* x86-64 AVX2, in double */
  WT_ISA_AVX512 = 2        /* x86-64 AVX-512, double and float prefilter */
} wt_isa;

/* one catalog as unit vectors, structure of arrays */
typedef struct {
  const double *x, *y, *z;
  const double *w;         /* per-point weights, or NULL: unweighted */
  /* bitwise weights (PIP), or NULL: n_words 32-bit words per point,
   * word-major (word k of point i at bits[k * n + i]); they travel with
   * the points wherever these are sorted (the grid) or shipped */
  const uint32_t *bits;
  int n_words;
  /* sample labels (wtheta_multi(): the samples counted as one catalog),
   * one in [0, wt_job.n_lab) per point, or NULL; like bits, they travel
   * with the points wherever these are sorted (the grid) or shipped */
  const int32_t *lab;
  int64_t n;
} wt_points;

/* Pair weights beyond w_i w_j (PIP, issue 37; pycorr's definitions): a
 * pair (i, j) of a job with pip adds to wsum
 *   (w_i w_j) * by_count[popcount(b_i & b_j)] * ang(d2)
 * where by_count[c] = nrealizations / (noffset + c), or default_value
 * where that denominator is 0 (n_words > 0: both catalogs carry n_words
 * words; n_words == 0: no bitwise factor), and ang(d2) = 1 when n_ang is
 * 0 or d2 lies outside [ang_d2[0], ang_d2[n_ang - 1]], else the linear
 * interpolation of ang_w in d2 (ang_d2 increasing: the squared chords of
 * the table's angles; cos theta = 1 - d2 / 2, so linear in cos theta).
 * Counts (slots) stay the plain pair counts; thsum sums theta times the
 * full pair weight. The grid prunes by the last edge but counts nothing
 * in bulk (the pair weight does not factorise over a cell pair); on the
 * CPU without an angular table, its node pairs proved inside one bin
 * become tasks of that one slot (wt_task.slo == shi), whose pairs the
 * engine visits for their weights only (core/grid_policy.c). */
#define WT_PIP_MAX_WORDS 32
typedef struct {
  int n_words;
  const double *by_count;  /* 32 * n_words + 1 values */
  int n_ang;
  const double *ang_d2, *ang_w;
} wt_pip;

/* One unit of counting: the pairs (i, j) with i in [a0, a1) of catalog a
 * and j in [b0, b1) of catalog b (of catalog a again in an auto job), added
 * to histogram `out`. In an auto job a task either has a0 == b0 and
 * a1 == b1 (the unordered pairs i < j inside that range) or a1 <= b0 (every
 * pair between two disjoint ranges). Patches (jackknife) and, later, cells
 * of a grid are lists of tasks over points grouped by patch or cell. */
typedef struct {
  int64_t a0, a1, b0, b1;
  int32_t out;
  /* the slots [slo, shi] that the grid walk proved the task's pairs fall
   * in (with margins); shi == 0: unknown, any slot (tasks made anywhere
   * else, zero-initialised). A hint for the CPU engine's narrow kernel,
   * which still checks every pair against slo and shi; but the CPU
   * engine's PIP jobs count a task of one slot (slo == shi > 0) into that
   * slot without a d2 per pair (cpu/driver.c, do_fixed()). */
  int16_t slo, shi;
} wt_task;

/* A prepared catalog (core/catalog.c): its points, their grouping by
 * patch, and the grid stage of its points (core/grid.h: the points sorted
 * by cell inside each range and a tree per cell), built by the first count
 * that plans a grid and kept for every later count with the same cell
 * size, so that wtheta() sorts and builds each catalog's grid once for DD,
 * DR and RR. Counts run between two catalogs (wt_count_catalogs); the
 * engines never see one: the dispatcher derives each engine's wt_job
 * (sorted points and tasks) from the two. Counts that share a catalog
 * may run at once from several threads (overlapped GPU counts): the grid
 * stage is built under a lock, and a stage that a count is using is never
 * replaced (such counts share their cell size: their edges). */
typedef struct wt_grid_stage wt_grid_stage;   /* private to core/ */
typedef struct {
  wt_points p;             /* in memory the caller keeps alive */
  int64_t *ranges;         /* owned: n_ranges [start, end) pairs (two
                              values each), sorted and disjoint: the points
                              of each patch, or one range over all */
  int64_t n_ranges;
  wt_grid_stage *grid;     /* owned: the cached grid stage, or NULL */
  int grid_users;          /* counts using it (wt_catalog_grid_done) */
} wt_catalog;

/* fault injection for tests (WTHETA_TEST_FAULT, read by wt_count) */
enum {
  WT_FAULT_ALLOC = 1,      /* an allocation (host or GPU) fails */
  WT_FAULT_LAUNCH = 2,     /* a kernel launch fails */
  WT_FAULT_COPY = 4,       /* copying results back fails */
  WT_FAULT_THREAD = 8,     /* a worker thread fails */
  WT_FAULT_NARROW = 16,    /* the CPU's narrow kernel adds one false pair
                              per call: shows that a workload reaches it */
  WT_FAULT_FIXED = 32,     /* the CPU's kernel of PIP tasks of one slot
                              adds one false pair per task: the same */
  WT_FAULT_PIPCOUNT = 64,  /* the CPU's count form of PIP jobs (unit
                              weights) adds one false pair per call of its
                              kernels: the same */
  WT_FAULT_SLOTS = 128,    /* not a failure: the CUDA engine keeps its two
                              chunk slots (chunks loaded again) where whole
                              catalogs would fit on the device, so that
                              tests cover both ways */
  /* the CUDA faults strike every device of a job, or, when the bits from
   * WT_FAULT_DEVICE_SHIFT up hold d + 1 (WTHETA_TEST_FAULT=launch@d),
   * device d only: one failing device of several (wt_fault_on_device) */
  WT_FAULT_DEVICE_SHIFT = 8
};

/* Edges as squared chords and the bin lookup table derived from them.
 * Slots: 0 holds pairs below the first edge, 1..n_bins the bins, and
 * n_bins + 1 the pairs at or above the last edge; upper[s] is the exclusive
 * upper bound of slot s (upper[n_bins + 1] = +inf). */
typedef struct {
  int n_bins;
  const double *upper;     /* n_bins + 2 values */
  /* lookup: slot guess from the high bits of d2 (a monotone key) */
  const uint16_t *table;   /* NULL when n_bins + 2 > 65535: binary search */
  int table_shift;         /* key = (bits(d2) >> table_shift) - table_base */
  int64_t table_base;
  int table_size;          /* keys are clamped to [0, table_size - 1] */
  int table_steps;         /* most edges inside one table cell */
} wt_bins;

typedef struct {
  wt_points a;             /* first catalog */
  wt_points b;             /* second catalog; ignored when is_auto */
  int is_auto;             /* 1: unordered pairs i < j of a, no self pairs */
  int self_pairs;          /* auto only: report ordered pairs, self pairs
                              included (applied by wt_count, not backends) */
  const wt_bins *bins;
  int backend;             /* WT_BACKEND_* */
  int n_threads;           /* CPU threads, >= 1 */
  const int *devices;      /* CUDA device indices to use */
  int n_devices;           /* >= 1 when backend is WT_BACKEND_CUDA */
  /* NULL: one task over all pairs into histogram 0 (wt_count then passes
   * that single task to the engines, so engines always see a list) */
  const wt_task *tasks;
  int64_t n_tasks;
  int n_out;               /* histograms in slots/wsum, >= 1 */
  /* Labels (wt_points.lab; 0: none, the job ignores lab). With n_lab > 0
   * each task histogram becomes La x Lb histograms, La = n_lab when a.lab
   * is given (else 1), Lb = La for an auto job, else n_lab when b.lab is
   * given (else 1): a pair (i, j) of a task with histogram `out` counts
   * into histogram (out La + lab_a[i]) Lb + lab_b[j] (lab 0 where a side
   * has none), so n_out is the tasks' histograms times La Lb. The CPU
   * engine only (wt_count refuses labels on the GPU), not with pip,
   * thsum or self_pairs; no bulk counting inside bins (pruning only), and
   * the dispatcher, not the grid, fills slot n_bins + 1 (beyond the last
   * edge) of every histogram, from the label totals of each task's
   * ranges. In an auto job the histograms of a diagonal task (a0 == b0:
   * the pairs i < j of one range, whose order of i and j says nothing)
   * are folded: (s, t) and (t, s), s < t, add into (s, t), and (t, s) is
   * 0. */
  int n_lab;
  /* 1: the points of a (and b) are in spatial order already, as the grid
   * sorts them (by cell, then Morton code inside the cell: grid_build.c),
   * so the CUDA engine does not order them again on the device (on 10^8
   * full-sky points its kernels took the same time either way) */
  int ordered;
  /* called from the main thread between chunks with the pairs counted so
   * far and the total of the job; nonzero means stop (interrupt) */
  int (*poll)(void *ctx, double done, double total);
  void *poll_ctx;
  int fault;               /* WT_FAULT_* bits, tests only */
  /* pruning by the last edge and bulk counting of cell pairs: a
   * wt_grid_mode */
  int grid;
  /* the grid's cells this many times as wide as the policy's (from
   * wt_grid_call_scale(), once for all the counts of a call, which share
   * their catalogs' grids); 0 or 1: the policy's */
  double grid_scale;
  double pairs_skipped;    /* out: pairs the grid counted without visiting
                              them (beyond the last edge, or whole cell
                              pairs proved inside one bin), and those the
                              GPU's fast kernel counted in bulk */
  /* out: n_out histograms of n_bins + 2 slot counts (below, bins...,
   * above), histogram h at slots + h * (n_bins + 2) */
  uint64_t *slots;
  /* out, when a.w (and b.w for cross) are given: sums of w_i w_j in the
   * same layout as slots; NULL for an unweighted job */
  double *wsum;
  /* out, when not NULL (mean_theta): per slot, in the layout of slots, the
   * sum of the pairs' angles in radians, each times w_i w_j when weighted;
   * an angle is 2 asin(d / 2) from the chord d = sqrt(d2) (well conditioned
   * at small angles, unlike acos of the dot product). The grid then prunes
   * by the last edge but counts nothing in bulk (a node pair has no angle
   * per pair), so slot n_bins + 1 lacks the pruned pairs' angles; the CPU
   * engine counts with its plain C kernel, the CUDA engine with its exact
   * kernel. */
  double *thsum;
  /* pair weights beyond w_i w_j (PIP), or NULL; needs wsum */
  const wt_pip *pip;
  double gpu_ms;           /* out: summed GPU kernel time (CUDA events) */
  double plan_s;           /* out: seconds spent planning the grid */
  char message[256];       /* out: detail for WT_ERR_CUDA and friends */
} wt_job;

/* floor/bins.c (the floor: shared by the dispatcher and the engines):
 * edges as squared chords, the slot lookup table, unit vectors */
double wt_edge_c2(double theta_deg);
/* unit vectors of k catalogs (catalog c into x[c], y[c], z[c]) by one
 * team of n_threads: WT_OK, or WT_ERR_NOMEM; and of one catalog */
int wt_unit_vectors_many(int k, const double *const *ra_deg,
                         const double *const *dec_deg, const int64_t *n,
                         double *const *x, double *const *y,
                         double *const *z, int n_threads);
void wt_unit_vectors(const double *ra_deg, const double *dec_deg, int64_t n,
                     double *x, double *y, double *z, int n_threads);
/* builds upper[] and the table into caller-provided storage sized by
 * wt_bins_table_size(); returns WT_OK */
int wt_bins_init(wt_bins *bins, const double *edges_deg, int n_edges,
                 double *upper, uint16_t *table);
int wt_bins_table_capacity(void);
int wt_slot_of(const wt_bins *bins, double d2);
/* floor/bins.c: the angular factor ang(d2) of a wt_pip (1 without a
 * table), and the whole pair weight factor by_count[c] * ang(d2) beyond
 * w_i w_j for a popcount c (c ignored without words); the kernels inline
 * the same arithmetic */
double wt_pip_ang(const wt_pip *pip, double d2);
double wt_pip_factor(const wt_pip *pip, int c, double d2);
/* core/patches.c */
void wt_nearest_centre(const double *x, const double *y, const double *z,
                       int64_t n, const double *cx, const double *cy,
                       const double *cz, int k, int *label, int n_threads);
void wt_far_pairs(const double *x, int La, const double *y, int Lb,
                  const int *p, const int *q, int64_t n_far, int P,
                  double *out);
void wt_kmeanspp(const double *x, const double *y, const double *z,
                 int64_t n, int k, const double *draw, double *d2,
                 double *cx, double *cy, double *cz, int n_threads);
int wt_kmeans(const double *x, const double *y, const double *z, int64_t n,
              double *cx, double *cy, double *cz, int k, int max_iter,
              int *label, int n_threads);
void wt_range_caps(const double *x, const double *y, const double *z,
                   const int64_t *r, int k, double *cx, double *cy,
                   double *cz, double *rad, int n_threads);
int wt_caps_within(double ax, double ay, double az, double ar, double bx,
                   double by, double bz, double br, double reach);

/* core/resample.c: patch arrays and their margins, jackknife replicates,
 * grouping by patch */
void wt_patch_array(const uint64_t *counts, const double *wsums,
                    const int64_t *inv, int n_patches, int n_bins,
                    int is_auto, double *o);
void wt_patch_margins(const double *S, const uint64_t *counts,
                      const double *wsums, const int64_t *inv, int n_patches,
                      int n_bins, int is_auto, double *rows, double *cols,
                      double *diag, double *total);
void wt_jackknife_margins(const double *rows, const double *cols,
                          const double *diag, const double *total, int P,
                          int nb, int is_auto, const double *norm, double *o);
void wt_jackknife_counts(const double *S, int P, int nb, int is_auto,
                         const double *norm, double *scratch, double *o);
void wt_jackknife_sums(const double *s, int P, double *o);
/* where wt_patch_parts() puts one part's numbers */
typedef struct {
  double *tot, *wtot;           /* n_bins + 2 each; wtot NULL: unweighted */
  double *m[4], *wm[4];         /* margins: rows, cols, diag, total */
  double *arr, *warr;           /* or the patch arrays (m[0] NULL) */
} wt_part_out;
void wt_patch_parts(const uint64_t *counts, const double *wsums,
                    const int64_t *inv, const int *is_auto, int n,
                    int n_patches, int n_bins, const wt_part_out *out,
                    uint64_t *scratch, int T);
/* wt_patch_parts() of an unweighted labelled count whose parts keep
 * margins, from its blocks: block i of patch pair map[i] (n_map of them)
 * and labels (s, t) is histogram (i La + s) Lb + t of counts (n_bins + 2
 * slots); part k is that of labels ps[k], pt[k] (an auto count's s <= t,
 * as wtr_label_parts() in src/r/results.c says). The same numbers, into
 * out[k].tot and out[k].m; scratch: n (n_bins + 2) counters. WT_OK, or
 * WT_ERR_NOMEM (nothing written) */
int wt_label_part_margins(const uint64_t *counts, const int *map,
                          int64_t n_map, int n_patches, int n_bins, int La,
                          int Lb, int is_auto, const int *ps, const int *pt,
                          int n, const wt_part_out *out, uint64_t *scratch,
                          int T);
void wt_row_products(const double *d, int64_t n, int64_t k, double scale,
                     double *o, int T);
void wt_group_by_label(const double *x, const double *y, const double *z,
                       const int *lab, const double *wv, int64_t n, int P,
                       int *cnt, int64_t *at, double *ox, double *oy,
                       double *oz, int *ol, double *ow, int n_threads);
int wt_patch_vectors(const double *ra, const double *dec, const double *wv,
                     int64_t n, const double *cx, const double *cy,
                     const double *cz, int k, int *cnt, double *ox,
                     double *oy, double *oz, int *ol, double *ow,
                     int n_threads);

/* core/catalog.c: prepared catalogs */
/* a catalog over the points of p (the struct is copied, not its arrays)
 * grouped by n_ranges ranges [ranges[2k], ranges[2k + 1]) (copied), or one
 * range over all points when ranges is NULL; WT_ERR_ARG when p has no
 * point or a range lies outside it or overlaps another (empty ranges are
 * allowed), WT_ERR_NOMEM */
int wt_catalog_init(wt_catalog *c, const wt_points *p, const int64_t *ranges,
                    int64_t n_ranges);
/* 1 when [r0, r1) is one of c's ranges */
int wt_catalog_has_range(const wt_catalog *c, int64_t r0, int64_t r1);
/* frees the ranges and the grid stage (not the points) */
void wt_catalog_clear(wt_catalog *c);
/* What a count keeps of its catalog's points so that counts of other
 * catalogs can be told apart (R's wtheta_from_counts()): with q = the unit
 * vector's components rounded (half to even) to 2^-16 plus 65536, out[0..2]
 * the sums of q over the points, out[3..4] the sums of two hashes of them
 * ((q1 1048573 + q2 1048571 + q3 1048559) mod 1048549 and (q1 999983 +
 * q2 1000003 + q3 999979) mod 1048343). Integer sums, so the same in any
 * order and on any number of threads (T) */
void wt_catalog_fingerprint(const double *x, const double *y, const double *z,
                            int64_t n, int T, double out[5]);
/* frees the cached grid stage only, unless a count is using it; the next
 * count that plans a grid builds it again */
void wt_catalog_drop_grid(wt_catalog *c);
/* the grid stage for cells of cell_deg degrees, for one count, which
 * calls wt_catalog_grid_done when it no longer reads it: the cached one,
 * or built (replacing one of another cell size that no count is using);
 * WT_OK, WT_ERR_NOMEM, or WT_ERR_ARG when another count uses a stage of
 * another cell size. Safe across threads. */
int wt_catalog_grid(wt_catalog *c, double cell_deg, int n_threads,
                    const wt_grid_stage **out);
void wt_catalog_grid_done(wt_catalog *c);
/* the cell size (degrees) of the catalog's cached grid stage, 0 for none */
double wt_catalog_grid_cell(wt_catalog *c);
/* how many grid stages this process has built (tests show with it that
 * wtheta() builds each catalog's grid once) */
double wt_grid_builds(void);
/* core/grid_policy.c: the widening of the grid's cells (wt_job.grid_scale)
 * for the counts of one call between the k catalogs p[0..k-1], for a last
 * edge of theta_max_deg degrees, in grid mode grid_mode (a wt_grid_mode)
 * on backend (1 at once, nothing read, when no count of the call can take
 * the grid, as for bins beyond 60 degrees in auto mode): from 1 (the
 * policy's cells) up to 2, as
 * far as the catalogs hold few points per non-empty cell (read from a
 * sample of at most 2^15 points of each, on at most n_threads threads),
 * in steps of 2^(1/4), so that calls on much the same catalogs agree.
 * cached[0..k-1]: the cell sizes of the catalogs' cached grid stages (0:
 * none; NULL: none at all); the first that is a widening of this edge's
 * cells (1 to 2) is kept, so that a prepared catalog's grid serves the
 * next call too. Counts do not depend on it, only the time the grid
 * takes. */
double wt_grid_call_scale(const wt_points *const *p, int k,
                          double theta_max_deg, int grid_mode, int backend,
                          int n_threads, const double *cached);

/* core/count.c: dispatch (the grid when it pays, core/grid_policy.c; then
 * one engine) */
/* counts between catalogs a and b, or the auto pairs of a when b is NULL:
 * sets job->a, job->b and job->is_auto from them; job->tasks index the
 * catalogs' points and, for the grid, must use the catalogs' ranges (a
 * task over other ranges is counted without a grid) */
int wt_count_catalogs(wt_job *job, wt_catalog *a, wt_catalog *b);
/* counts job->a and job->b as given, through temporary catalogs grouped by
 * the ranges of the tasks (for callers without catalogs: bench/kernel/kernel.c) */
int wt_count(wt_job *job);
/* the host stages of a count's plan without counting (benches): the grid
 * (when it pays for job, as in a count) and, for the CUDA backend, the
 * engine's host planning of the walk's tasks. out[WT_PLAN_TIMES]: grid
 * build s, walk s, engine tasks, pairs in them, then wt_cuda_host_plan's
 * six values. WT_OK, WT_ERR_ARG or WT_ERR_NOMEM */
#define WT_PLAN_TIMES 10
/* tests: the grid's walk of the same job with a sink (the GPU's way: the
 * tasks fed in rounds as they are made) and without: out[0] 1 when the
 * tasks, in order, and the bulk sums are the same, out[1] the sink's
 * feeds, out[2] the tasks. WT_OK, WT_ERR_ARG or WT_ERR_NOMEM */
int wt_plan_sink_check(wt_job *job, wt_catalog *a, wt_catalog *b,
                       double *out);
int wt_plan_catalogs(wt_job *job, wt_catalog *a, wt_catalog *b,
                     double *out);
/* tests (core/grid_groups.c): the grouped walk's two sorts of its tasks,
 * by histogram first and by comparisons alone, on n pseudo-random tasks:
 * 1 when they give the same order, 0 when not, -1 out of memory */
int wt_walk_sort_check(int64_t n, uint32_t seed, int32_t n_out);
/* tests: the grid's sort keys by AVX2 against the C library's angles
 * (core/grid_keys.c): out[0] keys that differ, out[1] points set aside
 * near an edge, out[2] whether AVX2 ran */
int wt_grid_keys_check(int64_t n, uint32_t seed, double h, int64_t *out);
/* floor/job.c (the floor): conventions shared by the dispatcher and the
 * engines */
/* pairs a task holds */
double wt_task_pairs(const wt_job *job, const wt_task *t);
/* pairs the job's tasks hold, summed in task order */
double wt_tasks_pairs(const wt_job *job);
/* 1 when every task lies inside its catalogs and histograms */
int wt_tasks_valid(const wt_job *job);
/* La and Lb of a labelled job (wt_job.n_lab; 1 and 1 without labels):
 * the dispatcher, the engine and the boundary all lay out by these */
void wt_labels_sizes(const wt_job *job, int *la, int *lb);
/* WT_FAULT_* bits from the environment variable WTHETA_TEST_FAULT, a comma
 * separated list of alloc, launch, copy, thread (tests only) */
int wt_fault_from_env(void);
/* whether the fault bits `fault` of a job strike device `device` */
int wt_fault_on_device(int fault, int device);
double wt_seconds(void);

/* cpu/driver.c: the OpenMP engine */
int wt_count_cpu(wt_job *job);
/* cpu/isa.c: 1 when this CPU and build can run the kernels of isa */
int wt_cpu_isa_supported(int isa);
/* the best instruction set this CPU and build can run */
int wt_cpu_isa_best(void);
/* the instruction set the CPU engine uses: WTHETA_CPU_ISA (plain, avx2,
 * avx512) when set and not empty, else the best; WT_OK, or WT_ERR_ISA
 * with the reason in msg when the variable names an unknown or
 * unsupported one */
int wt_cpu_isa_chosen(int *isa, char *msg, size_t len);
/* the same for light passes outside the engine: plain where
 * wt_cpu_isa_chosen() fails */
int wt_cpu_isa_light(void);
/* the name of an instruction set ("plain", "avx2", "avx512") */
const char *wt_cpu_isa_name(int isa);

/* cuda/entry.cu, or cuda/stub.c when built without nvcc */
int wt_cuda_compiled(void);      /* 1 when built with nvcc */
/* number of usable devices (0 when none, or when not compiled in); on a
 * CUDA error returns 0 and writes the reason into msg (may be NULL) */
int wt_cuda_device_count(char *msg, size_t msg_len);
/* name (into name, name_len bytes), compute capability and memory of one
 * device; returns WT_OK or WT_ERR_CUDA */
int wt_cuda_device_info(int device, char *name, size_t name_len,
                        int *major, int *minor, double *mem_bytes);
int wt_count_cuda(wt_job *job);
/* A count whose tasks come while it runs (core/count.c: the grid's walk
 * feeds it as it goes): open starts the devices on job, whose points must
 * come ordered (job->ordered; its tasks are ignored), into *h; feed plans
 * and queues a run of tasks (read during the call only); close waits for
 * the counts (abort: stops them first), adds them into job->slots (wsum,
 * thsum), sets job->gpu_ms and job->message, frees h and returns the
 * count's status. wt_count_cuda is open, one feed of the job's tasks and
 * close. Statuses as wt_count_cuda's. close also adds the kernels' pairs
 * counted in bulk to job->pairs_skipped. */
int wt_cuda_stream_open(wt_job *job, void **h);
int wt_cuda_stream_feed(void *h, const wt_task *tasks, int64_t n);
int wt_cuda_stream_close(void *h, int abort);
/* frees the device buffers, streams and events kept between calls (those
 * of counts still running stay); returns how many contexts it freed */
int wt_cuda_release(void);

/* cuda/plan_tests.cxx (with the other plan_*.cxx, built in every build,
 * with or without nvcc): the CUDA engine's host planning, shown to tests
 * (r/testing.c) so that it is checked without a GPU */
typedef struct {
  /* in: the analysis of the points (plan.h's Analysis) and the device */
  int sane;                /* finite unit vectors, non-decreasing edges */
  double r2max, eta;       /* largest |X|^2 and | |X|^2 - 1 | */
  int weighted;
  int wwords;              /* weighted_words() of the job (-1: none) */
  int unit_w;              /* every weight 1 (PIP: the count kernel) */
  double smem_sm, smem_block;  /* shared memory per SM and per block */
  /* out */
  int fast, cfg, fix_shared, rcols;
  int wfast, wcount;       /* the weighted kernel; its PIP count form */
  double smem;             /* dynamic shared memory per block */
  int n_cells;             /* cells of the fast table (0: exact kernel) */
  double c, onec, margin, multi;  /* the fast table's */
} wt_cuda_plan_info;
/* the plan of the edges bins->upper for info's inputs; thr and cmap (two
 * slots per cell), when not NULL and cap >= info->n_cells, receive the fast
 * table. WT_OK, or WT_ERR_NOMEM */
int wt_cuda_plan_table(const wt_bins *bins, wt_cuda_plan_info *info,
                       float *thr, int *cmap, int cap);
/* the launches and items of the job's tasks (only a.n, b.n, is_auto,
 * tasks and n_tasks are read) for the fast or the exact kernel, chunks of
 * `chunk` points (0: the engine's), launches of max_pairs pairs (0: the
 * engine's choice for n_devices devices) and n_blocks blocks. Writes
 * n_launch and n_item; when cap_launch and cap_item allow, launch gets 8
 * values per launch (cI, cJ, same, first row, end row, pairs, items, bound
 * on items) and item 7 per item (launch, i0, i1, j0, j1, diag, out).
 * WT_OK, WT_ERR_ARG or WT_ERR_NOMEM */
int wt_cuda_plan_work(const wt_job *job, int fast, int64_t chunk,
                      double max_pairs, int n_devices, int n_blocks,
                      double *launch, int64_t cap_launch, int *item,
                      int64_t cap_item, int64_t *n_launch, int64_t *n_item);

/* the CUDA engine's host work before and around its launches, timed, for
 * the fast kernel on one device of 132 multiprocessors (benches:
 * wt_plan_catalogs): out[0] the analysis of the points, out[1] the rows
 * and launches, out[2] the task boundaries of the device ordering, out[3]
 * the items of every launch (seconds); out[4] the launches, out[5] the
 * chunk copies to the device they need. WT_OK or WT_ERR_NOMEM */
int wt_cuda_host_plan(const wt_job *job, double *out);

#ifdef __cplusplus
}
#endif

#endif
