/* The CUDA engine: pair counts on one or more GPUs, bit-identical to the CPU
 * engine (see the exactness contract in wt.h).
 *
 * Fast path. Each pair is first placed with single-precision arithmetic:
 *   q = fl(fl(fl(1 + c - x_i x_j) - y_i y_j) - z_i z_j)        (three FMAs)
 * is d2 / 2 + c up to a rigorous absolute error E (the float rounding of the
 * coordinates, the three FMA roundings, and the deviation of the inputs from
 * unit length; see fast_margin()). The high bits of q pick a cell of a table
 * in shared memory (log-spaced cells: 2^MB per octave of q). Each cell holds
 * the float threshold of the one edge that can matter for any q in it, or
 * +inf when none can, or NaN when several can. The pair is counted in one
 * of two per-cell counters, below or at/above the threshold (the sign of
 * q - threshold picks it); at flush time each cell counter is added to the
 * slot it stands for. When |q - threshold| < M (M > E plus the threshold's
 * own rounding; NaN included) the pair is re-examined with the exact double
 * d2 of wt.h (no FMA: __dsub_rn/__dmul_rn/__dadd_rn) and, if the exact slot
 * differs, its count is moved to a per-slot counter. Counts are therefore
 * exactly those of the double decision. Such pairs do not make the warp
 * diverge: the steps holding one are queued per warp and re-examined by
 * all its lanes together (drain_queue). A warp's lanes form G groups, each
 * on its own j point, so that an instruction covers RL i points x G j
 * points (fewer distinct cells, fewer bank conflicts).
 *
 * Inputs the margin proof does not cover (non-finite coordinates, vectors
 * not of unit length, edges that are not non-decreasing), or edge sets so
 * dense that most cells hold several edges, go through an exact kernel that
 * evaluates every pair in double with the CPU engine's own lookup.
 *
 * Weights (wt_points.w): the exact kernel also adds w_i w_j in double
 * into per-slot sums (runs of j points in one slot are summed in registers
 * first); the bins are decided exactly as for the counts.
 *
 * Task lists (wt_task): every task is cut along chunk boundaries into
 * pieces, each piece into rows of at most one block's share of i points
 * and rows into items; an item names its histogram (task.out), and a block
 * flushes its shared counters into that histogram's 64-bit counters when it
 * moves to an item of another histogram. All tasks between one pair of
 * chunks go into the same launches (no host round trip per task). Items
 * of fewer i points than a block holds use only as many registers' worth
 * of i points as they need (NK), so small patches waste few lanes.
 *
 * Counters: 32-bit, per block, in shared memory; shared atomics (the +1
 * increments compile to ATOMS.POPC.INC, which merges lanes that hit the
 * same word); flushed to 64-bit global counters at the end of every launch,
 * on a change of histogram, or before any could wrap. Catalogs are copied
 * to the device in chunks as given (three double arrays, and the weights);
 * the device sorts each chunk along a Hilbert curve (CUB radix sort of cell
 * keys whose high bits are the point's segment between task boundaries, so
 * points move only inside task ranges) so that the lanes of a warp hold
 * close points (fewer bank conflicts), and packs the float and double
 * copies the kernels read. Work is cut into launches of bounded size that
 * blocks pull item by item; launches are queued one ahead of the one
 * running. One host thread drives each device; the calling thread polls
 * (job->poll, with the pairs of the launches retired so far) and joins.
 * Test faults (job->fault, from WTHETA_TEST_FAULT) fail a device
 * allocation, the first launch, the copy back or the worker thread, and
 * take the real error path (the context is destroyed). Streams, events and buffers are kept between calls
 * in a per-device cache (grow-only; dropped after any error), so a warm
 * call costs little more than its copies and kernels.
 * No R API, no printing, no exit.
 *
 * Measured on an H100 (ncu, bench/kernel-notes.md): with lane groups and
 * the queue the fast kernel is bound by instruction issue (84% of cycles)
 * more than by shared-memory wavefronts (71-75% of the pipe), at about 11
 * instructions per pair in the float step (3 FMAs, the cell key, the
 * threshold load, the side, the counter atomic, the margin check) and 1-2
 * per pair of step overhead and exact path. */
#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "wt.h"

namespace {

/* ---- compile-time shape of the fast kernel ----
 * (tuning knobs, measured with bench/kernel.sh on an H100 and an H200;
 * WT_CUDA_FORCE_EXACT and WT_CUDA_NOSORT exist for tests and comparisons
 * only) */
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
 * cells than 32 i points x 1 j: on the classic catalogs G = 4 cut the
 * shared-memory wavefronts of the fast kernel by 17% (bank conflicts of the
 * threshold load and the counter atomic; bench/kernel-notes.md). A
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
constexpr int EBLOCK = 256;              /* exact kernel: one i per thread */
constexpr int EBJ = 512;                 /* exact kernel: j staged per tile */
constexpr int64_t CHUNK = (int64_t)1 << 21;  /* points per device chunk */

/* table shapes: MB mantissa bits per octave, OCT octaves below 4.0, from
 * the smallest table up. Coarser cells spread a warp's lanes over fewer
 * cells (fewer bank conflicts) but hold several edges more often (more
 * pairs on the exact path). Measured on an H200 with the classic catalogs
 * (bench/kernel.sh): {7, 16} took 20 log bins from 0.01 to 10 degrees
 * from 9.82 to 9.42 ms and 50 log bins from 0.001 to 1 from 9.90 to 9.66
 * ms, but 2000 log bins from 15.5 to 15.7 ms and 360 linear bins from 11.0
 * to 16.6 ms; coarser shapes still ({7, 8}, {8, 8}) were slower for both
 * kinds of bins, as were counters merged across the edge of a cell and
 * copies of the counters per warp (bench/kernel-notes.md; all measured
 * before the lane groups, with 32 i points x 1 j per instruction). */
struct TabCfg { int mb, oct; };
constexpr TabCfg kCfgs[] = {{7, 16}, {8, 16}, {9, 16}, {10, 16}, {11, 8}};
constexpr int kNumCfgs = 5;

/* one unit of a launch: i points [i0, i1) of the I chunk (i1 - i0 at most
 * one block's share) against j points [j0, j1) of the J chunk, pairs j > i
 * only when diag, counted into histogram `out` */
struct Item { int i0, i1, j0, j1, diag, out; };

/* a point in double, padded to 32 bytes */
struct __align__(32) DPt { double x, y, z, w; };

__device__ __forceinline__ DPt load_dpt(const DPt *p)
{
  const double2 *q = reinterpret_cast<const double2 *>(p);
  double2 a = __ldg(q), b = __ldg(q + 1);
  return DPt{a.x, a.y, b.x, b.y};
}

/* arguments of the fast kernel */
struct FastArgs {
  const float4 *fI, *fJ;       /* float coordinates (w unused) */
  const DPt *dI, *dJ;      /* double coordinates (w unused) */
  int nI, nJ;
  const Item *items;
  int n_items;
  int *counter;                /* next item (dynamic scheduling) */
  const float *thr;            /* fast table: threshold of each cell */
  const int2 *cmap;            /* slots of each cell: below, above */
  const double *upper;         /* exact edges, n_slots */
  int n_slots;
  unsigned long long *ghist;   /* 64-bit counts, n_out x n_slots */
  unsigned fixoff;             /* byte offset of the per-slot counters */
  int fix_shared;              /* 0: per-slot counts go straight to ghist */
  unsigned joff;               /* byte offset of the j tile in smem */
  unsigned qoff;               /* byte offset of the warps' queues */
  unsigned itemoff;            /* byte offset of the item slot in smem */
  float onec;                  /* 1 + c */
  float margin;                /* M */
};

/* arguments of the exact kernel */
struct ExactArgs {
  const DPt *dI, *dJ;
  int nI, nJ;
  const Item *items;
  int n_items;
  int *counter;
  const double *upper;
  int n_slots;
  const uint16_t *btab;        /* bins.c table or NULL */
  int bshift;
  long long bbase;
  int bsize, bsteps;
  unsigned long long *ghist;   /* n_out x n_slots */
  double *gw;                  /* weight sums, n_out x n_slots; NULL: none */
  int rcols;                   /* R; 0: count straight into ghist */
  unsigned joff, itemoff, woff;  /* woff: R-column weight sums (double) */
};

/* ------------------------------------------------------------------ */
/* device code                                                          */
/* ------------------------------------------------------------------ */

__device__ __forceinline__ double exact_d2(DPt a, DPt b)
{
  double dx = __dsub_rn(a.x, b.x), dy = __dsub_rn(a.y, b.y),
         dz = __dsub_rn(a.z, b.z);
  double d2 = __dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy));
  return __dadd_rn(d2, __dmul_rn(dz, dz));
}

