/* The CUDA engine's host planning shown outside the engine (wt.h): to the
 * tests (wt_cuda_plan_table, wt_cuda_plan_work; r/testing.c shows them R), so
 * that the planning is checked without a GPU, and to the benches
 * (wt_cuda_host_plan, through wt_plan_catalogs). Built by the C++
 * compiler in every build. No CUDA, no R API, no printing. */
#include <new>
#include <vector>

#include "plan.h"

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
    an.unit_w = info->unit_w != 0;
    Plan plan;
    make_plan(bins, an, (size_t)info->smem_sm, (size_t)info->smem_block,
              info->weighted != 0, plan, false, info->wwords,
              info->unit_w != 0 && info->wwords > 0);
    info->fast = plan.fast;
    info->wfast = plan.wfast;
    info->wcount = plan.wfast && plan.wcount;
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
      max_pairs = launch_pairs(fast != 0, wt_tasks_pairs(job), n_devices);
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
    double total = wt_tasks_pairs(job);
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
