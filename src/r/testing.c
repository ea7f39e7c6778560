/* Entry points for the package's own tests (R/testing.R) and benches,
 * not for analyses: grid builds so far, and the CUDA engine's host
 * planning, shown to R in every build. */
#include <string.h>
#include <limits.h>
#include "boundary.h"
#include "floor/pages.h"
#include "floor/team.h"

/* grid stages built by this process (tests) */
SEXP wt_r_grid_builds(void) { return ScalarReal(wt_grid_builds()); }

/* the package's thread teams checked (core/team.c's wt_team_check) */
SEXP wt_r_team_check(SEXP nt, SEXP n, SEXP teams)
{
  int64_t out[6];
  if (wt_team_check(asInteger(nt), (int64_t)asReal(n), asInteger(teams),
                    out) != 0)
    error("wtheta internal: team_check could not start");
  SEXP r = PROTECT(allocVector(REALSXP, 6));
  for (int k = 0; k < 6; k++) REAL(r)[k] = (double)out[k];
  UNPROTECT(1);
  return r;
}

/* the grouped walk's task sorts checked against each other
 * (core/grid_groups.c's wt_walk_sort_check): TRUE when the same order */
SEXP wt_r_walk_sort_check(SEXP n, SEXP seed, SEXP n_out)
{
  const int r = wt_walk_sort_check((int64_t)asReal(n),
                                   (uint32_t)asInteger(seed),
                                   (int32_t)asInteger(n_out));
  if (r < 0) error("wtheta internal: walk_sort_check could not run");
  return ScalarLogical(r);
}

/* the grid's keys by AVX2 against the C library's angles
 * (core/grid_keys.c's wt_grid_keys_check): c(differ, set aside, avx2) */
SEXP wt_r_grid_keys_check(SEXP n, SEXP seed, SEXP h)
{
  int64_t out[3];
  if (wt_grid_keys_check((int64_t)asReal(n), (uint32_t)asInteger(seed),
                         asReal(h), out) != WT_OK)
    error("wtheta internal: grid_keys_check could not run");
  SEXP r = PROTECT(allocVector(REALSXP, 3));
  for (int k = 0; k < 3; k++) REAL(r)[k] = (double)out[k];
  UNPROTECT(1);
  return r;
}

/* large buffers on huge pages (floor/pages.c's wt_memory_check), for
 * buffers of `mb` megabytes: c(huge, aligned, kept, zeroed, huge kB,
 * zeroed's huge kB) */
SEXP wt_r_memory_check(SEXP mb)
{
  int64_t out[6];
  wt_huge_pages_refresh();
  if (wt_memory_check((size_t)(asReal(mb) * 1048576.0), out) != 0)
    error("wtheta internal: memory_check could not allocate");
  SEXP r = PROTECT(allocVector(REALSXP, 6));
  for (int k = 0; k < 6; k++) REAL(r)[k] = (double)out[k];
  UNPROTECT(1);
  return r;
}

/* ---- the CUDA engine's host planning (cuda/plan.cxx), for tests: built
 * in every build, so that it is checked without nvcc or a GPU ---- */

/* the plan of `edges` (degrees) for analysis c(sane, r2max, eta, weighted[,
 * wwords, unit_w]) (wwords: the weighted kernel's words, -1 for none, the
 * default; unit_w: every weight 1) and a device with shared memory device =
 * c(per SM, per block) */