/* smallest slot s with d2 < upper[s] (wt_slot_of) */
__device__ __forceinline__ int slot_search(const double *upper, int n_slots,
                                           double d2)
{
  int lo = 0, hi = n_slots - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (d2 < __ldg(upper + mid)) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/* the CPU engine's lookup, step for step (count_cpu.c slot_lookup) */
__device__ __forceinline__ int cpu_slot(const ExactArgs &a, double d2)
{
  if (a.btab == nullptr) return slot_search(a.upper, a.n_slots, d2);
  unsigned long long bits = (unsigned long long)__double_as_longlong(d2);
  long long key = (long long)(bits >> a.bshift) - a.bbase;
  if (key < 0) key = 0;
  if (key >= a.bsize) key = a.bsize - 1;
  int s = __ldg(a.btab + key);
  for (int r = 0; r < a.bsteps; r++)   /* the guard only stops reads past
                                          the end for d2 = +inf */
    if (s < a.n_slots - 1) s += d2 >= __ldg(a.upper + s);
  return s;
}

/* Shared memory of the fast kernel, from offset 0:
 *   float thr[NT]          threshold of each cell (+inf: no edge matters,
 *                          NaN: several do, the pair goes to the exact path)
 *   unsigned below[NT]     pairs of the block in each cell below its
 *                          threshold,
 *   unsigned above[NT]     and at or above it
 *   unsigned fix[n_slots]  per-slot counts (exact corrections, and the cell
 *                          counts at flush time), when fix_shared
 *   float4 j tile, item slot. */
template <int MB, int OCT>
struct Shape {
  static constexpr int NT = OCT << MB;            /* cells */
  static constexpr int SH = 23 - MB;              /* key = bits(q) >> SH */
  static constexpr unsigned KBASE = (unsigned)(129 - OCT) << MB;
  static constexpr unsigned BELOW = (unsigned)NT * 4u;  /* byte offsets */
  /* above[] starts half a bank row later: the two counters of a cell sit
   * in opposite halves of the 32 banks, so lanes on both sides of an edge
   * in the same cell do not conflict */
  static constexpr unsigned ABOVE = (unsigned)NT * 8u + 64u;
  static constexpr unsigned END = ABOVE + (unsigned)NT * 4u;
};

/* The float decision for one pair: the byte address of its cell counter
 * in shared memory, and d = q - threshold. The side comes from the sign
 * of d (an arithmetic shift gives 0 or -1), which selects the array. A NaN
 * d (cell for the exact path) counts on either side; the exact path
 * corrects it. */
template <int MB, int OCT>
__device__ __forceinline__ unsigned fast_rel(const unsigned char *smem,
                                             float q, float &d)
{
  using S = Shape<MB, OCT>;
  unsigned k4 = (__float_as_uint(q) >> (S::SH - 2)) & ~3u;   /* key * 4 */
  float t = *reinterpret_cast<const float *>(smem + k4 - S::KBASE * 4u);
  d = __fsub_rn(q, t);
  unsigned below = (unsigned)(__float_as_int(d) >> 31);
  return below * (S::ABOVE - S::BELOW) + k4;
}

/* the counter's byte address: fast_rel plus cnt_off(). The hot loop adds
 * cnt_off() to the shared base pointer instead (a signed constant), which
 * ptxas folds into the atomic's immediate offset: written as one unsigned
 * 32-bit sum it added the offset with a separate instruction per pair
 * (measured: +0.9 instructions per pair, +3% kernel time). */
template <int MB, int OCT>
__device__ __forceinline__ unsigned fast_cell(const unsigned char *smem,
                                              float q, float &d)
{
  using S = Shape<MB, OCT>;
  return fast_rel<MB, OCT>(smem, q, d) + (S::ABOVE - S::KBASE * 4u);
}

template <int MB, int OCT>
__host__ __device__ constexpr int cnt_off()
{
  return (int)Shape<MB, OCT>::ABOVE - (int)(Shape<MB, OCT>::KBASE * 4u);
}

__device__ __forceinline__ unsigned *cnt_word(unsigned char *smem,
                                              unsigned addr)
{
  return reinterpret_cast<unsigned *>(smem + addr);
}

__device__ __forceinline__ float pair_q(float nx, float ny, float nz, float4 p,
                                        float onec)
{
  return __fmaf_rn(nz, p.z, __fmaf_rn(ny, p.y, __fmaf_rn(nx, p.x, onec)));
}

__device__ __forceinline__ void add_slot(unsigned char *smem,
                                         const FastArgs &a,
                                         unsigned long long *gh, int s,
                                         unsigned v)
{
  if (a.fix_shared)
    atomicAdd(reinterpret_cast<unsigned *>(smem + a.fixoff) + s, v);
  else
    atomicAdd(gh + s, (unsigned long long)v);
}

/* exact re-examination of one pair whose float decision may be too close
 * to call: moves its count if the exact slot differs */
template <int MB, int OCT>
__device__ __forceinline__ void resolve_pair(unsigned char *smem,
                                             const FastArgs &a, float q,
                                             int gi, int gj)
{
  using S = Shape<MB, OCT>;
  float d;
  unsigned addr = fast_cell<MB, OCT>(smem, q, d);
  if (fabsf(d) >= a.margin) return;     /* clean after all (NaN: not) */
  const bool above = addr >= S::ABOVE;
  const int cell = (int)((addr - (above ? S::ABOVE : S::BELOW)) >> 2);
  const int2 m = __ldg(a.cmap + cell);
  const int fast_slot = above ? m.y : m.x;
  double d2 = exact_d2(load_dpt(a.dI + gi), load_dpt(a.dJ + gj));
  int s;
  if (d == d)                       /* one edge: slot below it, or above */
    s = m.x + (d2 >= __ldg(a.upper + m.x) ? 1 : 0);
  else                              /* several edges: full search */
    s = slot_search(a.upper, a.n_slots, d2);
  if (s != fast_slot) {
    atomicAdd(cnt_word(smem, addr), 0xffffffffu);
    /* the block's current histogram: in the item slot (see the kernel) */
    const int out = reinterpret_cast<const int *>(smem + a.itemoff)[1];
    add_slot(smem, a, a.ghist + (size_t)out * (size_t)a.n_slots, s, 1u);
  }
}

/* the block's counts since the last flush into the 64-bit counts gh of
 * its current histogram: cell
 * counters through their slots into fix[], then fix[] into ghist; all
 * zeroed for the next epoch. Counters are summed modulo 2^32: the block's
 * true count per slot since the last flush is below 2^32. */
template <int MB, int OCT>
__device__ inline void flush_counts(unsigned char *smem, const FastArgs &a,
                                    unsigned long long *gh)
{
  using S = Shape<MB, OCT>;
  unsigned *below = reinterpret_cast<unsigned *>(smem + S::BELOW);
  unsigned *above = reinterpret_cast<unsigned *>(smem + S::ABOVE);
  for (int c = threadIdx.x; c < S::NT; c += blockDim.x) {
    unsigned lo = below[c], hi = above[c];
    if (lo | hi) {
      int2 m = __ldg(a.cmap + c);
      if (lo) add_slot(smem, a, gh, m.x, lo);
      if (hi) add_slot(smem, a, gh, m.y, hi);
      below[c] = 0u;
      above[c] = 0u;
    }
  }
  if (!a.fix_shared) return;
  __syncthreads();
  unsigned *fix = reinterpret_cast<unsigned *>(smem + a.fixoff);
  for (int s = threadIdx.x; s < a.n_slots; s += blockDim.x) {
    unsigned v = fix[s];
    if (v) {
      atomicAdd(gh + s, (unsigned long long)v);
      fix[s] = 0u;
    }
  }
}

/* one j point against the thread's first NK points (NK <= NI: an item of
 * fewer than BI points leaves the others out); false when a pair may need
 * the exact path */
template <int MB, int OCT, bool MASK, int NK>
__device__ __forceinline__ bool fast_point(unsigned char *smem,
                                           unsigned char *cntb,
                                           const float (&nx)[NI],
                                           const float (&ny)[NI],
                                           const float (&nz)[NI], float4 pj,
                                           float onec, float M, int gi0,
                                           int gj)
{
  bool ok = true;
#pragma unroll
  for (int k = 0; k < NK; k++) {
    float d;
    float q = pair_q(nx[k], ny[k], nz[k], pj, onec);
    unsigned rel = fast_rel<MB, OCT>(smem, q, d);
    if (MASK)
      atomicAdd(cnt_word(cntb, rel), gj > gi0 + k * KS ? 1u : 0u);
    else
      atomicAdd(cnt_word(cntb, rel), 1u);
    ok &= fabsf(d) >= M;
  }
  return ok;
}

/* The exact path. A step in which some lane had a pair near an edge is
 * queued in the warp's part of shared memory: one entry per such lane,
 * (step jj << 5) | lane | (its flagged j points << 15), its place from a
 * ballot (no atomics). When the queue is nearly full, and at the end of
 * each tile, the warp's lanes re-examine the entries together, the flagged
 * pairs of each entry only: the hot loop never diverges for the exact
 * path. The pair's float q is recomputed from the same floats (the same
 * bits), so resolve_pair undoes exactly the count the fast step made. */
template <int MB, int OCT, bool MASK, int NK>
__device__ __forceinline__ void drain_queue(unsigned char *smem,
                                            const FastArgs &a,
                                            const unsigned *queue, int qn,
                                            int gi0, int tj)
{
  const float4 *sj = reinterpret_cast<const float4 *>(smem + a.joff);
  const int i_end = reinterpret_cast<const int *>(smem + a.itemoff)[2];
  const int lane = (int)(threadIdx.x & 31u);
  const int base = gi0 - lane % RL;   /* the warp's first i point */
  __syncwarp();
  for (int e = lane; e < qn; e += 32) {
    const unsigned v = queue[e];
    const int l = (int)(v & 31u);
    const int jl = (int)((v >> 5) & (BJ - 1)) + l / RL;
    const unsigned bits = v >> 15;
#pragma unroll 1
    for (int k = 0; k < NK; k++) {
      const int gi = base + l % RL + k * KS;
      if (gi >= i_end) continue;
      const float4 p = __ldg(a.fI + gi);
      const float x = -p.x, y = -p.y, z = -p.z;
#pragma unroll
      for (int u = 0; u < NJ; u++) {
        if (!((bits >> u) & 1u)) continue;
        const int gj = tj + jl + G * u;
        if (MASK && gj <= gi) continue;
        resolve_pair<MB, OCT>(smem, a, pair_q(x, y, z, sj[jl + G * u], a.onec),
                              gi, gj);
      }
    }
  }
  __syncwarp();
}

/* queue the lanes whose step (NJ j points from jj + the lane's group, G
 * apart) had a flagged pair: flags bit u for j point u; qn stays the same
 * in all lanes */
__device__ __forceinline__ void queue_step(unsigned *queue, int &qn, int jj,
                                           unsigned flags)
{
  const unsigned m = __ballot_sync(0xffffffffu, flags != 0u);
  if (flags) {
    unsigned lt;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
    queue[qn + __popc(m & lt)] =
        ((unsigned)jj << 5) | (threadIdx.x & 31u) | (flags << 15);
  }
  qn += __popc(m);
}

/* one staged tile of cnt j points (from tj) against the thread's first NK
 * points. Group g of the warp takes j = jj + g + G u in the step at jj. */
template <int MB, int OCT, bool MASK, int NK>
__device__ __forceinline__ void fast_tile(unsigned char *smem,
                                          const FastArgs &a,
                                          const float (&nx)[NI],
                                          const float (&ny)[NI],
                                          const float (&nz)[NI], int gi0,
                                          int tj, int cnt)
{
  const int grp = G > 1 ? (int)(threadIdx.x & 31u) / RL : 0;
  const float4 *sj = reinterpret_cast<const float4 *>(smem + a.joff) + grp;
  const int tjg = tj + grp;
  unsigned char *cntb = smem + cnt_off<MB, OCT>();
  const float onec = a.onec, M = a.margin;
  unsigned *queue = reinterpret_cast<unsigned *>(smem + a.qoff) +
                    (threadIdx.x >> 5) * QCAP;
  int qn = 0;
  int jj = 0;
  for (;;) {
#pragma unroll UNROLL
    for (; jj + G * NJ <= cnt; jj += G * NJ) {
      float4 pj[NJ];
#pragma unroll
      for (int u = 0; u < NJ; u++) pj[u] = sj[jj + G * u];
      bool okv[NJ], ok = true;
#pragma unroll
      for (int u = 0; u < NJ; u++) {
        okv[u] = fast_point<MB, OCT, MASK, NK>(smem, cntb, nx, ny, nz, pj[u],
                                               onec, M, gi0, tjg + jj + G * u);
        ok &= okv[u];
      }
      if (__any_sync(0xffffffffu, !ok)) {
        unsigned flags = 0u;
#pragma unroll
        for (int u = 0; u < NJ; u++) flags |= okv[u] ? 0u : 1u << u;
        queue_step(queue, qn, jj, flags);
        if (qn > QCAP - 32) {   /* no room for another step: drain */
          jj += G * NJ;
          break;
        }
      }
    }
    const bool full = qn > QCAP - 32;
    if (!full && jj < cnt) {
      /* one of the tile's last steps (jj + G NJ > cnt): one j per group,
       * lanes past the end idle */
      bool ok = true;
      if (jj + grp < cnt)
        ok = fast_point<MB, OCT, MASK, NK>(smem, cntb, nx, ny, nz, sj[jj],
                                           onec, M, gi0, tjg + jj);
      if (__any_sync(0xffffffffu, !ok)) queue_step(queue, qn, jj, ok ? 0u : 1u);
      jj += G;
    }
    /* a full queue is drained before the next step; every entry is
     * re-examined before the tile's j points are replaced */
    if (full || (jj >= cnt && qn > 0)) {
      drain_queue<MB, OCT, MASK, NK>(smem, a, queue, qn, gi0, tj);
      qn = 0;
    }
    if (jj >= cnt && qn == 0) break;
  }
}

/* fast_tile with the smallest NK >= nk (a block-uniform choice) */
template <int MB, int OCT, bool MASK, int K>
__device__ __forceinline__ void fast_tile_nk(unsigned char *smem,
                                             const FastArgs &a,
                                             const float (&nx)[NI],
                                             const float (&ny)[NI],
                                             const float (&nz)[NI], int gi0,
                                             int tj, int cnt, int nk)
{
  if constexpr (K > 1) {
    if (nk < K) {
      fast_tile_nk<MB, OCT, MASK, K - 1>(smem, a, nx, ny, nz, gi0, tj, cnt, nk);
      return;
    }
  }
  fast_tile<MB, OCT, MASK, K>(smem, a, nx, ny, nz, gi0, tj, cnt);
}

template <int MB, int OCT>
__global__ void __launch_bounds__(BLOCK, WT_CUDA_MINB)
    wt_fast_kernel(const FastArgs a)
{
  using S = Shape<MB, OCT>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x;
  int *s_item = reinterpret_cast<int *>(smem + a.itemoff);

  {
    float *thr = reinterpret_cast<float *>(smem);
    for (int t = tid; t < S::NT; t += BLOCK) thr[t] = __ldg(a.thr + t);
    unsigned *w = reinterpret_cast<unsigned *>(smem + S::BELOW);
    for (int t = tid; t < (int)(S::END - S::BELOW) / 4; t += BLOCK) w[t] = 0u;
    if (a.fix_shared) {
      unsigned *fix = reinterpret_cast<unsigned *>(smem + a.fixoff);
      for (int t = tid; t < a.n_slots; t += BLOCK) fix[t] = 0u;
    }
  }
  unsigned long long since_flush = 0;
  /* the histogram the block's counters belong to: they are flushed when
   * the block moves to an item of another histogram (items of one task
   * come in a row, so a block switches at most once per item) */
  int cur_out = -1;
  for (;;) {
    __syncthreads();
    if (tid == 0) *s_item = atomicAdd(a.counter, 1);
    __syncthreads();
    const int it = *s_item;
    if (it >= a.n_items) break;
    const Item item = a.items[it];
    const int i_end = item.i1;
    const unsigned long long n_pairs =
        (unsigned long long)(i_end - item.i0) * (unsigned)(item.j1 - item.j0);
    if (item.out != cur_out ||
        since_flush + n_pairs > 0xffffffffull - (unsigned long long)BI * BJ) {
      if (cur_out >= 0) {
        flush_counts<MB, OCT>(smem, a,
                              a.ghist + (size_t)cur_out * (size_t)a.n_slots);
        __syncthreads();
      }
      since_flush = 0;
      cur_out = item.out;
    }
    since_flush += n_pairs;
    /* the exact path reads the histogram and the end of the i range from
     * the item slot (fewer live registers in the hot loop); the tile loop
     * below synchronises before any reader */
    if (tid == 0) {
      s_item[1] = cur_out;
      s_item[2] = i_end;
    }

    const int gi0 = item.i0 + (tid >> 5) * RL + (tid & 31) % RL;
    float nx[NI], ny[NI], nz[NI];
#pragma unroll
    for (int k = 0; k < NI; k++) {
      int gi = gi0 + k * KS;
      if (gi < i_end) {
        float4 p = __ldg(a.fI + gi);
        nx[k] = -p.x; ny[k] = -p.y; nz[k] = -p.z;
      } else {   /* a zero vector: every pair lands at q = 1 + c exactly */
        nx[k] = 0.0f; ny[k] = 0.0f; nz[k] = 0.0f;
      }
    }
    /* i points per thread this item needs (short items: task ends) */
    const int nk = (i_end - item.i0 + KS - 1) / KS;
    /* each missing point meets every j of a tile once (in one of the G
     * lanes that hold it) */
    const unsigned n_missing = (unsigned)(item.i0 + nk * KS - i_end);
    unsigned excess = 0;  /* pairs of missing i points counted (mod 2^32) */
    for (int tj = item.j0; tj < item.j1; tj += BJ) {
      const int cnt = min(BJ, item.j1 - tj);
      __syncthreads();
      {
        float4 *sj = reinterpret_cast<float4 *>(smem + a.joff);
        for (int t = tid; t < cnt; t += BLOCK) sj[t] = __ldg(a.fJ + tj + t);
      }
      __syncthreads();
      const bool masked = item.diag && tj <= i_end - 1;
      if (masked) {
        fast_tile_nk<MB, OCT, true, NI>(smem, a, nx, ny, nz, gi0, tj, cnt,
                                        nk);
      } else {
        fast_tile_nk<MB, OCT, false, NI>(smem, a, nx, ny, nz, gi0, tj, cnt,
                                         nk);
        excess += n_missing * (unsigned)cnt;
      }
    }
    if (excess != 0 && tid == 0) {
      float d;
      unsigned addr = fast_cell<MB, OCT>(smem, a.onec, d);
      atomicAdd(cnt_word(smem, addr), 0u - excess);
    }
  }
  __syncthreads();
  if (cur_out >= 0)
    flush_counts<MB, OCT>(smem, a,
                          a.ghist + (size_t)cur_out * (size_t)a.n_slots);
}

/* R-column counters (and weight sums) of the exact kernel into the 64-bit
 * counts gh (and the weight sums gw) of the current histogram, zeroed */
__device__ inline void flush_hist(unsigned char *smem, const ExactArgs &a,
                                  unsigned long long *gh, double *gw)
{
  const int R = a.rcols;
  unsigned *h = reinterpret_cast<unsigned *>(smem);
  double *wh = reinterpret_cast<double *>(smem + a.woff);
  for (int s = threadIdx.x; s < a.n_slots; s += blockDim.x) {
    unsigned sum = 0;
    double wsum = 0.0;
    for (int c = 0; c < R; c++) {
      sum += h[s * R + c];
      h[s * R + c] = 0;
      if (gw) {
        wsum += wh[s * R + c];
        wh[s * R + c] = 0.0;
      }
    }
    if (sum) atomicAdd(gh + s, (unsigned long long)sum);
    if (gw && wsum != 0.0) atomicAdd(gw + s, wsum);
  }
}

/* every pair in double with the CPU engine's lookup; with weights (a.gw),
 * also the sums of w_i w_j per slot, in double */
template <bool W>
__global__ void __launch_bounds__(EBLOCK) wt_exact_kernel(const ExactArgs a)
{
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x;
  int *s_item = reinterpret_cast<int *>(smem + a.itemoff);
  unsigned *h = reinterpret_cast<unsigned *>(smem);
  double *wh = reinterpret_cast<double *>(smem + a.woff);
  const int R = a.rcols;
  const int col = R > 0 ? (tid & 31) & (R - 1) : 0;
  if (R > 0) {
    for (int t = tid; t < a.n_slots * R; t += EBLOCK) {
      h[t] = 0u;
      if (W) wh[t] = 0.0;
    }
  }
  unsigned long long since_flush = 0;
  int cur_out = -1;
  unsigned long long *gh = a.ghist;
  double *gw = a.gw;
  for (;;) {
    __syncthreads();
    if (tid == 0) *s_item = atomicAdd(a.counter, 1);
    __syncthreads();
    const int it = *s_item;
    if (it >= a.n_items) break;
    const Item item = a.items[it];
    const int i_end = item.i1;
    const unsigned long long n_pairs =
        (unsigned long long)(i_end - item.i0) * (unsigned)(item.j1 - item.j0);
    if (item.out != cur_out ||
        since_flush + n_pairs > 0xffffffffull - (unsigned long long)EBLOCK * EBJ) {
      if (R > 0 && cur_out >= 0) {
        flush_hist(smem, a, gh, W ? gw : nullptr);
        __syncthreads();
      }
      since_flush = 0;
      cur_out = item.out;
      gh = a.ghist + (size_t)cur_out * (size_t)a.n_slots;
      if (W) gw = a.gw + (size_t)cur_out * (size_t)a.n_slots;
    }
    since_flush += n_pairs;
    const int gi = item.i0 + tid;
    const bool valid = gi < i_end;
    const DPt pi = load_dpt(a.dI + (valid ? gi : item.i0));
    for (int tj = item.j0; tj < item.j1; tj += EBJ) {
      const int cnt = min(EBJ, item.j1 - tj);
      __syncthreads();
      DPt *sj = reinterpret_cast<DPt *>(smem + a.joff);
      for (int t = tid; t < cnt; t += EBLOCK) sj[t] = load_dpt(a.dJ + tj + t);
      __syncthreads();
      if (!valid) continue;
      if (W) {
        /* runs of j points in one slot (the points are in Hilbert order,
         * so neighbours in j often share the slot) are summed in
         * registers: one pair of atomics per run (the double atomic is a
         * compare-and-swap loop in shared memory) */
        int run_s = -1;
        unsigned run_n = 0;
        double run_w = 0.0;
        for (int jj = 0; jj < cnt; jj++) {
          const int gj = tj + jj;
          if (item.diag && gj <= gi) continue;
          const DPt pj = sj[jj];
          const int s = cpu_slot(a, exact_d2(pi, pj));
          if (s != run_s) {
            if (run_n) {
              if (R > 0) {
                atomicAdd(h + run_s * R + col, run_n);
                atomicAdd(wh + run_s * R + col, run_w);
              } else {
                atomicAdd(gh + run_s, (unsigned long long)run_n);
                atomicAdd(gw + run_s, run_w);
              }
            }
            run_s = s;
            run_n = 0;
            run_w = 0.0;
          }
          run_n++;
          run_w = __dadd_rn(run_w, __dmul_rn(pi.w, pj.w));
        }
        if (run_n) {
          if (R > 0) {
            atomicAdd(h + run_s * R + col, run_n);
            atomicAdd(wh + run_s * R + col, run_w);
          } else {
            atomicAdd(gh + run_s, (unsigned long long)run_n);
            atomicAdd(gw + run_s, run_w);
          }
        }
      } else {
        for (int jj = 0; jj < cnt; jj++) {
          const int gj = tj + jj;
          if (item.diag && gj <= gi) continue;
          const DPt pj = sj[jj];
          int s = cpu_slot(a, exact_d2(pi, pj));
          if (R > 0)
            atomicAdd(h + s * R + col, 1u);
          else
            atomicAdd(gh + s, 1ull);
        }
      }
    }
  }
  if (R > 0 && cur_out >= 0) {
    __syncthreads();
    flush_hist(smem, a, gh, W ? gw : nullptr);
  }
}

/* ------------------------------------------------------------------ */
/* host code                                                            */
/* ------------------------------------------------------------------ */

void set_msg(char *dst, size_t len, const std::string &s)
{
  if (!dst || len == 0) return;
  size_t n = s.size() < len - 1 ? s.size() : len - 1;
  memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

std::string cuda_msg(const char *what, int device, cudaError_t e)
{
  char buf[256];
  snprintf(buf, sizeof buf, "%s on device %d failed: %s", what, device,
           cudaGetErrorString(e));
  return buf;
}

/* what the inputs allow */
struct Analysis {
  int n_slots;
  bool sane;          /* finite unit vectors, non-decreasing edges */
  double r2max;       /* largest |X|^2 */
  double eta;         /* largest | |X|^2 - 1 | */
};

/* largest |X|^2 and | |X|^2 - 1 | over points [i0, i1); bad when some
 * |X|^2 is not finite (a non-finite coordinate, or one so large that the
 * sum overflows: such inputs go to the exact kernel either way) */
struct ScanPart {
  bool bad = false;
  double r2max = 0.0, eta = 0.0;
};

void scan_range(const wt_points &p, int64_t i0, int64_t i1, ScanPart &r)
{
  bool bad = false;
  double r2max = 0.0, eta = 0.0;
  for (int64_t i = i0; i < i1; i++) {
    const double x = p.x[i], y = p.y[i], z = p.z[i];
    const double r2 = x * x + y * y + z * z;
    bad |= !(r2 <= DBL_MAX);
    r2max = r2 > r2max ? r2 : r2max;
    const double e = std::fabs(r2 - 1.0);
    eta = e > eta ? e : eta;
  }
  r.bad = bad;
  r.r2max = r2max;
  r.eta = eta;
}

/* the scan, on a few threads for large catalogs (maxima: the result does
 * not depend on the split) */
void scan_points(const wt_points &p, Analysis &an, int max_threads)
{
  int nt = (int)std::min<int64_t>(p.n >> 17, 8);
  if (nt > max_threads) nt = max_threads;
  if (nt > 1) {
    unsigned hw = std::thread::hardware_concurrency();
    if (hw > 0 && nt > (int)hw) nt = (int)hw;
  }
  if (nt < 1) nt = 1;
  std::vector<ScanPart> part(nt);
  std::vector<std::thread> th;
  th.reserve(nt);
  const int64_t step = (p.n + nt - 1) / nt;
  for (int k = 1; k < nt; k++) {
    const int64_t i0 = std::min<int64_t>(k * step, p.n);
    const int64_t i1 = std::min<int64_t>(i0 + step, p.n);
    try {
      th.emplace_back(scan_range, std::cref(p), i0, i1, std::ref(part[k]));
    } catch (...) {
      scan_range(p, i0, i1, part[k]);   /* no thread: here */
    }
  }
  scan_range(p, 0, std::min<int64_t>(step, p.n), part[0]);
  for (std::thread &t : th) t.join();
  for (const ScanPart &r : part) {
    if (r.bad) an.sane = false;
    if (r.r2max > an.r2max) an.r2max = r.r2max;
    if (r.eta > an.eta) an.eta = r.eta;
  }
}

/* The fast table for one shape, and how much of the q range its cells with
 * several edges cover. */
struct FastTable {
  int cfg;
  double c;
  float onec, margin;
  std::vector<float> thr;      /* per cell */
  std::vector<int2> cmap;      /* per cell: slot below, slot at or above */
  double multi;       /* q width of cells sent to the exact path */
};

/* E + delta of the proof. Writing q = fl(fl(fl(1 + c - xi xj) - yi yj)
 * - zi zj) with the float coordinates:
 *  - rounding the coordinates to float moves sum |xi xj| by at most
 *    (2u + u^2) |Xi||Xj| <= (2u + u^2) r2max (u = 2^-24);
 *  - each FMA rounds once, by at most 2^-24 while its result is below 2 in
 *    magnitude. A partial result reaches 2 only if the points are nearly
 *    antipodal in the first one or two coordinates, and then the others
 *    are below sqrt(2c + 3e-6) in magnitude, so the final q is at least
 *    2 - 2c - 5e-6; the table sends every cell reaching above
 *    2 - 2c - 2e-5 to the exact path (build_fast_table), so 3 u suffices;
 *  - 1 - Xi.Xj differs from d2 / 2 by at most eta = max | |X|^2 - 1 |, and
 *    the double d2 from the real one by a few 1e-16;
 *  - the float threshold differs from c2 / 2 + c by max_thr_err.
 * A pair with |q - threshold| >= M (M above the sum) is therefore on the
 * same side of the edge in exact arithmetic as in float. */
float fast_margin(const Analysis &an, double max_thr_err)
{
  const double u = std::ldexp(1.0, -24);
  double r2 = an.r2max * (1.0 + 1e-12);
  double E = (2.0 * u + u * u) * r2      /* coordinates rounded to float */
             + 3.0 * u                    /* three FMA roundings, |r| < 2 */
             + an.eta + 1e-15             /* non-unit vectors, |X|^2 error */
             + 1e-14;                     /* double d2 rounding, subnormals */
  double m = (E + max_thr_err) * 1.02;
  float mf = (float)m;
  while ((double)mf < m) mf = std::nextafter(mf, INFINITY);
  return mf;
}

bool build_fast_table(const wt_bins *bins, const Analysis &an, int cfg,
                      FastTable &ft)
{
  const int mb = kCfgs[cfg].mb, oct = kCfgs[cfg].oct;
  const int nt = oct << mb, sh = 23 - mb;
  const unsigned kbase = (unsigned)(129 - oct) << mb;
  const double floor_q = std::ldexp(1.0, 2 - oct);
  const double c = floor_q + std::ldexp(1.0, 2 - oct - 4);
  const float onec = (float)(1.0 + c);
  if ((double)onec != 1.0 + c) return false;
  /* the lowest q + c the kernel can see must stay inside the table */
  if (an.eta > 1e-6 || an.r2max > 1.0 + 1e-6) return false;
  const int n_edges = an.n_slots - 1;   /* upper[0 .. n_slots - 2] */
  std::vector<double> thr(n_edges);
  double max_err = 0.0;
  for (int k = 0; k < n_edges; k++) {
    double v = bins->upper[k] / 2.0 + c;
    float t = (float)v;
    thr[k] = (double)t;
    if (std::isfinite(v) && v < 4.0) {
      double err = std::fabs((double)t - v);
      if (err > max_err) max_err = err;
    }
  }
  const float M = fast_margin(an, max_err + 1e-15);
  const double u = std::ldexp(1.0, -24);
  const double M2 = 2.0 * (double)M;
  ft.cfg = cfg;
  ft.c = c;
  ft.onec = onec;
  ft.margin = M;
  ft.thr.assign(nt, 0.0f);
  ft.cmap.assign(nt, int2{0, 0});
  ft.multi = 0.0;
  int lo = 0, hi = 0;   /* edges with thr <= A - 2M: [0, lo); relevant: [lo, hi) */
  for (int ci = 0; ci < nt; ci++) {
    unsigned key = kbase + (unsigned)ci;
    uint32_t ab = key << sh, bb = (key + 1) << sh;
    float af, bf;
    memcpy(&af, &ab, 4);
    memcpy(&bf, &bb, 4);
    double A = af, B = bf;
    while (lo < n_edges && thr[lo] <= A - M2) lo++;
    if (hi < lo) hi = lo;
    while (hi < n_edges && thr[hi] <= B + M2) hi++;
    int nrel = hi - lo;
    float2 e;
    /* edges [0, lo) lie below the cell: its lowest possible slot is lo */
    ft.cmap[ci] = int2{lo, nrel == 1 ? lo + 1 : lo};
    if (B > 2.0 - 2.0 * c - 2e-5) {
      /* an FMA may have rounded above 2, with up to 3 u more error: the
       * cell stays clean only if no edge is near it even then */
      int a = lo, b = hi;
      while (a > 0 && thr[a - 1] > A - M2 - 6.0 * u) a--;
      while (b < n_edges && thr[b] <= B + M2 + 6.0 * u) b++;
      e.x = b - a == 0 ? INFINITY : NAN;
    } else if (nrel == 0) {
      e.x = INFINITY;
    } else if (nrel == 1) {
      e.x = (float)thr[lo];
    } else {
      e.x = NAN;
    }
    if (e.x != e.x) {   /* q width these cells send to the exact path */
      double top = B < 2.0 + c ? B : 2.0 + c;
      if (top > A) ft.multi += top - A;
    }
    ft.thr[ci] = e.x;
  }
  return true;
}

struct Plan {
  bool fast;
  int cfg;             /* fast: table shape */
  bool fix_shared;     /* fast: per-slot counters in shared memory */
  bool weighted;       /* sums of w_i w_j too (exact kernel only) */
  int rcols;           /* exact: R (0: counts straight into global memory) */
  size_t smem;         /* dynamic shared memory per block */
  unsigned hoff, fixoff, joff, itemoff, woff, qoff;
  FastTable ft;
};

size_t round16(size_t x) { return (x + 15) & ~(size_t)15; }

/* choose the kernel and table shape for the device with the least shared
 * memory among those used */
bool make_plan(const wt_bins *bins, const Analysis &an, size_t smem_sm,
               size_t smem_block, bool weighted, Plan &plan)
{
  const int n_slots = an.n_slots;
  plan.fast = false;
  plan.weighted = weighted;
  plan.woff = 0;
  /* weights: the exact kernel, which adds w_i w_j in double per slot */
  if (an.sane && !weighted) {
    double best = -1.0;
    FastTable tables[kNumCfgs];
    const size_t fixb = round16((size_t)n_slots * 4);
    const bool fix_shared = fixb <= 48 * 1024;
    for (int cfg = 0; cfg < kNumCfgs; cfg++) {
      size_t nt = (size_t)kCfgs[cfg].oct << kCfgs[cfg].mb;
      size_t smem = nt * 12 + 64 + (fix_shared ? fixb : 0) + (size_t)BJ * 16 +
                    16 + QBYTES;
      int bps = (smem + 1024) * 2 <= smem_sm ? 2 : 1;
      if (smem > smem_block || smem + 1024 > smem_sm) continue;
      if (!build_fast_table(bins, an, cfg, tables[cfg])) continue;
      double occ = bps == 2 ? 1.0 : 0.8;
      /* the q width of cells with several edges: even 1e-4 of it costs
       * more than a finer table (see kCfgs), so it weighs heavily */
      double dirty = 1.0 / (1.0 + 1000.0 * tables[cfg].multi);
      double size = 1.0 - 0.02 * cfg;  /* smaller tables load faster */
      double score = occ * dirty * size;
      if (score > best) {
        best = score;
        plan.fast = true;
        plan.cfg = cfg;
        plan.fix_shared = fix_shared;
        plan.smem = smem;
        plan.fixoff = (unsigned)(nt * 12 + 64);
        plan.joff = plan.fixoff + (unsigned)(fix_shared ? fixb : 0);
        plan.itemoff = (unsigned)(plan.joff + BJ * 16);
        plan.qoff = plan.itemoff + 16;
      }
    }
    /* nearly every pair would take the exact path anyway */
    if (plan.fast && tables[plan.cfg].multi > 0.5) plan.fast = false;
    if (plan.fast) plan.ft = tables[plan.cfg];
  }
  if (plan.fast) return true;
  /* exact kernel: R columns of 32-bit counters (and of double weight
   * sums), as many as fit */
  for (int R = 32; R >= 1; R /= 2) {
    size_t hbytes = round16((size_t)n_slots * R * 4);
    size_t wbytes = weighted ? round16((size_t)n_slots * R * 8) : 0;
    size_t smem = hbytes + wbytes + (size_t)EBJ * 32 + 16;
    if (smem <= smem_block && smem + 1024 <= smem_sm &&
        (!weighted || smem <= 56 * 1024)) {   /* weighted: 4 blocks/SM */
      plan.rcols = R;
      plan.smem = smem;
      plan.hoff = 0;
      plan.woff = (unsigned)hbytes;
      plan.joff = (unsigned)(hbytes + wbytes);
      plan.itemoff = (unsigned)(hbytes + wbytes + EBJ * 32);
      return true;
    }
  }
  plan.rcols = 0;
  plan.smem = (size_t)EBJ * 32 + 16;
  plan.hoff = 0;
  plan.joff = 0;
  plan.itemoff = (unsigned)(EBJ * 32);
  return true;
}

const void *fast_kernel_ptr(int cfg)
{
  switch (cfg) {
    case 0: return (const void *)wt_fast_kernel<7, 16>;
    case 1: return (const void *)wt_fast_kernel<8, 16>;
    case 2: return (const void *)wt_fast_kernel<9, 16>;
    case 3: return (const void *)wt_fast_kernel<10, 16>;
    default: return (const void *)wt_fast_kernel<11, 8>;
  }
}

/* Plans of recent calls: building the four candidate tables costs about a
 * millisecond, and a session repeats the same bins. A plan depends only on
 * the edges, the analysis and the shared memory of the devices. */
struct PlanEntry {
  std::vector<double> upper;
  bool sane, weighted;
  double r2max, eta;
  size_t smem_sm, smem_block;
  std::shared_ptr<const Plan> plan;
};

std::mutex &plan_mutex()
{
  static std::mutex *m = new std::mutex();   /* never destroyed */
  return *m;
}

std::vector<PlanEntry> &plan_cache()
{
  static std::vector<PlanEntry> *v = new std::vector<PlanEntry>();
  return *v;
}

std::shared_ptr<const Plan> get_plan(const wt_bins *bins, const Analysis &an,
                                     size_t smem_sm, size_t smem_block,
                                     bool weighted)
{
  const size_t n = (size_t)an.n_slots;
  auto same = [&](const PlanEntry &e) {
    return e.sane == an.sane && e.weighted == weighted &&
           e.r2max == an.r2max && e.eta == an.eta &&
           e.smem_sm == smem_sm && e.smem_block == smem_block &&
           e.upper.size() == n &&
           memcmp(e.upper.data(), bins->upper, n * sizeof(double)) == 0;
  };
  {
    std::lock_guard<std::mutex> g(plan_mutex());
    for (const PlanEntry &e : plan_cache())
      if (same(e)) return e.plan;
  }
  std::shared_ptr<Plan> p = std::make_shared<Plan>();
  make_plan(bins, an, smem_sm, smem_block, weighted, *p);
  PlanEntry e{std::vector<double>(bins->upper, bins->upper + n), an.sane,
              weighted, an.r2max, an.eta, smem_sm, smem_block, p};
  std::lock_guard<std::mutex> g(plan_mutex());
  std::vector<PlanEntry> &c = plan_cache();
  if (c.size() >= 8) c.erase(c.begin());
  c.push_back(std::move(e));
  return p;
}

/* v rounded up to a multiple of 2^-48: an upper bound that is the same for
 * catalogs of unit vectors that differ only in the last bits of |X|^2, so
 * that they share one plan (the margin proof needs upper bounds only) */
double round_up_coarse(double v)
{
  const double g = std::ldexp(1.0, -48);
  return std::ceil(v / g) * g;
}

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

int64_t chunk_len(int64_t n, int c)
{
  int64_t s = (int64_t)c * CHUNK;
  return n - s < CHUNK ? n - s : CHUNK;
}

/* pairs of a row: sum over i in [i0, i1) of (j1 - max(j0, i + 1)) when
 * diag (rows of a diagonal piece start their j range at i0 + 1) */
double row_pairs(const Row &r)
{
  double ni = (double)(r.i1 - r.i0);
  if (!r.diag) return ni * (double)(r.j1 - r.j0);
  /* j0 == i0 + 1: sum_{i} (j1 - i - 1) */
  return ni * (double)(r.j1 - 1) -
         ((double)r.i0 + (double)(r.i1 - 1)) * ni / 2.0;
}

struct Piece {
  int cI, cJ;
  int64_t a0, a1, b0, b1;   /* chunk-local */
  bool diag;
  int out;
};

void plan_launches(const wt_job *job, int bi, double max_pairs,
                   std::vector<Row> &rows, std::vector<Launch> &out)
{
  rows.clear();
  out.clear();
  std::vector<Piece> pieces;
  auto cut = [](int64_t lo, int64_t hi, int c, int64_t &l, int64_t &h) {
    int64_t s = (int64_t)c * CHUNK;
    l = std::max(lo, s) - s;
    h = std::min(hi, s + CHUNK) - s;
    return h > l;
  };
  for (int64_t k = 0; k < job->n_tasks; k++) {
    const wt_task &t = job->tasks[k];
    if (t.a1 <= t.a0 || t.b1 <= t.b0) continue;
    const bool diag = job->is_auto && t.a0 == t.b0 && t.a1 == t.b1;
    const int ca0 = (int)(t.a0 / CHUNK), ca1 = (int)((t.a1 - 1) / CHUNK);
    const int cb0 = (int)(t.b0 / CHUNK), cb1 = (int)((t.b1 - 1) / CHUNK);
    for (int ci = ca0; ci <= ca1; ci++) {
      for (int cj = diag ? ci : cb0; cj <= cb1; cj++) {
        Piece p;
        p.cI = ci;
        p.cJ = cj;
        p.out = t.out;
        p.diag = diag && ci == cj;
        if (!cut(t.a0, t.a1, ci, p.a0, p.a1) ||
            !cut(t.b0, t.b1, cj, p.b0, p.b1))
          continue;
        pieces.push_back(p);
      }
    }
  }
  /* group by chunk pair, keeping task order inside a group */
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const Piece &x, const Piece &y) {
                     return x.cI != y.cI ? x.cI < y.cI : x.cJ < y.cJ;
                   });
  size_t g = 0;
  while (g < pieces.size()) {
    size_t h = g;
    while (h < pieces.size() && pieces[h].cI == pieces[g].cI &&
           pieces[h].cJ == pieces[g].cJ)
      h++;
    Launch L{pieces[g].cI, pieces[g].cJ,
             job->is_auto && pieces[g].cI == pieces[g].cJ, rows.size(),
             rows.size(), 0.0};
    for (size_t q = g; q < h; q++) {
      const Piece &p = pieces[q];
      for (int64_t i0 = p.a0; i0 < p.a1; i0 += bi) {
        Row r;
        r.i0 = (int)i0;
        r.i1 = (int)std::min<int64_t>(i0 + bi, p.a1);
        r.diag = p.diag ? 1 : 0;
        r.out = p.out;
        r.j0 = p.diag ? r.i0 + 1 : (int)p.b0;
        r.j1 = (int)(p.diag ? p.a1 : p.b1);
        if (r.j1 <= r.j0) continue;
        r.pairs = row_pairs(r);
        if (L.r1 > L.r0 && L.pairs >= max_pairs) {
          out.push_back(L);
          L.r0 = L.r1;
          L.pairs = 0.0;
        }
        rows.push_back(r);
        L.r1++;
        L.pairs += r.pairs;
      }
    }
    if (L.r1 > L.r0) out.push_back(L);
    g = h;
  }
}

