/* The weighted kernel: counts and sums of w_i w_j (times the PIP factor)
 * per slot, each pair's slot decided in float by the fast kernel's table
 * and margin, the pairs too close to an edge redone in double.
 * Part of the CUDA engine: included by entry.cu, which makes the engine
 * one nvcc translation unit (see ARCHITECTURE.md). */
#ifndef WT_CUDA_KERNEL_WEIGHTED_CUH
#define WT_CUDA_KERNEL_WEIGHTED_CUH

namespace {

/* Why the float decision is exact. q = fl(fl(fl(1 + c - x_i x_j) - y_i y_j)
 * - z_i z_j) (pair_q, the fast kernel's three FMAs on the same float
 * coordinates) differs from d2 / 2 + c by less than the margin M of
 * fast_margin() (plan_scan.cxx: the coordinates' rounding, the FMA
 * roundings, non-unit vectors, the threshold's rounding), and the table is
 * the fast kernel's (build_fast_table, plan_choice.cxx): each cell of q
 * holds the float threshold of the one edge that can matter in it (+inf:
 * none, NaN: several, or a cell near q = 2). A pair with |q - threshold| >=
 * M is therefore on the same side of that edge as its exact double d2, and
 * its slot is the cell's lowest slot, plus one at or above the threshold;
 * any other pair (NaN included) takes the exact d2 of wt.h and the edges
 * (wf_exact_slot), as the fast kernel's resolve_pair does. The counts are
 * those of the double decision, bin for bin; the weights are summed in
 * double (see WState), within about 1e-15 of the CPU engine's sums. A
 * pair's slot equals the CPU engine's wherever the fast kernel's does:
 * the same edges, the same double d2, the same comparison. */

/* the slot of pair (gi, gj) from its exact double d2: the cell's one edge
 * (lowest slot lo, finite threshold thr), or all of them (NaN) */
__device__ __forceinline__ int wf_exact_slot(const ExactArgs &a, int gi,
                                             int gj, float thr, int lo)
{
  const double d2 = exact_d2(load_dpt(a.dI + gi), load_dpt(a.dJ + gj));
  if (thr == thr) return lo + (d2 >= __ldg(a.upper + lo) ? 1 : 0);
  return slot_search(a.upper, a.n_slots, d2);
}

/* the thread's i points (WNI of them, WBLOCK apart) and their open runs:
 * run_s[k] the slot of point k's current run of j points, run_n its
 * pairs, run_w the sum of their pair weights over w_i (w_j, or w_j times
 * the PIP factor), added times w_i to the block's counters when the slot
 * changes (points are in Hilbert order, so neighbouring j often
 * share a slot: one pair of shared atomics per run). w_i (w_j f) and
 * (w_i w_j) f differ by rounding only: the sums agree with the CPU
 * engine's to about 1e-15 relative, as sums in another order do. */
template <int NW>
struct WState {
  float nx[WNI], ny[WNI], nz[WNI];
  double w[WNI];
  unsigned b[WNI][NW > 0 ? NW : 1];
  int jmin[WNI];                /* pairs with gj >= jmin[k] only (masked) */
  int run_s[WNI];
  unsigned run_n[WNI];
  double run_w[WNI];
};

/* a run of n pairs in slot s with weight sum w_i * rw into the block's
 * counters: the count into the R-column counters (a shared atomic whose
 * result no one waits for); the weight sum into the thread's own column of
 * per-thread sums (PRIV: n_slots x WBLOCK doubles at a.woff, a plain read
 * and write, no atomic), or into the R-column sums (a double atomic, a
 * compare-and-swap loop in shared memory) */
template <bool PRIV>
__device__ __forceinline__ void wf_add_run(unsigned char *smem,
                                           const ExactArgs &a, int col, int s,
                                           unsigned n, double wi, double rw)
{
  const int R = a.rcols;
  atomicAdd(reinterpret_cast<unsigned *>(smem) + s * R + col, n);
  if (PRIV) {
    double *p = reinterpret_cast<double *>(smem + a.woff) + s * WBLOCK +
                threadIdx.x;
    *p = __fma_rn(wi, rw, *p);
  } else {
    atomicAdd(reinterpret_cast<double *>(smem + a.woff) + s * R + col,
              __dmul_rn(wi, rw));
  }
}

/* the per-thread weight sums (PRIV) into the weight sums gw of the current
 * histogram, zeroed: each warp sums whole slots, lane by lane, then across
 * the warp */
__device__ inline void wf_flush_priv(unsigned char *smem, const ExactArgs &a,
                                     double *gw)
{
  double *pw = reinterpret_cast<double *>(smem + a.woff);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int s = warp; s < a.n_slots; s += WBLOCK / 32) {
    double v = 0.0;
    for (int t = lane; t < WBLOCK; t += 32) {
      v = __dadd_rn(v, pw[s * WBLOCK + t]);
      pw[s * WBLOCK + t] = 0.0;
    }
    for (int o = 16; o > 0; o >>= 1)
      v = __dadd_rn(v, __shfl_xor_sync(0xffffffffu, v, o));
    if (lane == 0 && v != 0.0) atomicAdd(gw + s, v);
  }
}

