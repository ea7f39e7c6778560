#' Count pairs by angular separation
#'
#' Counts the pairs of one catalog (auto: each unordered pair `i < j` once,
#' no self pairs) or of two catalogs (cross: all `n1 * n2` pairs) whose
#' angular separation falls in each bin. Counts are exact: see
#' [wtheta-package] for the contract every backend meets.
#'
#' @section Weights: With `weights`, every pair also adds `w_i * w_j` to a
#'   weighted count of its bin, summed in double precision; the raw pair
#'   counts are still returned. A self pair (`self_pairs = TRUE`) adds
#'   `w_i^2`.
#'
#' @section Patches: With `patches`, the pairs are also counted per pair of
#'   patches, in the same single pass over the pairs: `patch_counts[a, b, k]`
#'   holds the pairs of bin `k` between a point of patch `a` of `x` and a
#'   point of patch `b` of `y` (of `x` for auto pairs, where the array is
#'   symmetric and a pair of patches `a != b` is stored in both `[a, b]` and
#'   `[b, a]`, so `sum(patch_counts[, , k])` exceeds `counts[k]` by the
#'   pairs between different patches; `counts` stays the plain total).
#'   [wtheta()] builds jackknife and bootstrap errors from these. The
#'   counts that [wtheta()] and [wtheta_multi()] make for a jackknife keep
#'   only what a jackknife needs, the margins of these arrays, as
#'   `patch_margins` (and `patch_margins_weighted` from the weighted
#'   arrays) instead of `patch_counts` (`patch_weighted`): a list of `rows`
#'   (`rows[a, k]` is `sum(patch_counts[a, , k])`), `cols`
#'   (`sum(patch_counts[, b, k])`), `diag` (`patch_counts[a, a, k]`), three
#'   patches x bins matrices, and `total` (`sum(patch_counts[, , k])`), each
#'   summed as the arrays would be, so the replicates are the same bit for
#'   bit; 100 patches and 20 bins take 48 kB instead of 1.6 MB a count.
#'   [wtheta_from_counts()] makes jackknife errors from either form, and
#'   bootstrap errors from the arrays only.
#'
#' @section Progress: With `progress = TRUE`, long runs report progress.
#'   With the progressr package installed it goes to a progressr
#'   progressor, shown by whatever handler is active: RStudio's progress
#'   bar, a text bar, or none until you call
#'   `progressr::handlers(global = TRUE)` or wrap the call in
#'   [progressr::with_progress()] (without global handlers, a count
#'   running longer than two seconds says so once per session); it also
#'   reaches you from `distribute = TRUE` counts, block by block ("block 3
#'   of 6 done" and the rate). Without progressr, when progressr is
#'   disabled (its option `progressr.enable`, `FALSE` by default outside
#'   interactive sessions) or with `options(wtheta.progressr = FALSE)`, the
#'   count prints lines (share done, elapsed, estimated time left) on
#'   stderr during runs longer than two seconds. This holds for
#'   [wtheta()] and [wtheta_multi()] too, whose counts report here.
#'
#' @section Testing: The environment variable `WTHETA_TEST_FAULT`, meant for
#'   tests only, makes the engines fail on purpose at a named step: a comma
#'   separated list of `alloc` (an allocation), `launch` (a GPU kernel
#'   launch), `copy` (copying GPU results back) and `thread` (a worker
#'   thread). The call then ends with an error and returns nothing. The
#'   option `wtheta.test_block_fault`, a list with `block` (task numbers),
#'   `action` (`"die"`: the worker kills its own process; `"hang"`: it
#'   sleeps for an hour) and optionally `once` (a file created the first
#'   time, after which the block counts normally), makes the workers of a
#'   distributed count fail in those blocks. Never use `"die"` with a
#'   sequential plan: the worker is this R session.
#'
#' @param x A catalog: a data frame (or matrix) with right ascension and
#'   declination columns in degrees, as returned by [read_catalog()], or a
#'   catalog prepared once by [prepare_catalog()] (its weights and patches
#'   are then used; `weights` applies to the catalogs given unprepared).
#' @param y A second catalog for cross pairs, or `NULL` for auto pairs of
#'   `x`.
#' @param bins Bin edges in degrees, for example from [theta_bins()]. Bins
#'   made with `theta_bins(units = )` (arcmin, arcsec or radians) give the
#'   result in that unit: `edges`, `theta_lo`, `theta_hi`, `theta_mean` and
#'   `theta_sum` are then in it (see [theta_bins()] for the edges counted).
#' @param self_pairs For auto pairs only: `TRUE` counts all ordered pairs,
#'   self pairs included (the counts sum to `n^2`), the classic convention;
#'   `FALSE` (the default) counts each unordered pair once.
#' @param backend `"auto"` (a GPU when one is usable, otherwise the CPU),
#'   `"cpu"` or `"cuda"` (an error when no GPU is usable). The CUDA engine
#'   keeps its device buffers between calls, for the life of the R process,
#'   so that repeated calls start fast.
#' @param threads The number of CPU threads to count with: a whole number
#'   from 1 up to four times the number of processors, or up to 16 on a
#'   machine with fewer than four; defaults to [wtheta_threads()], which
#'   also says what happens when the system cannot start them.
#' @param devices CUDA device indices to use (default: all visible).
#' @param columns Names of the right ascension and declination columns,
#'   matched ignoring case as [read_catalog()] matches a file's (`RA` is
#'   `ra`; a catalog with both `ra` and `RA` is an error).
#' @param progress Report progress during long runs: `TRUE` or `FALSE`;
#'   defaults to the option `wtheta.progress`, or to `interactive()` when
#'   it is unset. Where the reports go (progressr's handlers, or lines on
#'   stderr) is in the section Progress of [pair_counts()].
#' @param weights Per-object weights: `NULL` (none), the name of a column
#'   (a catalog without that column has unit weights; at least one must
#'   have it), or a list with elements `x` and `y` (`y` for
#'   cross pairs only), each a numeric vector as long as its catalog or a
#'   column name. Weights must be finite, and small enough that no sum of
#'   their products can overflow: the largest `|w|` squared times the
#'   square of the points counted must stay below `.Machine$double.xmax`
#'   (multiply a catalog's weights by one factor to rescale them: w(theta)
#'   does not change).
#' @param patches Patch labels for jackknife and bootstrap errors: `NULL`
#'   (none), the name of a column present in each catalog, or a list with
#'   elements `x` and `y`, each a vector of labels (integer, double,
#'   character or factor) as long as its catalog or a column name. Labels
#'   are matched across catalogs by value, numbers as numbers (1e15 and
#'   1e15 + 1 are two patches), so the labels of all catalogs must be
#'   numbers or all strings (factors count as strings); `NA` is not allowed,
#'   and there may be at most 46,340 distinct labels. A result of
#'   [sky_patches()] gives each point its nearest centre. The patches of a
#'   prepared catalog are used without `patches`.
#' @param distribute `FALSE` (the default) counts in this R process. `TRUE`
#'   or a number of blocks `k` cuts each catalog into `k` blocks and counts
#'   every pair of blocks as a separate task (one future each) through the
#'   future framework: the plan set with [future::plan()] decides where
#'   tasks run (other R sessions with `multisession`, other machines with a
#'   PSOCK `cluster`, a batch scheduler with future.batchtools), and each
#'   worker counts with its own best backend (`backend` and `threads` are
#'   resolved there; `devices` cannot be given). A task carries only the
#'   points of its two blocks (unit vectors, 24 bytes a point, plus 8 for a
#'   weight and 4 for a patch number), never whole catalogs. The histograms
#'   add up exactly, so the result is the same whatever the plan. `TRUE`
#'   picks `k` so that there are at least twice as many tasks as workers.
#'   Progress (blocks done out of all, and blocks a second) is signalled
#'   through progressr when it is installed: see [progressr::with_progress()].
#' @param checkpoint With `distribute`: `NULL` (the default), or a
#'   directory where each finished block's counts (patch arrays and
#'   weighted counts included) are saved as they arrive. The same call
#'   again reuses the saved blocks and counts only the rest, with a result
#'   identical to an uninterrupted run. The directory records a hash of
#'   the inputs (catalogs, bins, weights, patches, options) and the number
#'   of blocks; a call with other inputs is refused. Each block file says
#'   which block it holds (the inputs' hash, its two block numbers, the
#'   number of blocks); a file that holds another block (copied, or left by
#'   another cut) is counted again, with a message naming it. A directory
#'   this process cannot write is refused before anything is counted. In
#'   [wtheta()] with
#'   jackknife or bootstrap errors and patches made by [sky_patches()],
#'   a rerun makes the same patches (they are seeded by `seed`, 1 when it
#'   is left out); one with another `seed` makes other patches and is
#'   refused. Delete the directory when the result is safe.
#' @param retries With `distribute`: how many times a block is sent again
#'   when its worker is lost (the process died, the job was killed) or it
#'   runs past `timeout`. Lost workers of a `multisession` plan (or of a
#'   `cluster` plan that started its own workers) are restarted (the plan
#'   is set again) once the other running blocks have finished; a cluster
#'   made by the user keeps its lost node. An error from the count itself is not retried.
#'   When a block still fails, the call ends with an error naming it; with
#'   `checkpoint` the finished blocks stay saved.
#' @param timeout With `distribute`: `NULL` (no limit) or the seconds a
#'   block may run before it counts as lost. Its worker is stopped where
#'   that can be done (a worker process on this machine, a batchtools job)
#'   and the block is retried or the call ends.
#' @param mean_theta `FALSE` (the default) or `TRUE`: also give, per bin,
#'   the pair-weighted mean separation of the pairs counted in it,
#'   `theta_mean = sum(w_i w_j theta_ij) / sum(w_i w_j)` in the bins' unit
#'   (`w = 1` without weights), `NA` for a bin without pairs (or, weighted,
#'   whose weights sum to zero). Each angle comes from the chord between
#'   the unit vectors, `2 asin(|a - b| / 2)`, which stays accurate at small
#'   separations, and the sums are in double precision, so the CPU and GPU
#'   agree to about 1e-12 relative. Every pair in the bins must be visited:
#'   the CPU engine then runs its plain C kernel (no vector kernels), the
#'   GPU its exact double-precision kernel, and the grid prunes by the last
#'   edge but counts no cell pairs in bulk (`pairs_skipped` counts only the
#'   pairs beyond the last edge). Cost on the CPU, measured by
#'   `bench/mean-theta.R` on 2 threads of an AMD EPYC (AVX-512 kernels
#'   otherwise) shared with other jobs, minimum of 2 runs: the DD count of
#'   the classic catalogs (10^5 points, 360 bins of 0.25 degree) took
#'   112 s instead of 9.5 s (11.7 times as long: plain C and an `asin`
#'   per pair instead of the vector kernels), the classic [wtheta()] call
#'   (DD, DR, RR; only DD sums angles) 313 s instead of 24 s (13 times,
#'   on a more loaded machine), and a [wtheta()] of 3 x 10^5 points in 20
#'   log bins from 0.01 to 10 degrees, where the grid prunes, 46 s against
#'   48 s (medians 61 s and 48 s). On the GPU the exact kernel runs
#'   instead of the fast one.
#' @return An object of class `pair_counts`: a list with `counts` (a double
#'   vector, one count per bin, exact up to 2^53), `edges`, `theta_lo`,
#'   `theta_hi`, `n1`, `n2`, `type` (`"auto"` or `"cross"`), `self_pairs`,
#'   `mean_theta` (the argument), with `mean_theta = TRUE` also
#'   `theta_mean` (see `mean_theta`) and `theta_sum` (the sums of
#'   `w_i w_j theta_ij` per bin, which add up across counts), `theta_units`
#'   (the unit of `edges`, `theta_lo`, `theta_hi`, `theta_mean` and
#'   `theta_sum`: `"deg"` unless the bins were made with another `units`),
#'   `n_pairs` (all pairs counted), `n_below` and `n_above` (pairs below the
#'   first and at or beyond the last edge), `n_outside` (their sum),
#'   `backend`, `devices`, `threads`, `elapsed` (seconds for the whole
#'   call, checks included), `gpu_ms`
#'   (kernel time on the GPU, `NA` on the CPU) and `gpu_idle_s` (the
#'   seconds of `elapsed` in which the GPU ran no counting kernel, the mean
#'   over the devices: the host work it waited on, such as checks, unit
#'   vectors, the grid plan, the hand-off of tasks and copies; `NA` on the
#'   CPU; in a distributed count, the sum over its blocks),
#'   `fingerprint1` and `fingerprint2` (of each catalog: its number of
#'   points and exact order-free sums over its rounded unit vectors and
#'   hashes of them, by which [wtheta_from_counts()] tells counts of other
#'   catalogs apart). With
#'   weights also
#'   `weighted` (the weighted counts per bin), `weighted_below`,
#'   `weighted_above`, `sum_w1`, `sum_w1_sq`, `sum_w2`, `sum_w2_sq` and
#'   `weighted_pairs` (the weighted count of all pairs, the normaliser);
#'   with patches also `patches` (the labels, sorted: numbers or strings,
#'   or the [sky_patches()] result),
#'   `patch_n1`, `patch_n2`
#'   (points per patch), `patch_counts` (see Patches) and, when weighted,
#'   `patch_weighted`, `patch_w1`, `patch_w1_sq`, `patch_w2`, `patch_w2_sq`.
#'   With `bitwise` or `angular`, `pip` records the settings: `bitwise`
#'   (`"pairs"`: words on both sides; `"individual"`: on one side, folded
#'   into its weights; `"none"`), `n_bits`, `nrealizations` (as used),
#'   `noffset`, `default_value` and `angular`; the counts are then always
#'   weighted (unit weights where none are given). With bitwise words on
#'   both sides and patches, `patch_pip_norm` is a patches x patches
#'   matrix whose element `[a, b]` sums the normalisation's expected pair
#'   weights over the ordered pairs of a point of patch `a` and one of
#'   patch `b` (distinct points): `weighted_pairs` is its sum (halved for
#'   auto pairs), and a jackknife replicate without patch `r` has
#'   `sum(patch_pip_norm[-r, -r])` (halved for auto pairs).
#'   `pairs_skipped` counts the pairs that pruning by the last edge proved
#'   to lie beyond it and counted without visiting (see [wtheta-package]),
#'   and, on the GPU, those the kernels counted in bulk (runs of points
#'   whose pairs all lie in one bin, or beyond the last edge, with or
#'   without the grid),
#'   and `grid_plan_s` the seconds spent planning that grid (0 without it):
#'   the walk over the catalogs' cells and, for a catalog whose cells were
#'   not built yet, sorting it into cells and building their trees (in
#'   [wtheta()] each catalog's are built once, in the first count that
#'   uses them). On the GPU the walk hands its tasks to the devices in
#'   rounds as it makes them, and they count while it goes on, so there
#'   `grid_plan_s` also holds the engine's planning of those tasks and
#'   overlaps the counting (`gpu_idle_s` is what the devices waited).
#'   The counts of [wtheta_multi()] made from one labelled count of its
#'   samples (see [wtheta-package], "Labelled counts") have `labelled =
#'   TRUE`; their `elapsed`, `grid_plan_s` and `pairs_skipped` are those
#'   of the labelled count, shared by every count made from it.
#'   With `distribute`, `distributed` is a list: `tasks`, `blocks` (per
#'   catalog), `workers` (distinct worker processes that counted), `plan`
#'   (the plan's class), `reused` (blocks read from the checkpoint),
#'   `retried` (blocks sent again) and `faults` (why, one line each), `count_s` (seconds the workers spent
#'   in the blocks counted by this call), `checkpoint`, and what each worker
#'   received: `points_per_task` and `bytes_per_task` (the largest task's
#'   points and bytes of point data); `backend` then lists the backends the
#'   workers used.
#' @seealso [wtheta()], which combines counts into w(theta); [theta_bins()];
#'   [sky_patches()]; [wtheta_backends()].
#' @examples
#' set.seed(1)
#' cat <- random_catalog(500, ra_range = c(0, 20), dec_range = c(-10, 10))
#' pc <- pair_counts(cat, bins = theta_bins(0, 10, width = 1), threads = 1)
#' pc
#' sum(pc$counts) + pc$n_outside == choose(500, 2)
#' cat$w <- runif(500)
#' pw <- pair_counts(cat, bins = theta_bins(0, 10, width = 1), threads = 1,
#'                   weights = "w")
#' pw$weighted
#' @export
pair_counts <- function(x, y = NULL, bins, self_pairs = FALSE,
                        backend = c("auto", "cpu", "cuda"), threads = NULL,
                        devices = NULL, columns = c("ra", "dec"),
                        progress = NULL, weights = NULL, patches = NULL,
                        distribute = FALSE, checkpoint = NULL, retries = 1,
                        timeout = NULL, mean_theta = FALSE, bitwise = NULL,
                        nrealizations = NULL, noffset = 1,
                        default_value = 0, angular = NULL) {
  users <- if (is.null(y)) list(x = x) else list(x = x, y = y)
  pip <- pip_settings(bitwise, nrealizations, noffset, default_value,
                      angular, users)
  call <- new_call("pair_counts", users, bins, columns, progress, self_pairs,
                   mean_theta, weights, patches, backend, threads, devices,
                   distribute, checkpoint, retries, timeout, fit_on = "x",
                   check_catalogs = function(cats) {
                     check_flag(self_pairs, "self_pairs")
                     check_flag(mean_theta, "mean_theta")
                     if (self_pairs && !is.null(y)) {
                       stop("`self_pairs = TRUE` applies to auto pairs only ",
                            "(y = NULL); cross pairs are all n1 * n2 pairs ",
                            "already.", call. = FALSE)
                     }
                   }, pip = pip)
  pc <- count_catalogs(call$how, call$cats$x, call$cats$y, call$edges,
                       self_pairs, call$threads, call$progress)
  pc <- pair_counts_in_units(pc, call$units)
  pc$elapsed <- proc.time()[["elapsed"]] - call$start
  if (is.null(pc$distributed)) {
    pc$gpu_idle_s <- gpu_idle(pc$elapsed, pc$gpu_ms, pc$devices)
  }
  pc
}

