#' What can count pairs here
#'
#' Lists the engines this build of wtheta can use: the CPU engine (always)
#' and each CUDA device that is visible (the CUDA runtime honours
#' `CUDA_VISIBLE_DEVICES`). Looking for GPUs happens here, never when the
#' package is loaded.
#'
#' @return A data frame with one row per engine or device and columns
#'   `backend` (`"cpu"` or `"cuda"`), `available`, `device` (CUDA device
#'   index, `NA` for the CPU), `name`, `compute_capability`, `memory_gb` and
#'   `threads` (CPU threads wtheta uses by default: see [wtheta_threads()],
#'   from the cores `parallelly::availableCores()` finds). Its attribute
#'   `cuda_compiled` says whether CUDA support was compiled in; when a
#'   `"cuda"` row is unavailable, `name` says why. The attribute `cpu_isa`
#'   names the instruction set of the CPU engine's kernels (`"avx512"`,
#'   `"avx2"` or `"plain"`): the best this CPU runs, or the one the
#'   environment variable `WTHETA_CPU_ISA` asks for (`NA` when it asks for
#'   one this CPU or build cannot run: the `cpu` row's `name` then says so,
#'   and CPU counts stop with that error). `cpu_isas` lists those this CPU
#'   and build can run.
#' @seealso [wtheta_threads()] for the CPU thread count, [wtheta_free_gpu()],
#'   the `backend` argument of [pair_counts()] and [wtheta()].
#' @examples
#' wtheta_backends()
#' @export
wtheta_backends <- function() {
  isa <- .Call(C_cpu_isa)
  cpu <- data.frame(backend = "cpu", available = !is.na(isa$chosen),
                    device = NA_integer_,
                    name = paste0("OpenMP CPU engine (", cpu_cores(),
                                  " cores, ",
                                  if (is.na(isa$chosen)) isa$message
                                  else paste(isa$chosen, "kernels"), ")"),
                    compute_capability = NA_character_, memory_gb = NA_real_,
                    threads = wtheta_threads())
  info <- .Call(C_cuda_info)
  if (!info$compiled) {
    gpu <- data.frame(backend = "cuda", available = FALSE, device = NA_integer_,
                      name = "not compiled in (no nvcc at build time)",
                      compute_capability = NA_character_,
                      memory_gb = NA_real_, threads = NA_integer_)
  } else if (info$count == 0L) {
    gpu <- data.frame(backend = "cuda", available = FALSE, device = NA_integer_,
                      name = paste0("no usable GPU: ", info$message),
                      compute_capability = NA_character_,
                      memory_gb = NA_real_, threads = NA_integer_)
  } else {
    gpu <- do.call(rbind, lapply(seq_len(info$count) - 1L, function(d) {
      dev <- .Call(C_cuda_device, d)
      data.frame(backend = "cuda", available = TRUE, device = d,
                 name = dev$name,
                 compute_capability = paste0(dev$major, ".", dev$minor),
                 memory_gb = round(dev$memory / 2^30, 1),
                 threads = NA_integer_)
    }))
  }
  out <- rbind(cpu, gpu)
  attr(out, "cuda_compiled") <- info$compiled
  attr(out, "cpu_isa") <- isa$chosen
  attr(out, "cpu_isas") <- isa$supported
  out
}

# The codes of the C core's enums (backends, grid modes, instruction sets),
# by name, from the one place that defines them (src/wt.h, handed over by
# wt_r_constants() in src/r/backend.c): R never writes a raw code.
wt_constant <- function(kind, name) {
  if (is.null(constants_cache$codes)) constants_cache$codes <- .Call(C_constants)
  code <- constants_cache$codes[[kind]][name]
  if (length(code) != 1L || is.na(code))
    stop("wtheta internal: no constant ", kind, " \"", name, "\"", call. = FALSE)
  unname(code)
}
constants_cache <- new.env(parent = emptyenv())

