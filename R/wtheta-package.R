#' wtheta: exact angular two-point correlation functions
#'
#' Counts the angular separations of pairs of sky positions into
#' histograms on the CPU (threads) or on NVIDIA GPUs (CUDA) and estimates
#' the angular two-point correlation function w(theta).
#'
#' The main functions are [read_catalog()], [theta_bins()],
#' [pair_counts()], [wtheta()] and [wtheta_backends()].
#'
#' @section Exactness:
#' Every backend places every pair in the bin that a plain double-precision
#' computation gives. A position (ra, dec) in degrees becomes the unit
#' vector (cos(dec) cos(ra), cos(dec) sin(ra), sin(dec)), with angles
#' converted as `deg * (pi / 180)`; a pair's squared chord is
#' `d2 = (x1 - x2)^2 + (y1 - y2)^2 + (z1 - z2)^2`; an edge `theta` becomes
#' the squared chord `4 sin(theta / 2)^2`; and a pair is in bin `k` when
#' `c2[k] <= d2 < c2[k + 1]`, so bins are `[lo, hi)` in angle. An edge of
#' exactly 180 degrees is treated as infinitely far, so antipodal pairs fall
#' in the last bin rather than outside it. Away from a rounding error of an
#' edge this is the bin of the true angle; at an edge, double-precision
#' rounding decides, the same way on every backend.
#'
#' @section Pruning and bulk counting:
#' When the last edge is below 60 degrees and a count holds more than 10^8
#' pairs (10^11 on the GPU, where brute force is fast enough that planning
#' the grid costs more below that: on an H200, 100,000-point catalogs on
#' the classic footprint with 20 log bins to 10 degrees take 17 ms without
#' the grid and 70 ms with it, 10^6-point ones 912 ms without and 387 ms
#' with it), the
#' points are sorted into cells on the sphere (declination bands
#' cut in right ascension, each cell a tree of smaller nodes), and pairs
#' of cells whose bounding caps stay beyond the last edge are not visited: their pairs are added to those beyond the
#' last edge (`n_above`) by number. Node pairs whose least and greatest
#' possible separation fall in one bin can likewise be added to that bin
#' without visiting their pairs (bulk counting; PIP counts visit them for
#' their pair weights, on the CPU without a bin lookup per pair, see
#' [pair_counts()]). Both rest on the triangle
#' inequality between the double-precision unit vectors, with margins far
#' above rounding, so counts stay exactly those of brute force. A
#' catalog's cells and trees depend on its points alone, so [wtheta()]
#' builds them once per catalog and reuses them for DD, DR and RR; only
#' the walk over two catalogs' trees is made per count.
#' `pairs_skipped` in a [pair_counts()] result says how many pairs were
#' counted this way (on the GPU, with those its kernels count in bulk:
#' see [pair_counts()]). Cells are a quarter of the last edge wide, or wider,
#' up to half of it, when a call's catalogs hold few points per cell
#' (fewer than about 80 at a quarter of the last edge, from a sample of up
#' to 2^15 points of each): each pair of cells within reach costs a test,
#' so cells of a few points cost more to pair than their pairs cost to
#' count. One width, in steps of 2^(1/4), serves all the counts of a
#' call; a prepared catalog whose grid an earlier call built keeps it when
#' its width is one of this call's (a quarter to half of the last edge).
#' The option `wtheta.grid_scale`, a number from 1 to 2, fixes the
#' widening instead (1: a quarter of the last edge, the width of earlier
#' versions); the counts are the same at any width. The option
#' `wtheta.grid` chooses: `"auto"` (the
#' default: as above, with bulk counting on the CPU only), `"prune"`
#' (always prune, never bulk count), `TRUE` (always prune and bulk count)
#' or `FALSE` (never). Bulk counting makes many small tasks: on the CPU it
#' pays at survey sizes (10^6 x 10^6 points, 20 log bins to 10 degrees,
#' 2 threads: 86 s against 112 s with pruning alone). On the GPU its
#' kernels take a third less time (10^8 points on an H100: 19.2 s against
#' 28.0 s), but handing its millions of tasks to the engine cost about 40 s
#' on the host (66.4 s against 38.3 s for the whole call). That hand-off
#' now takes time linear in the tasks (`bench/plan.R` times it without a
#' GPU), and the whole call counting in bulk takes 32.6 s against 38.1 s
#' pruning only (10^8 points, H100), but 1.10 s against 0.99 s at 10^7
#' points. So on the GPU `"auto"` counts in bulk from 5 x 10^14 pairs and
#' prunes only below.
#'
#' @section Overlapped counts:
#' On the GPU, [wtheta()] and [wtheta_multi()] start all their counts (DD,
#' DR, RR, ...) before collecting the first: each runs in a thread of its
#' own, so that the host work of one count (its set-up, copies to the GPU,
#' results) and R's work between counts (the footprint check included) run
#' while the GPU counts another. The counts are the same as one after the
#' other, bit for bit (weighted sums and `theta_mean` to the last bits,
#' which the GPU's atomic additions leave in no fixed order either way). A
#' warm classic call on an H100 (100,000 points each, 360 bins) takes
#' 16.5 / 18.3 ms (min / median) with the counts overlapped against
#' 23.3 / 27.3 ms without, and 13.2 / 13.8 against 15.8 / 17.0 ms with
#' catalogs from [prepare_catalog()] (`bench/host.R`). The
#' kernel times of overlapped counts (`gpu_ms`) overlap too, and each
#' count's `elapsed` runs from its start to its collection.
#' `options(wtheta.overlap = FALSE)` counts one after the other. CPU counts
#' never overlap: each already uses every thread it is given.
#'
#' @section Labelled counts:
#' On the CPU, [wtheta_multi()] counts the pairs of all its samples in one
#' count of their union whose points carry their sample's label, each pair
#' into the histogram of its two labels, and their pairs with the randoms
#' in one more, instead of a count for each pair of samples and for each
#' sample against the randoms; the results are split into those separate
#' counts (see [wtheta_multi()]). Counts and patch arrays are identical to
#' the separate counts', weighted counts equal to rounding.
#' `options(wtheta.labels = FALSE)` counts them one by one (the default is
#' `TRUE`). Counts with self pairs, `mean_theta`, PIP weights, on the GPU
#' or distributed are always made one by one, and so are those whose
#' labelled histograms would not fit in a quarter of the memory available.
#'
#' @section Threads:
#' The CPU engine uses [wtheta_threads()] threads unless told otherwise. The
#' default respects `OMP_NUM_THREADS`, `OMP_THREAD_LIMIT`, R CMD check's
#' `_R_CHECK_LIMIT_CORES_` and the option `wtheta.threads`, and drops to one
#' thread in a forked child (for example inside `parallel::mclapply()`).
#'
#' @docType package
#' @name wtheta-package
#' @aliases wtheta-package
#' @keywords internal
#' @useDynLib wtheta, .registration = TRUE, .fixes = "C_"
NULL
