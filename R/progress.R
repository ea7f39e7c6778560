# Progress of long counts. The C core polls between chunks with (pairs
# done, pairs in all). With `progress = TRUE` and the progressr package
# installed, the poll goes to a progressr progressor: RStudio's progress
# bar or any handler the user chose (progressr::handlers()), and it reaches
# the user from `distribute = TRUE` future workers. Without progressr the C
# code prints its own lines on stderr, as before.

# progressr is used when installed and enabled (its option
# progressr.enable, by default interactive(): in Rscript, say the command
# line's --progress, the lines stay), unless options(wtheta.progressr =
# FALSE)
use_progressr <- function() {
  isTRUE(getOption("wtheta.progressr", TRUE)) &&
    requireNamespace("progressr", quietly = TRUE) &&
    isTRUE(getOption("progressr.enable", interactive()))
}

# steps of a progressor per count
progress_steps <- 1000

# What the counts of one call report to: FALSE (nothing), TRUE (the C
# lines) or a progressor for `n_counts` counts, finished when the frame
# `envir` (the user-facing function's) exits.
progress_start <- function(progress, n_counts, envir) {
  if (!isTRUE(progress) || !use_progressr()) return(isTRUE(progress))
  p <- progressr::progressor(steps = n_counts * progress_steps, envir = envir)
  # without global handlers a long count may show nothing: say once per
  # session how to see it (inside with_progress() it shows anyway)
  if (!isTRUE(progressr::handlers(global = NA))) {
    attr(p, "hint_after") <- proc.time()[["elapsed"]] + 2
  }
  p
}

progress_hint <- new.env(parent = emptyenv())

# once per session, when a count has run 2 s with no global handlers
give_progress_hint <- function(p) {
  after <- attr(p, "hint_after", exact = TRUE)
  if (is.null(after) || isTRUE(progress_hint$given) ||
      proc.time()[["elapsed"]] < after) {
    return(invisible(NULL))
  }
  progress_hint$given <- TRUE
  message("wtheta reports progress through progressr: ",
          "progressr::handlers(global = TRUE) shows it (RStudio: a progress ",
          "bar); options(wtheta.progressr = FALSE) prints wtheta's own lines ",
          "instead.")
}

# The `progress` argument of one C call: the logical as it is, or for a
# progressor a function(done, total) that advances it by the share of its
# count (`share` of one count's steps: a block of a distributed count)
progress_sink <- function(progress, share = 1) {
  if (!is.function(progress)) return(isTRUE(progress))
  p <- progress
  steps <- progress_steps * share
  last <- 0
  function(done, total) {
    give_progress_hint(p)
    now <- if (total > 0) steps * min(1, max(0, done / total)) else 0
    if (now > last) {
      p(amount = now - last)
      last <<- now
    }
    invisible(NULL)
  }
}

progress_or_default <- function(progress) {
  if (is.null(progress)) progress <- getOption("wtheta.progress", interactive())
  check_flag(progress, "progress")
  progress
}