/* items of a launch: never more than items_bound() */
void make_items(const Launch &L, const std::vector<Row> &rows, int bi,
                int jalign, int nblocks, std::vector<Item> &items)
{
  items.clear();
  double per_block = L.pairs / (double)nblocks / 8.0;
  int64_t seg = (int64_t)(per_block / bi);
  seg = (seg + jalign - 1) / jalign * jalign;
  if (seg < jalign) seg = jalign;
  if (seg > 16 * jalign) seg = 16 * jalign;
  for (size_t k = L.r0; k < L.r1; k++) {
    const Row &r = rows[k];
    for (int64_t j = r.j0; j < r.j1; j += seg) {
      int64_t j1 = j + seg < r.j1 ? j + seg : r.j1;
      items.push_back(Item{r.i0, r.i1, (int)j, (int)j1, r.diag, r.out});
    }
  }
  /* split the last items so that blocks finish together */
  size_t tail = (size_t)nblocks * 2;
  if (items.size() > tail && seg >= 4 * 256) {
    std::vector<Item> last(items.end() - tail, items.end());
    items.resize(items.size() - tail);
    for (const Item &it : last) {
      int len = it.j1 - it.j0, q = (len + 3) / 4;
      for (int j = it.j0; j < it.j1; j += q)
        items.push_back(Item{it.i0, it.i1, j, j + q < it.j1 ? j + q : it.j1,
                             it.diag, it.out});
    }
  }
}

