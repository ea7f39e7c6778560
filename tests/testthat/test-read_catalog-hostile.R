# Hostile input: odd files, odd data frames, odd geometry, odd sizes. Each
# case has one exact expected outcome: parsed values, counts, or an error.

write_bytes <- function(f, text) writeBin(charToRaw(text), f)

test_that("CRLF and CR line ends and a byte-order mark are read", {
  f <- withr_tempfile()
  want <- data.frame(ra = c(10, 30), dec = c(20, -40))
  write_bytes(f, "10 20\r\n30 -40\r\n")
  expect_identical(read_catalog(f), want)
  write_bytes(f, "10 20\r30 -40\r")
  expect_identical(read_catalog(f), want)
  write_bytes(f, "\xef\xbb\xbf10 20\n30 -40\n")
  expect_identical(read_catalog(f), want)
  # all three at once, with a header: the mark must not hide the header
  write_bytes(f, "\xef\xbb\xbfra,dec\r\n10,20\r\n30,-40")
  expect_identical(read_catalog(f, columns = c("ra", "dec")), want)
  write_bytes(f, "\xef\xbb\xbf2\r\n10,20\r\n30,-40\r\n")
  expect_identical(read_catalog(f), want)
})

test_that("comments, blank lines, numbers in any notation, trailing separators", {
  f <- withr_tempfile()
  write_bytes(f, paste0(
    "# a catalog\n\n   \t  \n",
    "1e1 2.0E+01   # first point\n",
    "  \t\n",
    "3.0e1\t-4e1\n",
    ".5 -.25\n",
    "+7 0.000125e3\n",
    "#\n"))
  expect_identical(read_catalog(f),
                   data.frame(ra = c(10, 30, 0.5, 7), dec = c(20, -40, -0.25, 0.125)))
  # trailing separators and extra columns are ignored
  write_bytes(f, "10,20,\n30,-40,,\n")
  expect_identical(read_catalog(f), data.frame(ra = c(10, 30), dec = c(20, -40)))
  write_bytes(f, "10 20 \t\n30 -40 99 x\n")
  expect_identical(read_catalog(f), data.frame(ra = c(10, 30), dec = c(20, -40)))
  # other separators when asked
  write_bytes(f, "10;20\n30; -40\n")
  expect_identical(read_catalog(f, sep = ";"),
                   data.frame(ra = c(10, 30), dec = c(20, -40)))
  write_bytes(f, "10\t20\n30\t-40\n")
  expect_identical(read_catalog(f, sep = "\t"),
                   data.frame(ra = c(10, 30), dec = c(20, -40)))
  expect_error(read_catalog(f, sep = ";;"),
               "`sep` must be NULL or a single character, not \";;\"")
})

test_that("bad values and short lines name the line and show it", {
  f <- withr_tempfile()
  write_bytes(f, "# header comment\n10,20\n30,,40\n")
  expect_error(read_catalog(f), paste0(
    "`file` line 3 has a value that is not a finite number in column 2: ",
    "\"30,,40\""), fixed = TRUE)
  write_bytes(f, "10 20\n\n30 NA\n")
  expect_error(read_catalog(f), "`file` line 3 has a value that is not a finite number in column 2: \"30 NA\"",
               fixed = TRUE)
  write_bytes(f, "10 20\n30 Inf\n")
  expect_error(read_catalog(f), "line 2 has a value that is not a finite number", fixed = TRUE)
  write_bytes(f, "10 20\r\n30\r\n")
  expect_error(read_catalog(f),
               "`file` line 2 has 1 field(s) but column 2 is needed: \"30\"",
               fixed = TRUE)
  write_bytes(f, "10 20\n1.2.3 4\n")
  expect_error(read_catalog(f), "line 2 has a value that is not a finite number in column 1: \"1.2.3 4\"",
               fixed = TRUE)
  # Latin-1 bytes in a UTF-8 session are shown as <xx>, never a crash
  write_bytes(f, "10 20\n30 \xe94\n")
  expect_error(read_catalog(f), "line 2 has a value that is not a finite number in column 2: \"30 <e9>4\"",
               fixed = TRUE)
  # a long bad line is cut in the message
  write_bytes(f, paste0("10 20\n30 ", strrep("x", 200), "\n"))
  expect_error(read_catalog(f), "\"30 x+\\.\\.\\.\"\\.$")
})

