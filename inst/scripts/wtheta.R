# Command-line entry of wtheta: w(theta) of a data catalog and its randoms.
# Run with Rscript; --help prints the usage. Exit status: 0 done, 1 the
# computation failed (the message says why), 2 bad arguments.
usage <- "Usage: Rscript wtheta.R --data FILE --random FILE [options]

Estimates the angular two-point correlation function w(theta) of the data
catalog against the random catalog, prints the table and writes it as CSV.

  --data FILE        data catalog: a FITS table (RA/DEC found by name), or
                     text with two columns ra dec (whitespace or CSV; an
                     optional first line with the row count, an optional
                     header line)
  --random FILE      random catalog on the same footprint, same form
  --units U          units of both files: deg (default; FITS: TUNIT),
                     arcmin, arcsec, rad
  --columns A,B      ra and dec columns: numbers (default 1,2) or names
  --bins SPEC        angular bins in degrees (default lin:0,90,0.25):
                       lin:FROM,TO,WIDTH   linear bins of width WIDTH
                       log:FROM,TO,N       N logarithmic bins
                       edges:E0,E1,...     the edges as given
  --estimator E      LS (default, Landy-Szalay), natural, DP, Hamilton
  --self-pairs       count all ordered pairs, self pairs included (the
                     classic convention); default: unordered pairs
  --backend B        auto (default: a GPU when usable), cpu, cuda
  --threads N        CPU threads (default: all cores)
  --out FILE         write the table as CSV (columns theta_lo, theta_hi,
                     theta, DD, DR, RR, w)
  --plot FILE        write a PNG plot of w(theta)
  --rows N           bins to print (default 10; 0 for none, all for all)
  --progress         progress lines on stderr during long runs
                     (default: off; --no-progress turns them off)
  --quiet            print nothing but errors
  --help             this text

Example (the classic catalogs, 0.25-degree bins to 90 degrees):
  Rscript wtheta.R --data data_100k_arcmin.txt --random flat_100k_arcmin.txt \\
    --units arcmin --bins lin:0,90,0.25 --self-pairs --out w.csv
"

fail_usage <- function(...) {
  cat("wtheta.R: ", ..., "\nRun with --help for the usage.\n", sep = "",
      file = stderr())
  quit(save = "no", status = 2)
}

parse_args <- function(args) {
  flags <- c("self-pairs", "progress", "no-progress", "quiet", "help")
  valued <- c("data", "random", "units", "columns", "bins", "estimator",
              "backend", "threads", "out", "plot", "rows")
  opt <- list()
  i <- 1L
  while (i <= length(args)) {
    a <- args[i]
    if (!startsWith(a, "--")) fail_usage("unexpected argument \"", a, "\".")
    key <- sub("^--", "", a)
    value <- NULL
    if (grepl("=", key, fixed = TRUE)) {
      value <- sub("^[^=]*=", "", key)
      key <- sub("=.*$", "", key)
    }
    if (key %in% flags) {
      if (!is.null(value)) fail_usage("--", key, " takes no value.")
      opt[[key]] <- TRUE
    } else if (key %in% valued) {
      if (is.null(value)) {
        if (i == length(args) || startsWith(args[i + 1L], "--")) {
          fail_usage("--", key, " needs a value.")
        }
        i <- i + 1L
        value <- args[i]
      }
      if (!is.null(opt[[key]])) fail_usage("--", key, " is given twice.")
      opt[[key]] <- value
    } else {
      fail_usage("unknown option --", key, ".")
    }
    i <- i + 1L
  }
  opt
}

parse_numbers <- function(text, what) {
  v <- suppressWarnings(as.numeric(strsplit(text, ",", fixed = TRUE)[[1L]]))
  if (!length(v) || anyNA(v)) {
    fail_usage("--", what, ": \"", text, "\" is not a comma-separated list ",
               "of numbers.")
  }
  v
}

parse_bins <- function(spec) {
  kind <- sub(":.*$", "", spec)
  rest <- sub("^[^:]*:", "", spec)
  if (!grepl(":", spec, fixed = TRUE) ||
      !kind %in% c("lin", "log", "edges")) {
    fail_usage("--bins: \"", spec, "\" is not lin:FROM,TO,WIDTH, ",
               "log:FROM,TO,N or edges:E0,E1,...")
  }
  v <- parse_numbers(rest, "bins")
  if (kind != "edges" && length(v) != 3L) {
    fail_usage("--bins: ", kind, ": needs three numbers, not ", length(v),
               ".")
  }
  res <- tryCatch(switch(kind,
    lin = wtheta::theta_bins(v[1L], v[2L], width = v[3L]),
    log = wtheta::theta_bins(v[1L], v[2L], n = v[3L], log = TRUE),
    edges = wtheta::theta_bins(edges = v)),
    error = function(e) fail_usage("--bins: ", conditionMessage(e)))
  res
}

