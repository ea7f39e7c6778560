/* The CUDA engine's host planning, part 3 (see plan.h): the tasks cut
 * into chunk pairs, rows and launches; the work items of a launch; and
 * the task boundaries inside a chunk (a bitmap read out in order). Built
 * by the C++ compiler in every build. No CUDA, no R API, no printing. */
#include <algorithm>
#include <functional>
#include <thread>
#include <vector>

#include "plan.h"
#include "floor/pages.h"

namespace wt_cuda {

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
    rows.reserve(run);
    wt_advise_big(rows.data(), run * sizeof(Row));   /* floor/pages.h */
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
