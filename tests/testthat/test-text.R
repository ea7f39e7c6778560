# Text reading (the classes of issue 16).

write_bytes <- function(f, text) writeBin(charToRaw(text), f)

test_that("the header is decided from the columns read; no row is dropped", {
  f <- withr_tempfile()
  writeLines(c("10 20 gal1", "30 40 gal2", "50 60 gal3"), f)
  expect_identical(read_catalog(f),
                   data.frame(ra = c(10, 30, 50), dec = c(20, 40, 60)))
  cat <- read_catalog(f, columns = c(1, 2, name = 3))
  expect_identical(cat$name, c("gal1", "gal2", "gal3"))
  writeLines(c("NA 5", "10 20"), f)
  expect_error(read_catalog(f), paste0(
    "line 1 (\"NA 5\") is neither a header nor data: column 2 holds a number ",
    "but column 1 does not"), fixed = TRUE)
  writeLines(c("ra dec", "10 20"), f)
  expect_identical(read_catalog(f), data.frame(ra = 10, dec = 20))
  # a header without the usual names: the error lists what there is
  writeLines(c("x y", "10 20"), f)
  expect_error(read_catalog(f), "has no columns with the usual names .*Its columns: x, y.")
  expect_identical(read_catalog(f, columns = c("x", "y")),
                   data.frame(ra = 10, dec = 20))
  # numbers asked, no number on line 1: a header, and the rows are read
  expect_identical(read_catalog(f, columns = c(1, 2)),
                   data.frame(ra = 10, dec = 20))
})

test_that("columns are refused clearly: duplicates, huge numbers, odd names", {
  f <- withr_tempfile()
  writeLines(c("10 20 1", "30 40 2"), f)
  expect_error(read_catalog(f, columns = c(1, 1)),
               "`columns` names column 1 twice", fixed = TRUE)
  expect_error(read_catalog(f, columns = c(1, 1e10)),
               "`columns` must be column numbers from 1 to 2147483647")
  expect_error(read_catalog(f, columns = c(1, 2.5)),
               "`columns` must be column numbers")
  expect_error(read_catalog(f, columns = 1), "at least the two position columns")
  expect_error(read_catalog(f, columns = c(a = 1, b = 2)),
               "must name the columns \"ra\" and \"dec\"")
  expect_error(read_catalog(f, columns = c("ra", "RA")), "names column RA twice")
  expect_error(read_catalog(f, columns = c(1, 2, 7)),
               "`file` line 1 has 3 field(s) but column 7 is needed: \"10 20 1\".",
               fixed = TRUE)
  cat <- read_catalog(f, columns = c(dec = 2, ra = 1, weight = 3))
  expect_identical(cat, data.frame(ra = c(10, 30), dec = c(20, 40),
                                   weight = c(1, 2)))
})

test_that("a weight column read from text reaches wtheta()", {
  f <- withr_tempfile()
  set.seed(7)
  d <- data.frame(ra = runif(80, 0, 20), dec = runif(80, 0, 20),
                  w = runif(80, 0.5, 2))
  writeLines(c("ra,dec,w", sprintf("%.17g,%.17g,%.17g", d$ra, d$dec, d$w)), f)
  G <- read_catalog(f, columns = c("ra", "dec", weight = "w"))
  expect_identical(G$weight, d$w)
  R <- random_catalog(150, ra_range = c(0, 20), dec_range = c(0, 20))
  b <- theta_bins(1, 10, n = 3)
  w1 <- wtheta(G, R, bins = b, weights = "weight", threads = 1)
  w2 <- wtheta(d, R, bins = b, weights = list(data = d$w), threads = 1)
  # the same weights: w bit for bit on the CPU, to rounding on a GPU
  # (backend "auto"), whose weighted sums follow its atomic adds
  expect_equal(w1$w, w2$w, tolerance = 1e-12)
})

test_that("a truncated gzip file is an error, not a prefix", {
  f <- withr_tempfile()
  con <- gzfile(f, "w")
  writeLines(sprintf("%d %d", 1:20000 %% 360, 1:20000 %% 90), con)
  close(con)
  expect_identical(nrow(read_catalog(f)), 20000L)
  b <- readBin(f, "raw", file.size(f))
  writeBin(b[seq_len(length(b) %/% 2)], f)
  expect_error(read_catalog(f), "is a damaged or truncated gzip file")
  writeBin(b[seq_len(length(b) - 4L)], f)          # only the trailer cut
  expect_error(read_catalog(f), "is a damaged or truncated gzip file")
})

test_that("a 10 MB line of digits gives a sensible message", {
  f <- withr_tempfile()
  write_bytes(f, paste0(strrep("7", 1e7), "\n1 2\n"))
  expect_error(read_catalog(f),
               "line 1 holds a single number of 10000000 digits: too large for a row count",
               fixed = TRUE)
})

test_that("a FIFO is read once: no hang, no 'holds no data' (child process)", {
  skip_on_os("windows")
  if (!nzchar(Sys.which("mkfifo"))) skip("no mkfifo")
  code <- '
    f <- tempfile()
    system2("mkfifo", f)
    system(paste("printf \'10 20\\\\n30 40\\\\n\' >", f), wait = FALSE)
    x <- wtheta::read_catalog(f)
    cat("rows:", nrow(x), "sum:", sum(x$ra) + sum(x$dec), "\n")'
  res <- run_in_child_io(code, timeout = 60)
  expect_identical(res$status, 0L)
  expect_match(res$output, "rows: 2 sum: 100", fixed = TRUE)
})

test_that("hostile text never kills the session (child process)", {
  code <- '
    library(wtheta)
    f <- tempfile()
    cases <- list(strrep("1 ", 5e5), paste0("1 2\n", strrep("9", 5e6), " 1"),
                  "1,2\n3", "\\xff\\xfe1 2\n", "1e999999 2")
    for (x in cases) {
      writeBin(charToRaw(x), f)
      r <- tryCatch(nrow(read_catalog(f)), error = function(e) "error")
      cat(r, "")
    }'
  res <- run_in_child_io(code, timeout = 60)
  expect_identical(res$status, 0L)
  expect_identical(trimws(res$output), "1 error error error error")
})