size_t items_bound(const Launch &L, const std::vector<Row> &rows, int jalign,
                   int nblocks)
{
  size_t n = 8 * (size_t)nblocks + 8;
  for (size_t k = L.r0; k < L.r1; k++)
    n += (size_t)((rows[k].j1 - rows[k].j0 + jalign - 1) / jalign);
  return n;
}

/* ---- spatial order inside a chunk (computed on the device) ---- */
#ifndef WT_CUDA_NOSORT

/* position of cell (x, y) along a Hilbert curve over 1024 x 1024 cells */
__host__ __device__ inline uint32_t hilbert10(uint32_t x, uint32_t y)
{
  const uint32_t n = 1024;
  uint32_t d = 0;
  for (uint32_t s = n / 2; s > 0; s /= 2) {
    uint32_t rx = (x & s) ? 1u : 0u, ry = (y & s) ? 1u : 0u;
    d += s * s * ((3u * rx) ^ ry);
    if (ry == 0) {
      if (rx == 1) {
        x = n - 1 - x;
        y = n - 1 - y;
      }
      uint32_t t = x;
      x = y;
      y = t;
    }
  }
  return d;
}

/* cube face and Hilbert cell of a point: a 23-bit key */
__host__ __device__ inline uint32_t cell_key(double x, double y, double z)
{
  double ax = fabs(x), ay = fabs(y), az = fabs(z);
  uint32_t face;
  double m, u, v;
  if (ax >= ay && ax >= az) { face = x >= 0 ? 0u : 1u; m = ax; u = y; v = z; }
  else if (ay >= az) { face = y >= 0 ? 2u : 3u; m = ay; u = x; v = z; }
  else { face = z >= 0 ? 4u : 5u; m = az; u = x; v = y; }
  double fu = m > 0 ? (u / m + 1.0) * 512.0 : 0.0;
  double fv = m > 0 ? (v / m + 1.0) * 512.0 : 0.0;
  if (!(fu >= 0.0)) fu = 0.0;
  if (!(fv >= 0.0)) fv = 0.0;
  uint32_t iu = fu > 1023.0 ? 1023u : (uint32_t)fu;
  uint32_t iv = fv > 1023.0 ? 1023u : (uint32_t)fv;
  return (face << 20) | hilbert10(iu, iv);
}
constexpr int KEY_BITS = 23;

