# Command-line entry of wtheta: w(theta) of a data catalog and its randoms.
# Run with Rscript; --help prints the usage. `wtheta::wtheta_cli()` prints
# the path of the installed copy. Exit status: 0 done, 1 the computation
# failed (the message says why), 2 bad arguments.

fail_usage <- function(...) {
  cat("wtheta.R: ", ..., "\nRun with --help for the usage.\n", sep = "",
      file = stderr())
  quit(save = "no", status = 2)
}

if (!requireNamespace("optparse", quietly = TRUE)) {
  cat("wtheta.R: the command line needs the R package optparse:\n",
      "  install.packages(\"optparse\")  or, on Debian and Ubuntu,\n",
      "  apt-get install r-cran-optparse\n", sep = "", file = stderr())
  quit(save = "no", status = 1)
}

columns_text <- "
Output columns (--out, CSV, one row per bin):
  theta_lo, theta_hi  bin edges in degrees, or in the unit of --bins
                      (log:2.5,250,20:arcmin: arcmin)
  theta               bin centre, in the same unit
  theta_mean          with --mean-theta: the mean separation of the DD
                      (D1D2) pairs in the bin, weighted by w_i w_j with
                      --weights, in the same unit; NA for a bin without
                      pairs
  DD, DR, RR          pair counts: data-data, data-random, random-random
                      (weighted sums of w_i w_j with --weights); for a
                      cross-correlation (--data2) D1D2, D1R2, R1D2, R1R2
  w                   the estimate of w(theta); NA where its denominator
                      is zero
  w_err               its error (--error; absent with --error none)

Example (the classic catalogs, 0.25-degree bins to 90 degrees):
  Rscript wtheta.R -d data_100k_arcmin.txt -r flat_100k_arcmin.txt \\
    -u arcmin -b lin:0,90,0.25 --self-pairs -o w.csv
"

option_list <- list(
  optparse::make_option(c("-d", "--data"), metavar = "FILE",
    help = paste("data catalog: a FITS table (RA/DEC found by name), or",
                 "text with columns ra dec (whitespace or CSV; an",
                 "optional first line with the row count, an optional",
                 "header line)")),
  optparse::make_option(c("-r", "--random"), metavar = "FILE",
    help = "random catalog on the same footprint, same form"),
  optparse::make_option("--data2", metavar = "FILE",
    help = "a second data catalog: cross-correlate --data with it"),
  optparse::make_option("--random2", metavar = "FILE",
    help = paste("randoms on the footprint of --data2 (default: --random",
                 "serves both)")),
  optparse::make_option(c("-u", "--units"), metavar = "U",
    help = paste("units of every file: deg, arcmin, arcsec, rad (default:",
                 "a FITS column's TUNIT, else deg)")),
  optparse::make_option(c("-c", "--columns"), metavar = "A,B",
    help = paste("ra and dec columns: numbers or header names (default:",
                 "found by name, RA/DEC and the like; a text file without",
                 "a header: 1,2)")),
  optparse::make_option(c("-b", "--bins"), default = "lin:0,90,0.25",
    metavar = "SPEC",
    help = paste("angular bins: lin:FROM,TO,WIDTH (linear,",
                 "default lin:0,90,0.25), log:FROM,TO,N (N logarithmic",
                 "bins) or edges:E0,E1,... (as given), in degrees, or in",
                 "the unit of a last :UNIT, one of deg, arcmin, arcsec,",
                 "rad (log:2.5,250,20:arcmin); the output's angles are",
                 "in that unit")),
  optparse::make_option(c("-e", "--estimator"), default = "LS",
    metavar = "E",
    help = "LS (default, Landy-Szalay), natural, DP, Hamilton"),
  optparse::make_option("--error", default = "poisson", metavar = "E",
    help = paste("errors: poisson (default; shot noise only, too small for",
                 "clustered data), jackknife, bootstrap, none")),
  optparse::make_option(c("-p", "--n-patches"), default = "20",
    metavar = "N", type = "character",
    help = "sky patches for jackknife and bootstrap errors (default 20)"),
  optparse::make_option("--seed", metavar = "N", type = "character",
    help = "seed for the patches and bootstrap draws (default: none)"),
  optparse::make_option(c("-w", "--weights"), metavar = "COL",
    help = paste("per-object weights: this column (a number or a name,",
                 "as --columns) of every catalog file, read with it;",
                 "random catalogs without it get unit weights")),
  optparse::make_option(c("-s", "--self-pairs"), action = "store_true",
    default = FALSE,
    help = paste("count all ordered pairs, self pairs included (the",
                 "classic convention); default: unordered pairs")),
  optparse::make_option("--mean-theta", action = "store_true",
    default = FALSE,
    help = paste("add the column theta_mean, the mean separation of the",
                 "data pairs in each bin (costs more time: see",
                 "?wtheta::pair_counts)")),
  optparse::make_option(c("-B", "--backend"), default = "auto",
    metavar = "B", help = "auto (default: a GPU when usable), cpu, cuda"),
  optparse::make_option(c("-t", "--threads"), metavar = "N",
    type = "character", help = "CPU threads (default: all usable cores)"),
  optparse::make_option(c("-o", "--out"), metavar = "FILE",
    help = "write the table as CSV (columns below)"),
  optparse::make_option("--plot", metavar = "FILE",
    help = "write a PNG plot of w(theta)"),
  optparse::make_option(c("-n", "--rows"), default = "10", metavar = "N",
    help = "bins to print (default 10; 0 for none, all for all)"),
  optparse::make_option("--progress", action = "store_true", default = FALSE,
    help = "show progress during long runs (default: off)"),
  optparse::make_option(c("-q", "--quiet"), action = "store_true",
    default = FALSE, help = "print nothing but errors")
)

