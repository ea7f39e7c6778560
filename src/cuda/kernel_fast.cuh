/* The fast kernel: float placement in a shared-memory table of cells, with
 * pairs near an edge re-examined in double (see entry.cu).
 * Part of the CUDA engine: included by entry.cu, which makes the engine
 * one nvcc translation unit (see ARCHITECTURE.md). */
#ifndef WT_CUDA_KERNEL_FAST_CUH
#define WT_CUDA_KERNEL_FAST_CUH

namespace {

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
 * (bench/kernel/kernel-notes.md, "Moved from the CUDA engine's comments"). */
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
 * fewer than BI points leaves the others out), but those of the slices
 * whose bits are set in skip (SKIP: counted in bulk); false when a pair
 * may need the exact path */
template <int MB, int OCT, bool MASK, int NK, bool SKIP>
__device__ __forceinline__ bool fast_point(unsigned char *smem,
                                           unsigned char *cntb,
                                           const float (&nx)[NI],
                                           const float (&ny)[NI],
                                           const float (&nz)[NI], float4 pj,
                                           float onec, float M, int gi0,
                                           int gj, unsigned skip)
{
  bool ok = true;
#pragma unroll
  for (int k = 0; k < NK; k++) {
    if (SKIP && ((skip >> k) & 1u)) continue;
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
template <int MB, int OCT, bool MASK, int NK, bool SKIP>
__device__ __forceinline__ void drain_queue(unsigned char *smem,
                                            const FastArgs &a,
                                            const unsigned *queue, int qn,
                                            int gi0, int tj, unsigned skip)
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
      if (SKIP && ((skip >> k) & 1u)) continue;
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

/* j points [jb, cnt) of the staged tile (from tj) against the thread's
 * first NK points. Group g of the warp takes j = jj + g + G u in the step
 * at jj. */
template <int MB, int OCT, bool MASK, int NK, bool SKIP>
__device__ __forceinline__ void fast_tile(unsigned char *smem,
                                          const FastArgs &a,
                                          const float (&nx)[NI],
                                          const float (&ny)[NI],
                                          const float (&nz)[NI], int gi0,
                                          int tj, int jb, int cnt,
                                          unsigned skip)
{
  const int grp = G > 1 ? (int)(threadIdx.x & 31u) / RL : 0;
  const float4 *sj = reinterpret_cast<const float4 *>(smem + a.joff) + grp;
  const int tjg = tj + grp;
  unsigned char *cntb = smem + cnt_off<MB, OCT>();
  const float onec = a.onec, M = a.margin;
  unsigned *queue = reinterpret_cast<unsigned *>(smem + a.qoff) +
                    (threadIdx.x >> 5) * QCAP;
  int qn = 0;
  int jj = jb;
  for (;;) {
#pragma unroll UNROLL
    for (; jj + G * NJ <= cnt; jj += G * NJ) {
      float4 pj[NJ];
#pragma unroll
      for (int u = 0; u < NJ; u++) pj[u] = sj[jj + G * u];
      bool okv[NJ], ok = true;
#pragma unroll
      for (int u = 0; u < NJ; u++) {
        okv[u] = fast_point<MB, OCT, MASK, NK, SKIP>(
            smem, cntb, nx, ny, nz, pj[u], onec, M, gi0, tjg + jj + G * u,
            skip);
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
        ok = fast_point<MB, OCT, MASK, NK, SKIP>(smem, cntb, nx, ny, nz,
                                                 sj[jj], onec, M, gi0,
                                                 tjg + jj, skip);
      if (__any_sync(0xffffffffu, !ok)) queue_step(queue, qn, jj, ok ? 0u : 1u);
      jj += G;
    }
    /* a full queue is drained before the next step; every entry is
     * re-examined before the tile's j points are replaced */
    if (full || (jj >= cnt && qn > 0)) {
      drain_queue<MB, OCT, MASK, NK, SKIP>(smem, a, queue, qn, gi0, tj, skip);
      qn = 0;
    }
    if (jj >= cnt && qn == 0) break;
  }
}

/* fast_tile with the smallest NK >= nk, and the slices in skip left out
 * (block-uniform choices; masked tiles skip none) */
template <int MB, int OCT, bool MASK, int K>
__device__ __forceinline__ void fast_tile_nk(unsigned char *smem,
                                             const FastArgs &a,
                                             const float (&nx)[NI],
                                             const float (&ny)[NI],
                                             const float (&nz)[NI], int gi0,
                                             int tj, int jb, int cnt, int nk,
                                             unsigned skip)
{
  if constexpr (K > 1) {
    if (nk < K) {
      fast_tile_nk<MB, OCT, MASK, K - 1>(smem, a, nx, ny, nz, gi0, tj, jb, cnt,
                                         nk, skip);
      return;
    }
  }
  if constexpr (!MASK) {
    if (skip != 0u) {
      fast_tile<MB, OCT, false, K, true>(smem, a, nx, ny, nz, gi0, tj, jb, cnt,
                                         skip);
      return;
    }
  }
  fast_tile<MB, OCT, MASK, K, false>(smem, a, nx, ny, nz, gi0, tj, jb, cnt,
                                     0u);
}

/* Bulk counting. Each slice of an item's i points (the k-th point of
 * every thread: KS consecutive points) and each run of SJ j points of a
 * staged tile get a cap: a centre (their normalised float sum; the origin
 * if it vanishes) and the largest distance of their float vectors from
 * it. When the caps of a slice and a run put every pair in one slot, their
 * pairs are added to that slot in bulk and the tile loop leaves the slice
 * out of the run (the whole run when every slice is). The test is exact: a
 * float vector lies within 1.1e-7 of its double one (each coordinate
 * rounded, |x| <= 1), a distance computed in float is off by a few parts
 * in 1e7 of at most 2, and the test widens the radii and the centres'
 * distance by CAP_SLACK (1e-5, some thirty times that) before it looks up
 * the slots of the least and greatest chord in double: the double chord of
 * every pair, which the fast and exact paths bin, lies strictly inside.
 * The grid sorts points by cell and then position in the cell (the device
 * ordering likewise), so consecutive points are small patches of sky. */
constexpr double CAP_SLACK = 1e-5;

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ float3 cap_centre(const float *s)
{
  const float n2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2];
  if (!(n2 > 0.0f)) return make_float3(0.0f, 0.0f, 0.0f);
  const float r = rsqrtf(n2);
  return make_float3(s[0] * r, s[1] * r, s[2] * r);
}

__device__ __forceinline__ float dist2(float x, float y, float z, float3 c)
{
  const float dx = x - c.x, dy = y - c.y, dz = z - c.z;
  return dx * dx + dy * dy + dz * dz;
}

/* the cap area of shared memory: the caps of the item's NI slices (four
 * floats each, item_caps()), then the runs of slots of tile_caps() */
__device__ __forceinline__ float *cap_words(unsigned char *smem,
                                            const FastArgs &a)
{
  return reinterpret_cast<float *>(smem + a.capoff);
}

__device__ __forceinline__ unsigned *cap_runs(unsigned char *smem,
                                              const FastArgs &a)
{
  return reinterpret_cast<unsigned *>(smem + a.capoff + 16 * NI);
}

/* the caps of the item's NI slices into the cap area, four words each:
 * the sums of the slice's points and the bits of their largest squared
 * distance from its centre; nx... hold the negated points, valid below
 * i_end */
__device__ __forceinline__ void item_caps(unsigned char *smem,
                                          const FastArgs &a,
                                          const float (&nx)[NI],
                                          const float (&ny)[NI],
                                          const float (&nz)[NI], int gi0,
                                          int i_end)
{
  float *ic = cap_words(smem, a);
  if (threadIdx.x < 4 * NI) ic[threadIdx.x] = 0.0f;
  __syncthreads();
  const bool lead = (threadIdx.x & 31u) == 0u;
#pragma unroll
  for (int k = 0; k < NI; k++) {
    const bool in = gi0 + k * KS < i_end;
    const float sx = warp_sum(in ? -nx[k] : 0.0f),
                sy = warp_sum(in ? -ny[k] : 0.0f),
                sz = warp_sum(in ? -nz[k] : 0.0f);
    if (lead) {
      atomicAdd(ic + 4 * k, sx);
      atomicAdd(ic + 4 * k + 1, sy);
      atomicAdd(ic + 4 * k + 2, sz);
    }
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < NI; k++) {
    const bool in = gi0 + k * KS < i_end;
    const float m = warp_max(
        in ? dist2(-nx[k], -ny[k], -nz[k], cap_centre(ic + 4 * k)) : 0.0f);
    /* non-negative floats order as their bits */
    if (lead)
      atomicMax(reinterpret_cast<unsigned *>(ic) + 4 * k + 3,
                __float_as_uint(m));
  }
}

/* the slot of every pair between caps (ci, ri2) and (cj, rj2), radii
 * squared, or -1 when they may fall in more than one */
__device__ __forceinline__ int caps_slot(const FastArgs &a, float3 ci,
                                         float ri2, float3 cj, float rj2)
{
  const double dx = (double)ci.x - (double)cj.x,
               dy = (double)ci.y - (double)cj.y,
               dz = (double)ci.z - (double)cj.z;
  const double s = sqrt(dx * dx + dy * dy + dz * dz);
  const double r = sqrt((double)ri2) + sqrt((double)rj2) + 3.0 * CAP_SLACK;
  const double lo = s - r, hi = s + r;
  const int shi = slot_search(a.upper, a.n_slots, hi * hi);
  /* the least chord in the same slot: at or above its lower edge */
  if (shi == 0) return 0;
  return lo > 0.0 && lo * lo >= __ldg(a.upper + shi - 1) ? shi : -1;
}

/* each run of SJ j points of the staged tile (cnt points) against the
 * slices of the item [i0, i_end): into the cap area, after the slices'
 * caps, a word per run whose bit k says that slice k is counted in bulk
 * (or empty); those pairs counted, into histogram `out` and gbulk. A warp
 * a run, a lane a slice. */
__device__ __forceinline__ void tile_caps(unsigned char *smem,
                                          const FastArgs &a, int cnt, int i0,
                                          int i_end, int out)
{
  constexpr int PER = (SJ + 31) / 32;
  const float *ic = cap_words(smem, a);
  unsigned *runs = cap_runs(smem, a);
  const float4 *sj = reinterpret_cast<const float4 *>(smem + a.joff);
  const int lane = (int)(threadIdx.x & 31u);
  const int nsub = (cnt + SJ - 1) / SJ;
  for (int t = (int)(threadIdx.x >> 5); t < nsub; t += BLOCK / 32) {
    const int j0 = t * SJ, n = min(SJ, cnt - j0);
    float4 p[PER];
    float sum[3] = {0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int u = 0; u < PER; u++) {
      const int j = lane + 32 * u;
      p[u] = j < n ? sj[j0 + j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      sum[0] += p[u].x;
      sum[1] += p[u].y;
      sum[2] += p[u].z;
    }
    sum[0] = warp_sum(sum[0]);
    sum[1] = warp_sum(sum[1]);
    sum[2] = warp_sum(sum[2]);
    const float3 c = cap_centre(sum);
    float m = 0.0f;
#pragma unroll
    for (int u = 0; u < PER; u++)
      if (lane + 32 * u < n) m = fmaxf(m, dist2(p[u].x, p[u].y, p[u].z, c));
    m = warp_max(m);
    bool bulk = false;
    if (lane < NI) {
      const int ni = min(KS, max(0, i_end - (i0 + lane * KS)));
      if (ni == 0) {
        bulk = true;
      } else {
        const float *q = ic + 4 * lane;
        const int s = caps_slot(a, cap_centre(q), q[3], c, m);
        if (s >= 0) {
          bulk = true;
          const unsigned v = (unsigned)ni * (unsigned)n;
          add_slot(smem, a, a.ghist + (size_t)out * (size_t)a.n_slots, s, v);
          atomicAdd(a.gbulk, (unsigned long long)v);
        }
      }
    }
    const unsigned mask = __ballot_sync(0xffffffffu, bulk) & ((1u << NI) - 1u);
    if (lane == 0) runs[t] = mask;
  }
}

template <int MB, int OCT>
__global__ void __launch_bounds__(BLOCK, WT_CUDA_MINB)
    wt_fast_kernel(const FastArgs a)
{
  using S = Shape<MB, OCT>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x;
  int *s_item = reinterpret_cast<int *>(smem + a.itemoff);
  /* Bulk counting backs off where it finds nothing: after CAP_MISSES tiles
   * in a row without pairs in bulk the block passes over the caps of the
   * next `cool` tiles, a wait that doubles up to CAP_WAIT_MAX while the
   * tests keep failing (narrow bins, sparse points) and ends at the first
   * success. Block-uniform: decided from shared memory after a barrier. */
  int cool = 0, wait = 1, misses = 0;

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
  /* the block's counters into histogram `from`: they are flushed when the
   * block moves to an item of another histogram (items of one task come
   * in a row, so a block switches at most once per item) */
  auto turn = [&](int from, int) {
    if (from >= 0) {
      flush_counts<MB, OCT>(smem, a,
                            a.ghist + (size_t)from * (size_t)a.n_slots);
      __syncthreads();
    }
  };
  auto count = [&](const Item &item, int cur_out) {
    const int i_end = item.i1;
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
    bool capped = false;   /* the item's slice caps made */
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
        fast_tile_nk<MB, OCT, true, NI>(smem, a, nx, ny, nz, gi0, tj, 0, cnt,
                                        nk, 0u);
        continue;
      }
      if (cool > 0) {
        cool--;
        fast_tile_nk<MB, OCT, false, NI>(smem, a, nx, ny, nz, gi0, tj, 0, cnt,
                                         nk, 0u);
        excess += n_missing * (unsigned)cnt;
        continue;
      }
      /* the pairs of a slice and a run of SJ j points in one slot are
       * counted in bulk; the others pair by pair, a stretch of runs that
       * leave out the same slices at a time */
      if (!capped) {
        item_caps(smem, a, nx, ny, nz, gi0, i_end);
        capped = true;
        __syncthreads();
      }
      tile_caps(smem, a, cnt, item.i0, i_end, cur_out);
      __syncthreads();
      const unsigned *runs = cap_runs(smem, a);
      const unsigned all = (1u << NI) - 1u, live = (1u << nk) - 1u;
      bool hit = false;
      for (int jb = 0; jb < cnt;) {
        const unsigned m = runs[jb / SJ];
        int je = jb + SJ;
        while (je < cnt && runs[je / SJ] == m) je += SJ;
        if (je > cnt) je = cnt;
        hit |= (m & live) != 0u;
        if (m != all) {
          fast_tile_nk<MB, OCT, false, NI>(smem, a, nx, ny, nz, gi0, tj, jb,
                                           je, nk, m & live);
          /* the missing i points are in the last slice */
          if (!((m >> (nk - 1)) & 1u))
            excess += n_missing * (unsigned)(je - jb);
        }
        jb = je;
      }
      if (hit) {
        wait = 1;
        misses = 0;
      } else if (CAP_WAIT_MAX > 0 && ++misses >= CAP_MISSES) {
        cool = wait;
        wait = min(2 * wait, CAP_WAIT_MAX);
      }
    }
    if (excess != 0 && tid == 0) {
      float d;
      unsigned addr = fast_cell<MB, OCT>(smem, a.onec, d);
      atomicAdd(cnt_word(smem, addr), 0u - excess);
    }
  };
  const int last =
      for_each_item(a.items, a.n_items, a.counter, s_item,
                    0xffffffffull - (unsigned long long)BI * BJ, turn, count);
  __syncthreads();
  if (last >= 0)
    flush_counts<MB, OCT>(smem, a,
                          a.ghist + (size_t)last * (size_t)a.n_slots);
}

/* the fast kernel of table shape kCfgs[cfg] (plan.h's Plan::cfg) */
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

}  // namespace

#endif
