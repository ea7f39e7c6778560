# Command-line entry of wtheta: w(theta) of a data catalog and its randoms.
# Run with Rscript; --help prints the usage. `wtheta::wtheta_cli()` gives
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
Output (--out): written by wtheta::write_wtheta(), so that read_wtheta()
reads it back whole: FILE.csv is a CSV table (lines starting with # give
the estimator, sizes, weighting and units) with sidecar files beside it
(FILE-attributes.rds, and FILE-cov.csv, the covariance, with errors);
FILE.fits a FITS table with the covariance in extension COV; --format
sacc or twopoint (a .fits FILE) the pipelines' formats (angles in arcmin,
the covariance included). An existing FILE is replaced.

Output columns (one row per bin):
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

Examples:
  # the classic catalogs, 0.25-degree bins to 90 degrees
  Rscript wtheta.R -d data_100k_arcmin.txt -r flat_100k_arcmin.txt \\
    -u arcmin -b lin:0,90,0.25 --self-pairs -o w.csv
  # a FITS catalog with weights, randoms drawn from a HEALPix mask,
  # jackknife errors, the result as FITS with its covariance
  Rscript wtheta.R -d galaxies.fits -w WEIGHT --mask mask.fits \\
    --n-random 1000000 --seed 1 --error jackknife -o w.fits
"