/* one staged tile of cnt j points (from tj) against the thread's first NK
 * points (an item of fewer than BI points leaves the others out); MASK:
 * only pairs with gj >= jmin[k] (diagonal items, short items) */
template <int NW, bool PRIV, bool MASK, int NK>
__device__ __forceinline__ void wf_tile(unsigned char *smem,
                                        const ExactArgs &a,
                                        const WFastArgs &f, WState<NW> &st,
                                        int gi0, int tj, int cnt, int col)
{
  const float4 *sjf = reinterpret_cast<const float4 *>(smem + f.jfoff);
  const double *sjw = reinterpret_cast<const double *>(smem + f.jwoff);
  const unsigned *sjb = reinterpret_cast<const unsigned *>(smem + f.jboff);
  const double *by = reinterpret_cast<const double *>(smem + f.byoff);
  const float onec = f.onec, M = f.margin;
  const unsigned tb = f.tbase;
  const int sh = f.shift;
#pragma unroll 2
  for (int jj = 0; jj < cnt; jj++) {
    const float4 pj = sjf[jj];
    const double wj = sjw[jj];
    unsigned bj[NW > 0 ? NW : 1];
#pragma unroll
    for (int u = 0; u < NW; u++) bj[u] = sjb[u * WBJ + jj];
    const int gj = tj + jj;
#pragma unroll
    for (int k = 0; k < NK; k++) {
      if (MASK && gj < st.jmin[k]) continue;
      const float q = pair_q(st.nx[k], st.ny[k], st.nz[k], pj, onec);
      const unsigned key8 = (__float_as_uint(q) >> sh) & ~7u;
      const float2 e = *reinterpret_cast<const float2 *>(smem + (tb + key8));
      const float d = __fsub_rn(q, e.x);
      /* the cell's lowest slot, plus one at or above the threshold */
      int s = __float_as_int(e.y) + 1 + (__float_as_int(d) >> 31);
      if (!(fabsf(d) >= M))
        s = wf_exact_slot(a, gi0 + k * WBLOCK, gj, e.x, __float_as_int(e.y));
      if (s != st.run_s[k]) {
        if (st.run_n[k])
          wf_add_run<PRIV>(smem, a, col, st.run_s[k], st.run_n[k], st.w[k],
                           st.run_w[k]);
        st.run_s[k] = s;
        st.run_n[k] = 0;
        st.run_w[k] = 0.0;
      }
      st.run_n[k]++;
      if (NW > 0) {
        int c = 0;
#pragma unroll
        for (int u = 0; u < NW; u++) c += __popc(st.b[k][u] & bj[u]);
        st.run_w[k] = __fma_rn(wj, by[c], st.run_w[k]);
      } else {
        st.run_w[k] = __dadd_rn(st.run_w[k], wj);
      }
    }
  }
}

