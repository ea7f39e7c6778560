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
