# Every timing figure that the README, CONTRIBUTING.md and the articles
# quote is in the one table of measured figures, inst/figures.csv (the
# "Measured figures" article says what a figure is). The documents are
# those of the source tree: the test skips where it runs without them
# (R CMD check runs it from a copy of tests/).

# The figures of a text: numbers followed by a unit of time, or a ratio
# written NUMBERx; each number of a range ("9.3 to 10.9 s", "56.2-56.8 s",
# "37 / 41 ms") counts. Code spans and blocks are left out. Returned as
# "NUMBER UNIT" strings, commas dropped, "x" for ratios.
timing_figures <- function(text) {
  text <- paste(text, collapse = "\n")
  text <- gsub("(?s)```.*?```", " ", text, perl = TRUE)
  text <- gsub("`[^`\n]*`", " ", text)
  text <- gsub("\\*\\*", "", text)
  num <- "[0-9][0-9,]*(?:\\.[0-9]+)?"
  unit <- "(ms|s|min|minutes|hours)"
  sep <- "(?: to | / |-|\u2013)"
  out <- character()
  pat <- paste0("(?<![0-9.^])(", num, ")(?:", sep, "(", num, "))?[ \u00a0]",
                unit, "(?![A-Za-z0-9])")
  m <- regmatches(text, gregexpr(pat, text, perl = TRUE))[[1L]]
  for (x in m) {
    p <- regmatches(x, regexec(pat, x, perl = TRUE))[[1L]]
    nums <- p[2:3][nzchar(p[2:3])]
    out <- c(out, paste(gsub(",", "", nums), p[4L]))
  }
  rat <- paste0("(?<![0-9.^])(", num, ")x(?![A-Za-z0-9])")
  m <- regmatches(text, gregexpr(rat, text, perl = TRUE))[[1L]]
  if (length(m)) out <- c(out, paste(gsub(",|x$", "", m), "x"))
  unique(out)
}

test_that("timing_figures() finds the figures and nothing else", {
  expect_setequal(
    timing_figures(c("took 9.3 to 10.9 s (median 10.0 s), 37 / 41 ms,",
                     "56.2-56.8 s and **3.9x**; 2 x 10^10 pairs, 1,200 ms,",
                     "10^8 points in 2 to 2.5 minutes; `n = 20 s` no,",
                     "```r\nw <- 5 s\n```", "4.6% and 5 x 10^14 pairs")),
    c("9.3 s", "10.9 s", "10.0 s", "37 ms", "41 ms", "56.2 s", "56.8 s",
      "3.9 x", "1200 ms", "2 minutes", "2.5 minutes"))
})

test_that("no document quotes a figure that the table of figures lacks", {
  root <- test_path("..", "..")
  docs <- c(file.path(root, c("README.md", "CONTRIBUTING.md")),
            Sys.glob(file.path(root, "vignettes", "*.Rmd")))
  table <- file.path(root, "inst", "figures.csv")
  skip_if_not(all(file.exists(c(docs[1:2], table))),
              "the source tree's documents are not here")
  figs <- utils::read.csv(table, stringsAsFactors = FALSE)
  expect_identical(names(figs), c("id", "topic", "what", "figure",
                                  "machine", "recorded", "source"))
  expect_false(anyDuplicated(figs$id) > 0)
  expect_true(all(grepl("^[0-9]{4}-[0-9]{2}-[0-9]{2}$", figs$recorded)))
  expect_true(all(nzchar(figs$machine) & nzchar(figs$source)))
  known <- timing_figures(figs$figure)
  # every row's figure column holds figures
  expect_true(all(lengths(lapply(figs$figure, timing_figures)) > 0))
  for (d in docs) {
    extra <- setdiff(timing_figures(readLines(d, warn = FALSE)), known)
    expect_identical(extra, character(), label = paste(
      basename(d), "quotes figures missing from inst/figures.csv"))
  }
})

test_that("the Measured figures article shows every topic of the table", {
  root <- test_path("..", "..")
  rmd <- file.path(root, "vignettes", "figures.Rmd")
  table <- file.path(root, "inst", "figures.csv")
  skip_if_not(all(file.exists(c(rmd, table))),
              "the source tree's documents are not here")
  # the article's `topics <- c(name = "heading", ...)`: its names
  text <- paste(readLines(rmd, warn = FALSE), collapse = "\n")
  call <- regmatches(text, regexpr("topics <- c\\((?:[^()]|\\([^()]*\\))*\\)",
                                   text, perl = TRUE))
  expect_length(call, 1L)
  shown <- names(eval(parse(text = sub("^topics <- ", "", call))))
  figs <- utils::read.csv(table, stringsAsFactors = FALSE)
  expect_identical(setdiff(unique(figs$topic), shown), character(),
                   label = "topics of inst/figures.csv the article leaves out")
})
