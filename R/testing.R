#' How wtheta fails, and how that is tested
#'
#' A count either returns its whole result or stops with an R error: it
#' never returns part of one. After an error (or an interrupt) everything
#' the engine took is freed and the next call counts normally. This page
#' describes the hooks the package's own tests use to check that; they are
#' not meant for analyses.
#'
#' @section Interrupts:
#' Ctrl-C (SIGINT) during a long \code{\link[=pair_counts]{pair_counts()}} or \code{\link[=wtheta]{wtheta()}} stops the run
#' at the next chunk of work (a fraction of a second on the CPU; the next
#' finished batch of kernels on the GPU). Once the engine has freed
#' everything, the call raises a real interrupt, as R does for Ctrl-C
#' anywhere else: an \code{"interrupt"} condition (message
#' \code{"wtheta: counting was interrupted; no result was returned"}) that
#' \code{tryCatch(interrupt = )} and \code{withCallingHandlers()} see, then a return
#' to the top level. \code{try()} does not catch it, so
#' \code{for (i in 1:4) try(pair_counts(...))} stops at the first Ctrl-C, and an
#' Rscript halts. Nothing is assigned, and the session can count again at
#' once.
#'
#' @section Injected faults (for tests only):
#' The environment variable \code{WTHETA_TEST_FAULT} makes the engines fail at a
#' chosen step. It is read at the start of every count and holds a
#' comma-separated list of:
#' \itemize{
#'   \item \code{alloc}: memory allocation fails. CPU: \code{"wtheta: not
#'     enough memory for the pair counts"}; CUDA: \code{"wtheta: CUDA error:
#'     cudaMalloc (fault injected by WTHETA_TEST_FAULT=alloc)"}.
#'   \item \code{launch}: a kernel launch fails (CUDA only): \code{"wtheta:
#'     CUDA error: kernel launch (fault injected ...)"}.
#'   \item \code{copy}: copying the counts back from the GPU fails (CUDA
#'     only): \code{"wtheta: CUDA error: cudaMemcpy of counts (fault injected
#'     ...)"}.
#'   \item \code{thread}: a worker thread fails half-way through the run.
#'     CPU: \code{"wtheta: a counting thread failed: injected fault in a CPU
#'     worker thread (WTHETA_TEST_FAULT=thread)"}; CUDA: \code{"wtheta: a
#'     counting thread failed: the CUDA worker thread of device D failed
#'     (fault injected ...)"}.
#'   \item \code{narrow}: not a failure but a canary: the CPU engine's narrow
#'     kernel (grid tasks whose pairs span a few bins, see \code{bench/kernel/kernel-notes.md})
#'     adds one false pair per call, so that a test can show that a workload
#'     reaches that kernel. The counts are then wrong.
#'   \item \code{fixed}: the same canary for the CPU engine's kernel of PIP
#'     tasks whose pairs the grid proved inside one bin: one false pair per
#'     such task.
#'   \item \code{pipcount}: the same canary for the CPU engine's count form
#'     of PIP counts (every individual weight 1, bitwise weights, no
#'     angular upweights, no \code{mean_theta}), which counts pairs by bin
#'     and popcount: one false pair in the first bin, of popcount 0, per
#'     call of its kernels.
#'   \item \code{slots}: not a failure: the CUDA engine keeps two chunks of
#'     2^21 points on a device at a time, loading them again as its
#'     launches move between chunks, even where the whole catalogs would
#'     fit on the device and be loaded once, so that a test covers both.
#'     The counts stay right.
#' }
#'
#' A name may end in \code{@d} (e.g. \code{launch@1}): on the GPU the fault
#' then strikes device \code{d} only, so that one failing device of several
#' can be tried; the other devices count, and the call still ends with the
#' error. The CPU engine ignores the device.
#'
#' Steps an engine does not have are ignored (the CPU engine counts normally
#' under \code{launch} or \code{copy}), and so are unknown names. Unset the variable
#' (\code{Sys.unsetenv("WTHETA_TEST_FAULT")}) to count again.
#'
#' @section Threads and forked processes:
#' In a process forked from R (for example by \code{parallel::mclapply()}), the
#' CPU engine uses one thread unless \code{threads} (or the option
#' \code{wtheta.threads}) asks for more, so that workers do not oversubscribe
#' the cores. The engine's worker threads are the package's own, and a
#' forked child that asks for several threads starts its own workers (the
#' parent's are not copied into it). wtheta also releases OpenMP's thread
#' pool before any fork, so that other OpenMP code in the child does not
#' hang (GNU OpenMP is not otherwise safe to use after a fork).
#'
#' @section Memory and sanitizer checks:
#' In the package sources, \code{tools/sanitize.sh asan} (or \code{make sanitize})
#' runs the test suite with the C code built under AddressSanitizer and
#' UndefinedBehaviorSanitizer, \code{tools/sanitize.sh valgrind} (\code{make
#' valgrind}) runs a representative subset under valgrind, and
#' \code{bench/memory.R} checks that 1000 calls keep the resident memory (and the
#' GPU's used memory) flat. \code{tools/gpu-check.sh} runs compute-sanitizer and
#' the GPU cases on a machine with a GPU.
#'
#' @name wtheta-testing
#' @keywords internal
NULL