test_that("binary, empty and comment-only files are refused", {
  f <- withr_tempfile()
  saveRDS(1:100, f, compress = FALSE)
  expect_error(read_catalog(f),
               "is not a text file: line [0-9]+ holds a NUL byte \\(binary data\\?\\)")
  saveRDS(1:100, f)            # gzip: decompressed, then refused the same way
  expect_error(read_catalog(f), "is not a text file")
  writeBin(c(charToRaw("10 20\n30 40\n"), as.raw(c(1, 2, 0, 3, 10))), f)
  expect_error(read_catalog(f), "is not a text file: line 3 holds a NUL byte")
  writeBin(raw(0), f)
  expect_error(read_catalog(f), paste0("`file` \"", f, "\" holds no data."), fixed = TRUE)
  write_bytes(f, "# nothing here\n\n  \n")
  expect_error(read_catalog(f), "holds no data", fixed = TRUE)
  write_bytes(f, "ra dec\n")
  expect_error(read_catalog(f), "holds no data", fixed = TRUE)
  write_bytes(f, "0\n")
  expect_error(read_catalog(f), "holds no data", fixed = TRUE)
  write_bytes(f, "5\n")
  expect_error(read_catalog(f), "declares 5 rows on its first line but holds 0", fixed = TRUE)
  expect_error(read_catalog(tempdir()), "is a directory, not a file", fixed = TRUE)
  expect_error(read_catalog(""), "`file` must be a single file path", fixed = TRUE)
  expect_error(read_catalog(c("a", "b")), "`file` must be a single file path", fixed = TRUE)
  # compressed text is read like plain text
  g <- gzfile(f, "w")
  writeLines(c("10 20", "30 -40"), g)
  close(g)
  expect_identical(read_catalog(f), data.frame(ra = c(10, 30), dec = c(20, -40)))
})

test_that("a million-row file reads exactly", {
  skip_if_sanitizing()
  f <- withr_tempfile()
  n <- 1e6
  i <- seq_len(n)
  ra <- sprintf("%.6f", (i * 7919) %% 360000 / 1000)
  dec <- sprintf("%.7e", ((i * 104729) %% 180001 - 90000) / 1000)
  writeLines(c("1000000", "ra dec", paste(ra, dec)), f)
  big <- read_catalog(f, columns = c("ra", "dec"))
  expect_identical(nrow(big), as.integer(n))
  expect_identical(big$ra, as.numeric(ra))
  expect_identical(big$dec, as.numeric(dec))
  write("1 2", f, append = TRUE)
  expect_error(read_catalog(f),
               "declares 1000000 rows on its first line but holds 1000001")
  # one bad line at the end is found and named
  writeLines(c(paste(ra, dec), "1 2 3", "4 x"), f)
  expect_error(read_catalog(f), "`file` line 1000002 has a value that is not a finite number in column 2: \"4 x\"",
               fixed = TRUE)
})