/* wf_tile with the smallest NK >= nk (a block-uniform choice) */
template <int NW, bool PRIV, bool MASK, int K>
__device__ __forceinline__ void wf_tile_nk(unsigned char *smem,
                                           const ExactArgs &a,
                                           const WFastArgs &f,
                                           WState<NW> &st, int gi0, int tj,
                                           int cnt, int col, int nk)
{
  if constexpr (K > 1) {
    if (nk < K) {
      wf_tile_nk<NW, PRIV, MASK, K - 1>(smem, a, f, st, gi0, tj, cnt, col,
                                        nk);
      return;
    }
  }
  wf_tile<NW, PRIV, MASK, K>(smem, a, f, st, gi0, tj, cnt, col);
}

/* the block's copy of the table ({threshold, lowest slot} a cell) and, with
 * words (NW > 0), of the PIP factors by popcount (32 NW + 1: the job's,
 * then zeros) in shared memory */
template <int NW>
__device__ __forceinline__ void wf_stage_tables(unsigned char *smem,
                                                const WFastArgs &f,
                                                const PipArgs &pa)
{
  float2 *tab = reinterpret_cast<float2 *>(smem + f.taboff);
  for (int t = threadIdx.x; t < f.n_cells; t += WBLOCK)
    tab[t] = __ldg(f.tab + t);
  if (NW > 0) {
    double *by = reinterpret_cast<double *>(smem + f.byoff);
    const int nb = 32 * pa.n_words + 1;
    for (int t = threadIdx.x; t < 32 * NW + 1; t += WBLOCK)
      by[t] = t < nb ? __ldg(pa.by + t) : 0.0;
  }
}

/* NW: PIP words held per point (0: individual weights only; the job's
 * words, up to NW, the rest zero); the PIP factor is by[popcount] (a job
 * with angular weights takes the exact kernel) */
