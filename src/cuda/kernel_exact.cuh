/* The exact kernel: every pair in double with the CPU engine's lookup, and
 * per-slot weight sums and angle sums (mean_theta).
 * Part of the CUDA engine: included by entry.cu, which makes the engine
 * one nvcc translation unit (see ARCHITECTURE.md). */
#ifndef WT_CUDA_KERNEL_EXACT_CUH
#define WT_CUDA_KERNEL_EXACT_CUH

namespace {

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

/* the R-column angle sums of the exact kernel into the angle sums gt of
 * the current histogram, zeroed */
__device__ inline void flush_angles(unsigned char *smem, const ExactArgs &a,
                                    const AngleArgs &t, double *gt)
{
  const int R = a.rcols;
  double *th = reinterpret_cast<double *>(smem + t.toff);
  for (int s = threadIdx.x; s < a.n_slots; s += blockDim.x) {
    double tsum = 0.0;
    for (int c = 0; c < R; c++) {
      tsum += th[s * R + c];
      th[s * R + c] = 0.0;
    }
    if (tsum != 0.0) atomicAdd(gt + s, tsum);
  }
}

/* every pair in double with the CPU engine's lookup; with weights (W,
 * a.gw), also the sums of w_i w_j per slot, in double; with angles (T,
 * ta.gt), the sums of the pairs' angles (times w_i w_j when W) per slot;
 * with PIP (P, W too), each w_i w_j times the pair's factor (pip_factor()).
 * Without angles the code is that of the kernel before mean_theta, the
 * angle sums being a branch of their own. */
template <bool W, bool T, bool P>
__global__ void __launch_bounds__(EBLOCK) wt_exact_kernel(const ExactArgs a,
                                                       const AngleArgs ta,
                                                       const PipArgs pa)
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
      if (T) reinterpret_cast<double *>(smem + ta.toff)[t] = 0.0;
    }
  }
  unsigned long long *gh = a.ghist;
  double *gw = a.gw;
  double *gt = ta.gt;
  /* R > 0: the block's R-column counters into histogram `from`; gh, gw
   * (and gt) then point at histogram `to` */
  auto turn = [&](int from, int to) {
    if (R > 0 && from >= 0) {
      flush_hist(smem, a, gh, W ? gw : nullptr);
      if (T) flush_angles(smem, a, ta, gt);
      __syncthreads();
    }
    gh = a.ghist + (size_t)to * (size_t)a.n_slots;
    if (W) gw = a.gw + (size_t)to * (size_t)a.n_slots;
    if (T) gt = ta.gt + (size_t)to * (size_t)a.n_slots;
  };
  auto count = [&](const Item &item, int) {
    const int i_end = item.i1;
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
      if (T) {
        /* as the weighted runs below, with the run's angle sum (of
         * w_i w_j theta when W) beside its count and weight sum */
        double *th = reinterpret_cast<double *>(smem + ta.toff);
        int run_s = -1;
        unsigned run_n = 0;
        double run_w = 0.0, run_t = 0.0;
        auto add_run = [&]() {
          if (R > 0) {
            atomicAdd(h + run_s * R + col, run_n);
            if (W) atomicAdd(wh + run_s * R + col, run_w);
            atomicAdd(th + run_s * R + col, run_t);
          } else {
            atomicAdd(gh + run_s, (unsigned long long)run_n);
            if (W) atomicAdd(gw + run_s, run_w);
            atomicAdd(gt + run_s, run_t);
          }
        };
        for (int jj = 0; jj < cnt; jj++) {
          const int gj = tj + jj;
          if (item.diag && gj <= gi) continue;
          const DPt pj = sj[jj];
          const double d2 = exact_d2(pi, pj);
          const int s = cpu_slot(a, d2);
          if (s != run_s) {
            if (run_n) add_run();
            run_s = s;
            run_n = 0;
            run_w = 0.0;
            run_t = 0.0;
          }
          run_n++;
          if (W) {
            double p = __dmul_rn(pi.w, pj.w);
            if (P) p = __dmul_rn(p, pip_factor(pa, gi, gj, d2));
            run_w = __dadd_rn(run_w, p);
            run_t = __dadd_rn(run_t, __dmul_rn(p, exact_angle(d2)));
          } else {
            run_t = __dadd_rn(run_t, exact_angle(d2));
          }
        }
        if (run_n) add_run();
      } else if (W) {
        /* runs of j points in one slot (the points are in Hilbert order,
         * so neighbours in j often share the slot) are summed in
         * registers: one pair of atomics per run (the double atomic is a
         * compare-and-swap loop in shared memory) */
        int run_s = -1;
        unsigned run_n = 0;
        double run_w = 0.0;
        /* the run so far into the block's counters (R > 0) or histogram */
        auto add_run = [&]() {
          if (R > 0) {
            atomicAdd(h + run_s * R + col, run_n);
            atomicAdd(wh + run_s * R + col, run_w);
          } else {
            atomicAdd(gh + run_s, (unsigned long long)run_n);
            atomicAdd(gw + run_s, run_w);
          }
        };
        for (int jj = 0; jj < cnt; jj++) {
          const int gj = tj + jj;
          if (item.diag && gj <= gi) continue;
          const DPt pj = sj[jj];
          const double d2 = exact_d2(pi, pj);
          const int s = cpu_slot(a, d2);
          if (s != run_s) {
            if (run_n) add_run();
            run_s = s;
            run_n = 0;
            run_w = 0.0;
          }
          run_n++;
          double p = __dmul_rn(pi.w, pj.w);
          if (P) p = __dmul_rn(p, pip_factor(pa, gi, gj, d2));
          run_w = __dadd_rn(run_w, p);
        }
        if (run_n) add_run();
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
  };
  const int last =
      for_each_item(a.items, a.n_items, a.counter, s_item,
                    0xffffffffull - (unsigned long long)EBLOCK * EBJ, turn,
                    count);
  if (R > 0 && last >= 0) {
    __syncthreads();
    flush_hist(smem, a, gh, W ? gw : nullptr);
    if (T) flush_angles(smem, a, ta, gt);
  }
}

}  // namespace

#endif
