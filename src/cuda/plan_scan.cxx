/* The CUDA engine's host planning, part 1 (see plan.h): the analysis of a
 * count's inputs, the point scan (largest |X|^2 and its distance from 1)
 * and the margin of the fast path that follows from it. Built by the C++
 * compiler in every build, with or without nvcc. No CUDA, no R API, no
 * printing. */
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "plan.h"

namespace wt_cuda {

/* largest |X|^2 and | |X|^2 - 1 | over points [i0, i1), and whether
 * their weights are all 1; bad when some
 * |X|^2 is not finite (a non-finite coordinate, or one so large that the
 * sum overflows: such inputs go to the exact kernel either way) */
struct ScanPart {
  bool bad = false, unit_w = true;
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
  /* whether every weight is exactly 1 (none: so) */
  bool unit = true;
  if (p.w)
    for (int64_t i = i0; i < i1 && unit; i++) unit = p.w[i] == 1.0;
  r.unit_w = unit;
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
    if (!r.unit_w) an.unit_w = false;
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

/* v rounded up to a multiple of 2^-48: an upper bound that is the same for
 * catalogs of unit vectors that differ only in the last bits of |X|^2, so
 * that they share one plan (the margin proof needs upper bounds only) */
static double round_up_coarse(double v)
{
  const double g = std::ldexp(1.0, -48);
  return std::ceil(v / g) * g;
}

int weighted_words(const wt_job *job)
{
  if (job->wsum == nullptr || job->thsum != nullptr) return -1;
  const wt_pip *p = job->pip;
  if (p == nullptr) return 0;
  if (p->n_ang > 0 || p->n_words > WMAXW) return -1;
  return p->n_words == 0 ? 0 : p->n_words <= 2 ? 2 : WMAXW;
}

Analysis analyse(const wt_job *job, int max_threads, bool force_exact)
{
  const wt_bins *bins = job->bins;
  /* jobs only the exact kernel takes (angle sums, weights that the
   * weighted kernel does not take): no point scan */
  const bool exact_only = (job->wsum != nullptr || job->thsum != nullptr) &&
                        weighted_words(job) < 0;
  Analysis an;
  an.n_slots = bins->n_bins + 2;
  an.sane = true;
  an.r2max = 0.0;
  an.eta = 0.0;
  an.unit_w = true;
  for (int s = 0; s + 1 < an.n_slots; s++)
    if (!(bins->upper[s] <= bins->upper[s + 1])) an.sane = false;
  if (!(bins->upper[0] >= 0.0)) an.sane = false;
  if (an.sane && !exact_only) scan_points(job->a, an, max_threads);
  if (an.sane && !exact_only && !job->is_auto)
    scan_points(job->b, an, max_threads);
  if (an.sane && (an.eta > 1e-6 || an.r2max > 1.0 + 1e-6)) an.sane = false;
  if (force_exact) an.sane = false;
  if (an.sane && !exact_only) {
    an.r2max = round_up_coarse(an.r2max);
    an.eta = round_up_coarse(an.eta);
  } else {            /* unused by the exact kernel's plan */
    an.sane = an.sane && !exact_only;
    an.r2max = 0.0;
    an.eta = 0.0;
    an.unit_w = false;
  }
  return an;
}

}  // namespace wt_cuda