/* sort keys of a chunk's raw coordinates, and the identity permutation.
 * The high bits of a key are the segment of the point: the number of task
 * boundaries (sorted, in bnd[0 .. nb)) at or below its index in the
 * catalog, so that points move only inside the ranges of the tasks. */
__global__ void wt_key_kernel(const double *__restrict__ x,
                              const double *__restrict__ y,
                              const double *__restrict__ z, int n,
                              long long start,
                              const long long *__restrict__ bnd, int nb,
                              unsigned long long *__restrict__ key,
                              uint32_t *__restrict__ idx)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const long long g = start + i;
  int lo = 0, hi = nb;            /* first bound > g */
  while (lo < hi) {
    int mid = (lo + hi) >> 1;
    if (bnd[mid] <= g) lo = mid + 1; else hi = mid;
  }
  key[i] = ((unsigned long long)lo << KEY_BITS) | cell_key(x[i], y[i], z[i]);
  idx[i] = (uint32_t)i;
}
#endif

/* float and double copies of a chunk in cell order (order == NULL: as
 * given): the 32 lanes of a warp then hold close points and see similar
 * pair separations, which keeps shared-memory bank conflicts low. The
 * float copy is the round-to-nearest of the double, as on the host. */
__global__ void wt_pack_kernel(const double *__restrict__ x,
                               const double *__restrict__ y,
                               const double *__restrict__ z,
                               const double *__restrict__ w,
                               const uint32_t *__restrict__ order, int n,
                               float4 *__restrict__ f, DPt *__restrict__ d)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  const int s = order ? (int)order[r] : r;
  const double a = x[s], b = y[s], c = z[s];
  if (f)
    f[r] = make_float4(__double2float_rn(a), __double2float_rn(b),
                       __double2float_rn(c), 0.0f);
  d[r] = DPt{a, b, c, w ? w[s] : 0.0};
}

/* ---- per-device resources kept between calls ----
 * A context holds one stream, its events and grow-only device buffers
 * (plus pinned host buffers for the work items). Contexts live in a
 * process-wide pool guarded by a mutex; a worker takes an idle one of its
 * device (or makes one) and gives it back when done. A context that saw
 * any error is destroyed, together with the idle contexts of its device,
 * so that nothing from a failed call is reused. wt_cuda_release() frees
 * the idle contexts (R calls it at exit, so that tools such as
 * compute-sanitizer see every device buffer freed). */

struct Buf {
  void *p = nullptr;
  size_t bytes = 0;
};

struct Ctx {
  int dev = -1;
  bool busy = false;
  bool ready = false;          /* stream and events exist */
  cudaStream_t stream = nullptr;
  cudaEvent_t ev0[2] = {nullptr, nullptr}, ev1[2] = {nullptr, nullptr};
  int sm_count = 0;
  Buf f[2], d[2];              /* resident chunks: float and double copies */
  Buf raw, key[2], idx[2], sort_tmp;   /* chunk upload and ordering */
  Buf bnd[2];                  /* task boundaries of each catalog */
  Buf ghist, gw, counter, items, upper, thr, cmap, btab;
  Buf hitems[2];               /* pinned host: work items of two launches */
  /* the plan whose edges and fast table are in upper, thr and cmap */
  std::shared_ptr<const Plan> loaded;
};

