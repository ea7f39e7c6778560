/* The R boundary's private header: what the files of src/r/ share, and
 * the .Call entry points that r/init.c registers. Only src/r/ includes it
 * (and only src/r/ includes R's headers). Shared helpers are named wtr_,
 * apart from the core's wt_ names of wt.h. */
#ifndef WT_R_BOUNDARY_H
#define WT_R_BOUNDARY_H

#include <stdint.h>
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include "wt.h"
#include "core/threads.h"   /* the grains of wtr_team_of */

/* Every error the boundary raises reaches users without the .Call() that
 * raised it ("Error in .Call(C_healpix_draw, ...)" told them nothing):
 * error() in src/r/ is errorcall(R_NilValue, ...), as R_ext/Error.h's
 * plain error() would name the .Call. */
#undef error
#define error(...) Rf_errorcall(R_NilValue, __VA_ARGS__)

/* ---- r/poll.c: progress and the one interrupt check ---- */

/* progress lines for long runs: off unless asked, silent for the first
 * two seconds, then one line every half second on a terminal (rewritten in
 * place) or every five seconds elsewhere (logs) */
typedef struct {
  int show, tty;           /* tty: one line rewritten in place, else lines */
  double start, last;
  int printed;
  SEXP fun;                /* an R function(done, total) to report to instead
                            * (a progressr progressor), or NULL */
} wtr_progress;

/* 1 when the user interrupted or R raised an error during the check
 * (R_CheckUserInterrupt under tryCatch and R_ToplevelExec, so that no
 * longjmp leaves the caller's memory behind), else 0; from the
 * main thread only, never inside an OpenMP region */
int wtr_interrupted(void);
/* After wtr_interrupted() said 1 and everything is freed: raise again what
 * R raised during the check, unchanged (an error such as setTimeLimit()'s
 * goes to the caller's tryCatch(error = )); _error raises only an error
 * and returns after an interrupt (the caller signals its own), while
 * wtr_raise_caught() raises an interrupt too and never returns */
void wtr_raise_caught_error(void);
NORET void wtr_raise_caught(void);
void wtr_progress_init(wtr_progress *prog, SEXP progress);
int wtr_poll(void *ctx, double done, double total);   /* a wt_job's poll */
void wtr_progress_done(wtr_progress *p, int status);

/* ---- r/args.c: what R hands over, and status codes to R errors ---- */

const double *wtr_real_or_die(SEXP x, const char *what);
const char *wtr_path_of(SEXP path);   /* a file path: one string */
int wtr_team_of(SEXP threads, int64_t n, int64_t grain);
void wtr_points_of(SEXP xyz, wt_points *p);
const double *wtr_weights_of(SEXP w, const wt_points *p, const char *what);
void wtr_bins_into(SEXP edges, wt_bins *bins, double *upper,
                   uint16_t *table);
void wtr_bins_of(SEXP edges, wt_bins *bins);
R_xlen_t wtr_tasks_count(SEXP tasks);
void wtr_tasks_fill(SEXP tasks, R_xlen_t k, wt_task *t);
wt_task *wtr_tasks_of(SEXP tasks, int64_t *n_tasks);
NORET void wtr_status_error(int status, const wt_job *job);

/* ---- r/catalog.c: prepared catalogs as external pointers ---- */

wt_catalog *wtr_catalog_of(SEXP ptr, const char *what);

/* ---- the .Call entry points, by file ---- */