template <int NW, bool PRIV>
__global__ void __launch_bounds__(WBLOCK) wt_weighted_kernel(
    const ExactArgs a, const WFastArgs f, const PipArgs pa)
{
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x;
  int *s_item = reinterpret_cast<int *>(smem + a.itemoff);
  const int R = a.rcols;   /* > 0: the plan only takes this kernel so */
  const int col = (tid & 31) & (R - 1);
  {
    unsigned *h = reinterpret_cast<unsigned *>(smem);
    double *wh = reinterpret_cast<double *>(smem + a.woff);
    for (int t = tid; t < a.n_slots * R; t += WBLOCK) h[t] = 0u;
    for (int t = tid; t < a.n_slots * (PRIV ? WBLOCK : R); t += WBLOCK)
      wh[t] = 0.0;
    wf_stage_tables<NW>(smem, f, pa);
  }
  unsigned long long *gh = a.ghist;
  double *gw = a.gw;
  auto turn = [&](int from, int to) {
    if (from >= 0) {
      flush_hist(smem, a, gh, PRIV ? nullptr : gw);
      if (PRIV) wf_flush_priv(smem, a, gw);
      __syncthreads();
    }
    gh = a.ghist + (size_t)to * (size_t)a.n_slots;
    gw = a.gw + (size_t)to * (size_t)a.n_slots;
  };
  auto count = [&](const Item &item, int) {
    const int i_end = item.i1;
    const int gi0 = item.i0 + tid;
    WState<NW> st;
#pragma unroll
    for (int k = 0; k < WNI; k++) {
      const int gi = gi0 + k * WBLOCK;
      st.run_s[k] = -1;
      st.run_n[k] = 0u;
      st.run_w[k] = 0.0;
      if (gi < i_end) {
        const float4 p = __ldg(f.fI + gi);
        st.nx[k] = -p.x;
        st.ny[k] = -p.y;
        st.nz[k] = -p.z;
        st.w[k] = __ldg(&a.dI[gi].w);
#pragma unroll
        for (int u = 0; u < NW; u++)
          st.b[k][u] = u < pa.n_words
                           ? __ldg(pa.bI + (long long)u * pa.stride + gi)
                           : 0u;
        st.jmin[k] = item.diag ? gi + 1 : INT_MIN;
      } else {         /* no point: no pair */
        st.nx[k] = 0.0f;
        st.ny[k] = 0.0f;
        st.nz[k] = 0.0f;
        st.w[k] = 0.0;
#pragma unroll
        for (int u = 0; u < NW; u++) st.b[k][u] = 0u;
        st.jmin[k] = INT_MAX;
      }
    }
    /* i points per thread this item needs (short items: task ends) */
    const int nk = (i_end - item.i0 + WBLOCK - 1) / WBLOCK;
    const bool full = i_end - item.i0 == nk * WBLOCK;
    for (int tj = item.j0; tj < item.j1; tj += WBJ) {
      const int cnt = min(WBJ, item.j1 - tj);
      __syncthreads();
      {
        float4 *sjf = reinterpret_cast<float4 *>(smem + f.jfoff);
        double *sjw = reinterpret_cast<double *>(smem + f.jwoff);
        unsigned *sjb = reinterpret_cast<unsigned *>(smem + f.jboff);
        for (int t = tid; t < cnt; t += WBLOCK) {
          sjf[t] = __ldg(f.fJ + tj + t);
          sjw[t] = __ldg(&a.dJ[tj + t].w);
#pragma unroll
          for (int u = 0; u < NW; u++)
            sjb[u * WBJ + t] =
                u < pa.n_words
                    ? __ldg(pa.bJ + (long long)u * pa.stride + tj + t)
                    : 0u;
        }
      }
      __syncthreads();
      if (!full || (item.diag && tj <= i_end - 1))
        wf_tile_nk<NW, PRIV, true, WNI>(smem, a, f, st, gi0, tj, cnt, col, nk);
      else
        wf_tile_nk<NW, PRIV, false, WNI>(smem, a, f, st, gi0, tj, cnt, col, nk);
    }
#pragma unroll
    for (int k = 0; k < WNI; k++)
      if (st.run_n[k])
        wf_add_run<PRIV>(smem, a, col, st.run_s[k], st.run_n[k], st.w[k],
                         st.run_w[k]);
  };
  const int last =
      for_each_item(a.items, a.n_items, a.counter, s_item,
                    0xffffffffull - (unsigned long long)BI * BJ, turn, count);
  if (last >= 0) {
    __syncthreads();
    flush_hist(smem, a, gh, PRIV ? nullptr : gw);
    if (PRIV) wf_flush_priv(smem, a, gw);
  }
}

/* PIP counts without individual weights (Plan::wcount): every pair's
 * weight is by[c] for its popcount c, so the block counts pairs per slot
 * and popcount (n_slots x K 32-bit counters, K = 32 NW + 1) and turns them
 * into counts and weight sums (sum over c of n[s][c] by[c], in double)
 * when it flushes: one shared atomic a pair, as the fast kernel's cell
 * counters, and no runs (whose divergent ends bound the weighted kernel).
 * The counts are those of the weighted kernel (the same float decision and
 * exact path); the weight sums are whole counts times the factors, summed
 * in another order, within about 1e-15 of the CPU engine's. */
template <int NW>
__device__ inline void wc_flush(unsigned char *smem, const ExactArgs &a,
                                const WFastArgs &f, unsigned long long *gh,
                                double *gw)
{
  constexpr int K = 32 * NW + 1;
  unsigned *h = reinterpret_cast<unsigned *>(smem);
  const double *by = reinterpret_cast<const double *>(smem + f.byoff);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int s = warp; s < a.n_slots; s += WBLOCK / 32) {
    unsigned long long n = 0ull;
    double w = 0.0;
    for (int c = lane; c < K; c += 32) {
      /* the block's pairs since the last flush: fewer than 2^32 */
      const unsigned v = h[s * K + c];
      h[s * K + c] = 0u;
      n += v;
      w = __fma_rn((double)v, by[c], w);
    }
    for (int o = 16; o > 0; o >>= 1) {
      n += __shfl_xor_sync(0xffffffffu, n, o);
      w = __dadd_rn(w, __shfl_xor_sync(0xffffffffu, w, o));
    }
    if (lane == 0 && n) {
      atomicAdd(gh + s, n);
      atomicAdd(gw + s, w);
    }
  }
}