void buf_free(Buf &b, bool host)
{
  if (b.p) {
    if (host) cudaFreeHost(b.p); else cudaFree(b.p);
  }
  b.p = nullptr;
  b.bytes = 0;
}

/* frees everything (the device of c must be current); errors are ignored:
 * after a failure the calls may report it again */
void ctx_destroy(Ctx *c)
{
  if (c->stream) cudaStreamSynchronize(c->stream);
  Buf *dev_bufs[] = {&c->f[0], &c->f[1], &c->d[0], &c->d[1], &c->raw,
                     &c->key[0], &c->key[1], &c->idx[0], &c->idx[1],
                     &c->sort_tmp, &c->bnd[0], &c->bnd[1], &c->ghist,
                     &c->gw, &c->counter, &c->items,
                     &c->upper, &c->thr, &c->cmap, &c->btab};
  for (Buf *b : dev_bufs) buf_free(*b, false);
  buf_free(c->hitems[0], true);
  buf_free(c->hitems[1], true);
  for (int k = 0; k < 2; k++) {
    if (c->ev0[k]) cudaEventDestroy(c->ev0[k]);
    if (c->ev1[k]) cudaEventDestroy(c->ev1[k]);
  }
  if (c->stream) cudaStreamDestroy(c->stream);
  cudaGetLastError();
  delete c;
}

struct Pool {
  std::mutex mu;
  std::vector<Ctx *> all;
};

Pool &pool()
{
  static Pool *p = new Pool();   /* never destroyed (see above) */
  return *p;
}

Ctx *ctx_acquire(int dev)
{
  Pool &P = pool();
  std::lock_guard<std::mutex> g(P.mu);
  for (Ctx *c : P.all)
    if (!c->busy && c->dev == dev) {
      c->busy = true;
      return c;
    }
  P.all.reserve(P.all.size() + 1);   /* may throw: nothing made yet */
  Ctx *c = new Ctx();
  c->dev = dev;
  c->busy = true;
  P.all.push_back(c);
  return c;
}

/* the idle contexts of one device, taken out of the pool */
std::vector<Ctx *> ctx_take_idle(int dev)
{
  Pool &P = pool();
  std::vector<Ctx *> out;
  std::lock_guard<std::mutex> g(P.mu);
  std::vector<Ctx *> keep;
  keep.reserve(P.all.size());
  out.reserve(P.all.size());
  for (Ctx *c : P.all) {
    if (!c->busy && c->dev == dev) out.push_back(c);
    else keep.push_back(c);
  }
  P.all.swap(keep);
  return out;
}

void ctx_release(Ctx *c, bool healthy)
{
  Pool &P = pool();
  if (healthy) {
    std::lock_guard<std::mutex> g(P.mu);
    c->busy = false;
    return;
  }
  /* drop c and, where the list can be made, the idle contexts of its
   * device (those left behind are destroyed when they next fail) */
  std::vector<Ctx *> others;
  {
    std::lock_guard<std::mutex> g(P.mu);
    for (size_t k = 0; k < P.all.size(); k++)
      if (P.all[k] == c) {
        P.all[k] = P.all.back();
        P.all.pop_back();
        break;
      }
  }
  try {
    others = ctx_take_idle(c->dev);
  } catch (...) {
    others.clear();
  }
  ctx_destroy(c);
  for (Ctx *d : others) ctx_destroy(d);
}

cudaError_t ctx_setup(Ctx &c)
{
  if (c.ready) return cudaSuccess;
  cudaError_t e = cudaDeviceGetAttribute(
      &c.sm_count, cudaDevAttrMultiProcessorCount, c.dev);
  if (e == cudaSuccess && !c.stream)
    e = cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking);
  for (int k = 0; k < 2 && e == cudaSuccess; k++) {
    if (!c.ev0[k]) e = cudaEventCreate(&c.ev0[k]);
    if (e == cudaSuccess && !c.ev1[k]) e = cudaEventCreate(&c.ev1[k]);
  }
  if (e == cudaSuccess) c.ready = true;
  return e;
}

/* a worker thread that fails (WTHETA_TEST_FAULT=thread) */
struct InjectedThreadFault {};

/* ---- one device ---- */

/* what a fault injected for tests says (WTHETA_TEST_FAULT) */
const char *fault_note(int bit)
{
  switch (bit) {
    case WT_FAULT_ALLOC: return " (fault injected by WTHETA_TEST_FAULT=alloc)";
    case WT_FAULT_LAUNCH: return " (fault injected by WTHETA_TEST_FAULT=launch)";
    case WT_FAULT_COPY: return " (fault injected by WTHETA_TEST_FAULT=copy)";
    default: return " (fault injected by WTHETA_TEST_FAULT=thread)";
  }
}

struct Shared {
  const wt_job *job;
  const Analysis *an;
  std::shared_ptr<const Plan> plan;
  const std::vector<Launch> *launches;
  const std::vector<Row> *rows;
  const std::vector<long long> *bounds[2];   /* task boundaries per catalog */
  int n_out;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<unsigned long long> done{0};  /* pairs of retired launches */
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;
  int status = WT_OK;
  std::string message;

  void fail(int st, const std::string &m)
  {
    std::lock_guard<std::mutex> g(mu);
    if (status == WT_OK) {
      status = st;
      message = m;
    }
    stop = true;
  }
};

class Worker {
 public:
  Worker(Shared &sh, int device) : sh_(sh), dev_(device) {}
  ~Worker() { finish(); }

  void run()
  {
    try {
      body();
    } catch (const std::bad_alloc &) {
      failed_ = true;
      sh_.fail(WT_ERR_NOMEM, "host memory allocation failed");
    } catch (const InjectedThreadFault &) {
      failed_ = true;
      char buf[160];
      snprintf(buf, sizeof buf, "the CUDA worker thread of device %d failed%s",
               dev_, fault_note(WT_FAULT_THREAD));
      sh_.fail(WT_ERR_WORKER, buf);
    } catch (...) {
      failed_ = true;
      sh_.fail(WT_ERR_WORKER, "unexpected failure in a CUDA worker thread");
    }
    finish();
  }

  std::vector<unsigned long long> counts;
  std::vector<double> wsums;
  double ms = 0.0;

 private:
  Shared &sh_;
  int dev_;
  bool failed_ = false;
  Ctx *ctx_ = nullptr;
  int64_t cap_ = 0;            /* points per resident chunk buffer */
  bool inflight_[2] = {false, false};
  double inflight_pairs_[2] = {0.0, 0.0};

  struct Slot {
    int cat = -1, chunk = -1;
    int64_t n = 0;
  } slot_[2];

  bool ck(cudaError_t e, const char *what)
  {
    if (e == cudaSuccess) return true;
    failed_ = true;
    sh_.fail(WT_ERR_CUDA, cuda_msg(what, dev_, e));
    return false;
  }

  /* a test fault: the call it stands for failed */
  bool inject(int bit, cudaError_t e, const char *what)
  {
    if (!(sh_.job->fault & bit)) return false;
    std::string w = std::string(what) + fault_note(bit);
    ck(e, w.c_str());
    return true;
  }

  /* grow-only buffer of at least `bytes`; on a failed allocation the idle
   * contexts of the device are freed and the allocation tried once more */
  bool need(Buf &b, size_t bytes, bool host = false)
  {
    if (b.bytes >= bytes) return true;
    ctx_->loaded.reset();        /* contents of a regrown buffer are gone */
    if (b.p) {
      /* queued work may still use the old buffer */
      if (!ck(cudaStreamSynchronize(ctx_->stream), "cudaStreamSynchronize"))
        return false;
      buf_free(b, host);
    }
    void *p = nullptr;
    cudaError_t e = host ? cudaHostAlloc(&p, bytes, cudaHostAllocDefault)
                         : cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      std::vector<Ctx *> idle = ctx_take_idle(dev_);
      for (Ctx *c : idle) ctx_destroy(c);
      p = nullptr;
      e = host ? cudaHostAlloc(&p, bytes, cudaHostAllocDefault)
               : cudaMalloc(&p, bytes);
    }
    if (e != cudaSuccess) {
      char what[96];
      snprintf(what, sizeof what, "%s of %zu bytes",
               host ? "cudaHostAlloc" : "cudaMalloc", bytes);
      return ck(e, what);
    }
    b.p = p;
    b.bytes = bytes;
    return true;
  }

  void finish()
  {
    if (!ctx_) return;
    bool healthy = !failed_;
    if (ctx_->stream && cudaStreamSynchronize(ctx_->stream) != cudaSuccess)
      healthy = false;
    if (!healthy) cudaGetLastError();
    Ctx *c = ctx_;
    ctx_ = nullptr;
    ctx_release(c, healthy);
  }

  /* the kernel time of the launch that used event pair b, once done; its
   * pairs count as done for the progress report */
  bool retire(int b)
  {
    if (!inflight_[b]) return true;
    inflight_[b] = false;
    if (!ck(cudaEventSynchronize(ctx_->ev1[b]), "kernel execution"))
      return false;
    float t = 0.0f;
    if (!ck(cudaEventElapsedTime(&t, ctx_->ev0[b], ctx_->ev1[b]),
            "cudaEventElapsedTime"))
      return false;
    ms += t;
    sh_.done.fetch_add((unsigned long long)inflight_pairs_[b]);
    return true;
  }

  /* make chunk (cat, c) resident in a slot other than `keep`: its raw
   * coordinates (and weights) are copied to the device, which orders and
   * packs them. All of it is queued on the stream, behind any kernel still
   * running. */
  bool load_chunk(int cat, int c, int keep, int &which, bool fast)
  {
    for (int s = 0; s < 2; s++)
      if (slot_[s].cat == cat && slot_[s].chunk == c) {
        which = s;
        return true;
      }
    Ctx &C = *ctx_;
    int s = keep == 0 ? 1 : 0;
    const wt_points &p = cat == 0 ? sh_.job->a : sh_.job->b;
    const int64_t start = (int64_t)c * CHUNK, n = chunk_len(p.n, c);
    double *rx = static_cast<double *>(C.raw.p);
    double *ry = rx + cap_, *rz = ry + cap_;
    double *rw = sh_.plan->weighted ? rz + cap_ : nullptr;
    const size_t nb = (size_t)n * sizeof(double);
    slot_[s].cat = -1;
    if (!ck(cudaMemcpyAsync(rx, p.x + start, nb, cudaMemcpyHostToDevice,
                            C.stream), "cudaMemcpyAsync of coordinates") ||
        !ck(cudaMemcpyAsync(ry, p.y + start, nb, cudaMemcpyHostToDevice,
                            C.stream), "cudaMemcpyAsync of coordinates") ||
        !ck(cudaMemcpyAsync(rz, p.z + start, nb, cudaMemcpyHostToDevice,
                            C.stream), "cudaMemcpyAsync of coordinates"))
      return false;
    if (rw && !ck(cudaMemcpyAsync(rw, p.w + start, nb, cudaMemcpyHostToDevice,
                                  C.stream), "cudaMemcpyAsync of weights"))
      return false;
    const int threads = 256;
    const int blocks = (int)((n + threads - 1) / threads);
    const uint32_t *order = nullptr;
#ifndef WT_CUDA_NOSORT
    {
      unsigned long long *k0 = static_cast<unsigned long long *>(C.key[0].p);
      unsigned long long *k1 = static_cast<unsigned long long *>(C.key[1].p);
      uint32_t *i0 = static_cast<uint32_t *>(C.idx[0].p);
      uint32_t *i1 = static_cast<uint32_t *>(C.idx[1].p);
      const int nbnd = (int)sh_.bounds[cat]->size();
      wt_key_kernel<<<blocks, threads, 0, C.stream>>>(
          rx, ry, rz, (int)n, (long long)start,
          static_cast<const long long *>(C.bnd[cat].p), nbnd, k0, i0);
      if (!ck(cudaGetLastError(), "launch of the ordering kernel"))
        return false;
      int end_bit = KEY_BITS;
      while (end_bit < 64 && ((unsigned long long)nbnd >> (end_bit - KEY_BITS)))
        end_bit++;
      cub::DoubleBuffer<unsigned long long> dk(k0, k1);
      cub::DoubleBuffer<uint32_t> dv(i0, i1);
      size_t tb = 0;
      if (!ck(cub::DeviceRadixSort::SortPairs(nullptr, tb, dk, dv, (int)n, 0,
                                              end_bit, C.stream),
              "cub::DeviceRadixSort (size query)") ||
          !need(C.sort_tmp, tb))
        return false;
      tb = C.sort_tmp.bytes;
      if (!ck(cub::DeviceRadixSort::SortPairs(C.sort_tmp.p, tb, dk, dv,
                                              (int)n, 0, end_bit, C.stream),
              "cub::DeviceRadixSort"))
        return false;
      order = dv.Current();
    }
#endif
    wt_pack_kernel<<<blocks, threads, 0, C.stream>>>(
        rx, ry, rz, rw, order, (int)n,
        fast ? static_cast<float4 *>(C.f[s].p) : nullptr,
        static_cast<DPt *>(C.d[s].p));
    if (!ck(cudaGetLastError(), "launch of the packing kernel")) return false;
    slot_[s].cat = cat;
    slot_[s].chunk = c;
    slot_[s].n = n;
    which = s;
    return true;
  }

  void body()
  {
    const wt_job *job = sh_.job;
    const Plan &plan = *sh_.plan;
    const int n_slots = sh_.an->n_slots;
    const size_t n_hist = (size_t)sh_.n_out * (size_t)n_slots;
    const bool weighted = plan.weighted;
    if (!ck(cudaSetDevice(dev_), "cudaSetDevice")) return;
    ctx_ = ctx_acquire(dev_);
    Ctx &C = *ctx_;
    if (!ck(ctx_setup(C), "CUDA stream setup")) return;
    if (job->fault & WT_FAULT_THREAD) throw InjectedThreadFault();
    if (inject(WT_FAULT_ALLOC, cudaErrorMemoryAllocation, "cudaMalloc"))
      return;

    const void *kfn = plan.fast ? fast_kernel_ptr(plan.cfg)
                      : weighted ? (const void *)wt_exact_kernel<true>
                                 : (const void *)wt_exact_kernel<false>;
    if (!ck(cudaFuncSetAttribute(kfn,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)plan.smem),
            "cudaFuncSetAttribute"))
      return;
    const int threads = plan.fast ? BLOCK : EBLOCK;
    int per_sm = 0;
    if (!ck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kfn,
                                                          threads, plan.smem),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor"))
      return;
    if (per_sm < 1) {
      failed_ = true;
      sh_.fail(WT_ERR_CUDA, cuda_msg("kernel occupancy check", dev_,
                                     cudaErrorInvalidConfiguration));
      return;
    }
    const int max_blocks = per_sm * C.sm_count;

    /* buffers, sized to this call (kept if larger) */
    const int64_t nA = job->a.n, nB = job->is_auto ? job->a.n : job->b.n;
    cap_ = nA > nB ? nA : nB;
    if (cap_ > CHUNK) cap_ = CHUNK;
    const int bi = plan.fast ? BI : EBLOCK;
    const int jalign = plan.fast ? BJ : EBJ;
    size_t item_cap = 0;
    for (const Launch &L : *sh_.launches) {
      size_t n = items_bound(L, *sh_.rows, jalign, max_blocks);
      if (n > item_cap) item_cap = n;
    }
    const size_t cap = (size_t)cap_;
    for (int s = 0; s < (job->is_auto && nA <= CHUNK ? 1 : 2); s++) {
      if (!need(C.d[s], cap * sizeof(DPt))) return;
      if (plan.fast && !need(C.f[s], cap * sizeof(float4))) return;
    }
    if (!need(C.raw, (weighted ? 4 : 3) * cap * sizeof(double))) return;
