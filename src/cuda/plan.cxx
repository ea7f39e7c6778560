/* Host-only planning of the CUDA engine (see plan.h): built by the C++
 * compiler in every build, with or without nvcc, so that the planning is
 * tested without a GPU (wt_cuda_plan_table and wt_cuda_plan_work, at the
 * end, are what glue.c shows R). No CUDA, no R API, no printing. */
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <new>
#include <thread>

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
         k.chunk == kShape.chunk;
}

/* largest |X|^2 and | |X|^2 - 1 | over points [i0, i1); bad when some
 * |X|^2 is not finite (a non-finite coordinate, or one so large that the
 * sum overflows: such inputs go to the exact kernel either way) */
struct ScanPart {
  bool bad = false;
  double r2max = 0.0, eta = 0.0;
};

static void scan_range(const wt_points &p, int64_t i0, int64_t i1, ScanPart &r)
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

/* choose the kernel and table shape for the device with the least shared
 * memory among those used */
bool make_plan(const wt_bins *bins, const Analysis &an, size_t smem_sm,
               size_t smem_block, bool weighted, Plan &plan, bool angles)
{
  const int n_slots = an.n_slots;
  plan.fast = false;
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
 * of each (bench/kernel-notes.md, "Moved from the CUDA engine's
 * comments"), and a session repeats the same bins. A plan depends only on
 * the edges, the analysis and the shared memory of the devices. */
struct PlanEntry {
  std::vector<double> upper;
  bool sane, weighted, angles;
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
                                     bool weighted, bool angles)
{
  const size_t n = (size_t)an.n_slots;
  auto same = [&](const PlanEntry &e) {
    return e.sane == an.sane && e.weighted == weighted &&
           e.angles == angles &&
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
  make_plan(bins, an, smem_sm, smem_block, weighted, *p, angles);
  PlanEntry e{std::vector<double>(bins->upper, bins->upper + n), an.sane,
              weighted, angles, an.r2max, an.eta, smem_sm, smem_block, p};
  std::lock_guard<std::mutex> g(plan_mutex());
  std::vector<PlanEntry> &c = plan_cache();
  if (c.size() >= 8) c.erase(c.begin());
  c.push_back(std::move(e));
  return p;
}

/* v rounded up to a multiple of 2^-48: an upper bound that is the same for
 * catalogs of unit vectors that differ only in the last bits of |X|^2, so
 * that they share one plan (the margin proof needs upper bounds only) */
static double round_up_coarse(double v)
{
  const double g = std::ldexp(1.0, -48);
  return std::ceil(v / g) * g;
}

Analysis analyse(const wt_job *job, int max_threads, bool force_exact)
{
  const wt_bins *bins = job->bins;
  /* weight sums and angle sums take the exact kernel: no point scan */
  const bool weighted = job->wsum != nullptr || job->thsum != nullptr;
  Analysis an;
  an.n_slots = bins->n_bins + 2;
  an.sane = true;
  an.r2max = 0.0;
  an.eta = 0.0;
  for (int s = 0; s + 1 < an.n_slots; s++)
    if (!(bins->upper[s] <= bins->upper[s + 1])) an.sane = false;
  if (!(bins->upper[0] >= 0.0)) an.sane = false;
  if (an.sane && !weighted) scan_points(job->a, an, max_threads);
  if (an.sane && !weighted && !job->is_auto)
    scan_points(job->b, an, max_threads);
  if (an.sane && (an.eta > 1e-6 || an.r2max > 1.0 + 1e-6)) an.sane = false;
  if (force_exact) an.sane = false;
  if (an.sane && !weighted) {
    an.r2max = round_up_coarse(an.r2max);
    an.eta = round_up_coarse(an.eta);
  } else {            /* unused by the exact kernel's plan */
    an.sane = an.sane && !weighted;
    an.r2max = 0.0;
    an.eta = 0.0;
  }
  return an;
}

int row_points(bool fast) { return fast ? BI : EBLOCK; }

int item_align(bool fast) { return fast ? BJ : EBJ; }

int64_t chunk_len(int64_t n, int c, int64_t chunk)
{
  int64_t s = (int64_t)c * chunk;
  return n - s < chunk ? n - s : chunk;
}

/* Pairs of one launch. The caller sees progress, and can interrupt, only
 * between launches, so each stays short: the exact kernel takes far longer
 * per pair, so its launches hold fewer. With several devices a launch
 * holds about 1 / LAUNCHES_PER_DEVICE of a device's share, so that the
 * devices finish close together, but no fewer than LAUNCH_MIN_PAIRS. */
constexpr double LAUNCH_MAX_PAIRS_FAST = (double)((int64_t)1 << 34);
constexpr double LAUNCH_MAX_PAIRS_EXACT = (double)((int64_t)1 << 30);
constexpr double LAUNCH_MIN_PAIRS = (double)((int64_t)1 << 28);
constexpr double LAUNCHES_PER_DEVICE = 4.0;

double launch_pairs(bool fast, double total, int n_devices)
{
  double lmax = fast ? LAUNCH_MAX_PAIRS_FAST : LAUNCH_MAX_PAIRS_EXACT;
  double per = n_devices == 1 ? lmax
                              : total / (LAUNCHES_PER_DEVICE * n_devices);
  if (per < LAUNCH_MIN_PAIRS) per = LAUNCH_MIN_PAIRS;
  if (per > lmax) per = lmax;
  return per;
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

static int64_t chunk_count(int64_t n, int64_t chunk)
{
  return n > 0 ? (n + chunk - 1) / chunk : 1;
}

/* every piece of tasks [k0, k1), in task order, to f */
template <class F>
static void each_piece(const wt_job *job, int64_t chunk, int64_t k0,
                       int64_t k1, F &&f)
{
  auto cut = [chunk](int64_t lo, int64_t hi, int c, int64_t &l, int64_t &h) {
    int64_t s = (int64_t)c * chunk;
    l = std::max(lo, s) - s;
    h = std::min(hi, s + chunk) - s;
    return h > l;
  };
  for (int64_t k = k0; k < k1; k++) {
    const wt_task &t = job->tasks[k];
    if (t.a1 <= t.a0 || t.b1 <= t.b0) continue;
    const bool diag = job->is_auto && t.a0 == t.b0 && t.a1 == t.b1;
    const int ca0 = (int)(t.a0 / chunk), ca1 = (int)((t.a1 - 1) / chunk);
    const int cb0 = (int)(t.b0 / chunk), cb1 = (int)((t.b1 - 1) / chunk);
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
        f(p);
      }
    }
  }
}

/* the rows of a piece, in order, to f; their number */
template <class F>
static int64_t piece_rows(const Piece &p, int bi, F &&f)
{
  int64_t n = 0;
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
    f(r);
    n++;
  }
  return n;
}

/* the launches of the rows [r0, r1) of chunk pair (cI, cJ), each of about
 * max_pairs pairs */
static void cut_launches(const wt_job *job, int cI, int cJ, size_t r0,
                         size_t r1, const std::vector<Row> &rows,
                         double max_pairs, std::vector<Launch> &out)
{
  Launch L{cI, cJ, job->is_auto && cI == cJ, r0, r0, 0.0};
  for (size_t q = r0; q < r1; q++) {
    if (L.r1 > L.r0 && L.pairs >= max_pairs) {
      out.push_back(L);
      L.r0 = L.r1;
      L.pairs = 0.0;
    }
    L.r1++;
    L.pairs += rows[q].pairs;
  }
  if (L.r1 > L.r0) out.push_back(L);
}

/* The rows grouped by chunk pair, in task order inside a group, and the
 * launches cut from each group. A grid walk hands over millions of
 * node-pair tasks, so the rows are counted per chunk pair in a first pass
 * and written to their places in a second: one allocation and no sort,
 * where a list of pieces and a comparison sort took seconds (mostly
 * fresh memory). Only when the chunk pairs are too many for a table of
 * counts are the pieces listed and stably sorted. Both give the same rows
 * and launches, on any number of threads (job->n_threads; the counting
 * passes run on several for long task lists). */
void plan_launches(const wt_job *job, int64_t chunk, int bi,
                   double max_pairs,
                   std::vector<Row> &rows, std::vector<Launch> &out)
{
  rows.clear();
  out.clear();
  const int64_t n_ci = chunk_count(job->a.n, chunk),
                n_cj = chunk_count(job->is_auto ? job->a.n : job->b.n, chunk);
  const int64_t n_keys = n_ci * n_cj;
  if (n_keys <= ((int64_t)1 << 22)) {
    /* threads over runs of tasks, each counting its rows per chunk pair;
     * a run's rows of one chunk pair follow the earlier runs' (offsets
     * chunk pair first, then run), so the rows do not depend on nt */
    int nt = job->n_threads > 1 ? job->n_threads : 1;
    const unsigned hw = std::thread::hardware_concurrency();
    if (hw > 0 && nt > (int)hw) nt = (int)hw;
    if ((int64_t)nt > job->n_tasks / 16384) nt = (int)(job->n_tasks / 16384);
    if (nt < 1) nt = 1;
    while (nt > 1 && n_keys * nt > ((int64_t)1 << 24)) nt--;
    const size_t nk = (size_t)n_keys;
    std::vector<size_t> cnt((size_t)nt * nk, 0);
    auto runs = [&](const std::function<void(int, int64_t, int64_t)> &f) {
      std::vector<std::thread> th;
      th.reserve((size_t)nt);
      for (int t = 1; t < nt; t++) {
        const int64_t k0 = job->n_tasks * t / nt,
                      k1 = job->n_tasks * (t + 1) / nt;
        try {
          th.emplace_back(f, t, k0, k1);
        } catch (...) {
          f(t, k0, k1);                /* no thread: here */
        }
      }
      f(0, 0, job->n_tasks / nt);
      for (std::thread &x : th) x.join();
    };
    runs([&](int t, int64_t k0, int64_t k1) {
      size_t *c = cnt.data() + (size_t)t * nk;
      each_piece(job, chunk, k0, k1, [&](const Piece &p) {
        c[(size_t)p.cI * n_cj + p.cJ] +=
            (size_t)piece_rows(p, bi, [](const Row &) {});
      });
    });
    std::vector<size_t> first(nk + 1, 0);
    size_t run = 0;
    for (size_t k = 0; k < nk; k++) {
      first[k] = run;
      for (int t = 0; t < nt; t++) {
        const size_t v = cnt[(size_t)t * nk + k];
        cnt[(size_t)t * nk + k] = run;
        run += v;
      }
    }
    first[nk] = run;
    rows.resize(run);
    runs([&](int t, int64_t k0, int64_t k1) {
      size_t *at = cnt.data() + (size_t)t * nk;
      each_piece(job, chunk, k0, k1, [&](const Piece &p) {
        size_t &w = at[(size_t)p.cI * n_cj + p.cJ];
        piece_rows(p, bi, [&](const Row &r) { rows[w++] = r; });
      });
    });
    for (size_t k = 0; k < nk; k++)
      if (first[k + 1] > first[k])
        cut_launches(job, (int)(k / (size_t)n_cj), (int)(k % (size_t)n_cj),
                     first[k], first[k + 1], rows, max_pairs, out);
    return;
  }
  std::vector<Piece> pieces;
  each_piece(job, chunk, 0, job->n_tasks,
             [&](const Piece &p) { pieces.push_back(p); });
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
    const size_t r0 = rows.size();
    for (size_t q = g; q < h; q++)
      piece_rows(pieces[q], bi, [&](const Row &r) { rows.push_back(r); });
    if (rows.size() > r0)
      cut_launches(job, pieces[g].cI, pieces[g].cJ, r0, rows.size(), rows,
                   max_pairs, out);
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

/* The boundaries as marks in a bitmap of n + 1 bits, read out in order:
 * O(n / 64 + tasks). A grid walk hands over millions of tasks, whose
 * 4 boundaries each a sort took tens of seconds to order. */
std::vector<long long> task_bounds(const wt_job *job, int cat)
{
  const int64_t n = cat == 0 ? job->a.n : job->b.n;
  std::vector<uint64_t> bits((size_t)(n / 64) + 1, 0);
  auto mark = [&bits, n](int64_t v) {
    if (v >= 0 && v <= n) bits[(size_t)(v >> 6)] |= (uint64_t)1 << (v & 63);
  };
  mark(0);
  mark(n);
  for (int64_t k = 0; k < job->n_tasks; k++) {
    const wt_task &t = job->tasks[k];
    if (cat == 0 || job->is_auto) {
      mark(t.a0);
      mark(t.a1);
    }
    if (cat == 1 || job->is_auto) {
      mark(t.b0);
      mark(t.b1);
    }
  }
  size_t count = 0;
  for (uint64_t w : bits) count += (size_t)__builtin_popcountll(w);
  std::vector<long long> v;
  v.reserve(count);
  for (size_t q = 0; q < bits.size(); q++) {
    uint64_t w = bits[q];
    while (w) {
      v.push_back((long long)(q * 64 + (size_t)__builtin_ctzll(w)));
      w &= w - 1;
    }
  }
  return v;
}

}  // namespace wt_cuda

/* ---- shown to tests (wt.h) ---- */

extern "C" int wt_cuda_plan_table(const wt_bins *bins, wt_cuda_plan_info *info,
                                  float *thr, int *cmap, int cap)
{
  using namespace wt_cuda;
  try {
    Analysis an;
    an.n_slots = bins->n_bins + 2;
    an.sane = info->sane != 0;
    an.r2max = info->r2max;
    an.eta = info->eta;
    Plan plan;
    make_plan(bins, an, (size_t)info->smem_sm, (size_t)info->smem_block,
              info->weighted != 0, plan);
    info->fast = plan.fast;
    info->cfg = plan.fast ? plan.cfg : -1;
    info->fix_shared = plan.fast && plan.fix_shared;
    info->rcols = plan.fast ? 0 : plan.rcols;
    info->smem = (double)plan.smem;
    info->n_cells = plan.fast ? (int)plan.ft.thr.size() : 0;
    info->c = plan.fast ? plan.ft.c : 0.0;
    info->onec = plan.fast ? plan.ft.onec : 0.0;
    info->margin = plan.fast ? plan.ft.margin : 0.0;
    info->multi = plan.fast ? plan.ft.multi : 0.0;
    if (thr && cmap && cap >= info->n_cells) {
      for (int k = 0; k < info->n_cells; k++) {
        thr[k] = plan.ft.thr[k];
        cmap[2 * k] = plan.ft.cmap[k].lo;
        cmap[2 * k + 1] = plan.ft.cmap[k].hi;
      }
    }
    return WT_OK;
  } catch (const std::bad_alloc &) {
    return WT_ERR_NOMEM;
  }
}

extern "C" int wt_cuda_plan_work(const wt_job *job, int fast, int64_t chunk,
                                 double max_pairs, int n_devices,
                                 int n_blocks, double *launch,
                                 int64_t cap_launch, int *item,
                                 int64_t cap_item, int64_t *n_launch,
                                 int64_t *n_item)
{
  using namespace wt_cuda;
  if (chunk == 0) chunk = CHUNK;
  if (chunk < 1 || chunk > CHUNK || n_blocks < 1 || n_devices < 1)
    return WT_ERR_ARG;
  try {
    if (max_pairs <= 0.0) {
      double total = 0.0;
      for (int64_t k = 0; k < job->n_tasks; k++)
        total += wt_task_pairs(job, &job->tasks[k]);
      max_pairs = launch_pairs(fast != 0, total, n_devices);
    }
    const int bi = row_points(fast != 0), jalign = item_align(fast != 0);
    std::vector<Row> rows;
    std::vector<Launch> launches;
    std::vector<Item> items;
    plan_launches(job, chunk, bi, max_pairs, rows, launches);
    *n_launch = (int64_t)launches.size();
    int64_t ni = 0;
    for (size_t l = 0; l < launches.size(); l++) {
      const Launch &L = launches[l];
      make_items(L, rows, bi, jalign, n_blocks, items);
      if (launch && (int64_t)l < cap_launch) {
        double *o = launch + 8 * l;
        o[0] = L.cI; o[1] = L.cJ; o[2] = L.same; o[3] = (double)L.r0;
        o[4] = (double)L.r1; o[5] = L.pairs; o[6] = (double)items.size();
        o[7] = (double)items_bound(L, rows, jalign, n_blocks);
      }
      for (const Item &it : items) {
        if (item && ni < cap_item) {
          int *o = item + 7 * ni;
          o[0] = (int)l; o[1] = it.i0; o[2] = it.i1; o[3] = it.j0;
          o[4] = it.j1; o[5] = it.diag; o[6] = it.out;
        }
        ni++;
      }
    }
    *n_item = ni;
    return WT_OK;
  } catch (const std::bad_alloc &) {
    return WT_ERR_NOMEM;
  }
}

extern "C" int wt_cuda_host_plan(const wt_job *job, double *out)
{
  using namespace wt_cuda;
  try {
    const int fast = 1, n_blocks = 132 * WT_CUDA_MINB;
    double t0 = wt_seconds();
    const int threads = job->n_threads > 1 ? job->n_threads : 1;
    Analysis an = analyse(job, threads, false);
    (void)an;
    double t1 = wt_seconds();
    double total = 0.0;
    for (int64_t k = 0; k < job->n_tasks; k++)
      total += wt_task_pairs(job, &job->tasks[k]);
    std::vector<Row> rows;
    std::vector<Launch> launches;
    plan_launches(job, CHUNK, row_points(fast), launch_pairs(fast, total, 1),
                  rows, launches);
    double t2 = wt_seconds();
    std::vector<long long> ba = task_bounds(job, 0);
    std::vector<long long> bb =
        job->is_auto ? std::vector<long long>() : task_bounds(job, 1);
    double t3 = wt_seconds();
    std::vector<Item> items;
    size_t n_items = 0;
    for (const Launch &L : launches) {
      (void)items_bound(L, rows, item_align(fast), n_blocks);
      make_items(L, rows, row_points(fast), item_align(fast), n_blocks,
                 items);
      n_items += items.size();
    }
    double t4 = wt_seconds();
    /* the chunk copies a worker makes (Worker::load_chunk: two resident
     * slots, the I chunk first, then the J chunk beside it) */
    double loads = 0.0;
    int slot_cat[2] = {-1, -1}, slot_chunk[2] = {-1, -1};
    auto load = [&](int cat, int c, int keep) {
      for (int q = 0; q < 2; q++)
        if (slot_cat[q] == cat && slot_chunk[q] == c) return q;
      int q = keep == 0 ? 1 : 0;
      slot_cat[q] = cat;
      slot_chunk[q] = c;
      loads += 1.0;
      return q;
    };
    for (const Launch &L : launches) {
      int si = load(0, L.cI, -1);
      if (!L.same) load(job->is_auto ? 0 : 1, L.cJ, si);
    }
    out[0] = t1 - t0;
    out[1] = t2 - t1;
    out[2] = t3 - t2;
    out[3] = t4 - t3;
    out[4] = (double)launches.size();
    out[5] = loads;
    (void)n_items;
    return WT_OK;
  } catch (const std::bad_alloc &) {
    return WT_ERR_NOMEM;
  }
}