/* the count kernel's i points: WNI a thread, WBLOCK apart, as WState
 * without runs or weights; a point past the item's end has no pairs */
template <int NW>
struct CState {
  float nx[WNI], ny[WNI], nz[WNI];
  unsigned b[WNI][NW];
};

/* one staged tile of cnt j points against the thread's first NK points;
 * MASK: only pairs with gi < i_end and, in a diagonal item, gj > gi. The
 * tile holds each j point's first word in its float4's w and the others
 * in sjb */
template <int NW, bool MASK, int NK>
__device__ __forceinline__ void wc_tile(unsigned char *smem,
                                        const ExactArgs &a,
                                        const WFastArgs &f,
                                        const CState<NW> &st, int gi0,
                                        int i_end, bool diag, int tj,
                                        int cnt, unsigned *hc)
{
  constexpr int K = 32 * NW + 1;
  const float4 *sjf = reinterpret_cast<const float4 *>(smem + f.jfoff);
  const unsigned *sjb = reinterpret_cast<const unsigned *>(smem + f.jboff);
  const float onec = f.onec, M = f.margin;
  const unsigned tb = f.tbase;
  const int sh = f.shift;
#pragma unroll 2
  for (int jj = 0; jj < cnt; jj++) {
    const float4 pj = sjf[jj];
    unsigned bj[NW];
    bj[0] = __float_as_uint(pj.w);
#pragma unroll
    for (int u = 1; u < NW; u++) bj[u] = sjb[(u - 1) * WBJ + jj];
    const int gj = tj + jj;
#pragma unroll
    for (int k = 0; k < NK; k++) {
      if (MASK) {
        const int gi = gi0 + k * WBLOCK;
        if (gi >= i_end || (diag && gj <= gi)) continue;
      }
      const float q = pair_q(st.nx[k], st.ny[k], st.nz[k], pj, onec);
      const unsigned key8 = (__float_as_uint(q) >> sh) & ~7u;
      const float2 e = *reinterpret_cast<const float2 *>(smem + (tb + key8));
      const float d = __fsub_rn(q, e.x);
      int s = __float_as_int(e.y) + 1 + (__float_as_int(d) >> 31);
      if (!(fabsf(d) >= M))
        s = wf_exact_slot(a, gi0 + k * WBLOCK, gj, e.x, __float_as_int(e.y));
      int c = 0;
#pragma unroll
      for (int u = 0; u < NW; u++) c += __popc(st.b[k][u] & bj[u]);
      atomicAdd(hc + s * K + c, 1u);
    }
  }
}

template <int NW, bool MASK, int K>
__device__ __forceinline__ void wc_tile_nk(unsigned char *smem,
                                           const ExactArgs &a,
                                           const WFastArgs &f,
                                           const CState<NW> &st, int gi0,
                                           int i_end, bool diag, int tj,
                                           int cnt, unsigned *hc, int nk)
{
  if constexpr (K > 1) {
    if (nk < K) {
      wc_tile_nk<NW, MASK, K - 1>(smem, a, f, st, gi0, i_end, diag, tj, cnt,
                                  hc, nk);
      return;
    }
  }
  wc_tile<NW, MASK, K>(smem, a, f, st, gi0, i_end, diag, tj, cnt, hc);
}