parser <- optparse::OptionParser(
  usage = "Usage: Rscript wtheta.R --data FILE --random FILE [options]",
  description = paste(
    "Estimates the angular two-point correlation function w(theta) of the",
    "data catalog against the random catalog (or the cross-correlation of",
    "two catalogs), prints the table and writes it as CSV."),
  epilogue = columns_text, option_list = option_list)

parse_numbers <- function(text, what) {
  v <- suppressWarnings(as.numeric(strsplit(text, ",", fixed = TRUE)[[1L]]))
  if (!length(v) || anyNA(v)) {
    fail_usage("--", what, ": \"", text, "\" is not a comma-separated list ",
               "of numbers.")
  }
  v
}

parse_bins <- function(spec) {
  parts <- strsplit(spec, ":", fixed = TRUE)[[1L]]
  kind <- parts[1L]
  if (!length(parts) %in% 2:3 || !kind %in% c("lin", "log", "edges")) {
    fail_usage("--bins: \"", spec, "\" is not lin:FROM,TO,WIDTH, ",
               "log:FROM,TO,N or edges:E0,E1,..., with an optional ",
               ":UNIT (deg, arcmin, arcsec, rad)")
  }
  rest <- parts[2L]
  units <- "deg"
  if (length(parts) == 3L) {
    units <- parse_choice(parts[3L], c("deg", "arcmin", "arcsec", "rad"),
                          "bins")
  }
  v <- parse_numbers(rest, "bins")
  if (kind != "edges" && length(v) != 3L) {
    fail_usage("--bins: ", kind, ": needs three numbers, not ", length(v),
               ".")
  }
  tryCatch(switch(kind,
    lin = wtheta::theta_bins(v[1L], v[2L], width = v[3L], units = units),
    log = wtheta::theta_bins(v[1L], v[2L], n = v[3L], log = TRUE,
                             units = units),
    edges = wtheta::theta_bins(edges = v, units = units)),
    error = function(e) fail_usage("--bins: ", conditionMessage(e)))
}

# a choice (units, estimator, error, backend) as the package matches it:
# any case, a unique prefix
parse_choice <- function(value, choices, flag) {
  tryCatch(wtheta:::match_choice(value, choices, flag),
           error = function(e) fail_usage("--", flag, " must be one of ",
                                          paste(choices, collapse = ", "),
                                          ", not \"", value, "\"."))
}