#' Threads used by the CPU engine
#'
#' The number of threads the CPU engine uses when `threads` is not given:
#' the option `wtheta.threads` if set, otherwise the cores that
#' [parallelly::availableCores()] finds (it respects the CPU affinity,
#' cgroups limits of containers, the option `mc.cores`, and the cores
#' granted by Slurm, PBS, SGE and LSF), lowered by `OMP_NUM_THREADS`,
#' `OMP_THREAD_LIMIT` and R CMD check's `_R_CHECK_LIMIT_CORES_` (2), and 1
#' inside a forked child process. The cores are looked up once per R
#' process (and again when the option `mc.cores` changes).
#'
#' @section Ceiling: `threads` (and the option `wtheta.threads`) must be a
#'   whole number from 1 up to four times the number of processors
#'   (`omp_get_num_procs()`, the `cpu` row of [wtheta_backends()]), or up
#'   to 16 on a machine with fewer than four: a larger request is refused
#'   with an error, not lowered. A request
#'   above `OMP_THREAD_LIMIT` is lowered to it, as OpenMP does. Before the
#'   first count with a team larger than any before, wtheta checks that
#'   the system can start that many threads (memory and process limits),
#'   and stops with an error naming the number when it cannot, rather than
#'   count on fewer threads than asked.
#'
#' @section Machines shared with other busy processes: The CPU engine
#'   runs on threads of the package's own. Between the parallel steps of a
#'   call they spin for about 0.1 ms, then sleep, and a step never waits
#'   for a thread that has not woken yet, so on cores that other processes
#'   want too a call keeps its share of them. (The OpenMP runtime that R
#'   loads, libgomp, keeps its idle threads spinning for about 8 ms after
#'   each step whatever a package asks, which took the time of the thread
#'   still working; wtheta no longer runs its steps on OpenMP's threads, so
#'   `OMP_WAIT_POLICY` makes no difference to it.) Measured on a 2-core VM
#'   with two other busy processes, 2 threads (`bench/survey.R` at 2 x
#'   10^4 x 10^5, minimum of 5, two runs): the plain call took 0.188-0.199
#'   s, the jackknife over 100 patches 0.231-0.241 s and the tomography
#'   with jackknife 0.270-0.276 s, 1.8-2.1x the idle machine's (the two
#'   cores' share is 2x); on OpenMP's threads they took 0.332-0.339,
#'   0.436-0.494 and 0.360-0.924 s. At 10^5 x 5 x 10^5, 2.0-2.1x, 2.0x and
#'   1.9-2.0x (2.2-2.3x, 2.2x and 2.1-2.2x before). The idle machine's
#'   times did not change. The environment variable `WTHETA_TEAM_SPIN`
#'   (the pauses before an idle thread sleeps, 4096 by default; read when
#'   the package loads) is for benchmarks.
#'
#' @section Large calls and memory pages: A call on 10^7 points or more
#'   writes gigabytes of memory it has just allocated (unit vectors, the
#'   grid's sorted copy, the counters). Buffers of 32 MB or more are asked
#'   for in 2 MB pages (Linux's transparent huge pages, where
#'   `/sys/kernel/mm/transparent_hugepage/enabled` is `madvise` or
#'   `always`), which a virtual machine faults in far faster than 4 kB
#'   ones: the 10^8-point full-sky count took 0.7-1.0 s less on a GPU
#'   host (`bench/scale.R`, NEWS). Memory use is the same but for rounding
#'   each such buffer up to whole 2 MB pages. The environment variable
#'   `WTHETA_HUGE_PAGES=0` turns this off (read as each count starts), for
#'   benchmarks.
#'
#' @section A multithreaded BLAS: R's matrix products go to its BLAS, and
#'   many R builds use OpenBLAS, whose threads also keep spinning for a
#'   while after each product. Counts that start in that while share the
#'   cores with them. A call of wtheta multiplies no matrices through the
#'   BLAS between its counts, nor after them for jackknife errors (their
#'   covariance is made in C on the counts' threads, in the order the
#'   reference BLAS adds: the same numbers); bootstrap replicates are
#'   products of patch arrays and use it. Matrix products of your own just
#'   before a call can slow its counts on a machine with many cores: on
#'   the H100 machine's 16-core Xeon, whose R uses OpenBLAS, a six-sample
#'   tomography with jackknife errors (`bench/survey.R` at 2 x 10^4 x
#'   10^5, 16 threads, calls in a row, each then ending with a product
#'   through the BLAS) took a median of 0.149-0.150 s, and 0.083-0.088 s
#'   with `OPENBLAS_NUM_THREADS=1` set in the shell that started R.
#'
#' @return A single integer.
#' @seealso [wtheta_backends()], the `threads` argument of [pair_counts()] and
#'   [wtheta()].
#' @examples
#' wtheta_threads()
#' @export
wtheta_threads <- function() {
  opt <- getOption("wtheta.threads")
  if (!is.null(opt)) return(check_threads(opt, "options(wtheta.threads)"))
  min(.Call(C_default_threads, available_cores()), thread_ceiling())
}

