/* The CUDA engine's host planning, part 2 (see plan.h): the choice of
 * kernel and fast table for the devices' shared memory, the table itself,
 * and the cache of recent plans; with the two checks entry.cu makes of
 * this side (same_shape) and its message helper (set_msg). Built by the
 * C++ compiler in every build. No CUDA, no R API, no printing. */
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include "plan.h"

namespace wt_cuda {

void set_msg(char *dst, size_t len, const std::string &s)
{
  if (!dst || len == 0) return;
  size_t n = s.size() < len - 1 ? s.size() : len - 1;
  memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

bool same_shape(const ShapeKey &k)
{
  return k.ni == kShape.ni && k.nj == kShape.nj && k.block == kShape.block &&
         k.g == kShape.g && k.unroll == kShape.unroll &&
         k.qcap == kShape.qcap && k.bj == kShape.bj &&
         k.eblock == kShape.eblock && k.ebj == kShape.ebj &&
         k.sj == kShape.sj && k.chunk == kShape.chunk;
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
  ft.cmap.assign(nt, CellSlots{0, 0});
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
    float e;
    /* edges [0, lo) lie below the cell: its lowest possible slot is lo */
    ft.cmap[ci] = CellSlots{lo, nrel == 1 ? lo + 1 : lo};
    if (B > 2.0 - 2.0 * c - 2e-5) {
      /* an FMA may have rounded above 2, with up to 3 u more error: the
       * cell stays clean only if no edge is near it even then */
      int a = lo, b = hi;
      while (a > 0 && thr[a - 1] > A - M2 - 6.0 * u) a--;
      while (b < n_edges && thr[b] <= B + M2 + 6.0 * u) b++;
      e = b - a == 0 ? INFINITY : NAN;
    } else if (nrel == 0) {
      e = INFINITY;
    } else if (nrel == 1) {
      e = (float)thr[lo];
    } else {
      e = NAN;
    }
    if (e != e) {   /* q width these cells send to the exact path */
      double top = B < 2.0 + c ? B : 2.0 + c;
      if (top > A) ft.multi += top - A;
    }
    ft.thr[ci] = e;
  }
  return true;
}

static size_t round16(size_t x) { return (x + 15) & ~(size_t)15; }

/* The weighted kernel's plan (kernel_weighted.cuh): the fast kernel's
 * table (shapes of 16 octaves, whose cells the kernel finds with a
 * run-time shift) as {threshold, lowest slot} per cell in shared memory,
 * R columns of 32-bit counters, the weight sums, the PIP factors and a j
 * tile of WBJ points (floats, weights, words). PIP counts keep their
 * weight sums per thread and slot where three blocks fit a multiprocessor
 * (no atomic a run: 10^5 auto 7.3 -> 7.1 ms, 10^6 auto 33.5 -> 29.2 ms on
 * an H100), other counts in R columns (per-thread sums were 4% slower
 * there: bench/kernel/kernel-notes.md, "Weighted kernel"). The shape whose
 * cells hold several edges over the least q width; false when none fits or
 * nearly every pair would take the exact path. */
static bool make_weighted_plan(const wt_bins *bins, const Analysis &an,
                               size_t smem_sm, size_t smem_block, int nw,
                               bool pcount, Plan &plan)
{
  const int n_slots = an.n_slots;
  double best = -1.0;
  for (int cfg = 0; cfg < kNumCfgs; cfg++) {
    if (kCfgs[cfg].oct != 16) continue;
    FastTable ft;
    if (!build_fast_table(bins, an, cfg, ft) || ft.multi > 0.5) continue;
    const size_t nt = ft.thr.size();
    /* the PIP count kernel (wt_pipcount_kernel): one column of n_slots x K
     * counters, the table, the factors and a j tile of floats and words,
     * where three blocks fit a multiprocessor. More columns (lane & (R -
     * 1)) would spread lanes that hit one counter, but they cost blocks a
     * multiprocessor more than they save: 10^5 auto, 20 bins, H100, kernel
     * 2.16x plain with 1 column, 2.23x with 2, 2.59x with 4, 3.88x with 8
     * (bench/kernel/kernel-notes.md, "PIP count kernel") */
    if (pcount && nw > 0) {
      const size_t K = 32 * (size_t)nw + 1;
      const size_t cb = round16((size_t)n_slots * K * 4);
      const size_t tb = nt * 8;
      const size_t bb = round16(K * 8);
      /* the first word rides in the float4's w */
      const size_t jb = (size_t)WBJ * (16 + 4 * ((size_t)nw - 1));
      const size_t smem = cb + tb + bb + jb + 16;
      const double score = 1.0 / (1.0 + 1000.0 * ft.multi) - 0.01 * cfg;
      if (smem <= smem_block && smem_sm / (smem + 1024) >= 3u &&
          score > best) {
        best = score;
        plan.wfast = true;
        plan.wcount = true;
        plan.wpriv = false;
        plan.cfg = cfg;
        plan.rcols = 1;
        plan.smem = smem;
        plan.hoff = 0;
        plan.woff = (unsigned)cb;   /* unused */
        plan.taboff = (unsigned)cb;
        plan.byoff = plan.taboff + (unsigned)tb;
        plan.joff = plan.byoff + (unsigned)bb;
        plan.jwoff = plan.joff + (unsigned)WBJ * 16;   /* no weights */
        plan.jboff = plan.jwoff;
        plan.itemoff = (unsigned)(smem - 16);
        plan.ft = ft;
      }
      continue;
    }
    for (int priv = nw > 0 ? 1 : 0; priv >= 0; priv--)
    for (int R = 8; R >= 1; R /= 2) {
      const size_t hb = round16((size_t)n_slots * R * 4);
      const size_t wb = round16((size_t)n_slots * (priv ? WBLOCK : R) * 8);
      const size_t tb = nt * 8;
      const size_t bb = nw > 0 ? round16((size_t)(32 * nw + 1) * 8) : 0;
      const size_t jb = (size_t)WBJ * (16 + 8 + 4 * (size_t)nw);
      const size_t smem = hb + wb + tb + bb + jb + 16;
      if (smem > smem_block || smem + 1024 > smem_sm) continue;
      const size_t per_sm = smem_sm / (smem + 1024);
      if (per_sm < (priv ? 3u : 4u)) continue;
      const double occ = (priv ? 2.0 : 1.0) * (per_sm >= 4 ? 1.0 : 0.8);
      const double score = occ / (1.0 + 1000.0 * ft.multi) - 0.01 * cfg;
      if (score > best) {
        best = score;
        plan.wfast = true;
        plan.wcount = false;
        plan.wpriv = priv != 0;
        plan.cfg = cfg;
        plan.rcols = R;
        plan.smem = smem;
        plan.hoff = 0;
        plan.woff = (unsigned)hb;
        plan.taboff = (unsigned)(hb + wb);
        plan.byoff = plan.taboff + (unsigned)tb;
        plan.joff = plan.byoff + (unsigned)bb;
        plan.jwoff = plan.joff + (unsigned)WBJ * 16;
        plan.jboff = plan.jwoff + (unsigned)WBJ * 8;
        plan.itemoff = (unsigned)(smem - 16);
        plan.ft = ft;
      }
      break;   /* the most columns that fit */
    }
  }
  if (!plan.wfast) return false;
  const size_t nt = plan.ft.thr.size();
  plan.wtab.assign(2 * nt, 0.0f);
  for (size_t k = 0; k < nt; k++) {
    int lo = plan.ft.cmap[k].lo;
    plan.wtab[2 * k] = plan.ft.thr[k];
    memcpy(&plan.wtab[2 * k + 1], &lo, 4);
  }
  return true;
}

/* choose the kernel and table shape for the device with the least shared
 * memory among those used */
bool make_plan(const wt_bins *bins, const Analysis &an, size_t smem_sm,
               size_t smem_block, bool weighted, Plan &plan, bool angles,
               int wwords, bool pcount)
{
  const int n_slots = an.n_slots;
  plan.fast = false;
  plan.wfast = false;
  plan.wcount = false;
  plan.wpriv = false;
  plan.wwords = -1;
  plan.weighted = weighted;
  plan.angles = angles;
  plan.woff = 0;
  plan.toff = 0;
  /* weights: the exact kernel, which adds w_i w_j in double per slot;
   * angles likewise (the fast kernel never sees most pairs' d2 in
   * double) */
  if (an.sane && !weighted && !angles) {
    double best = -1.0;
    FastTable tables[kNumCfgs];
    const size_t fixb = round16((size_t)n_slots * 4);
    const bool fix_shared = fixb <= 48 * 1024;
    for (int cfg = 0; cfg < kNumCfgs; cfg++) {
      size_t nt = (size_t)kCfgs[cfg].oct << kCfgs[cfg].mb;
      size_t smem = nt * 12 + 64 + (fix_shared ? fixb : 0) + (size_t)BJ * 16 +
                    16 + QBYTES + CAPBYTES;
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
        plan.capoff = plan.qoff + QBYTES;
      }
    }
    /* nearly every pair would take the exact path anyway */
    if (plan.fast && tables[plan.cfg].multi > 0.5) plan.fast = false;
    if (plan.fast) plan.ft = tables[plan.cfg];
  }
  if (plan.fast) return true;
  plan.wfast = false;
  plan.wpriv = false;
  plan.wwords = wwords;
  if (an.sane && weighted && !angles && wwords >= 0 &&
      ((pcount && wwords > 0 &&
        make_weighted_plan(bins, an, smem_sm, smem_block, wwords, true,
                           plan)) ||
       make_weighted_plan(bins, an, smem_sm, smem_block, wwords, false,
                          plan)))
    return true;
  /* exact kernel: R columns of 32-bit counters (and of double weight
   * sums, and of double angle sums), as many as fit */
  for (int R = 32; R >= 1; R /= 2) {
    size_t hbytes = round16((size_t)n_slots * R * 4);
    size_t wbytes = weighted ? round16((size_t)n_slots * R * 8) : 0;
    size_t tbytes = angles ? round16((size_t)n_slots * R * 8) : 0;
    size_t smem = hbytes + wbytes + tbytes + (size_t)EBJ * 32 + 16;
    if (smem <= smem_block && smem + 1024 <= smem_sm &&
        (!(weighted || angles) || smem <= 56 * 1024)) {  /* 4 blocks/SM */
      plan.rcols = R;
      plan.smem = smem;
      plan.hoff = 0;
      plan.woff = (unsigned)hbytes;
      plan.toff = (unsigned)(hbytes + wbytes);
      plan.joff = (unsigned)(hbytes + wbytes + tbytes);
      plan.itemoff = (unsigned)(hbytes + wbytes + tbytes + EBJ * 32);
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

/* Plans of recent calls: building the candidate tables walks every cell
 * of each (bench/kernel/kernel-notes.md, "Moved from the CUDA engine's
 * comments"), and a session repeats the same bins. A plan depends only on
 * the edges, the analysis and the shared memory of the devices. */
struct PlanEntry {
  std::vector<double> upper;
  bool sane, weighted, angles, pcount;
  int wwords;
  double r2max, eta;
  size_t smem_sm, smem_block;
  std::shared_ptr<const Plan> plan;
};

static std::mutex &plan_mutex()
{
  static std::mutex *m = new std::mutex();   /* never destroyed */
  return *m;
}

static std::vector<PlanEntry> &plan_cache()
{
  static std::vector<PlanEntry> *v = new std::vector<PlanEntry>();
  return *v;
}

std::shared_ptr<const Plan> get_plan(const wt_bins *bins, const Analysis &an,
                                     size_t smem_sm, size_t smem_block,
                                     bool weighted, bool angles,
                                     int wwords, bool pcount)
{
  const size_t n = (size_t)an.n_slots;
  auto same = [&](const PlanEntry &e) {
    return e.sane == an.sane && e.weighted == weighted &&
           e.angles == angles && e.wwords == wwords && e.pcount == pcount &&
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
  make_plan(bins, an, smem_sm, smem_block, weighted, *p, angles, wwords,
            pcount);
  PlanEntry e{std::vector<double>(bins->upper, bins->upper + n), an.sane,
              weighted, angles, pcount, wwords, an.r2max, an.eta, smem_sm,
              smem_block, p};
  std::lock_guard<std::mutex> g(plan_mutex());
  std::vector<PlanEntry> &c = plan_cache();
  if (c.size() >= 8) c.erase(c.begin());
  c.push_back(std::move(e));
  return p;
}

}  // namespace wt_cuda