parse_count <- function(text, flag, min = 1) {
  if (is.null(text)) return(NULL)
  v <- suppressWarnings(as.numeric(text))
  if (!grepl("^[0-9]+$", text) || is.na(v) || v < min ||
      v > .Machine$integer.max) {
    fail_usage("--", flag, " must be a whole number >= ", min, ", not \"",
               text, "\".")
  }
  as.integer(v)
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# The columns read_catalog() reads of every catalog file: `columns`
# (NULL: the positions by their usual names, or columns 1 and 2 without a
# header) and, with --weights, the weight column besides them
catalog_columns <- function(columns, weights) {
  if (is.null(weights)) return(columns)
  num <- suppressWarnings(as.numeric(weights))
  w <- if (!is.na(num) && num == round(num) && num >= 1) num else weights
  if (is.null(columns)) return(c(weight = w))
  if (is.numeric(columns) != is.numeric(w)) {
    fail_usage("--columns and --weights must both give column numbers or ",
               "both names, not \"", paste(columns, collapse = ","),
               "\" and \"", weights, "\".")
  }
  c(ra = columns[1L], dec = columns[2L], weight = w)
}

# every catalog file read once, through read_catalog() as the R functions
# read them; with --weights, a catalog without the weight column is refused
# for the data and has unit weights for randoms, as wtheta() gives them
read_catalogs <- function(files, units, columns, weights) {
  cols <- catalog_columns(columns, weights)
  Map(function(f, nm) {
    tryCatch(read_catalog(f, units = units, columns = cols),
             error = function(e) {
               if (!is.null(weights) && startsWith(nm, "random")) {
                 cat <- tryCatch(read_catalog(f, units = units,
                                              columns = columns),
                                 error = function(e2) NULL)
                 if (!is.null(cat)) return(cat)
               }
               msg <- conditionMessage(e)
               # say which file, where the message does not
               if (!grepl(f, msg, fixed = TRUE)) {
                 msg <- paste0("--", nm, " \"", f, "\": ", msg)
               }
               stop(msg, call. = FALSE)
             })
  }, files, names(files))
}

# -o and --plot are checked before the computation: a directory that does
# not exist or cannot be written is an error now, not after the count
check_out <- function(file, flag) {
  if (is.null(file)) return(invisible())
  dir <- dirname(file)
  if (dir.exists(file)) {
    fail_usage(flag, ": \"", file, "\" is a directory.")
  }
  if (!dir.exists(dir)) {
    fail_usage(flag, ": the directory \"", dir, "\" of \"", file,
               "\" does not exist.")
  }
  probe <- file.path(dir, paste0(".wt-probe-", Sys.getpid()))
  ok <- file.access(dir, 2L) == 0L &&
    (file.exists(file) && file.access(file, 2L) == 0L ||
     !file.exists(file)) &&
    suppressWarnings(tryCatch(file.create(probe), error = function(e) FALSE))
  if (file.exists(probe)) unlink(probe)
  if (!isTRUE(ok)) {
    fail_usage(flag, ": \"", file, "\" cannot be written (its directory ",
               "or the file is not writable).")
  }
}

main <- function(args) {
  if (!length(args)) {
    optparse::print_help(parser)
    quit(save = "no", status = 2)
  }
  opt <- tryCatch(
    optparse::parse_args(parser, args, convert_hyphens_to_underscores = TRUE),
    error = function(e) fail_usage(sub("^Error in [^:]*: *", "",
                                       conditionMessage(e))))
  for (need in c("data", "random")) {
    if (is.null(opt[[need]])) fail_usage("--", need, " FILE is required.")
  }
  if (!is.null(opt$random2) && is.null(opt$data2)) {
    fail_usage("--random2 needs --data2.")
  }
  for (f in c("data", "random", "data2", "random2")) {
    if (!is.null(opt[[f]]) && !file.exists(opt[[f]])) {
      fail_usage("--", f, ": file \"", opt[[f]], "\" does not exist.")
    }
  }
  # NULL: degrees, or each FITS position column's TUNITn
  units <- if (!is.null(opt$units)) {
    parse_choice(opt$units, c("deg", "arcmin", "arcsec", "rad"), "units")
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
  estimator <- parse_choice(opt$estimator, c("LS", "natural", "DP",
                                             "Hamilton"), "estimator")
  error <- parse_choice(opt$error, c("poisson", "jackknife", "bootstrap",
                                     "none"), "error")
  backend <- parse_choice(opt$backend, c("auto", "cpu", "cuda"), "backend")
  threads <- parse_count(opt$threads, "threads")
  n_patches <- parse_count(opt$n_patches, "n-patches", min = 2)
  seed <- parse_count(opt$seed, "seed", min = 0)
  rows <- if (identical(opt$rows, "all")) .Machine$integer.max else
    parse_count(opt$rows, "rows", min = 0)
  bins <- parse_bins(opt$bins)
  quiet <- isTRUE(opt$quiet)
  if (isTRUE(opt$self_pairs) && !is.null(opt$data2)) {
    fail_usage("--self-pairs applies to auto-correlations, not to --data2.")
  }

  check_out(opt$out, "--out")
  check_out(opt$plot, "--plot")

  suppressPackageStartupMessages(library(wtheta))
  files <- list(data = opt$data, random = opt$random, data2 = opt$data2,
                random2 = opt$random2)
  files <- files[!vapply(files, is.null, TRUE)]
  cats <- read_catalogs(files, units, columns, opt$weights)
  weights <- NULL
  if (!is.null(opt$weights)) {
    # unit weights for a random catalog without the column
    weights <- lapply(cats, function(x) x$weight %||% rep(1, nrow(x)))
    cats <- lapply(cats, function(x) x[c("ra", "dec")])
  }
  w <- wtheta(cats$data, cats$random, bins, estimator = estimator,
              self_pairs = isTRUE(opt$self_pairs), backend = backend,
              threads = threads, progress = isTRUE(opt$progress),
              weights = weights, error = error, n_patches = n_patches,
              seed = seed, data2 = cats$data2, random2 = cats$random2,
              mean_theta = isTRUE(opt$mean_theta))
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