test_that("numbers are read as strtod() reads them, correctly rounded", {
  f <- withr_tempfile()
  # the third column is free of the position checks
  writeLines(c("1 2 0.1",
               "1e-3 -2.5E1 9007199254740993",          # 2^53 + 1: ties to even
               "+.5 0x10 1e23",                        # beyond the exact powers
               "  3\t4   123456789012345678901234567890",  # more than 19 digits
               "-0 5. 2.2250738585072011e-308",
               "7 8 NA"), f)
  cat <- read_catalog(f, columns = c(1, 2, x = 3))
  expect_identical(cat$ra, c(1, 0.001, 0.5, 3, 0, 7))
  expect_identical(cat$dec, c(2, -25, 16, 4, 5, 8))
  expect_identical(cat$x, c(0.1, 2^53, 1e23, 1.2345678901234568e29,
                            2.2250738585072011e-308, NA))
  # a column that is not all numbers is character
  writeLines(c("ra,dec,name,w", "10,20,gal1,1", "30,40,\"gal 2\",", "50,60,,2"), f)
  cat <- read_catalog(f, columns = c("ra", "dec", "name", "w"))
  expect_identical(cat$name, c("gal1", "gal 2", NA))
  expect_identical(cat$w, c(1, NA, 2))
})

test_that("right ascension is reduced to [0, 360); declination is checked", {
  f <- withr_tempfile()
  writeLines(c("-10 90", "370 -90", "720 0", "-360 1", "359.5 2", "-1e-300 3"), f)
  cat <- read_catalog(f)
  expect_identical(cat$ra, c(350, 10, 0, 0, 359.5, 0))
  expect_identical(cat$dec, c(90, -90, 0, 1, 2, 3))
  writeLines(c("10 90.0000000001"), f)
  expect_error(read_catalog(f), "row 1 has 90.0000000001", fixed = TRUE)
  d <- data.frame(ra = c(-10, 370, 1e6), dec = c(-90, 90, 0))
  expect_identical(pair_counts(d, bins = c(0, 180), backend = "cpu")$n1, 3)
  expect_error(pair_counts(data.frame(ra = 0, dec = -90 - 1e-13), bins = c(0, 1)),
               "must lie in \\[-90, 90\\] degrees; row 1 has -90.0000000000001")
})

test_that("data frames: integer, factor, tibble, matrix, list columns", {
  b <- c(0, 0.5, 10, 180)
  d <- data.frame(ra = c(1, 2, 3, 50), dec = c(0, 0, 1, -30))
  want <- pair_counts(d, bins = b, backend = "cpu")$counts
  expect_identical(want, c(0, 3, 3))
  int <- data.frame(ra = c(1L, 2L, 3L, 50L), dec = c(0L, 0L, 1L, -30L))
  expect_identical(pair_counts(int, bins = b, backend = "cpu")$counts, want)
  m <- cbind(ra = c(1, 2, 3, 50), dec = c(0, 0, 1, -30))
  expect_identical(pair_counts(m, bins = b, backend = "cpu")$counts, want)
  mi <- cbind(ra = c(1L, 2L, 3L, 50L), dec = c(0L, 0L, 1L, -30L))
  expect_identical(pair_counts(mi, bins = b, backend = "cpu")$counts, want)
  expect_error(pair_counts(unname(m), bins = b),
               "`x` has no column \"ra\" (its columns: V1, V2; names are matched ignoring case).",
               fixed = TRUE)
  expect_error(pair_counts(matrix(c("1", "2"), 1, dimnames = list(NULL, c("ra", "dec"))),
                           bins = b),
               "`x` is a matrix of type character; it must be numeric.", fixed = TRUE)
  fac <- d
  fac$ra <- factor(fac$ra)
  expect_error(pair_counts(fac, bins = b),
               "`x` column \"ra\" must be numeric, not a factor.", fixed = TRUE)
  chr <- d
  chr$dec <- as.character(chr$dec)
  expect_error(pair_counts(d, chr, bins = b),
               "`y` column \"dec\" must be numeric, not of type character.", fixed = TRUE)
  lst <- d
  lst$ra <- I(as.list(lst$ra))
  expect_error(pair_counts(lst, bins = b),
               "`x` column \"ra\" must be numeric, not a list column.", fixed = TRUE)
  mc <- data.frame(dec = d$dec)
  mc$ra <- cbind(d$ra, d$ra)
  expect_error(pair_counts(mc, bins = b),
               "`x` column \"ra\" must be numeric, not a matrix column.", fixed = TRUE)
  lg <- data.frame(ra = TRUE, dec = 1)
  expect_error(pair_counts(lg, bins = b),
               "`x` column \"ra\" must be numeric, not of type logical.", fixed = TRUE)
  dt <- data.frame(ra = as.Date("2020-01-01"), dec = 1)
  expect_error(pair_counts(dt, bins = b),
               "`x` column \"ra\" must be numeric, not an object of class Date.",
               fixed = TRUE)
  expect_error(pair_counts(list(ra = 1, dec = 2), bins = b),
               "`x` must be a data frame with columns ra and dec, not an object of class list",
               fixed = TRUE)
  expect_error(pair_counts(d, bins = b, columns = "ra"),
               "`columns` must be two distinct column names", fixed = TRUE)
  expect_error(pair_counts(d, bins = b, columns = c("ra", "ra")),
               "`columns` must be two distinct column names", fixed = TRUE)
  skip_if_not_installed("tibble")
  tb <- tibble::tibble(ra = d$ra, dec = d$dec, name = letters[1:4])
  expect_identical(pair_counts(tb, bins = b, backend = "cpu")$counts, want)
  b2 <- c(0.5, 10, 180)
  expect_identical(wtheta(tb, tb, bins = b2, backend = "cpu")$DD,
                   wtheta(d, d, bins = b2, backend = "cpu")$DD)
  tl <- tibble::tibble(ra = as.list(d$ra), dec = d$dec)
  expect_error(pair_counts(tl, bins = b),
               "`x` column \"ra\" must be numeric, not a list column.", fixed = TRUE)
})