# The seconds of a call of `elapsed` seconds in which the GPU ran no
# counting kernel: the host work it waited on (checks, unit vectors, the
# grid plan, the engine's task hand-off and chunk copies, results). With
# several devices, the mean over them. NA off the GPU.
gpu_idle <- function(elapsed, gpu_ms, devices) {
  if (is.na(gpu_ms)) return(NA_real_)
  max(0, elapsed - gpu_ms / 1000 / max(1L, length(devices)))
}

# The one place that calls the C core. a, b: unit vectors from
# unit_vectors() (b NULL for auto); run: from choose_backend(); wa, wb:
# weights or NULL; pa, pb: patch numbers in 1..n_patches or NULL; ha, hb:
# catalog handles (new_catalog_handle()) of a and b, whose C catalogs keep
# their grid for the next count, or NULL: a catalog for this count only.
# mean_theta: also the sums of the pairs' angles (theta_sum, theta_mean).
# defer: a deferred count (deferred()) instead of the count: between
# catalogs with handles, the count starts in a thread of its own and this
# returns at once, so that R and the host work of the next count overlap
# its kernels (run_counts() asks for it on the GPU only); without handles
# it is counted now. la, lb, n_lab > 0: a labelled count (R/labelled.R).
# margins: with patches, keep only the margins of the patch arrays
# (`patch_margins`, all a jackknife needs) instead of the P x P x bins
# arrays.
count_pairs <- function(a, b, edges, self_pairs, run, threads,
                        progress = FALSE, wa = NULL, wb = NULL, pa = NULL,
                        pb = NULL, n_patches = 0L, progress_share = 1,
                        ha = NULL, hb = NULL, mean_theta = FALSE,
                        defer = FALSE, ba = NULL, bb = NULL, pip = NULL,
                        la = NULL, lb = NULL, n_lab = 0L, margins = FALSE,
                        grid_scale = 1) {
  start <- proc.time()[["elapsed"]]
  # a progressor (progressr) gets a sink for this count; see R/progress.R
  progress <- progress_sink(progress, progress_share)
  is_auto <- is.null(b)
  weighted <- !is.null(wa)
  tasks <- NULL
  n_out <- 1L
  ra <- rb <- NULL
  if (!is.null(pa)) {
    # points grouped by patch (unless they come so, from group_patches());
    # one task per pair of patches
    grouped <- function(xyz, p, w, bits, lab) {
      if (!is.null(attr(p, "ranges")))
        return(list(xyz = xyz, labels = p, weights = w, bits = bits, lab = lab))
      group_patches(xyz, p, n_patches, w, bits, lab)
    }
    g <- grouped(a, pa, wa, ba, la)
    a <- g$xyz
    pa <- g$labels
    wa <- g$weights
    ba <- g$bits
    la <- g[["lab"]]                 # [[: g$lab would match g$labels
    ra <- attr(pa, "ranges")
    rb <- ra
    if (!is_auto) {
      g <- grouped(b, pb, wb, bb, lb)
      b <- g$xyz
      pb <- g$labels
      wb <- g$weights
      bb <- g$bits
      lb <- g[["lab"]]
      rb <- attr(pb, "ranges")
    }
    # one task per pair of patches within reach of each other, each with
    # a histogram; the pairs of the others lie beyond the last edge. The
    # pairs (a, b) are all for cross, a <= b for auto, each numbered as
    # its histogram (a - 1) + (b - 1) P, the column-major [a, b] of the
    # P x P matrix of wt_r_patch_plan() (src/r/patches.c), which makes
    # the numbers of the pairs run and of the far ones, and the tasks, in
    # one C pass (R's P x P logical matrices, which() and cbind() made
    # 0.94 MB a jackknife call, three counts, at 100 patches)
    plan <- .Call(C_patch_plan, a, ra, if (!is_auto) b, if (!is_auto) rb,
                  edges[length(edges)], threads)
    patch_map <- plan$map
    far <- plan$far
    tasks <- plan$tasks
    n_out <- length(patch_map)
  }
  # only a count between catalogs that outlive it runs in a thread
  defer_here <- defer && !is.null(ha) && (is_auto || !is.null(hb))
  # a catalog made here serves this count only: its grid is freed on exit
  if (is.null(ha)) {
    ha <- new_catalog_handle()
    on.exit(catalog_release(ha), add = TRUE)
  }
  if (!is_auto && is.null(hb)) {
    hb <- new_catalog_handle()
    on.exit(catalog_release(hb), add = TRUE)
  }
  L <- label_sizes(la, lb, n_lab, is_auto)
  ca <- catalog_handle(ha, a, if (weighted) wa, ra, ba, L$la0)
  cb <- if (!is_auto) catalog_handle(hb, b, if (weighted) wb, rb, bb, L$lb0)
  # (a labelled count's parts carry their samples' fingerprints, not the
  # union's: labelled_pair_counts())
  fingerprints <- function() {
    if (L$n_lab > 0L) return(NULL)
    list(catalog_fingerprint(a, ha, threads),
         if (!is_auto) catalog_fingerprint(b, hb, threads))
  }
  # labelled: each label pair's part comes back as a count of its own
  # would (wtr_label_parts() in src/r/results.c; for count_labelled())
  # the patches, the form of their counts (1: margins) and the pair of
  # patches of each task histogram (wtr_patch_form in src/r/boundary.h)
  n_p <- if (is.null(pa)) 0L else list(as.integer(n_patches),
                                       if (isTRUE(margins)) 1L else 0L,
                                       patch_map)
  # the pairs of the pairs of patches beyond reach, added to those beyond
  # the last edge (far_pairs())
  with_far <- if (is.null(pa) || !length(far)) identity else function(res) {
    far_pairs(res, far, n_patches, ra, rb, pa, pb, wa, wb, L, la, lb,
              is_auto)
  }
  finish <- if (L$n_lab > 0L) function(res, fp) {
    count_labelled(res, L, a, b, edges, run, wa, wb, pa, pb, ra, rb, la, lb,
                   n_out, n_patches)
  } else function(res, fp) {
    pc <- count_result(res, a, b, edges, self_pairs, run, threads, progress,
                       wa, wb, pa, pb, ra, rb, n_patches, mean_theta, start)
    pc <- pip_result(pc, pip, wa, wb, ba, bb, is_auto, self_pairs, pa, pb,
                     n_patches)
    add_fingerprints(pc, fp[[1L]], fp[[2L]])
  }
  if (defer_here) {
    pending <- .Call(C_count_start, ca, cb, edges, self_pairs,
                     wt_constant("backend", run$backend), threads,
                     run$devices, tasks, as.integer(n_out * L$n),
                     grid_arg(grid_scale), isTRUE(mean_theta), pip$c,
                     L$n_lab)
    # the fingerprints while the count runs in its thread
    fp <- tryCatch(fingerprints(), error = function(e) {
      .Call(C_count_cancel, pending)
      stop(e)
    })
    return(deferred(function() finish(with_far(.Call(C_count_wait, pending,
                                                      progress, n_p)), fp),
                    function() .Call(C_count_cancel, pending)))
  }
  fp <- fingerprints()
  res <- .Call(C_pair_counts_catalogs, ca, cb, edges, self_pairs,
               wt_constant("backend", run$backend), threads, run$devices,
               tasks, as.integer(n_out * L$n), progress, grid_arg(grid_scale),
               n_p,
               isTRUE(mean_theta), pip$c, L$n_lab)
  out <- finish(with_far(res), fp)
  if (defer) deferred(function() out) else out
}