/* r/catalog.c */
SEXP wt_r_fingerprint(SEXP, SEXP);
SEXP wt_r_unit_vectors(SEXP, SEXP, SEXP);
SEXP wt_r_catalog_new(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_catalog_release(SEXP);
SEXP wt_r_catalog_alive(SEXP);
SEXP wt_r_check_coords(SEXP, SEXP, SEXP);
SEXP wt_r_reduce_ra(SEXP);
/* r/results.c: a count's histograms as the lists R reads */
/* What R asks of a count's patches (the `patches` argument of
 * wt_r_label_parts() and of r/pending.c's entries): NULL or 0 (none),
 * n_patches, or list(n_patches, form, map): form 1 when the count keeps
 * only the margins of its patch arrays (a jackknife's needs), map NULL
 * when task histogram a + b P is the pair of patches a + 1 and b + 1 (all
 * P^2 of them), else the pair a + b P of each task histogram in turn,
 * increasing (the pairs within reach of each other only;
 * wt_r_patch_plan() in r/patches.c) */
typedef struct {
  int n;
  int margins;
  const int *map;
  int64_t n_map;
} wtr_patch_form;
/* patches as R passes them, checked (NULL or 0: none) */
wtr_patch_form wtr_patch_form_of(SEXP patches);
/* the histogram of each pair of patches: the inverse of f's map (P^2
 * values, -1: none), on R's stack; NULL without a map */
int64_t *wtr_patch_inv(wtr_patch_form f);
/* a count's n_out histograms (n_edges + 1 slots each) as the list
 * count_result() reads, with their patch arrays or margins */
SEXP wtr_count_list(const uint64_t *hist, const double *wsum,
                    const double *thsum, int n_out, int n_edges,
                    int is_auto, int n_patches, int margins,
                    const int64_t *inv, const wt_job *job);
/* a labelled count split into the lists of its separate counts */
SEXP wtr_label_parts(const uint64_t *slots, const double *wsum, int n_out,
                     int n_bins, int La, int Lb, int is_auto,
                     wtr_patch_form pf, const wt_job *job);
SEXP wt_r_label_parts(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
/* r/pending.c: counts held by external pointers, run or started */
SEXP wt_r_pair_counts(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP,
                      SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_pair_counts_catalogs(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP,
                               SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP,
                               SEXP);
SEXP wt_r_count_start(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP,
                      SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_count_wait(SEXP, SEXP, SEXP);
SEXP wt_r_count_cancel(SEXP);
SEXP wt_r_plan_catalogs(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP,
                        SEXP);
SEXP wt_r_grid_scale(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_patch_sizes(SEXP, SEXP);
/* r/pip.c: bitwise words and the normalisation's per-object work (PIP) */
SEXP wt_r_bitwise_bad(SEXP, SEXP);
SEXP wt_r_bitwise_words(SEXP, SEXP);
SEXP wt_r_pip_bins(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_pip_fold(SEXP, SEXP, SEXP);
/* r/patches.c */
SEXP wt_r_nearest_centre(SEXP, SEXP, SEXP);
SEXP wt_r_kmeans(SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_group_patches(SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_jackknife_counts(SEXP, SEXP, SEXP);
SEXP wt_r_jackknife_margins(SEXP, SEXP, SEXP);
SEXP wt_r_jackknife_sums(SEXP);
SEXP wt_r_far_pairs(SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_row_products(SEXP, SEXP, SEXP);
SEXP wt_r_patch_reach(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_patch_plan(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_patch_margins(SEXP);
/* a new list(rows, cols, diag, total) of patch margins (r/patches.c) */
SEXP wtr_margins_new(int P, int nb);
SEXP wt_r_weight_sums(SEXP, SEXP, SEXP);
SEXP wt_r_patch_vectors(SEXP, SEXP, SEXP, SEXP, SEXP);
/* r/backend.c */
SEXP wt_r_constants(void);
SEXP wt_r_cpu_isa(void);
SEXP wt_r_cuda_info(void);
SEXP wt_r_cuda_device(SEXP);
SEXP wt_r_cuda_release(void);
SEXP wt_r_default_threads(SEXP);
SEXP wt_r_cpu_cores(void);
/* r/sky.c */
SEXP wt_r_footprint_cells(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_footprint_cells_many(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_group_means(SEXP, SEXP, SEXP);
SEXP wt_r_healpix_compiled(void);
SEXP wt_r_healpix_pixels(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_healpix_centres(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_healpix_renumber(SEXP, SEXP, SEXP);
SEXP wt_r_healpix_draw(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_healpix_on_map(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
/* r/text.c */
SEXP wt_r_read_gzip(SEXP);
SEXP wt_r_text_info(SEXP, SEXP);
SEXP wt_r_text_row(SEXP, SEXP, SEXP);
SEXP wt_r_text_parse(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_text_strings(SEXP, SEXP, SEXP, SEXP, SEXP);
/* r/fits.c */
SEXP wt_r_fits_compiled(void);
SEXP wt_r_fits_info(SEXP, SEXP, SEXP);
SEXP wt_r_fits_read(SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_fits_verify(SEXP);
SEXP wt_r_int64_as_double(SEXP);
SEXP wt_r_fits_write(SEXP, SEXP, SEXP, SEXP);
SEXP wt_r_fits_header(SEXP, SEXP);
SEXP wt_r_fits_read_image(SEXP, SEXP);
/* r/init.c: the registration, and the threads' set-up, at load (from
 * R_init_wtheta in src/wtheta.c) */
void wtr_init(DllInfo *dll);
/* r/testing.c */
SEXP wt_r_grid_builds(void);
SEXP wt_r_team_check(SEXP nt, SEXP n, SEXP teams);
SEXP wt_r_walk_sort_check(SEXP n, SEXP seed, SEXP n_out);
SEXP wt_r_grid_keys_check(SEXP n, SEXP seed, SEXP h);
SEXP wt_r_memory_check(SEXP mb);
SEXP wt_r_cuda_plan_table(SEXP, SEXP, SEXP);
SEXP wt_r_cuda_plan_work(SEXP, SEXP, SEXP);

#endif