test_that("poles, identical points, antipodes and 1e-9 degree separations", {
  th <- test_threads()
  # points at the poles with different right ascensions
  pole <- data.frame(ra = c(0, 45, 90, 180, 270, 0, 123), dec = c(rep(90, 5), -90, -90))
  b <- theta_bins(edges = c(0, 1e-15, 1e-12, 1, 179, 180))
  pc <- pair_counts(pole, bins = b, backend = "cpu", threads = th)
  expect_identical(slots_of(pc), as.double(ref_slots(pole, NULL, b)))
  expect_identical(sum(pc$counts[1:3]), choose(5, 2) + 1)
  expect_identical(pc$counts[5], 10)
  # identical points: all in the first bin, none below an edge of 0
  same <- data.frame(ra = rep(33.3, 1000), dec = rep(-12.5, 1000))
  pc <- pair_counts(same, bins = c(0, 1e-9, 1), backend = "cpu", threads = th)
  expect_identical(c(pc$n_below, pc$counts, pc$n_above), c(0, choose(1000, 2), 0, 0))
  pc <- pair_counts(same, bins = c(1e-9, 1), backend = "cpu", threads = th)
  expect_identical(c(pc$n_below, pc$counts), c(choose(1000, 2), 0))
  # antipodes: 60 random points against their antipodes, near 180 degrees
  set.seed(71)
  p <- random_sky(60)
  q <- data.frame(ra = (p$ra + 180) %% 360, dec = -p$dec)
  b <- theta_bins(edges = c(0, 90, 179, 179.999999, 179.99999999, 180))
  pc <- pair_counts(p, q, bins = b, backend = "cpu", threads = th)
  expect_identical(slots_of(pc), as.double(ref_slots(p, q, b)))
  expect_identical(sum(pc$counts), 3600)
  expect_gte(sum(pc$counts[3:5]), 60)
  # a grid with 1e-9 degree spacing: d2 ~ 3e-22, decided by the contract
  k <- 0:29
  grid <- data.frame(ra = 200 + rep(k, 30) * 1e-9, dec = 45 + rep(k, each = 30) * 1e-9)
  b <- theta_bins(edges = c(0, 5e-10, 1e-9, 1.5e-9, 2e-9, 5e-9, 1e-8, 5e-8, 1))
  pc <- pair_counts(grid, bins = b, backend = "cpu", threads = th)
  expect_identical(slots_of(pc), as.double(ref_slots(grid, NULL, b)))
  expect_identical(sum(pc$counts), choose(900, 2))
  # enough pairs (> 2^22) for the CPU's float prefilter to be used
  set.seed(72)
  u <- data.frame(ra = 10 + runif(2100) * 3e-8, dec = -60 + runif(2100) * 3e-8)
  v <- data.frame(ra = 10 + runif(2100) * 3e-8, dec = -60 + runif(2100) * 3e-8)
  pc <- pair_counts(u, v, bins = b, backend = "cpu", threads = th)
  expect_identical(slots_of(pc), as.double(ref_slots(u, v, b)))
})

