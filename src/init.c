/* Routine registration. */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include "threads.h"

SEXP wt_r_pair_counts(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP,
                      SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_unit_vectors(SEXP, SEXP, SEXP);
SEXP wt_r_cuda_info(void);
SEXP wt_r_cuda_device(SEXP);
SEXP wt_r_cuda_release(void);
SEXP wt_r_nearest_centre(SEXP, SEXP, SEXP);
SEXP wt_r_kmeans(SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_check_coords(SEXP, SEXP);
SEXP wt_r_reduce_ra(SEXP);
SEXP wt_r_group_patches(SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_jackknife_counts(SEXP, SEXP);
SEXP wt_r_patch_vectors(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_default_threads(SEXP);
SEXP wt_r_cpu_cores(void);

static const R_CallMethodDef call_methods[] = {
  {"pair_counts", (DL_FUNC)&wt_r_pair_counts, 14},
  {"unit_vectors", (DL_FUNC)&wt_r_unit_vectors, 3},
  {"cuda_info", (DL_FUNC)&wt_r_cuda_info, 0},
  {"cuda_device", (DL_FUNC)&wt_r_cuda_device, 1},
  {"cuda_release", (DL_FUNC)&wt_r_cuda_release, 0},
  {"nearest_centre", (DL_FUNC)&wt_r_nearest_centre, 3},
  {"kmeans", (DL_FUNC)&wt_r_kmeans, 4},
  {"check_coords", (DL_FUNC)&wt_r_check_coords, 2},
  {"reduce_ra", (DL_FUNC)&wt_r_reduce_ra, 1},
  {"group_patches", (DL_FUNC)&wt_r_group_patches, 4},
  {"jackknife_counts", (DL_FUNC)&wt_r_jackknife_counts, 2},
  {"patch_vectors", (DL_FUNC)&wt_r_patch_vectors, 5},
  {"default_threads", (DL_FUNC)&wt_r_default_threads, 1},
  {"cpu_cores", (DL_FUNC)&wt_r_cpu_cores, 0},
  {NULL, NULL, 0}
};

void R_init_wtheta(DllInfo *dll)
{
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
  wt_threads_init();
}