template <int NW>
__global__ void __launch_bounds__(WBLOCK) wt_pipcount_kernel(
    const ExactArgs a, const WFastArgs f, const PipArgs pa)
{
  constexpr int K = 32 * NW + 1;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x;
  int *s_item = reinterpret_cast<int *>(smem + a.itemoff);
  unsigned *hc = reinterpret_cast<unsigned *>(smem);
  for (int t = tid; t < a.n_slots * K; t += WBLOCK) hc[t] = 0u;
  wf_stage_tables<NW>(smem, f, pa);
  unsigned long long *gh = a.ghist;
  double *gw = a.gw;
  auto turn = [&](int from, int to) {
    if (from >= 0) {
      __syncthreads();
      wc_flush<NW>(smem, a, f, gh, gw);
      __syncthreads();
    }
    gh = a.ghist + (size_t)to * (size_t)a.n_slots;
    gw = a.gw + (size_t)to * (size_t)a.n_slots;
  };
  auto count = [&](const Item &item, int) {
    const int i_end = item.i1;
    const int gi0 = item.i0 + tid;
    CState<NW> st;
#pragma unroll
    for (int k = 0; k < WNI; k++) {
      const int gi = gi0 + k * WBLOCK;
      const bool in = gi < i_end;
      const float4 p = in ? __ldg(f.fI + gi) : make_float4(0.f, 0.f, 0.f, 0.f);
      st.nx[k] = -p.x;
      st.ny[k] = -p.y;
      st.nz[k] = -p.z;
#pragma unroll
      for (int u = 0; u < NW; u++)
        st.b[k][u] = in && u < pa.n_words
                         ? __ldg(pa.bI + (long long)u * pa.stride + gi)
                         : 0u;
    }
    const int nk = (i_end - item.i0 + WBLOCK - 1) / WBLOCK;
    const bool full = i_end - item.i0 == nk * WBLOCK;
    const bool diag = item.diag != 0;
    for (int tj = item.j0; tj < item.j1; tj += WBJ) {
      const int cnt = min(WBJ, item.j1 - tj);
      __syncthreads();
      {
        float4 *sjf = reinterpret_cast<float4 *>(smem + f.jfoff);
        unsigned *sjb = reinterpret_cast<unsigned *>(smem + f.jboff);
        for (int t = tid; t < cnt; t += WBLOCK) {
          float4 p = __ldg(f.fJ + tj + t);
          p.w = __uint_as_float(__ldg(pa.bJ + tj + t));
          sjf[t] = p;
#pragma unroll
          for (int u = 1; u < NW; u++)
            sjb[(u - 1) * WBJ + t] =
                u < pa.n_words
                    ? __ldg(pa.bJ + (long long)u * pa.stride + tj + t)
                    : 0u;
        }
      }
      __syncthreads();
      if (!full || (diag && tj <= i_end - 1))
        wc_tile_nk<NW, true, WNI>(smem, a, f, st, gi0, i_end, diag, tj, cnt,
                                  hc, nk);
      else
        wc_tile_nk<NW, false, WNI>(smem, a, f, st, gi0, i_end, diag, tj, cnt,
                                   hc, nk);
    }
  };
  const int last =
      for_each_item(a.items, a.n_items, a.counter, s_item,
                    0xffffffffull - (unsigned long long)BI * BJ, turn, count);
  if (last >= 0) {
    __syncthreads();
    wc_flush<NW>(smem, a, f, gh, gw);
  }
}

/* the weighted kernel for NW words a point (plan.h's Plan::wwords), with
 * per-thread weight sums or not (Plan::wpriv), or the PIP count kernel
 * (Plan::wcount) */
const void *weighted_kernel_ptr(int nw, bool priv, bool pcount)
{
  if (pcount)
    return nw <= 2 ? (const void *)wt_pipcount_kernel<2>
                   : (const void *)wt_pipcount_kernel<WMAXW>;
  if (priv) {
    switch (nw) {
      case 0: return (const void *)wt_weighted_kernel<0, true>;
      case 2: return (const void *)wt_weighted_kernel<2, true>;
      default: return (const void *)wt_weighted_kernel<WMAXW, true>;
    }
  }
  switch (nw) {
    case 0: return (const void *)wt_weighted_kernel<0, false>;
    case 2: return (const void *)wt_weighted_kernel<2, false>;
    default: return (const void *)wt_weighted_kernel<WMAXW, false>;
  }
}

}  // namespace

#endif