test_that("10^5 edges use the exact search and count like the reference", {
  set.seed(73)
  x <- random_sky(300)
  y <- random_sky(200)
  b <- theta_bins(0, 180, n = 99999)
  expect_length(b, 1e5)
  pc <- pair_counts(x, bins = b, backend = "cpu", threads = test_threads())
  expect_identical(slots_of(pc), as.double(ref_slots(x, NULL, b)))
  pc <- pair_counts(x, y, bins = b, backend = "cpu", threads = test_threads())
  expect_identical(slots_of(pc), as.double(ref_slots(x, y, b)))
  lb <- theta_bins(1e-5, 180, n = 99999, log = TRUE)
  pc <- pair_counts(x, y, bins = lb, backend = "cpu", threads = test_threads())
  expect_identical(slots_of(pc), as.double(ref_slots(x, y, lb)))
})

test_that("one bin holding more than 2^32 pairs stays exact", {
  skip_if_sanitizing()
  # 65537 points within 2 degrees of (150, 2): every separation is below 4
  # degrees, so all 65537^2 = 4295098369 > 2^32 cross pairs fall in [0, 5)
  set.seed(75)
  n <- 65537
  r <- 2 * sqrt(runif(n))
  phi <- runif(n, 0, 2 * pi)
  cap <- data.frame(ra = 150 + r * cos(phi) / cos(2 * pi / 180),
                    dec = 2 + r * sin(phi) * 0.99)
  b <- c(0, 5, 10)
  pc <- pair_counts(cap, cap, bins = b, backend = "cpu", threads = test_threads())
  expect_identical(pc$counts, c(4295098369, 0))
  expect_gt(pc$counts[1], 2^32)
  expect_identical(pc$n_outside, 0)
  # ordered auto pairs: 2 * choose(65537, 2) + 65537 self pairs = 65537^2
  pc <- pair_counts(cap, bins = b, self_pairs = TRUE, backend = "cpu",
                    threads = test_threads())
  expect_identical(pc$counts, c(4295098369, 0))
  # identical points (d2 = 0 exactly, the engines' slowest case): a smaller
  # cross, still exact
  same <- data.frame(ra = rep(33, 3001), dec = rep(-7, 3001))
  pc <- pair_counts(same, same, bins = b, backend = "cpu", threads = test_threads())
  expect_identical(pc$counts, c(3001^2, 0))
  skip_if_no_cuda()
  pc <- pair_counts(cap, cap, bins = b, backend = "cuda")
  expect_identical(pc$counts, c(4295098369, 0))
  same <- data.frame(ra = rep(150, 92683), dec = rep(2, 92683))
  pc <- pair_counts(same, bins = b, backend = "cuda")
  expect_identical(pc$counts, c(choose(92683, 2), 0))
  expect_identical(pc$counts[1], 4295022903)
  pc <- pair_counts(same, same, bins = b, backend = "cuda")
  expect_identical(pc$counts, c(92683^2, 0))
})