main <- function(args) {
  opt <- parse_args(args)
  if (isTRUE(opt$help) || !length(args)) {
    cat(usage)
    quit(save = "no", status = if (length(args)) 0 else 2)
  }
  for (need in c("data", "random")) {
    if (is.null(opt[[need]])) fail_usage("--", need, " FILE is required.")
    if (!file.exists(opt[[need]])) {
      fail_usage("--", need, ": file \"", opt[[need]], "\" does not exist.")
    }
  }
  units <- opt$units                    # NULL: degrees, or FITS TUNITn
  if (!is.null(units) && !units %in% c("deg", "arcmin", "arcsec", "rad")) {
    fail_usage("--units must be deg, arcmin, arcsec or rad, not \"", units,
               "\".")
  }
  columns <- NULL                       # FITS: by name; text: 1,2 or names
  if (!is.null(opt$columns)) {
    columns <- strsplit(opt$columns, ",", fixed = TRUE)[[1L]]
    if (length(columns) != 2L) {
      fail_usage("--columns needs two columns (ra,dec), not \"",
                 opt$columns, "\".")
    }
    num <- suppressWarnings(as.numeric(columns))
    if (!anyNA(num)) columns <- num
  }
  estimator <- if (is.null(opt$estimator)) "LS" else opt$estimator
  if (!estimator %in% c("LS", "natural", "DP", "Hamilton")) {
    fail_usage("--estimator must be LS, natural, DP or Hamilton, not \"",
               estimator, "\".")
  }
  backend <- if (is.null(opt$backend)) "auto" else opt$backend
  if (!backend %in% c("auto", "cpu", "cuda")) {
    fail_usage("--backend must be auto, cpu or cuda, not \"", backend, "\".")
  }
  threads <- NULL
  if (!is.null(opt$threads)) {
    threads <- suppressWarnings(as.integer(opt$threads))
    if (is.na(threads) || threads < 1L ||
        !grepl("^[0-9]+$", opt$threads)) {
      fail_usage("--threads must be a whole number >= 1, not \"",
                 opt$threads, "\".")
    }
  }
  rows <- 10L
  if (!is.null(opt$rows)) {
    rows <- if (opt$rows == "all") .Machine$integer.max else
      suppressWarnings(as.integer(opt$rows))
    if (is.na(rows) || rows < 0L) {
      fail_usage("--rows must be a whole number >= 0 or all, not \"",
                 opt$rows, "\".")
    }
  }
  if (isTRUE(opt$progress) && isTRUE(opt[["no-progress"]])) {
    fail_usage("--progress and --no-progress contradict each other.")
  }
  bins <- parse_bins(if (is.null(opt$bins)) "lin:0,90,0.25" else opt$bins)
  quiet <- isTRUE(opt$quiet)

  suppressPackageStartupMessages(library(wtheta))
  d <- read_catalog(opt$data, units = units, columns = columns)
  r <- read_catalog(opt$random, units = units, columns = columns)
  w <- wtheta(d, r, bins, estimator = estimator,
              self_pairs = isTRUE(opt[["self-pairs"]]), backend = backend,
              threads = threads, progress = isTRUE(opt$progress))
  if (!quiet && rows > 0L) print(w, n = rows)
  if (!is.null(opt$out)) {
    utils::write.csv(as.data.frame(w), opt$out, row.names = FALSE)
    if (!quiet) cat("wrote", opt$out, "\n")
  }
  if (!is.null(opt$plot)) {
    grDevices::png(opt$plot, width = 900, height = 600, res = 110)
    plot(w)
    invisible(grDevices::dev.off())
    if (!quiet) cat("wrote", opt$plot, "\n")
  }
  invisible(w)
}

args <- commandArgs(trailingOnly = TRUE)
tryCatch(main(args), error = function(e) {
  cat("wtheta.R: error: ", conditionMessage(e), "\n", sep = "",
      file = stderr())
  quit(save = "no", status = 1)
})