cpu_cores <- function() .Call(C_cpu_cores)

# the most threads a call may ask for: 4 per processor, at least 16 (a
# request of 10^5 overflowed libgomp's stack, 20,000 really started)
thread_ceiling <- function() max(16L, 4L * cpu_cores())

check_threads <- function(threads, arg = "threads") {
  check_count(threads, arg, thread_ceiling(),
              paste0(" (4 per processor of the ", cpu_cores(), " here, ",
                     "at least 16)"))
  as.integer(threads)
}

# parallelly::availableCores(), cached: it reads cgroups files and runs
# `nproc` (about 15 ms), too slow for every count. Looked up again in a
# new process (a forked child) or when the option mc.cores changes.
cores_cache <- new.env(parent = emptyenv())
available_cores <- function() {
  key <- paste(Sys.getpid(), format(getOption("mc.cores")))
  if (!identical(cores_cache$key, key)) {
    n <- suppressWarnings(as.integer(parallelly::availableCores()))
    cores_cache$n <- if (length(n) == 1L && !is.na(n) && n >= 1L) n else 0L
    cores_cache$key <- key
  }
  cores_cache$n
}

# the `threads` argument: NULL means wtheta_threads()
threads_or_default <- function(threads) {
  if (is.null(threads)) wtheta_threads() else check_threads(threads)
}

# Decides which engine runs: list(backend = "cpu" | "cuda", devices = int).
choose_backend <- function(backend, devices) {
  backend <- match_choice(backend, c("auto", "cpu", "cuda"), "backend")
  if (backend == "cpu") {
    if (!is.null(devices)) {
      stop("`devices` selects GPUs and cannot be used with ",
           "backend = \"cpu\".", call. = FALSE)
    }
    return(list(backend = "cpu", devices = integer()))
  }
  info <- .Call(C_cuda_info)
  if (!info$compiled || info$count == 0L) {
    if (backend == "cuda") {
      why <- if (!info$compiled) {
        "wtheta was built without CUDA support (no nvcc at install time)"
      } else {
        paste0("no usable CUDA GPU was found (", info$message, ")")
      }
      stop("backend = \"cuda\" was requested, but ", why, ".", call. = FALSE)
    }
    if (!is.null(devices)) {
      stop("`devices` was given, but no CUDA GPU can be used here.",
           call. = FALSE)
    }
    return(list(backend = "cpu", devices = integer()))
  }
  if (is.null(devices)) devices <- seq_len(info$count) - 1L
  if (!is.numeric(devices) || !length(devices) || anyNA(devices) ||
      any(devices != round(devices)) || any(devices < 0) ||
      any(devices >= info$count) || anyDuplicated(devices)) {
    stop("`devices` must be distinct CUDA device indices in 0..",
         info$count - 1L, ", not ", describe(devices), ".", call. = FALSE)
  }
  list(backend = "cuda", devices = as.integer(devices))
}

#' Free the GPU memory wtheta keeps between counts
#'
#' The CUDA engine keeps its device buffers, streams and events between
#' calls so that repeated counts start fast (a few hundred MB per GPU after
#' large counts). `wtheta_free_gpu()` frees those not in use now; the next
#' GPU count allocates again. wtheta also calls it when R exits, so that
#' tools such as `compute-sanitizer` see every device allocation freed.
#' Without CUDA support it does nothing.
#'
#' @return The number of per-device contexts freed, invisibly.
#' @seealso [wtheta_backends()].
#' @examples
#' wtheta_free_gpu()
#' @export
wtheta_free_gpu <- function() {
  invisible(.Call(C_cuda_release))
}

# at exit, free the GPU buffers (no GPU work at load: the finalizer only
# runs when R ends, and frees nothing if no GPU count ran)
.onLoad <- function(libname, pkgname) {
  holder <- new.env(parent = emptyenv())
  reg.finalizer(holder, function(e) .Call(C_cuda_release), onexit = TRUE)
  assign(".wtheta_exit", holder, envir = topenv())
  invisible(NULL)
}

# The package's thread teams (src/core/team.c) checked, for its tests: a
# team of `nt` over loops of `n` iterations and `teams` teams in a row (see
# wt_team_check() for what each of the six numbers is)
team_check <- function(nt, n = 100003, teams = 2000) {
  .Call(C_team_check, as.integer(nt), as.double(n), as.integer(teams))
}