test_that("the GPU agrees on the hostile geometry", {
  skip_if_no_cuda()
  set.seed(74)
  k <- 0:29
  grid <- data.frame(ra = 200 + rep(k, 30) * 1e-9, dec = 45 + rep(k, each = 30) * 1e-9)
  b <- theta_bins(edges = c(0, 5e-10, 1e-9, 1.5e-9, 2e-9, 5e-9, 1e-8, 5e-8, 1))
  g <- pair_counts(grid, bins = b, backend = "cuda")
  expect_identical(slots_of(g), as.double(ref_slots(grid, NULL, b)))
  p <- random_sky(60)
  q <- data.frame(ra = (p$ra + 180) %% 360, dec = -p$dec)
  b <- theta_bins(edges = c(0, 90, 179, 179.999999, 179.99999999, 180))
  expect_identical(slots_of(pair_counts(p, q, bins = b, backend = "cuda")),
                   as.double(ref_slots(p, q, b)))
  pole <- data.frame(ra = c(0, 45, 90, 180, 270, 0, 123), dec = c(rep(90, 5), -90, -90))
  b <- theta_bins(edges = c(0, 1e-15, 1e-12, 1, 179, 180))
  expect_identical(slots_of(pair_counts(pole, bins = b, backend = "cuda")),
                   as.double(ref_slots(pole, NULL, b)))
  x <- random_sky(300)
  b <- theta_bins(0, 180, n = 99999)
  expect_identical(slots_of(pair_counts(x, bins = b, backend = "cuda")),
                   as.double(ref_slots(x, NULL, b)))
})

# ---- issue 31, round three: names that differ only in case ------------------

test_that("columns that differ only in case are an error, not the first one", {
  msg <- "has 2 columns named \"ra\", ignoring case (columns 1 and 3: RA, ra); rename all but one."
  # a text header (the same columns as the FITS fixture)
  f <- fixture("case-dup.csv")
  expect_error(read_catalog(f, columns = c("ra", "dec")), msg, fixed = TRUE)
  expect_error(read_catalog(f), msg, fixed = TRUE)
  expect_error(read_catalog(f, columns = c(ra = "RA", dec = "dec")),
               "has 2 columns named \"RA\", ignoring case", fixed = TRUE)
  # by number, nothing is ambiguous
  byn <- read_catalog(f, columns = c(3, 4))
  ref <- utils::read.csv(f)
  expect_identical(byn$ra, ref[[3L]])
  skip_if_no_fits()
  g <- fixture("case-dup.fits")
  expect_error(read_catalog(g, columns = c("ra", "dec")), msg, fixed = TRUE)
  expect_error(read_catalog(g), msg, fixed = TRUE)
  expect_identical(read_catalog(g, columns = c(3, 4))$ra, ref[[3L]])
  # the flag column resolves the same way
  expect_error(read_catalog(g, columns = c(1, 2), flag = "dec"),
               "has 2 columns named \"dec\", ignoring case", fixed = TRUE)
})

test_that("data frames: the same check, names ignoring case as in files", {
  df <- data.frame(ra = 1:3, dec = 1:3, ra = 4:6, check.names = FALSE)
  expect_error(wtheta:::as_catalog(df, "x"),
               "`x` has 2 columns named \"ra\", ignoring case (columns 1 and 3: ra, ra); rename all but one.",
               fixed = TRUE)
  # RA is ra, as read_catalog() reads a file's columns (issue 35): RA and
  # ra together are two columns that answer to one name
  df <- data.frame(RA = 10:12, DEC = 1:3)
  expect_identical(wtheta:::as_catalog(df, "x")$ra, c(10, 11, 12))
  expect_identical(wtheta:::as_catalog(df, "x")$dec, c(1, 2, 3))
  df <- data.frame(RA = 10:12, dec = 1:3, ra = 4:6)
  expect_error(wtheta:::as_catalog(df, "x"),
               "`x` has 2 columns named \"ra\", ignoring case (columns 1 and 3: RA, ra)",
               fixed = TRUE)
})
