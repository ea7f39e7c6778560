/* Host-only planning of the CUDA engine: catalog analysis
 * (plan_scan.cxx), the fast table and its plan cache (plan_choice.cxx),
 * and the cutting of tasks into launches, rows and items
 * (plan_launch.cxx); plan_tests.cxx shows them outside (wt.h). Plain C++
 * with no CUDA types: the plan_*.cxx are built by the C++ compiler in
 * every build, with or without nvcc, so that tests can check the planning
 * on a machine without a GPU (r/testing.c). Private to cuda/: entry.cu and the
 * plan_*.cxx include it. */
#ifndef WT_CUDA_PLAN_H
#define WT_CUDA_PLAN_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wt.h"
#include "shape.h"

namespace wt_cuda {

/* one unit of a launch: i points [i0, i1) of the I chunk (i1 - i0 at most
 * one block's share) against j points [j0, j1) of the J chunk, pairs j > i
 * only when diag, counted into histogram `out` (the kernels read it as is) */
struct Item { int i0, i1, j0, j1, diag, out; };

/* s, cut to fit, into dst (len bytes) */
void set_msg(char *dst, size_t len, const std::string &s);

/* true when plan_*.cxx were compiled with the shape entry.cu sees */
bool same_shape(const ShapeKey &k);

/* what the inputs allow */
struct Analysis {
  int n_slots;
  bool sane;          /* finite unit vectors, non-decreasing edges */
  double r2max;       /* largest |X|^2 */
  double eta;         /* largest | |X|^2 - 1 | */
  bool unit_w;        /* every weight is 1 (or none): a PIP job's pair
                         weight is then its factor alone (Plan::wcount) */
};

/* largest |X|^2 and | |X|^2 - 1 | of p into an (on up to max_threads
 * threads); an.sane becomes false when some |X|^2 is not finite */
void scan_points(const wt_points &p, Analysis &an, int max_threads);

/* the analysis of a job: its edges, then (unweighted, sane edges) its
 * points, rounded up coarsely so that catalogs which differ in the last
 * bits share one plan; force_exact (a test build) sends it to the exact
 * kernel */
Analysis analyse(const wt_job *job, int max_threads, bool force_exact);

/* a cell's slots: below its threshold, at or above it (the kernels read
 * them as int2, which has this layout) */
struct CellSlots { int lo, hi; };
static_assert(sizeof(CellSlots) == 8, "CellSlots is an int2");

/* The fast table for one shape, and how much of the q range its cells with
 * several edges cover. */
struct FastTable {
  int cfg;
  double c;
  float onec, margin;
  std::vector<float> thr;        /* per cell */
  std::vector<CellSlots> cmap;   /* per cell */
  double multi;       /* q width of cells sent to the exact path */
};

/* the margin M of the fast path (see plan_scan.cxx) */
float fast_margin(const Analysis &an, double max_thr_err);
/* the fast table of shape kCfgs[cfg]; false when the inputs do not allow
 * that shape */
bool build_fast_table(const wt_bins *bins, const Analysis &an, int cfg,
                      FastTable &ft);

struct Plan {
  bool fast;
  bool wfast;          /* weighted kernel (kernel_weighted.cuh): weights
                          with the fast table's float decision */
  int wwords;          /* wfast: PIP words a point (0, 2 or WMAXW) */
  bool wpriv;          /* wfast: per-thread weight sums (at woff) */
  bool wcount;         /* wfast, PIP without individual weights: pairs
                          counted by slot and popcount (wt_pipcount_kernel) */
  int cfg;             /* fast: table shape */
  bool fix_shared;     /* fast: per-slot counters in shared memory */
  bool weighted;       /* sums of w_i w_j too (exact kernel only) */
  bool angles;         /* sums of the pairs' angles too (mean_theta; exact
                          kernel only) */
  int rcols;           /* exact: R (0: counts straight into global memory) */
  size_t smem;         /* dynamic shared memory per block */
  unsigned hoff, fixoff, joff, itemoff, woff, qoff;
  unsigned capoff;     /* fast: bulk counting's caps and slots */
  unsigned toff;       /* exact, angles: R-column angle sums (double) */
  unsigned taboff, byoff, jwoff, jboff;  /* wfast: smem layout */
  FastTable ft;
  std::vector<float> wtab;  /* wfast: per cell threshold, lowest slot (bits) */
  /* row and item shape of the tiled kernels (fast, wfast) */
  bool tiled() const { return fast || wfast; }
};

/* the weighted kernel's word count for a job (Plan::wwords), or -1 when
 * the job cannot take that kernel: no weights, angle sums (mean_theta),
 * angular upweights (their interpolation needs each pair's double d2) or
 * more than WMAXW PIP words */
int weighted_words(const wt_job *job);

/* the kernel and table shape for devices with smem_sm bytes of shared
 * memory per multiprocessor and smem_block per block; angles (sums of the
 * pairs' angles, mean_theta) takes the exact kernel; weighted with wwords
 * >= 0 (weighted_words()) takes the weighted kernel where the fast table
 * can be built, the exact kernel otherwise; pcount (PIP words and unit
 * weights, Analysis::unit_w) the PIP count kernel where its counters fit */
bool make_plan(const wt_bins *bins, const Analysis &an, size_t smem_sm,
               size_t smem_block, bool weighted, Plan &plan,
               bool angles = false, int wwords = -1, bool pcount = false);
/* make_plan through a cache of recent plans */
std::shared_ptr<const Plan> get_plan(const wt_bins *bins, const Analysis &an,
                                     size_t smem_sm, size_t smem_block,
                                     bool weighted, bool angles = false,
                                     int wwords = -1, bool pcount = false);

/* ---- work decomposition ----
 * Every task is cut along the chunk boundaries into pieces between one
 * chunk of a and one chunk of b (of a again in an auto job), with indices
 * local to the chunks; each piece into rows of at most one block's share of
 * i points. Rows of the same chunk pair are grouped, in task order, and cut
 * into launches of bounded size; a launch's rows become items (rows split
 * along j) that blocks pull one by one. Each item names its histogram. */

struct Row {
  int i0, i1;           /* i points of the I chunk */
  int j0, j1;           /* j points of the J chunk (diag: j > i as well) */
  int diag, out;
  double pairs;
};

struct Launch {
  int cI, cJ;           /* chunk indices (cJ in catalog b for cross) */
  bool same;            /* auto job, cI == cJ: one resident chunk */
  size_t r0, r1;        /* rows [r0, r1) of the plan */
  double pairs;
};

/* i points per row and the alignment of item j ranges of a kernel */
int row_points(bool fast);
int item_align(bool fast);
/* points of chunk c of a catalog of n points cut into chunks of `chunk` */
int64_t chunk_len(int64_t n, int c, int64_t chunk);
/* pairs of one row */
double row_pairs(const Row &r);
/* the most pairs of one launch: the total of the job, on n_devices */
double launch_pairs(bool fast, double total, int n_devices);
/* the rows and launches of a job's tasks, chunks of `chunk` points, rows
 * of bi i points, launches of about max_pairs pairs */
void plan_launches(const wt_job *job, int64_t chunk, int bi,
                   double max_pairs, std::vector<Row> &rows,
                   std::vector<Launch> &out);
/* the items of a launch for nblocks blocks: never more than items_bound() */
void make_items(const Launch &L, const std::vector<Row> &rows, int bi,
                int jalign, int nblocks, std::vector<Item> &items);
size_t items_bound(const Launch &L, const std::vector<Row> &rows, int jalign,
                   int nblocks);
/* sorted distinct task boundaries of catalog cat (0: a, 1: b), 0 and n
 * included */
std::vector<long long> task_bounds(const wt_job *job, int cat);

}  // namespace wt_cuda

#endif
