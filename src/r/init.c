/* Routine registration: every .Call entry point of src/r/ (declared in
 * boundary.h), by the name R calls it with (C_ prefixed by useDynLib's
 * .fixes in NAMESPACE). */
#include "boundary.h"

static const R_CallMethodDef call_methods[] = {
  {"pair_counts", (DL_FUNC)&wt_r_pair_counts, 14},
  {"pair_counts_catalogs", (DL_FUNC)&wt_r_pair_counts_catalogs, 15},
  {"count_start", (DL_FUNC)&wt_r_count_start, 13},
  {"count_wait", (DL_FUNC)&wt_r_count_wait, 3},
  {"count_cancel", (DL_FUNC)&wt_r_count_cancel, 1},
  {"label_parts", (DL_FUNC)&wt_r_label_parts, 7},
  {"catalog_new", (DL_FUNC)&wt_r_catalog_new, 5},
  {"bitwise_words", (DL_FUNC)&wt_r_bitwise_words, 2},
  {"bitwise_bad", (DL_FUNC)&wt_r_bitwise_bad, 2},
  {"pip_bins", (DL_FUNC)&wt_r_pip_bins, 5},
  {"pip_fold", (DL_FUNC)&wt_r_pip_fold, 3},
  {"catalog_release", (DL_FUNC)&wt_r_catalog_release, 1},
  {"catalog_alive", (DL_FUNC)&wt_r_catalog_alive, 1},
  {"grid_builds", (DL_FUNC)&wt_r_grid_builds, 0},
  {"team_check", (DL_FUNC)&wt_r_team_check, 3},
  {"walk_sort_check", (DL_FUNC)&wt_r_walk_sort_check, 3},
  {"grid_keys_check", (DL_FUNC)&wt_r_grid_keys_check, 3},
  {"memory_check", (DL_FUNC)&wt_r_memory_check, 1},
  {"plan_catalogs", (DL_FUNC)&wt_r_plan_catalogs, 9},
  {"grid_scale", (DL_FUNC)&wt_r_grid_scale, 6},
  {"patch_sizes", (DL_FUNC)&wt_r_patch_sizes, 2},
  {"unit_vectors", (DL_FUNC)&wt_r_unit_vectors, 3},
  {"fingerprint", (DL_FUNC)&wt_r_fingerprint, 2},
  {"cuda_info", (DL_FUNC)&wt_r_cuda_info, 0},
  {"cuda_device", (DL_FUNC)&wt_r_cuda_device, 1},
  {"cuda_release", (DL_FUNC)&wt_r_cuda_release, 0},
  {"nearest_centre", (DL_FUNC)&wt_r_nearest_centre, 3},
  {"kmeans", (DL_FUNC)&wt_r_kmeans, 4},
  {"check_coords", (DL_FUNC)&wt_r_check_coords, 3},
  {"reduce_ra", (DL_FUNC)&wt_r_reduce_ra, 1},
  {"footprint_cells", (DL_FUNC)&wt_r_footprint_cells, 6},
  {"footprint_cells_many", (DL_FUNC)&wt_r_footprint_cells_many, 5},
  {"group_means", (DL_FUNC)&wt_r_group_means, 3},
  {"group_patches", (DL_FUNC)&wt_r_group_patches, 4},
  {"jackknife_counts", (DL_FUNC)&wt_r_jackknife_counts, 3},
  {"jackknife_margins", (DL_FUNC)&wt_r_jackknife_margins, 3},
  {"jackknife_sums", (DL_FUNC)&wt_r_jackknife_sums, 1},
  {"far_pairs", (DL_FUNC)&wt_r_far_pairs, 4},
  {"row_products", (DL_FUNC)&wt_r_row_products, 3},
  {"patch_reach", (DL_FUNC)&wt_r_patch_reach, 6},
  {"patch_plan", (DL_FUNC)&wt_r_patch_plan, 6},
  {"patch_margins", (DL_FUNC)&wt_r_patch_margins, 1},
  {"weight_sums", (DL_FUNC)&wt_r_weight_sums, 3},
  {"patch_vectors", (DL_FUNC)&wt_r_patch_vectors, 5},
  {"default_threads", (DL_FUNC)&wt_r_default_threads, 1},
  {"cpu_cores", (DL_FUNC)&wt_r_cpu_cores, 0},
  {"constants", (DL_FUNC)&wt_r_constants, 0},
  {"cpu_isa", (DL_FUNC)&wt_r_cpu_isa, 0},
  {"cuda_plan_table", (DL_FUNC)&wt_r_cuda_plan_table, 3},
  {"cuda_plan_work", (DL_FUNC)&wt_r_cuda_plan_work, 3},
  {"read_gzip", (DL_FUNC)&wt_r_read_gzip, 1},
  {"text_info", (DL_FUNC)&wt_r_text_info, 2},
  {"text_row", (DL_FUNC)&wt_r_text_row, 3},
  {"text_parse", (DL_FUNC)&wt_r_text_parse, 5},
  {"text_strings", (DL_FUNC)&wt_r_text_strings, 5},
  {"fits_compiled", (DL_FUNC)&wt_r_fits_compiled, 0},
  {"fits_info", (DL_FUNC)&wt_r_fits_info, 3},
  {"fits_read", (DL_FUNC)&wt_r_fits_read, 4},
  {"fits_verify", (DL_FUNC)&wt_r_fits_verify, 1},
  {"int64_as_double", (DL_FUNC)&wt_r_int64_as_double, 1},
  {"fits_write", (DL_FUNC)&wt_r_fits_write, 4},
  {"fits_read_image", (DL_FUNC)&wt_r_fits_read_image, 2},
  {"fits_header", (DL_FUNC)&wt_r_fits_header, 2},
  {"healpix_compiled", (DL_FUNC)&wt_r_healpix_compiled, 0},
  {"healpix_pixels", (DL_FUNC)&wt_r_healpix_pixels, 6},
  {"healpix_centres", (DL_FUNC)&wt_r_healpix_centres, 5},
  {"healpix_renumber", (DL_FUNC)&wt_r_healpix_renumber, 3},
  {"healpix_draw", (DL_FUNC)&wt_r_healpix_draw, 8},
  {"healpix_on_map", (DL_FUNC)&wt_r_healpix_on_map, 7},
  {NULL, NULL, 0}
};

/* called at load by R_init_wtheta (src/wtheta.c) */
void wtr_init(DllInfo *dll)
{
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
  wt_threads_init();
}