option_list <- list(
  optparse::make_option(c("-d", "--data"), metavar = "FILE",
    help = paste("data catalog: a FITS table (RA/DEC found by name), or",
                 "text with columns ra dec (whitespace or CSV; an",
                 "optional first line with the row count, an optional",
                 "header line)")),
  optparse::make_option(c("-r", "--random"), metavar = "FILE",
    help = paste("random catalog on the same footprint, same form (or",
                 "--mask)")),
  optparse::make_option("--mask", metavar = "FILE",
    help = paste("a HEALPix mask (FITS, as wtheta::read_healpix_map() reads",
                 "it): draw the randoms uniformly in area where it is above",
                 "0, instead of --random")),
  optparse::make_option("--n-random", metavar = "N", type = "character",
    help = paste("with --mask: how many randoms to draw (default: 10 times",
                 "the data's size); --seed seeds the draw")),
  optparse::make_option("--hdu", metavar = "H",
    help = paste("the HDU of every FITS catalog file: a number (0 is the",
                 "primary) or an EXTNAME (default: the first table)")),
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
  optparse::make_option(c("-b", "--bins"), default = "log:0.01,10,15",
    metavar = "SPEC",
    help = paste("angular bins: log:FROM,TO,N (N logarithmic bins;",
                 "default log:0.01,10,15, 5 a decade from 0.6 arcmin to",
                 "10 degrees), lin:FROM,TO,WIDTH (linear) or",
                 "edges:E0,E1,... (as given), in degrees, or in",
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
    help = paste("seed for the patches, the bootstrap draws and the",
                 "randoms drawn from --mask (default: none)")),
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
    help = paste("write the result, covariance included: FILE.csv (CSV",
                 "with sidecar files) or FILE.fits (see below)")),
  optparse::make_option("--format", default = "auto", metavar = "F",
    help = paste("the format of --out: auto (default: by the extension,",
                 ".csv or .fits), csv, fits, sacc (LSST DESC) or twopoint",
                 "(DES 2pt)")),
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
  usage = paste("Usage: Rscript wtheta.R --data FILE (--random FILE |",
                "--mask FILE) [options]"),
  description = paste(
    "Estimates the angular two-point correlation function w(theta) of the",
    "data catalog against the random catalog (or the cross-correlation of",
    "two catalogs), prints the table and writes it (CSV, FITS, SACC or",
    "twopoint). Catalogs are read by wtheta::read_catalog(), as in R."),
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
read_catalogs <- function(files, units, columns, weights, hdu) {
  cols <- catalog_columns(columns, weights)
  Map(function(f, nm) {
    # --hdu applies to the FITS files (text has no HDUs)
    h <- if (!is.null(hdu) && is_fits(f)) hdu
    tryCatch(read_catalog(f, units = units, columns = cols, hdu = h),
             error = function(e) {
               if (!is.null(weights) && startsWith(nm, "random")) {
                 cat <- tryCatch(read_catalog(f, units = units,
                                              columns = columns, hdu = h),
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

# a FITS file (perhaps gzipped): its first bytes are "SIMPLE". A stream
# (a FIFO, a process substitution: size 0) is never peeked at, as that
# would take its first bytes from read_catalog(), and is never FITS
is_fits <- function(f) {
  size <- file.size(f)
  if (is.na(size) || size == 0) return(FALSE)
  con <- gzfile(f, "rb")
  on.exit(close(con))
  head <- tryCatch(readBin(con, "raw", 6L), error = function(e) raw(0))
  identical(head, charToRaw("SIMPLE"))
}

# --hdu: a number from 0, or an EXTNAME
parse_hdu <- function(text) {
  if (is.null(text)) return(NULL)
  if (grepl("^[0-9]+$", text)) return(parse_count(text, "hdu", min = 0))
  # an EXTNAME: letters, digits, _ and - (not a negative number)
  if (!grepl("^[A-Za-z_][A-Za-z0-9_-]*$", text)) {
    fail_usage("--hdu must be a number or a name (an EXTNAME), not \"",
               text, "\".")
  }
  text
}

# --format and the extension of --out, checked before the computation
# (write_wtheta() takes .fits or .csv; sacc and twopoint are FITS)
parse_format <- function(format, out) {
  format <- parse_choice(format, c("auto", "csv", "fits", "sacc",
                                   "twopoint"), "format")
  if (is.null(out)) {
    if (format != "auto") fail_usage("--format needs --out.")
    return(format)
  }
  ext <- if (grepl("\\.(fits|fit|fts)$", out, ignore.case = TRUE)) "fits"
    else if (grepl("\\.csv$", out, ignore.case = TRUE)) "csv" else ""
  want <- switch(format, auto = , csv = , fits = if (format == "auto")
    c("csv", "fits") else format, sacc = , twopoint = "fits")
  if (!ext %in% want) {
    fail_usage("--out \"", out, "\" must end in ",
               if (identical(want, "csv")) ".csv" else if (identical(want,
                 "fits")) ".fits (or .fit, .fts)" else
                 ".csv or .fits (or .fit, .fts)",
               if (format != "auto") paste0(" for --format ", format), ".")
  }
  format
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
  if (is.null(opt$data)) fail_usage("--data FILE is required.")
  if (is.null(opt$random) == is.null(opt$mask)) {
    fail_usage(if (is.null(opt$random)) "--random FILE or --mask FILE is required." else
      "give --random or --mask (randoms drawn from it), not both.")
  }
  if (!is.null(opt$n_random) && is.null(opt$mask)) {
    fail_usage("--n-random needs --mask.")
  }
  if (!is.null(opt$random2) && is.null(opt$data2)) {
    fail_usage("--random2 needs --data2.")
  }
  for (f in c("data", "random", "data2", "random2", "mask")) {
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
  n_random <- parse_count(opt$n_random, "n-random")
  hdu <- parse_hdu(opt$hdu)
  format <- parse_format(opt$format, opt$out)
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
  cats <- read_catalogs(files, units, columns, opt$weights, hdu)
  if (!is.null(opt$mask)) {
    # randoms drawn uniformly in area on the mask: --n-random of them,
    # 10 times the data's size by default, seeded by --seed
    mask <- tryCatch(read_healpix_map(opt$mask), error = function(e)
      stop("--mask \"", opt$mask, "\": ", conditionMessage(e), call. = FALSE))
    n_r <- n_random %||% (10L * nrow(cats$data))
    cats$random <- random_catalog(n_r, mask = mask, seed = seed)
    if (!quiet) {
      cat("randoms: ", format(n_r, big.mark = ","), " drawn from the mask \"",
          opt$mask, "\" (", format(mask$area, digits = 4),
          " square degrees)\n", sep = "")
    }
  }
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
    # the result whole (estimator, sizes, weighting, covariance) as R
    # writes it; -o replaces an existing file, as it always did
    write_wtheta(w, opt$out, format = format, overwrite = TRUE)
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