# A count begun but not yet collected: finish() waits for it and returns
# its pair_counts object (once); cancel() stops it and frees it (nothing
# once finished). run_counts() starts several so and cancels on exit.
deferred <- function(finish, cancel = function() NULL) {
  list(finish = finish, cancel = cancel)
}

# the deferred count d, with f applied to its result when it is collected
deferred_then <- function(d, f) {
  deferred(function() f(d$finish()), d$cancel)
}

# Ctrl-C during a count: the engine stopped between chunks and freed
# everything, and C returned NULL. R_CheckUserInterrupt() ran inside
# R_ToplevelExec(), which keeps the interrupt from the caller's handlers,
# and error() would turn it into an error that try() swallows. So raise it
# here as R does for Ctrl-C anywhere else: signal an "interrupt"
# condition (tryCatch(interrupt = ) and withCallingHandlers() see it), run
# options(interrupt), then return to the top level (an Rscript halts).
signal_interrupt <- function() {
  cond <- structure(class = c("interrupt", "condition"),
                    list(message = paste0("wtheta: counting was ",
                                          "interrupted; no result was ",
                                          "returned"), call = NULL))
  signalCondition(cond)
  h <- getOption("interrupt")
  if (is.function(h)) h()
  invokeRestart("abort")
}

# pruning by the last edge and bulk counting (see ?wtheta-package): option
# wtheta.grid, "auto" (pruning when it pays), "prune" (always below 180
# degrees), TRUE (always, with bulk counting inside bins) or FALSE (never)
grid_mode <- function() {
  g <- getOption("wtheta.grid", "auto")
  if (identical(g, "auto")) return(wt_constant("grid", "auto"))
  if (isTRUE(g)) return(wt_constant("grid", "always"))
  if (identical(g, "prune")) return(wt_constant("grid", "prune"))
  if (isFALSE(g)) return(wt_constant("grid", "never"))
  stop("option `wtheta.grid` must be \"auto\", TRUE, \"prune\" or FALSE, ",
       "not ", describe(g), ".", call. = FALSE)
}

