# the help pages as a user first sees them (installed Rd, as ?wtheta
# shows it)
rd_text <- function(name) {
  rd <- tools::Rd_db("wtheta")[[paste0(name, ".Rd")]]
  out <- capture.output(tools::Rd2txt(rd, options = list(
    underline_titles = FALSE, width = 80)))
  gsub("\u2018|\u2019", "'", out)
}

test_that("?wtheta says first what it estimates and its errors", {
  txt <- rd_text("wtheta")
  usage <- grep("^Usage:", txt)
  first <- paste(txt[seq_len(usage - 1L)], collapse = " ")
  expect_match(first, "Estimates w(theta)", fixed = TRUE)
  expect_match(first, "jackknife or bootstrap", fixed = TRUE)
  expect_match(first, "covariance", fixed = TRUE)
})

test_that("the progress paragraph is written once and referred to", {
  long <- "RStudio's progress"
  has <- function(name) any(grepl(long, rd_text(name), fixed = TRUE))
  expect_true(has("pair_counts"))
  expect_false(has("wtheta"))
  expect_false(has("wtheta_multi"))
  for (name in c("pair_counts", "wtheta", "wtheta_multi")) {
    expect_match(gsub("\\s+", " ", paste(rd_text(name), collapse = " ")),
                 "section Progress of 'pair_counts()'", fixed = TRUE)
  }
})

test_that("threads are described as a plain range", {
  txt <- paste(rd_text("wtheta"), collapse = " ")
  txt <- gsub("\\s+", " ", txt)
  expect_match(txt, "from 1 up to four times the number of processors, or up to 16",
               fixed = TRUE)
  expect_false(grepl("at least 16 are allowed", txt, fixed = TRUE))
})
