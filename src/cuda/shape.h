/* Compile-time shape of the kernels: tuning knobs (overridable with -D at
 * build time), the sizes derived from them, and the table shapes.
 * Plain C++ (no CUDA types): included by entry.cu (nvcc) and by
 * plan_*.cxx (the C++ compiler), which must see the same values:
 * shape_key() lets the engine check that they did (see ARCHITECTURE.md). */
#ifndef WT_CUDA_SHAPE_H
#define WT_CUDA_SHAPE_H

#include <cstdint>

namespace {

/* ---- compile-time shape of the fast kernel ----
 * (tuning knobs, chosen by timing variants with bench/kernel/kernel.sh; what
 * they measured is in bench/kernel/kernel-notes.md. WT_CUDA_FORCE_EXACT and
 * WT_CUDA_NOSORT exist for tests and comparisons only) */
#ifndef WT_CUDA_NI
#define WT_CUDA_NI 4          /* i points held per thread */
#endif
#ifndef WT_CUDA_MINB
#define WT_CUDA_MINB 2        /* blocks per SM the register budget allows */
#endif
#ifndef WT_CUDA_NJ
#define WT_CUDA_NJ 3          /* j points per thread and step */
#endif
constexpr int NI = WT_CUDA_NI;
constexpr int NJ = WT_CUDA_NJ;
#ifndef WT_CUDA_BLOCK
#define WT_CUDA_BLOCK 512     /* threads of the fast kernel */
#endif
constexpr int BLOCK = WT_CUDA_BLOCK;
#ifndef WT_CUDA_G
#define WT_CUDA_G 4           /* lane groups: j points a warp takes at once */
#endif
#ifndef WT_CUDA_UNROLL
#define WT_CUDA_UNROLL 2      /* steps unrolled in the tile loop */
#endif
/* A warp's 32 lanes form G groups of RL lanes. The lanes of a group hold
 * RL consecutive i points and each group takes its own j, so one
 * instruction spans RL i points x G j points, which land in fewer distinct
 * cells than 32 i points x 1 j: fewer bank conflicts of the threshold
 * load and the counter atomic (bench/kernel/kernel-notes.md, "Lane groups"). A
 * thread's NI points lie KS apart. */
constexpr int G = WT_CUDA_G;
constexpr int RL = 32 / G;
constexpr int KS = BLOCK / G;
constexpr int BI = KS * NI;              /* i points per item */
constexpr int UNROLL = WT_CUDA_UNROLL;
constexpr int QCAP = 128;                /* exact-path queue entries per warp */
constexpr unsigned QBYTES = (BLOCK / 32) * QCAP * 4;
static_assert(32 % G == 0 && BLOCK % (32 * G) == 0, "lane groups");
static_assert(NJ <= 16, "queue entries hold NJ flag bits above bit 15");
constexpr int BJ = 1024;                 /* j points staged per tile */
/* the fast kernel counts in bulk the pairs of a run of SJ j points of a
 * tile and a slice of the item's i points that all lie in one bin
 * (kernel_fast.cuh, "Bulk counting"); runs of 96 against 48 points and
 * the back-off against none measured in bench/kernel/kernel-notes.md,
 * "Bulk counting in the fast kernel" */
#ifndef WT_CUDA_SJ_STEPS
#define WT_CUDA_SJ_STEPS 8    /* steps of G NJ j points in a run */
#endif
#ifndef WT_CUDA_CAP_WAIT_MAX
#define WT_CUDA_CAP_WAIT_MAX 64 /* most tiles a block passes over the caps */
#endif
#ifndef WT_CUDA_CAP_MISSES
#define WT_CUDA_CAP_MISSES 1  /* tiles without bulk pairs before it does */
#endif
constexpr int SJ = WT_CUDA_SJ_STEPS * G * NJ;
constexpr int CAP_WAIT_MAX = WT_CUDA_CAP_WAIT_MAX;
constexpr int CAP_MISSES = WT_CUDA_CAP_MISSES;
static_assert(WT_CUDA_SJ_STEPS % UNROLL == 0, "runs of whole unrolled steps");
constexpr int NSUB = (BJ + SJ - 1) / SJ;
/* shared memory of it: each slice's sums and largest squared distance (16
 * bytes), then a word per run */
constexpr unsigned CAPBYTES =
    (16u * (unsigned)NI + (unsigned)NSUB * 4u + 15u) / 16u * 16u;
static_assert(NI <= 32, "a bit per slice");
constexpr int EBLOCK = 256;              /* exact kernel: one i per thread */
constexpr int EBJ = 512;                 /* exact kernel: j staged per tile */
/* the float-decided weighted kernel (kernel_weighted.cuh): WNI i points
 * per thread, WBLOCK threads hold one row of BI points, j staged WBJ at a
 * time; PIP words up to WMAXW per point (more take the exact kernel) */
constexpr int WNI = 4;
constexpr int WBLOCK = BI / WNI;
constexpr int WBJ = 128;
constexpr int WMAXW = 4;
static_assert(BI % WNI == 0 && WBLOCK % 32 == 0, "weighted kernel rows");
constexpr int64_t CHUNK = (int64_t)1 << 21;  /* points per device chunk */

/* table shapes: MB mantissa bits per octave, OCT octaves below 4.0, from
 * the smallest table up. Coarser cells spread a warp's lanes over fewer
 * cells (fewer bank conflicts) but hold several edges more often (more
 * pairs on the exact path); {7, 16} first was faster for log bins and
 * slower for many or linear bins, and coarser shapes still were slower
 * for both (bench/kernel/kernel-notes.md, "Table shapes"). */
struct TabCfg { int mb, oct; };
constexpr TabCfg kCfgs[] = {{7, 16}, {8, 16}, {9, 16}, {10, 16}, {11, 8}};
constexpr int kNumCfgs = 5;

}  // namespace

namespace wt_cuda {
/* the values plan_*.cxx and entry.cu must agree on: they are compiled
 * apart, and a benchmark may pass -D knobs to one compiler only */
struct ShapeKey {
  int ni, nj, block, g, unroll, qcap, bj, eblock, ebj, sj;
  int64_t chunk;
};
}  // namespace wt_cuda

namespace {
constexpr wt_cuda::ShapeKey kShape{NI, NJ, BLOCK, G, UNROLL, QCAP, BJ,
                                   EBLOCK, EBJ, SJ, CHUNK};
}  // namespace

#endif