# the grid mode as C takes it, with the call's widening of the grid's
# cells (grid_scale()) where it is more than 1
grid_arg <- function(scale = 1) {
  mode <- grid_mode()
  if (scale > 1) c(as.double(mode), scale) else mode
}

# The widening of the grid's cells for the counts of one call between the
# catalogs `cats` (each with its unit vectors, xyz) for bins `edges`
# (degrees) on `backend` ("cpu" or "cuda"), read on `threads` threads: from
# 1 to 2 in steps of 2^(1/4), as far as they hold few points per cell, or
# that of a grid a catalog (prepared) keeps from an earlier call (see
# wt_grid_call_scale() in src/core/grid_policy.c). One value for all the
# counts of a call, which share their catalogs' grids. 1, with nothing
# read, when no count of the call can take the grid (option wtheta.grid
# FALSE, bins beyond 60 degrees or too few pairs in auto mode) and for
# distributed counts (backend NULL), whose workers count blocks with the
# policy's cells; the option wtheta.grid_scale fixes it (see
# ?wtheta-package, "Pruning and bulk counting").
grid_scale <- function(cats, edges, threads = 1L, backend = "cpu") {
  g <- getOption("wtheta.grid_scale")
  if (!is.null(g)) {
    if (!is.numeric(g) || length(g) != 1L || is.na(g) || g < 1 || g > 2) {
      stop("option `wtheta.grid_scale` must be one number from 1 to 2, ",
           "not ", describe(g), ".", call. = FALSE)
    }
    return(as.double(g))
  }
  if (is.null(backend)) return(1)
  .Call(C_grid_scale, lapply(unname(cats), `[[`, "xyz"),
        edges[length(edges)], grid_mode(), wt_constant("backend", backend),
        as.integer(threads), lapply(unname(cats), function(x) x$handle$ptr))
}