#ifndef WT_CUDA_NOSORT
    for (int k = 0; k < 2; k++)
      if (!need(C.key[k], cap * sizeof(unsigned long long)) ||
          !need(C.idx[k], cap * sizeof(uint32_t)))
        return;
    for (int cat = 0; cat < (job->is_auto ? 1 : 2); cat++) {
      const std::vector<long long> &bv = *sh_.bounds[cat];
      if (!need(C.bnd[cat], (bv.size() + 1) * sizeof(long long)) ||
          !ck(cudaMemcpyAsync(C.bnd[cat].p, bv.data(),
                              bv.size() * sizeof(long long),
                              cudaMemcpyHostToDevice, C.stream),
              "cudaMemcpyAsync of task boundaries"))
        return;
    }
    {
      cub::DoubleBuffer<unsigned long long> dk(nullptr, nullptr);
      cub::DoubleBuffer<uint32_t> dv(nullptr, nullptr);
      size_t tb = 0;
      if (!ck(cub::DeviceRadixSort::SortPairs(nullptr, tb, dk, dv, (int)cap_,
                                              0, 64, C.stream),
              "cub::DeviceRadixSort (size query)") ||
          !need(C.sort_tmp, tb))
        return;
    }
#endif
    if (!need(C.ghist, n_hist * sizeof(unsigned long long)) ||
        (weighted && !need(C.gw, n_hist * sizeof(double))) ||
        !need(C.counter, sizeof(int)) ||
        !need(C.items, item_cap * sizeof(Item)) ||
        !need(C.hitems[0], item_cap * sizeof(Item), true) ||
        !need(C.hitems[1], item_cap * sizeof(Item), true) ||
        !need(C.upper, n_slots * sizeof(double)))
      return;
    unsigned long long *ghist = static_cast<unsigned long long *>(C.ghist.p);
    double *gw = weighted ? static_cast<double *>(C.gw.p) : nullptr;
    int *counter = static_cast<int *>(C.counter.p);
    Item *d_items = static_cast<Item *>(C.items.p);
    const double *d_upper = static_cast<const double *>(C.upper.p);
    if (!ck(cudaMemsetAsync(ghist, 0, n_hist * sizeof(unsigned long long),
                            C.stream), "cudaMemsetAsync") ||
        (gw && !ck(cudaMemsetAsync(gw, 0, n_hist * sizeof(double), C.stream),
                   "cudaMemsetAsync")))
      return;
    /* edges and fast table: a plan's are those of its key (get_plan) */
    const bool loaded = C.loaded == sh_.plan;
    C.loaded.reset();
    if (!loaded &&
        !ck(cudaMemcpyAsync(C.upper.p, job->bins->upper,
                            n_slots * sizeof(double), cudaMemcpyHostToDevice,
                            C.stream), "cudaMemcpyAsync of edges"))
      return;
    if (plan.fast && loaded) {
      /* already on the device */
    } else if (plan.fast) {
      size_t tb = plan.ft.thr.size() * sizeof(float);
      size_t mb = plan.ft.cmap.size() * sizeof(int2);
      if (!need(C.thr, tb) || !need(C.cmap, mb) ||
          !ck(cudaMemcpyAsync(C.thr.p, plan.ft.thr.data(), tb,
                              cudaMemcpyHostToDevice, C.stream),
              "cudaMemcpyAsync of the lookup table") ||
          !ck(cudaMemcpyAsync(C.cmap.p, plan.ft.cmap.data(), mb,
                              cudaMemcpyHostToDevice, C.stream),
              "cudaMemcpyAsync of the lookup table"))
        return;
    } else if (job->bins->table) {
      size_t tb = (size_t)job->bins->table_size * sizeof(uint16_t);
      if (!need(C.btab, tb) ||
          !ck(cudaMemcpyAsync(C.btab.p, job->bins->table, tb,
                              cudaMemcpyHostToDevice, C.stream),
              "cudaMemcpyAsync of the lookup table"))
        return;
    }
    C.loaded = sh_.plan;

    /* Launches are queued one ahead: while the GPU runs launch k, the host
     * prepares k + 1 (its items go through pinned buffer (k + 1) % 2, free
     * once launch k - 1 has finished). Chunk loads are queued on the same
     * stream, so they wait for the kernels that still read the slot. */
    std::vector<Item> items;
    size_t k = 0;
    for (;;) {
      if (sh_.stop.load()) return;
      size_t li = sh_.next.fetch_add(1);
      if (li >= sh_.launches->size()) break;
      const Launch &L = (*sh_.launches)[li];
      const int b = (int)(k & 1);
      if (!retire(b)) return;
      int si = 0, sj = 0;
      if (!load_chunk(0, L.cI, -1, si, plan.fast)) return;
      if (L.same) {
        sj = si;
      } else if (!load_chunk(job->is_auto ? 0 : 1, L.cJ, si, sj, plan.fast)) {
        return;
      }
      const int64_t nI = slot_[si].n, nJ = slot_[sj].n;
      make_items(L, *sh_.rows, bi, jalign, max_blocks, items);
      if (items.empty()) continue;
      const size_t ib = items.size() * sizeof(Item);
      if (ib > C.hitems[b].bytes || ib > C.items.bytes) {
        /* not expected (item_cap bounds it); grow with nothing in flight */
        if (!retire(1 - b) || !need(C.items, ib) ||
            !need(C.hitems[b], ib, true))
          return;
        d_items = static_cast<Item *>(C.items.p);
      }
      memcpy(C.hitems[b].p, items.data(), ib);
      int nblocks = (int)(items.size() < (size_t)max_blocks ? items.size()
                                                           : max_blocks);
      if (!ck(cudaMemcpyAsync(d_items, C.hitems[b].p, ib,
                              cudaMemcpyHostToDevice, C.stream),
              "cudaMemcpyAsync of work items") ||
          !ck(cudaMemsetAsync(counter, 0, sizeof(int), C.stream),
              "cudaMemsetAsync") ||
          !ck(cudaEventRecord(C.ev0[b], C.stream), "cudaEventRecord"))
        return;
      if (plan.fast) {
        FastArgs a;
        a.fI = static_cast<const float4 *>(C.f[si].p);
        a.fJ = static_cast<const float4 *>(C.f[sj].p);
        a.dI = static_cast<const DPt *>(C.d[si].p);
        a.dJ = static_cast<const DPt *>(C.d[sj].p);
        a.nI = (int)nI; a.nJ = (int)nJ;
        a.items = d_items; a.n_items = (int)items.size();
        a.counter = counter;
        a.thr = static_cast<const float *>(C.thr.p);
        a.cmap = static_cast<const int2 *>(C.cmap.p);
        a.upper = d_upper; a.n_slots = n_slots;
        a.ghist = ghist;
        a.fixoff = plan.fixoff; a.fix_shared = plan.fix_shared ? 1 : 0;
        a.joff = plan.joff; a.itemoff = plan.itemoff; a.qoff = plan.qoff;
        a.onec = plan.ft.onec; a.margin = plan.ft.margin;
        void *args[] = {&a};
        if (!ck(cudaLaunchKernel(kfn, dim3(nblocks), dim3(BLOCK), args,
                                 plan.smem, C.stream),
                "cudaLaunchKernel"))
          return;
      } else {
        ExactArgs a;
        a.dI = static_cast<const DPt *>(C.d[si].p);
        a.dJ = static_cast<const DPt *>(C.d[sj].p);
        a.nI = (int)nI; a.nJ = (int)nJ;
        a.items = d_items; a.n_items = (int)items.size();
        a.counter = counter;
        a.upper = d_upper; a.n_slots = n_slots;
        a.btab = job->bins->table ? static_cast<const uint16_t *>(C.btab.p)
                                  : nullptr;
        a.bshift = job->bins->table_shift;
        a.bbase = job->bins->table_base;
        a.bsize = job->bins->table_size;
        a.bsteps = job->bins->table_steps;
        a.ghist = ghist;
        a.gw = gw;
        a.rcols = plan.rcols; a.joff = plan.joff; a.itemoff = plan.itemoff;
        a.woff = plan.woff;
        void *args[] = {&a};
        if (!ck(cudaLaunchKernel(kfn, dim3(nblocks), dim3(EBLOCK), args,
                                 plan.smem, C.stream),
                "cudaLaunchKernel"))
          return;
      }
      if (!ck(cudaGetLastError(), "kernel launch") ||
          !ck(cudaEventRecord(C.ev1[b], C.stream), "cudaEventRecord"))
        return;
      inflight_[b] = true;
      inflight_pairs_[b] = L.pairs;
      k++;
      if (k == 1 && inject(WT_FAULT_LAUNCH, cudaErrorLaunchFailure,
                           "kernel launch"))
        return;
    }
    /* the older launch first */
    if (!retire((int)(k & 1)) || !retire((int)((k + 1) & 1))) return;
    std::vector<unsigned long long> out(n_hist, 0ull);
    std::vector<double> wout(weighted ? n_hist : 0, 0.0);
    if (inject(WT_FAULT_COPY, cudaErrorUnknown, "cudaMemcpy of counts"))
      return;
    if (!ck(cudaMemcpyAsync(out.data(), ghist,
                            n_hist * sizeof(unsigned long long),
                            cudaMemcpyDeviceToHost, C.stream),
            "cudaMemcpy of counts") ||
        (weighted &&
         !ck(cudaMemcpyAsync(wout.data(), gw, n_hist * sizeof(double),
                             cudaMemcpyDeviceToHost, C.stream),
             "cudaMemcpy of weight sums")) ||
        !ck(cudaStreamSynchronize(C.stream), "cudaMemcpy of counts"))
      return;
    counts.swap(out);
    wsums.swap(wout);
  }
};