SEXP wt_r_cuda_plan_table(SEXP edges, SEXP analysis, SEXP device)
{
  const int n_edges = (int)XLENGTH(edges);
  if (n_edges < 2 || TYPEOF(analysis) != REALSXP ||
      (XLENGTH(analysis) != 4 && XLENGTH(analysis) != 6) ||
      TYPEOF(device) != REALSXP || XLENGTH(device) != 2)
    error("wtheta internal: cuda_plan_table arguments");
  wt_bins bins;
  wtr_bins_of(edges, &bins);
  wt_cuda_plan_info info;
  memset(&info, 0, sizeof info);
  const double *an = REAL(analysis), *dev = REAL(device);
  info.sane = an[0] != 0.0;
  info.r2max = an[1];
  info.eta = an[2];
  info.weighted = an[3] != 0.0;
  info.wwords = XLENGTH(analysis) == 6 ? (int)an[4] : -1;
  info.unit_w = XLENGTH(analysis) == 6 && an[5] != 0.0;
  info.smem_sm = dev[0];
  info.smem_block = dev[1];
  if (wt_cuda_plan_table(&bins, &info, NULL, NULL, 0) != WT_OK)
    error("wtheta internal: cuda_plan_table out of memory");
  const int nc = info.n_cells;
  float *thr = (float *)R_alloc(nc > 0 ? (size_t)nc : 1, sizeof(float));
  int *cmap = (int *)R_alloc(nc > 0 ? 2 * (size_t)nc : 1, sizeof(int));
  if (wt_cuda_plan_table(&bins, &info, thr, cmap, nc) != WT_OK)
    error("wtheta internal: cuda_plan_table out of memory");
  static const char *names[] = {"fast", "cfg", "fix_shared", "rcols", "smem",
                                "c", "onec", "margin", "multi", "upper",
                                "thr", "lo", "hi", "wfast", "wcount", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, ScalarLogical(info.fast));
  SET_VECTOR_ELT(out, 1, ScalarInteger(info.cfg));
  SET_VECTOR_ELT(out, 2, ScalarLogical(info.fix_shared));
  SET_VECTOR_ELT(out, 3, ScalarInteger(info.rcols));
  SET_VECTOR_ELT(out, 4, ScalarReal(info.smem));
  SET_VECTOR_ELT(out, 5, ScalarReal(info.c));
  SET_VECTOR_ELT(out, 6, ScalarReal(info.onec));
  SET_VECTOR_ELT(out, 7, ScalarReal(info.margin));
  SET_VECTOR_ELT(out, 8, ScalarReal(info.multi));
  SEXP up = SET_VECTOR_ELT(out, 9, allocVector(REALSXP, n_edges + 1));
  memcpy(REAL(up), bins.upper, ((size_t)n_edges + 1) * sizeof(double));
  SEXP t = SET_VECTOR_ELT(out, 10, allocVector(REALSXP, nc));
  SEXP lo = SET_VECTOR_ELT(out, 11, allocVector(INTSXP, nc));
  SEXP hi = SET_VECTOR_ELT(out, 12, allocVector(INTSXP, nc));
  for (int k = 0; k < nc; k++) {
    REAL(t)[k] = (double)thr[k];
    INTEGER(lo)[k] = cmap[2 * k];
    INTEGER(hi)[k] = cmap[2 * k + 1];
  }
  SET_VECTOR_ELT(out, 13, ScalarLogical(info.wfast));
  SET_VECTOR_ELT(out, 14, ScalarLogical(info.wcount));
  UNPROTECT(1);
  return out;
}

/* the launches and items of `tasks` (k x 5, as for pair_counts) between
 * catalogs of sizes = c(n_a, n_b, is_auto) points; settings = c(fast,
 * chunk, max_pairs, n_devices, n_blocks[, threads]) (0: the engine's chunk
 * or launch size; threads of the planning, 1 when not given) */
SEXP wt_r_cuda_plan_work(SEXP sizes, SEXP tasks, SEXP settings)
{
  if (TYPEOF(sizes) != REALSXP || XLENGTH(sizes) != 3 ||
      TYPEOF(settings) != REALSXP ||
      (XLENGTH(settings) != 5 && XLENGTH(settings) != 6) || isNull(tasks))
    error("wtheta internal: cuda_plan_work arguments");
  wt_job job;
  memset(&job, 0, sizeof job);
  const double *sz = REAL(sizes), *st = REAL(settings);
  job.a.n = (int64_t)sz[0];
  job.b.n = (int64_t)sz[1];
  job.is_auto = sz[2] != 0.0;
  job.tasks = wtr_tasks_of(tasks, &job.n_tasks);
  job.n_threads = XLENGTH(settings) == 6 ? (int)st[5] : 1;
  const int fast = st[0] != 0.0, n_devices = (int)st[3], n_blocks = (int)st[4];
  const int64_t chunk = (int64_t)st[1];
  int64_t nl = 0, ni = 0;
  int status = wt_cuda_plan_work(&job, fast, chunk, st[2], n_devices,
                                 n_blocks, NULL, 0, NULL, 0, &nl, &ni);
  if (status == WT_OK && (nl > INT_MAX / 8 || ni > INT_MAX / 7))
    error("wtheta internal: cuda_plan_work: too many items (%.0f)",
          (double)ni);
  SEXP launch = PROTECT(allocMatrix(REALSXP, (int)nl, 8));
  SEXP item = PROTECT(allocMatrix(INTSXP, (int)ni, 7));
  double *lv = (double *)R_alloc(nl > 0 ? 8 * (size_t)nl : 1, sizeof(double));
  int *iv = (int *)R_alloc(ni > 0 ? 7 * (size_t)ni : 1, sizeof(int));
  if (status == WT_OK)
    status = wt_cuda_plan_work(&job, fast, chunk, st[2], n_devices, n_blocks,
                               lv, nl, iv, ni, &nl, &ni);
  if (status != WT_OK)
    error("wtheta internal: cuda_plan_work failed with status %d", status);
  for (int64_t r = 0; r < nl; r++)
    for (int c = 0; c < 8; c++) REAL(launch)[r + nl * c] = lv[8 * r + c];
  for (int64_t r = 0; r < ni; r++)
    for (int c = 0; c < 7; c++) INTEGER(item)[r + ni * c] = iv[7 * r + c];
  static const char *names[] = {"launches", "items", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, launch);
  SET_VECTOR_ELT(out, 1, item);
  UNPROTECT(3);
  return out;
}