/* sorted distinct task boundaries of one catalog (0 and n included) */
std::vector<long long> task_bounds(const wt_job *job, int cat)
{
  const int64_t n = cat == 0 ? job->a.n : job->b.n;
  std::vector<long long> v;
  v.reserve((size_t)job->n_tasks * 4 + 2);
  v.push_back(0);
  v.push_back((long long)n);
  for (int64_t k = 0; k < job->n_tasks; k++) {
    const wt_task &t = job->tasks[k];
    if (cat == 0 || job->is_auto) {
      v.push_back(t.a0);
      v.push_back(t.a1);
    }
    if (cat == 1 || job->is_auto) {
      v.push_back(t.b0);
      v.push_back(t.b1);
    }
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

int count_impl(wt_job *job)
{
  if (!job->devices || job->n_devices < 1) {
    set_msg(job->message, sizeof job->message, "no CUDA device was given");
    return WT_ERR_NO_DEVICE;
  }
  int n_dev = 0;
  cudaError_t e = cudaGetDeviceCount(&n_dev);
  if (e != cudaSuccess || n_dev < 1) {
    set_msg(job->message, sizeof job->message,
            e != cudaSuccess ? std::string("no usable CUDA device: ") +
                                   cudaGetErrorString(e)
                             : std::string("no CUDA device found"));
    return WT_ERR_NO_DEVICE;
  }
  for (int k = 0; k < job->n_devices; k++) {
    if (job->devices[k] < 0 || job->devices[k] >= n_dev) {
      char buf[128];
      snprintf(buf, sizeof buf, "CUDA device %d does not exist (%d found)",
               job->devices[k], n_dev);
      set_msg(job->message, sizeof job->message, buf);
      return WT_ERR_NO_DEVICE;
    }
  }
  const wt_bins *bins = job->bins;
  const bool weighted = job->wsum != nullptr;
  Analysis an;
  an.n_slots = bins->n_bins + 2;
  an.sane = true;
  an.r2max = 0.0;
  an.eta = 0.0;
  for (int s = 0; s + 1 < an.n_slots; s++)
    if (!(bins->upper[s] <= bins->upper[s + 1])) an.sane = false;
  if (!(bins->upper[0] >= 0.0)) an.sane = false;
  const int scan_threads = job->n_threads > 1 ? job->n_threads : 1;
  if (an.sane && !weighted) scan_points(job->a, an, scan_threads);
  if (an.sane && !weighted && !job->is_auto)
    scan_points(job->b, an, scan_threads);
  if (an.sane && (an.eta > 1e-6 || an.r2max > 1.0 + 1e-6)) an.sane = false;
#ifdef WT_CUDA_FORCE_EXACT
  an.sane = false;
#endif

  /* plan for the device with the least shared memory */
  size_t smem_sm = SIZE_MAX, smem_block = SIZE_MAX;
  for (int k = 0; k < job->n_devices; k++) {
    int v_sm = 0, v_blk = 0;
    cudaError_t e1 = cudaDeviceGetAttribute(
        &v_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, job->devices[k]);
    cudaError_t e2 = cudaDeviceGetAttribute(
        &v_blk, cudaDevAttrMaxSharedMemoryPerBlockOptin, job->devices[k]);
    if (e1 != cudaSuccess || e2 != cudaSuccess) {
      set_msg(job->message, sizeof job->message,
              cuda_msg("cudaDeviceGetAttribute", job->devices[k],
                       e1 != cudaSuccess ? e1 : e2));
      return WT_ERR_CUDA;
    }
    if ((size_t)v_sm < smem_sm) smem_sm = (size_t)v_sm;
    if ((size_t)v_blk < smem_block) smem_block = (size_t)v_blk;
  }
  if (an.sane && !weighted) {
    an.r2max = round_up_coarse(an.r2max);
    an.eta = round_up_coarse(an.eta);
  } else {            /* unused by the exact kernel's plan */
    an.sane = an.sane && !weighted;
    an.r2max = 0.0;
    an.eta = 0.0;
  }
  std::shared_ptr<const Plan> plan_ref =
      get_plan(bins, an, smem_sm, smem_block, weighted);
  const Plan &plan = *plan_ref;

  double total = 0.0;
  for (int64_t k = 0; k < job->n_tasks; k++)
    total += wt_task_pairs(job, &job->tasks[k]);
  double lmax = plan.fast ? std::ldexp(1.0, 34) : std::ldexp(1.0, 30);
  double per = job->n_devices == 1 ? lmax : total / (4.0 * job->n_devices);
  if (per < std::ldexp(1.0, 28)) per = std::ldexp(1.0, 28);
  if (per > lmax) per = lmax;
  std::vector<Row> rows;
  std::vector<Launch> launches;
  plan_launches(job, plan.fast ? BI : EBLOCK, per, rows, launches);
  std::vector<long long> bounds_a = task_bounds(job, 0);
  std::vector<long long> bounds_b =
      job->is_auto ? std::vector<long long>() : task_bounds(job, 1);

  Shared sh;
  sh.job = job;
  sh.an = &an;
  sh.plan = plan_ref;
  sh.launches = &launches;
  sh.rows = &rows;
  sh.bounds[0] = &bounds_a;
  sh.bounds[1] = &bounds_b;
  sh.n_out = job->n_out;
  std::vector<Worker *> workers;
  std::vector<std::thread> threads;
  int status = WT_OK;
  try {
    for (int k = 0; k < job->n_devices; k++)
      workers.push_back(new Worker(sh, job->devices[k]));
    for (int k = 0; k < job->n_devices; k++) {
      Worker *w = workers[k];
      {
        std::lock_guard<std::mutex> g(sh.mu);
        sh.running++;
      }
      try {
        threads.emplace_back([w, &sh]() {
          w->run();
          std::lock_guard<std::mutex> g(sh.mu);
          sh.running--;
          sh.cv.notify_all();
        });
      } catch (...) {
        std::lock_guard<std::mutex> g(sh.mu);
        sh.running--;
        throw;
      }
    }
  } catch (...) {
    sh.fail(WT_ERR_WORKER, "could not start the CUDA worker threads");
  }
  bool interrupted = false;
  {
    std::unique_lock<std::mutex> g(sh.mu);
    while (sh.running > 0) {
      sh.cv.wait_for(g, std::chrono::milliseconds(20));
      if (sh.running > 0 && !interrupted && job->poll) {
        g.unlock();
        int hit = job->poll(job->poll_ctx, (double)sh.done.load(), total);
        g.lock();
        if (hit) {
          interrupted = true;
          sh.stop = true;
        }
      }
    }
  }
  for (std::thread &t : threads) t.join();
  if (interrupted) {
    status = WT_ERR_INTERRUPTED;
  } else if (sh.status != WT_OK) {
    status = sh.status;
    set_msg(job->message, sizeof job->message, sh.message);
  } else {
    const size_t n_hist = (size_t)job->n_out * (size_t)an.n_slots;
    for (Worker *w : workers) {
      if (w->counts.size() != n_hist ||
          (weighted && w->wsums.size() != n_hist)) {
        status = WT_ERR_CUDA;
        set_msg(job->message, sizeof job->message,
                "a CUDA worker returned no counts");
        break;
      }
    }
    if (status == WT_OK) {
      for (Worker *w : workers) {
        for (size_t s = 0; s < n_hist; s++) job->slots[s] += w->counts[s];
        if (weighted)
          for (size_t s = 0; s < n_hist; s++) job->wsum[s] += w->wsums[s];
        job->gpu_ms += w->ms;
      }
    }
  }
  for (Worker *w : workers) delete w;
  return status;
}

}  // namespace

extern "C" {

int wt_cuda_compiled(void) { return 1; }

int wt_cuda_release(void)
{
  /* every idle context of every device, out of the pool and freed; busy
   * ones (a count running in another thread) stay */
  std::vector<Ctx *> idle;
  {
    Pool &P = pool();
    std::lock_guard<std::mutex> g(P.mu);
    std::vector<Ctx *> keep;
    for (Ctx *c : P.all) (c->busy ? keep : idle).push_back(c);
    P.all.swap(keep);
  }
  for (Ctx *c : idle) {
    if (cudaSetDevice(c->dev) == cudaSuccess) ctx_destroy(c);
    else delete c;
  }
  cudaGetLastError();
  return (int)idle.size();
}

int wt_cuda_device_count(char *msg, size_t msg_len)
{
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    set_msg(msg, msg_len, cudaGetErrorString(e));
    cudaGetLastError();
    return 0;
  }
  set_msg(msg, msg_len, n > 0 ? "" : "no CUDA device found");
  return n;
}

int wt_cuda_device_info(int device, char *name, size_t name_len, int *major,
                        int *minor, double *mem_bytes)
{
  cudaDeviceProp prop;
  cudaError_t e = cudaGetDeviceProperties(&prop, device);
  if (e != cudaSuccess) {
    set_msg(name, name_len, cudaGetErrorString(e));
    cudaGetLastError();
    return WT_ERR_CUDA;
  }
  set_msg(name, name_len, prop.name);
  if (major) *major = prop.major;
  if (minor) *minor = prop.minor;
  if (mem_bytes) *mem_bytes = (double)prop.totalGlobalMem;
  return WT_OK;
}

int wt_count_cuda(wt_job *job)
{
  if (!job || !job->bins || !job->slots) return WT_ERR_ARG;
  try {
    return count_impl(job);
  } catch (const std::bad_alloc &) {
    set_msg(job->message, sizeof job->message,
            "host memory allocation failed in the CUDA engine");
    return WT_ERR_NOMEM;
  } catch (...) {
    set_msg(job->message, sizeof job->message,
            "unexpected failure in the CUDA engine");
    return WT_ERR_CUDA;
  }
}

}  /* extern "C" */
